package history

import (
	"fmt"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// t0 is the tests' time origin; at(d) is d after it.
var t0 = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func obj(ns, name, uid, rv string) *store.Object {
	return &store.Object{Namespace: ns, Name: name, UID: uid, ResourceVersion: rv, Labels: store.MakeLabels(map[string]string{"app": "web"})}
}

func TestObjectHistoryIsBounded(t *testing.T) {
	h := NewObjects(2)
	for i := range 3 {
		h.RecordResult(at(time.Duration(i)), store.Result{Outcome: store.Added, Object: obj("ns", fmt.Sprint(i), "u", "1")}, nil)
	}
	if _, ok := h.Get(store.Ref{Namespace: "ns", Name: "0"}); ok || h.Len() != 2 {
		t.Errorf("tracking %d objects with the oldest kept=%v, want 2 with the oldest forgotten", h.Len(), ok)
	}
	ref := store.Ref{Namespace: "ns", Name: "2"}
	for i := range VersionsPerObject + 5 {
		h.RecordResult(at(time.Second), store.Result{Outcome: store.Modified, Object: obj("ns", "2", "u", fmt.Sprint(i+2))}, nil)
	}
	r, _ := h.Get(ref)
	if r.Len() != VersionsPerObject || r.Forgotten != 6 {
		t.Errorf("%d versions, %d forgotten; want %d and 6", r.Len(), r.Forgotten, VersionsPerObject)
	}
	if got := r.At(r.Len() - 1).RV; got != fmt.Sprint(VersionsPerObject+6) {
		t.Errorf("newest version rv %s, want %d", got, VersionsPerObject+6)
	}
}

func TestVersionChangesComparesBodiesFieldByField(t *testing.T) {
	a := obj("ns", "x", "u", "1")
	a.Body = []byte(`{"metadata":{"resourceVersion":"1"},"data":{"k":"v1","gone":"x"},"spec":{"replicas":2}}`)
	b := obj("ns", "x", "u", "2")
	b.Body = []byte(`{"metadata":{"resourceVersion":"2"},"data":{"k":"v2","new":"y"},"spec":{"replicas":2}}`)
	got := versionChanges(&Version{obj: a, UID: "u", RV: "1"}, &Version{obj: b, UID: "u", RV: "2"}, false)
	want := []string{"resourceVersion 1 → 2", `.data.k: "v1" → "v2"`, `+ .data.new: "y"`, "- .data.gone"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("changes = %q, want %q", got, want)
	}
	// A Secret's: what changed, never the values (they showed base64 of
	// the old and new password, though its JSON below said REDACTED).
	got = versionChanges(&Version{obj: a, UID: "u", RV: "1"}, &Version{obj: b, UID: "u", RV: "2"}, true)
	want = []string{"resourceVersion 1 → 2", ".data.k changed", "+ .data.new", "- .data.gone"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("a Secret's changes = %q, want %q", got, want)
	}
}
