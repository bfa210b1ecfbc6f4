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

// An object recreated or updated behind the watch, and only ever listed
// before, keeps what the cache held before the relist: its old UID and
// resourceVersion, so the detail says "new instance", not "first version
// seen" (a reviewer found the old UID, what a recreate is about, missing).
func TestARelistsRecreateKeepsTheVersionCachedBeforeIt(t *testing.T) {
	h := NewObjects(10)
	worker, web := store.Ref{Namespace: "ns", Name: "worker-2"}, store.Ref{Namespace: "ns", Name: "web"}
	h.RecordDiff(at(time.Second), &store.RelistDiff{
		Recreated: []store.DiffEntry{{Ref: worker, OldUID: "58caf8c7-0000", OldResourceVersion: "263", NewUID: "9a038b32-0000", NewResourceVersion: "268"}},
		Updated:   []store.DiffEntry{{Ref: web, OldUID: "u-web", OldResourceVersion: "5", NewUID: "u-web", NewResourceVersion: "9"}},
	}, 10, nil)
	for _, c := range []struct {
		ref         store.Ref
		uid, rv     string
		wantChanges string
	}{
		{worker, "58caf8c7-0000", "263", "new instance: uid 58caf8c7 → 9a038b32"},
		{web, "u-web", "5", "resourceVersion 5 → 9"},
	} {
		r, ok := h.Get(c.ref)
		if !ok || r.Len() != 2 || r.At(0).What != "CACHED" || r.At(0).UID != c.uid || r.At(0).RV != c.rv {
			t.Fatalf("%s: %v, want the cached version (uid %s, rv %s) then the relist's", c.ref, ok, c.uid, c.rv)
		}
		if got := r.ChangesOf(1, false); len(got) == 0 || got[0] != c.wantChanges {
			t.Errorf("%s: changes %q, want %q first", c.ref, got, c.wantChanges)
		}
	}
}
