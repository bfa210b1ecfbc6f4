package trace_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// benchConfigMap is a ConfigMap as kube-apiserver v1.37 serves it (1.6 kB with
// managedFields), the fixture package wire's decode benchmarks use too.
func benchConfigMap(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("../wire/testdata/configmap.json")
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// pageSource answers every LIST with the same decoded page.
type pageSource struct{ page *reflector.Page }

func (s pageSource) List(context.Context, reflector.RequestOptions) (*reflector.Page, error) {
	return s.page, nil
}

func (pageSource) Watch(context.Context, reflector.RequestOptions) (reflector.Stream, error) {
	return nil, io.EOF
}

// BenchmarkRecordListPage records one 500-item LIST page in each object mode.
func BenchmarkRecordListPage(b *testing.B) {
	obj := benchConfigMap(b)
	page := &reflector.Page{ResourceVersion: "215"}
	for i := range 500 {
		raw := bytes.ReplaceAll(obj, []byte("app-00007"), fmt.Appendf(nil, "app-%05d", i))
		o, err := wire.DecodeObject(raw, false)
		if err != nil {
			b.Fatal(err)
		}
		page.Items = append(page.Items, reflector.Item{Object: o, Raw: raw})
	}
	for _, mode := range []trace.ObjectMode{trace.ObjectsNone, trace.ObjectsMetadata, trace.ObjectsFull} {
		b.Run(string(mode), func(b *testing.B) {
			rec, err := trace.NewRecorder(io.Discard, trace.Header{StartedAt: time.Now(), Resources: []trace.ResourceHeader{{Objects: mode}}}, time.Now)
			if err != nil {
				b.Fatal(err)
			}
			defer rec.Close()
			src := rec.Source(0, pageSource{page})
			b.SetBytes(int64(500 * len(obj)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := src.List(context.Background(), reflector.RequestOptions{Limit: 500}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchTrace is a metadata-mode trace: a LIST of items objects, then a watch of events MODIFIED events.
func benchTrace(tb testing.TB, items, events int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	h := trace.Header{K: trace.KindHeader, V: trace.Version, StartedAt: time.Unix(1e9, 0).UTC(), Tool: "bench",
		Resources: []trace.ResourceHeader{{Resource: reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true},
			Objects: trace.ObjectsMetadata, Options: trace.Options{Strategy: reflector.StrategyList, PageSize: 0,
				WatchTimeout: trace.Duration(5 * time.Minute), IdleTimeout: trace.Duration(10 * time.Minute), InitialEventsTimeout: trace.Duration(time.Minute)}}}}
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	write := func(v any) {
		if err := enc.Encode(v); err != nil {
			tb.Fatal(err)
		}
	}
	write(h)
	// The metadata-mode object, as the recorder keeps it.
	var top struct {
		APIVersion string          `json:"apiVersion"`
		Kind       string          `json:"kind"`
		Metadata   map[string]any  `json:"metadata"`
		Data       json.RawMessage `json:"-"`
	}
	if err := json.Unmarshal(benchConfigMap(tb), &top); err != nil {
		tb.Fatal(err)
	}
	delete(top.Metadata, "managedFields")
	object := func(i, rv int) json.RawMessage {
		top.Metadata["name"] = fmt.Sprintf("app-%05d-config", i)
		top.Metadata["uid"] = fmt.Sprintf("uid-%d", i)
		top.Metadata["resourceVersion"] = fmt.Sprint(rv)
		b, err := json.Marshal(top)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	at := int64(0)
	line := func(l trace.Line) {
		at += 1000
		l.At = at
		write(l)
	}
	line(trace.Line{K: trace.KindRequest, ID: 1, Verb: "list", Opts: &reflector.RequestOptions{}})
	for i := range items {
		line(trace.Line{K: trace.KindItem, ID: 1, Object: object(i, 100+i)})
	}
	n := items
	line(trace.Line{K: trace.KindPage, ID: 1, ResourceVersion: fmt.Sprint(100 + items), Items: &n})
	line(trace.Line{K: trace.KindEnd, ID: 1, Reason: "closed"})
	line(trace.Line{K: trace.KindRequest, ID: 2, Verb: "watch", Opts: &reflector.RequestOptions{ResourceVersion: fmt.Sprint(100 + items), AllowWatchBookmarks: true, TimeoutSeconds: 300}})
	for j := range events {
		line(trace.Line{K: trace.KindEvent, ID: 2, Type: "MODIFIED", Object: object(j%items, 100+items+1+j)})
	}
	line(trace.Line{K: trace.KindEnd, ID: 2, Reason: "canceled", Error: "context canceled"})
	return buf.Bytes()
}

const (
	benchItems  = 1000
	benchEvents = 20000
)

// BenchmarkReplay replays a 21,000-line metadata trace as fast as possible,
// through the reflector into the store, as `kubectl watchcache replay` does.
func BenchmarkReplay(b *testing.B) {
	data := benchTrace(b, benchItems, benchEvents)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rd, err := trace.NewReader("bench", bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		rp := trace.NewReplay(rd, 0)
		st, w := store.New()
		r, err := reflector.New(rp.Resources()[0].ReflectorConfig(), w, st)
		if err != nil {
			b.Fatal(err)
		}
		if err := rp.Run(context.Background(), r); err != nil {
			b.Fatal(err)
		}
		if got := r.Stats().Counters.Modified; got != benchEvents {
			b.Fatalf("replayed %d events, want %d", got, benchEvents)
		}
	}
}

// BenchmarkReplayDecodeFloor decodes the same trace's lines into trace.Line
// with encoding/json and nothing else: the floor BenchmarkReplay is compared with.
func BenchmarkReplayDecodeFloor(b *testing.B) {
	data := benchTrace(b, benchItems, benchEvents)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		sc.Scan() // the header
		for sc.Scan() {
			var l trace.Line
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				b.Fatal(err)
			}
		}
	}
}
