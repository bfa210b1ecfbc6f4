package findings

import (
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

func TestCacheDriftNamesWhatTheAuditFound(t *testing.T) {
	f := newFeed(t, Options{})
	f.note(reflector.Note{Kind: reflector.NoteAudit, Audit: &reflector.AuditReport{ResourceVersion: "50", Listed: 3, Cached: 3}})
	if f.has(CacheDrift) {
		t.Fatal("cache-drift raised on an audit that found none")
	}
	ref := func(n string) store.DiffEntry { return store.DiffEntry{Ref: store.Ref{Namespace: "a", Name: n}} }
	f.note(reflector.Note{Kind: reflector.NoteAudit, Audit: &reflector.AuditReport{ResourceVersion: "60", Listed: 3, Cached: 3,
		Missing: []store.DiffEntry{ref("x")}, Extra: []store.DiffEntry{ref("y")}}})
	got, ok := f.e.Get(CacheDrift)
	if !ok || got.Evidence.ObjectsTotal != 2 || got.Evidence.Objects[0].What != "missing" || got.Evidence.Objects[1].What != "extra" || got.Evidence.Facts["resourceVersion"] != "60" {
		t.Fatalf("want cache-drift naming x missing and y extra: %v %+v", ok, got)
	}
}
