package live_test

import (
	"compress/gzip"
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

const (
	gzList  = `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a","namespace":"ns","uid":"u-a","resourceVersion":"5"}},{"metadata":{"name":"b","namespace":"ns","uid":"u-b","resourceVersion":"7"}}]}`
	gzEvent = `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"ns","uid":"u-c","resourceVersion":"8"}}}` + "\n"
)

// gzipServer answers as the API server does: gzip when the request accepts
// it, and a watch's first bytes only with its first event, which it sends
// when release is closed. It records each request's Accept-Encoding.
func gzipServer(t *testing.T, release <-chan struct{}, asked chan<- string) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- r.Header.Get("Accept-Encoding")
		w.Header().Set("Content-Type", "application/json")
		watch := r.URL.Query().Get("watch") == "true"
		body := gzList
		if watch {
			body = gzEvent
		}
		if r.Header.Get("Accept-Encoding") != "gzip" {
			_, _ = w.Write([]byte(body))
			if watch {
				w.(http.Flusher).Flush()
				<-r.Context().Done() // a watch stays open
			}
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // headers now, no gzip bytes yet
		if watch {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		zw := gzip.NewWriter(w)
		_, _ = zw.Write([]byte(body))
		if watch {
			_ = zw.Flush()
			w.(http.Flusher).Flush()
			<-r.Context().Done() // a watch stays open
		}
		_ = zw.Close()
	}))
	// TLS and HTTP/2, as an API server speaks: client-go honours
	// DisableCompression only with a TLS config of its own.
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// The source asks for gzip unless the config disables compression, inflates
// what comes gzipped, and returns a watch before its first byte comes (the
// gzip header is read at the first Read, as Go's transport does).
func TestTheSourceInflatesGzipAndReturnsAQuietWatchAtOnce(t *testing.T) {
	for _, disable := range []bool{false, true} {
		name := "gzip"
		if disable {
			name = "--disable-compression"
		}
		t.Run(name, func(t *testing.T) {
			release, asked := make(chan struct{}), make(chan string, 4)
			srv := gzipServer(t, release, asked)
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
			cfg := &rest.Config{Host: srv.URL, DisableCompression: disable, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
			src, err := live.NewSource(cfg, reflector.Target{Resource: configMaps, Namespace: "ns"}, live.Options{Wire: reflector.WireJSON})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()

			page, err := src.List(ctx, reflector.RequestOptions{Limit: 500})
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if len(page.Items) != 2 || page.Items[1].Object.Name != "b" || page.ResourceVersion != "7" {
				t.Fatalf("List: got %d items at %q, want a and b at 7", len(page.Items), page.ResourceVersion)
			}
			want := "gzip"
			if disable {
				want = ""
			}
			if got := <-asked; got != want {
				t.Fatalf("the LIST's Accept-Encoding: got %q, want %q", got, want)
			}

			returned := make(chan reflector.Stream, 1)
			go func() {
				st, err := src.Watch(ctx, reflector.RequestOptions{ResourceVersion: "7", AllowWatchBookmarks: true})
				if err != nil {
					t.Errorf("Watch: %v", err)
				}
				returned <- st
			}()
			var st reflector.Stream
			select {
			case st = <-returned:
			case <-time.After(5 * time.Second):
				close(release)
				t.Fatal("Watch did not return before the stream's first byte")
			}
			if st == nil {
				return
			}
			defer st.Close()
			close(release)
			ev, err := st.Next()
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if ev.Type != reflector.EventAdded || ev.Item.Object == nil || ev.Item.Object.Name != "c" {
				t.Fatalf("Next: got %s %+v, want ADDED c", ev.Type, ev.Item.Object)
			}
		})
	}
}
