package reflector_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// benchConfigMap is a ConfigMap as kube-apiserver v1.37 serves it: Helm-like
// labels and annotations, server-side-apply managedFields, ~500 bytes of data
// (1.6 kB). Captured from internal/testcluster.
func benchConfigMap(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/configmap.json")
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// benchItem is the fixture renamed to item i (list items carry no kind and apiVersion).
func benchItem(tb testing.TB, i int) []byte {
	obj := benchConfigMap(tb)
	obj = bytes.Replace(obj, []byte(`{"kind":"ConfigMap","apiVersion":"v1",`), []byte(`{`), 1)
	obj = bytes.ReplaceAll(obj, []byte("app-00007"), fmt.Appendf(nil, "app-%05d", i))
	return bytes.Replace(obj, []byte(`"uid":"3d5b7a55-472e-4b84-acd6-`), fmt.Appendf(nil, `"uid":"3d5b7a55-472e-4b84-%04x-`, i&0xffff), 1)
}

// benchList is a LIST page of n items with a continue token, as the apiserver writes it.
func benchList(tb testing.TB, n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"215","continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjE1LCJzdGFydCI6ImFwcC0wMDQ5OSJ9","remainingItemCount":49500},"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(benchItem(tb, i))
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

// benchWatch is a watch stream of n MODIFIED events, one JSON object per line.
func benchWatch(tb testing.TB, n int) []byte {
	var b bytes.Buffer
	obj := benchConfigMap(tb)
	for i := range n {
		b.WriteString(`{"type":"MODIFIED","object":`)
		b.Write(bytes.Replace(obj, []byte(`"resourceVersion":"215"`), fmt.Appendf(nil, `"resourceVersion":"%d"`, 1000+i), 1))
		b.WriteString("}\n")
	}
	return b.Bytes()
}

func BenchmarkDecodeObject(b *testing.B) {
	obj := benchConfigMap(b)
	for _, keep := range []bool{false, true} {
		b.Run(fmt.Sprintf("keepBody=%t", keep), func(b *testing.B) {
			b.SetBytes(int64(len(obj)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reflector.DecodeObject(obj, keep); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeList(b *testing.B) {
	body := benchList(b, 500)
	for _, keep := range []bool{false, true} {
		b.Run(fmt.Sprintf("items=500/keepBody=%t", keep), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := reflector.DecodeList(body, keep)
				if err != nil || len(p.Items) != 500 {
					b.Fatalf("got %d items, %v", len(p.Items), err)
				}
			}
		})
	}
}

func BenchmarkDecodeWatchEvent(b *testing.B) {
	obj := benchConfigMap(b)
	b.SetBytes(int64(len(obj)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reflector.DecodeWatchEvent("MODIFIED", obj, false); err != nil {
			b.Fatal(err)
		}
	}
}

// liveBenchSource is a LiveSource against a local HTTP server that answers
// every LIST with body and every watch with stream.
func liveBenchSource(b *testing.B, body, stream []byte) *reflector.LiveSource {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			_, _ = w.Write(stream)
			return
		}
		_, _ = w.Write(body)
	}))
	b.Cleanup(srv.Close)
	src, err := reflector.NewLiveSource(&rest.Config{Host: srv.URL}, reflector.Target{Resource: configMaps}, false, false)
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// BenchmarkLiveList is one 500-item LIST page over loopback HTTP, read and decoded.
func BenchmarkLiveList(b *testing.B) {
	body := benchList(b, 500)
	src := liveBenchSource(b, body, nil)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := src.List(context.Background(), reflector.RequestOptions{Limit: 500})
		if err != nil || len(p.Items) != 500 {
			b.Fatalf("got %v, %v", p, err)
		}
	}
}

// BenchmarkLiveWatch reads a 1000-event watch stream over loopback HTTP.
func BenchmarkLiveWatch(b *testing.B) {
	const events = 1000
	stream := benchWatch(b, events)
	src := liveBenchSource(b, nil, stream)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		st, err := src.Watch(context.Background(), reflector.RequestOptions{})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			if _, err := st.Next(); err != nil {
				break
			}
			n++
		}
		if n != events {
			b.Fatalf("got %d events, want %d", n, events)
		}
	}
}
