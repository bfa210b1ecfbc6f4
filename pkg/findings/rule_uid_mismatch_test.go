package findings

import (
	"strings"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

func TestUIDMismatchNamesBothUIDs(t *testing.T) {
	f := newFeed(t, Options{})
	f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Replaced,
		Object: &store.Object{Namespace: "a", Name: "x", UID: "new"}, Previous: &store.Object{Namespace: "a", Name: "x", UID: "old"}}})
	f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventDeleted, Applied: &store.Result{Outcome: store.StaleDelete,
		Object: &store.Object{Namespace: "a", Name: "y", UID: "gone"}, Previous: &store.Object{Namespace: "a", Name: "y", UID: "live"}}})
	got, ok := f.e.Get(UIDMismatch)
	if !ok || got.Count != 2 || len(got.Evidence.Objects) != 2 {
		t.Fatalf("want uid-mismatch on two objects: %v %+v", ok, got)
	}
	// README: "or deleted one with another UID than the cached one's (a
	// stale delete ...)": the title says no more than that.
	if got.Title != "another UID under the same name in 2 watch events" {
		t.Errorf("title %q", got.Title)
	}
	if o := got.Evidence.Objects[0]; o.What != "replaced" || o.OldUID != "old" || o.NewUID != "new" {
		t.Errorf("the replaced object: %+v", o)
	}
	if o := got.Evidence.Objects[1]; o.What != "stale delete" || o.OldUID != "live" || o.NewUID != "gone" {
		t.Errorf("the stale delete: %+v", o)
	}
}

// A delete the observing proxy dropped (--fault drop-deletes) makes the
// recreate that follows another UID under the same name: the finding names
// the fault first in its cause, as every finding a fault provokes does (a
// reviewer found it did not, the proxy's note saying it dropped that
// DELETED).
func TestUIDMismatchNamesTheDroppedDeletesAsItsCause(t *testing.T) {
	f := newFeed(t, Options{})
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonFault, Fault: "drop-deletes", Cause: "acted", Count: 1})
	f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventAdded, Applied: &store.Result{Outcome: store.Replaced,
		Object: &store.Object{Namespace: "a", Name: "x", UID: "new"}, Previous: &store.Object{Namespace: "a", Name: "x", UID: "old"}}})
	got, ok := f.e.Get(UIDMismatch)
	const want = "caused by --fault drop-deletes (injected by the observing proxy). "
	if !ok || !strings.HasPrefix(got.Cause, want) {
		t.Fatalf("want the cause to begin %q: %v %q", want, ok, got.Cause)
	}
}
