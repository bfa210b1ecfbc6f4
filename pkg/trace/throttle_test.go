package trace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// throttledSource answers its first LIST 429 with what flow control's
// headers said, then a page of known size.
type throttledSource struct {
	throttle reflector.Throttle
	lists    int
}

func (s *throttledSource) List(context.Context, reflector.RequestOptions) (*reflector.Page, error) {
	s.lists++
	if s.lists == 1 {
		t := s.throttle
		return nil, &reflector.RequestEnd{Reason: reflector.EndError, Throttle: &t,
			Status: &metav1.Status{Code: 429, Reason: metav1.StatusReasonTooManyRequests, Message: "the server has received too many requests and has asked us to try again later"}}
	}
	obj := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","uid":"u1","resourceVersion":"9"}}`
	o, err := wire.DecodeObject([]byte(obj), false)
	if err != nil {
		return nil, err
	}
	return &reflector.Page{ResourceVersion: "9", Items: []reflector.Item{{Object: o, Raw: []byte(obj)}}, Bytes: 4321}, nil
}

func (*throttledSource) Watch(context.Context, reflector.RequestOptions) (reflector.Stream, error) {
	return nil, &reflector.RequestEnd{Reason: reflector.EndStopped, Err: reflector.ErrStopped}
}

// A 429's Throttle (Retry-After, the FlowSchema and PriorityLevel by UID and
// name) and a page's size are recorded on the end and page lines, and a
// replay hands them to its reflector as the live Source did.
func TestThrottleAndPageBytesAreRecordedAndReplayed(t *testing.T) {
	want := reflector.Throttle{RetryAfter: 2 * time.Second, FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1", FlowSchema: "slow-lane", PriorityLevel: "one-seat"}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	h := trace.Header{Resources: []trace.ResourceHeader{{
		Resource: reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true},
		Objects:  trace.ObjectsMetadata, Options: trace.Options{Strategy: reflector.StrategyList, WatchTimeout: trace.Duration(time.Minute)},
	}}}
	rec, err := trace.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	src := rec.Source(0, &throttledSource{throttle: want})
	if _, err := src.List(context.Background(), reflector.RequestOptions{}); err == nil {
		t.Fatal("the first list was not throttled")
	}
	if _, err := src.List(context.Background(), reflector.RequestOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`"throttle":{"retryAfter":"2s","flowSchemaUID":"fs-1","priorityLevelUID":"pl-1","flowSchema":"slow-lane","priorityLevel":"one-seat"}`,
		`"items":1,"bytes":4321`,
	} {
		if !strings.Contains(string(b), s) {
			t.Errorf("the trace has no %s:\n%s", s, b)
		}
	}

	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rp := trace.NewReplay(rd, 0)
	st, w := store.New()
	r, err := reflector.New(rp.Resources()[0].ReflectorConfig(), w, st)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rp.Run(ctx, r); err != nil {
		t.Fatal(err)
	}
	reqs := r.Stats().Requests
	if len(reqs) < 2 {
		t.Fatalf("%d requests replayed, want the two lists", len(reqs))
	}
	if got := reqs[0].End; got == nil || got.Throttle == nil || *got.Throttle != want {
		t.Errorf("the replayed 429's end: %+v, want Throttle %+v", got, want)
	}
	if reqs[1].Bytes != 4321 {
		t.Errorf("the replayed page: %d bytes, want 4321", reqs[1].Bytes)
	}
}

// Names learned after the 429 that gave them by UID are recorded on a
// `flowcontrol` line where they were learned, and a replay hands them over
// when it reaches it: what the live run learned, offline.
func TestFlowControlNamesLearnedAfterThe429AreRecordedAndReplayed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	h := trace.Header{Resources: []trace.ResourceHeader{{
		Resource: reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true},
		Objects:  trace.ObjectsMetadata, Options: trace.Options{Strategy: reflector.StrategyList, WatchTimeout: trace.Duration(time.Minute)},
	}}}
	rec, err := trace.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	src := rec.Source(0, &throttledSource{throttle: reflector.Throttle{RetryAfter: time.Second, FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1"}})
	if _, err := src.List(context.Background(), reflector.RequestOptions{}); err == nil {
		t.Fatal("the first list was not throttled")
	}
	rec.FlowControlNames(map[string]string{"fs-1": "slow-lane"}, map[string]string{"pl-1": "one-seat"})
	if _, err := src.List(context.Background(), reflector.RequestOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := `,"flowSchemas":{"fs-1":"slow-lane"},"priorityLevels":{"pl-1":"one-seat"}}`; !strings.Contains(string(b), `{"k":"flowcontrol","r":0,"at":`) || !strings.Contains(string(b), want) {
		t.Fatalf("the trace has no flowcontrol line ending %s:\n%s", want, b)
	}

	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rp := trace.NewReplay(rd, 0)
	st, w := store.New()
	r, err := reflector.New(rp.Resources()[0].ReflectorConfig(), w, st)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	rp.OnFlowControlNames(func(fs, pl map[string]string) {
		got = append(got, fmt.Sprint(fs, pl))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rp.Run(ctx, r); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "map[fs-1:slow-lane] map[pl-1:one-seat]" {
		t.Errorf("handed over %q, want the names once", got)
	}
	if w := rd.Warnings(); len(w) > 0 {
		t.Errorf("warnings: %q", w)
	}
}

// A flowcontrol line is about the run: its r names no resource, and a trace
// whose header lists none (an observed trace before its first stream)
// reads it all the same.
func TestAFlowControlLineIsReadWhateverItsR(t *testing.T) {
	for _, r := range []string{"0", "7", "-1"} {
		in := `{"k":"header","v":2,"startedAt":"2026-05-01T12:00:00Z","tool":"t","server":"s","serverVersion":"","resources":[],"observed":true}` + "\n" +
			`{"k":"flowcontrol","r":` + r + `,"at":5,"flowSchemas":{"fs-1":"slow-lane"}}` + "\n"
		rd, err := trace.NewReader("t.jsonl", strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		l, err := rd.Next()
		if err != nil || l.K != trace.KindFlowControl || l.FlowSchemas["fs-1"] != "slow-lane" {
			t.Errorf("r %s: %+v, %v", r, l, err)
		}
	}
}
