package wire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/benchdata"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
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

// bigText is the data of a 1 MB ConfigMap: YAML-like text with quotes,
// escapes and non-ASCII (internal/benchdata), about 1 MB once JSON-encoded.
const bigText = 915_000

// benchBigConfigMap is the fixture holding bigText bytes of text for object i.
func benchBigConfigMap(tb testing.TB, i int) []byte {
	obj, err := benchdata.WithData(benchConfigMap(tb), "values.yaml", benchdata.YAMLText(i, bigText))
	if err != nil {
		tb.Fatal(err)
	}
	return obj
}

// benchBigList is a LIST page of n 1 MB items.
func benchBigList(tb testing.TB, n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"215"},"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		item, err := benchdata.WithData(benchItem(tb, i), "values.yaml", benchdata.YAMLText(i, bigText))
		if err != nil {
			tb.Fatal(err)
		}
		b.Write(item)
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

// benchBigWatch is a watch stream of n MODIFIED events of 1 MB objects.
func benchBigWatch(tb testing.TB, n int) []byte {
	var b bytes.Buffer
	for i := range n {
		b.WriteString(`{"type":"MODIFIED","object":`)
		b.Write(bytes.Replace(benchBigConfigMap(tb, i), []byte(`"resourceVersion":"215"`), fmt.Appendf(nil, `"resourceVersion":"%d"`, 1000+i), 1))
		b.WriteString("}\n")
	}
	return b.Bytes()
}

// chunkReader returns data n bytes at a time, as a response body arrives.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.data)
	r.data = r.data[k:]
	return k, nil
}

// The benchmarks compare the 1.6 kB fixture (size=1.6kB) with the same
// ConfigMap holding 1 MB of text (size=1MB): decoding must be linear, its
// throughput (MB/s) on the big objects at least that on the small ones.

func BenchmarkDecodeObject(b *testing.B) {
	for _, size := range []string{"1.6kB", "1MB"} {
		obj := benchConfigMap(b)
		if size == "1MB" {
			obj = benchBigConfigMap(b, 7)
		}
		for _, keep := range []bool{false, true} {
			b.Run(fmt.Sprintf("size=%s/keepBody=%t", size, keep), func(b *testing.B) {
				b.SetBytes(int64(len(obj)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := wire.DecodeObject(obj, keep); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// listBenchBodies are the LIST pages the list benchmarks read: 500 small
// items (one page of the default size) and 16 big ones.
func listBenchBodies(b *testing.B) []struct {
	name  string
	items int
	body  []byte
} {
	return []struct {
		name  string
		items int
		body  []byte
	}{{"size=1.6kB/items=500", 500, benchList(b, 500)}, {"size=1MB/items=16", 16, benchBigList(b, 16)}}
}

func BenchmarkDecodeList(b *testing.B) {
	for _, l := range listBenchBodies(b) {
		for _, keep := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/keepBody=%t", l.name, keep), func(b *testing.B) {
				b.SetBytes(int64(len(l.body)))
				b.ReportAllocs()
				for b.Loop() {
					p, err := wire.DecodeList(l.body, keep)
					if err != nil || len(p.Items) != l.items {
						b.Fatalf("got %d items, %v", len(p.Items), err)
					}
				}
			})
		}
	}
}

// BenchmarkDecodeListIn16kReads reads the LIST body 16 kB per read, as it
// comes off a connection: a 1 MB item arrives in about 60 reads.
func BenchmarkDecodeListIn16kReads(b *testing.B) {
	for _, l := range listBenchBodies(b) {
		b.Run(l.name, func(b *testing.B) {
			b.SetBytes(int64(len(l.body)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := wire.DecodeListFrom(&chunkReader{l.body, 16 << 10}, false)
				if err != nil || len(p.Items) != l.items {
					b.Fatalf("got %d items, %v", len(p.Items), err)
				}
			}
		})
	}
}

func BenchmarkDecodeWatchEvent(b *testing.B) {
	for _, size := range []string{"1.6kB", "1MB"} {
		obj := benchConfigMap(b)
		if size == "1MB" {
			obj = benchBigConfigMap(b, 7)
		}
		b.Run("size="+size, func(b *testing.B) {
			b.SetBytes(int64(len(obj)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := wire.DecodeWatchEvent("MODIFIED", obj, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// liveBenchSource is a live Source against a local HTTP server that answers
// every LIST with body and every watch with stream.
func liveBenchSource(b *testing.B, body, stream []byte) *live.Source {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			_, _ = w.Write(stream)
			return
		}
		_, _ = w.Write(body)
	}))
	b.Cleanup(srv.Close)
	src, err := live.NewSource(&rest.Config{Host: srv.URL}, reflector.Target{Resource: configMaps}, live.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// BenchmarkLiveList is one LIST page over loopback HTTP, read and decoded.
func BenchmarkLiveList(b *testing.B) {
	for _, l := range listBenchBodies(b) {
		b.Run(l.name, func(b *testing.B) {
			src := liveBenchSource(b, l.body, nil)
			b.SetBytes(int64(len(l.body)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := src.List(context.Background(), reflector.RequestOptions{Limit: 500})
				if err != nil || len(p.Items) != l.items {
					b.Fatalf("got %v, %v", p, err)
				}
			}
		})
	}
}

// BenchmarkLiveWatch reads a watch stream over loopback HTTP: 1000 small
// events, or 16 big ones.
func BenchmarkLiveWatch(b *testing.B) {
	for _, w := range []struct {
		name   string
		events int
		stream []byte
	}{{"size=1.6kB/events=1000", 1000, benchWatch(b, 1000)}, {"size=1MB/events=16", 16, benchBigWatch(b, 16)}} {
		b.Run(w.name, func(b *testing.B) {
			src := liveBenchSource(b, nil, w.stream)
			b.SetBytes(int64(len(w.stream)))
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
				if n != w.events {
					b.Fatalf("got %d events, want %d", n, w.events)
				}
			}
		})
	}
}

// benchProtoList is a protobuf LIST answer of n ConfigMaps: the JSON
// fixture, owned by a ReplicaSet, each under its own name.
func benchProtoList(b *testing.B, n int) []byte {
	var cm corev1.ConfigMap
	if err := json.Unmarshal(benchConfigMap(b), &cm); err != nil {
		b.Fatal(err)
	}
	controller := true
	cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f", UID: "0b6c1f2e-5a4d-4e8b-9c3a-2f1e0d9c8b7a", Controller: &controller}}
	items := make([][]byte, n)
	for i := range items {
		cm.Name = fmt.Sprintf("app-%05d-config", i)
		raw, err := cm.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		items[i] = raw
	}
	return wire.EncodeProtoList("v1", "ConfigMapList", items)
}

// BenchmarkDecodeProtoList reads a page of 500 ConfigMaps in protobuf, the
// default wire of built-in resources: the compact objects only, and with
// the JSON a trace records.
func BenchmarkDecodeProtoList(b *testing.B) {
	body := benchProtoList(b, 500)
	for _, keep := range []bool{false, true} {
		b.Run(fmt.Sprintf("items=500/keepRaw=%t", keep), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				page, err := wire.DecodeProtoList(bytes.NewReader(body), keep)
				if err != nil || len(page.Items) != 500 || len(page.Items[0].Object.OwnerReferences) != 1 {
					b.Fatalf("err %v, %d items", err, len(page.Items))
				}
			}
		})
	}
}
