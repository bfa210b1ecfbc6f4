package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// An observed trace of a typed informer (protobuf) and a metadata informer
// of one resource: the page tells them apart by number, wire and what they
// asked for, rather than calling both "json, full objects".
func TestAnObservedStreamShowsWhatItsClientAskedFor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "two-informers.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return start }
	rec, err := trace.NewRecorder(f, trace.Header{StartedAt: start, Observed: true}, now)
	if err != nil {
		t.Fatal(err)
	}
	target := reflector.Target{Resource: reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}}
	for _, tc := range []struct {
		id             int
		accept, answer string
	}{
		{1, "application/vnd.kubernetes.protobuf, */*", "application/vnd.kubernetes.protobuf"},
		{2, "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"},
	} {
		s := observed.NewStream(tc.id, observed.Client{UserAgent: "manager/v0.0.0", RemoteAddr: "127.0.0.1:4000"}, target, now)
		s.Asked = observed.ParseAccept(tc.accept)
		s.Asked.Accept = tc.accept
		s.Options = observed.OptionsOf(reflector.VerbList, reflector.RequestOptions{Limit: 500})
		rh, client := s.Describe()
		i, err := rec.AddStream(rh, client, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		s.Record(rec.Observed(i))
		s.OnNote(rec.Notes(i)) // as the session records a stream's notes
		r := s.BeginAnswered(reflector.VerbList, reflector.RequestOptions{Limit: 500}, time.Time{}, tc.answer)
		o := &store.Object{Namespace: "ns", Name: "a", UID: "ua", ResourceVersion: "5"}
		r.Page(&reflector.Page{ResourceVersion: "10", Items: []reflector.Item{{Object: o, Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns","name":"a","uid":"ua","resourceVersion":"5"}}`)}}})
		r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
		if tc.id == 1 { // what the proxy's --fault did: the section says it (it was in no part of the page)
			s.Fault(observed.Fault{Spec: "drop-deletes", What: "dropped DELETED ns/b", Count: 3})
		}
		s.Close()
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rep := analyzeFile(t, path, Options{})
	if len(rep.Resources) != 2 {
		t.Fatalf("%d resources, want 2", len(rep.Resources))
	}
	typed, meta := rep.Resources[0].Stream, rep.Resources[1].Stream
	if typed == nil || meta == nil || typed.ID != 1 || meta.ID != 2 || typed.MetadataOnly || !meta.MetadataOnly ||
		typed.Wire != reflector.WireProtobuf || meta.Wire != reflector.WireProtobuf || !strings.Contains(meta.ContentType, "PartialObjectMetadataList") {
		t.Fatalf("streams %+v and %+v", typed, meta)
	}
	_, doc := render(t, path, Options{})
	page := text(doc)

	for _, want := range []string{"#1", "#2", "metadata-only (PartialObjectMetadata)", "full objects", "protobuf (metadata)", "as=PartialObjectMetadataList", "drop-deletes ×3 (first at 0s)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// The report's index tells two clients' streams of one resource apart, as
// the sections below it do: by stream number and client (both rows read
// "configmaps.v1 ConfigMap").
func TestTheIndexNamesEachStreamsNumberAndClient(t *testing.T) {
	_, doc := render(t, "../../testdata/traces/proxy.jsonl", Options{})
	var rows []string
	for _, tr := range elements(doc, func(n *html.Node) bool { return n.Data == "tr" }) {
		if s := text(tr); strings.Contains(s, "configmaps.v1") {
			rows = append(rows, s)
		}
	}
	if len(rows) == 0 || !strings.Contains(rows[0], "configmaps.v1 #1") || !strings.Contains(rows[0], "ConfigMap · kubectl/v1.32.4") {
		t.Errorf("the index's row: %q, want the stream's number and its client", rows)
	}
}
