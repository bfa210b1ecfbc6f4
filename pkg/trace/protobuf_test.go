package trace_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire/request"
)

// TestProtobufSecretsAreRecordedWithoutTheirValues records a real protobuf
// LIST and streaming list of Secrets (kube-apiserver v1.37.2; one Secret
// made with kubectl apply, so its last-applied-configuration annotation
// holds its value) in every object mode: the trace keeps identity and the
// decoded metadata, and neither the data nor the annotation.
func TestProtobufSecretsAreRecordedWithoutTheirValues(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "wire", "testdata", "protobuf", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	list, watch := read("list-secrets.pb"), read("watch-secrets.pb")
	for _, leak := range []string{"hunter2", "last-applied-configuration"} {
		if !strings.Contains(string(list), leak) || !strings.Contains(string(watch), leak) {
			t.Fatalf("the fixtures lack %q: the test would prove nothing", leak)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			w.Header().Set("Content-Type", request.ContentTypeProtobuf+";stream=watch")
			_, _ = w.Write(watch)
			return
		}
		w.Header().Set("Content-Type", request.ContentTypeProtobuf)
		_, _ = w.Write(list)
	}))
	defer srv.Close()
	secrets := reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, Kind: "Secret", Namespaced: true}
	for _, mode := range []trace.ObjectMode{trace.ObjectsNone, trace.ObjectsMetadata} {
		t.Run(string(mode), func(t *testing.T) {
			src, err := live.NewSource(&rest.Config{Host: srv.URL}, reflector.Target{Resource: secrets}, live.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if src.Wire() != reflector.WireProtobuf {
				t.Fatalf("wire %s, want protobuf", src.Wire())
			}
			path := filepath.Join(t.TempDir(), "t.jsonl")
			rec, err := trace.Create(path, trace.Header{Resources: []trace.ResourceHeader{{Resource: secrets, Objects: mode, Options: trace.Options{Wire: src.Wire()}}}})
			if err != nil {
				t.Fatal(err)
			}
			recorded := rec.Source(0, src)
			if _, err := recorded.List(context.Background(), reflector.RequestOptions{}); err != nil {
				t.Fatal(err)
			}
			st, err := recorded.Watch(context.Background(), reflector.RequestOptions{SendInitialEvents: true})
			if err != nil {
				t.Fatal(err)
			}
			for {
				if _, err := st.Next(); err != nil {
					break
				}
			}
			st.Close()
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out := string(b)
			for _, leak := range []string{"hunter2", "aHVudGVyMg", "last-applied-configuration"} {
				if strings.Contains(out, leak) {
					t.Errorf("the trace contains %q:\n%s", leak, out)
				}
			}
			for _, want := range []string{`"wire":"protobuf"`, `"name":"applied"`, `"kind":"Secret"`, `"type":"BOOKMARK"`} {
				if !strings.Contains(out, want) {
					t.Errorf("the trace lacks %s:\n%s", want, out)
				}
			}
			if mode == trace.ObjectsMetadata && (!strings.Contains(out, `"labels":{"app":"z"}`) || !strings.Contains(out, `"k8s.io/initial-events-end":"true"`)) {
				t.Errorf("metadata mode lost the labels or the end bookmark's annotation:\n%s", out)
			}
		})
	}
}
