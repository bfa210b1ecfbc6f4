package findings

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

func TestMissedDeletesCountsEveryRelistAndTheWatchsDowntime(t *testing.T) {
	f := newFeed(t, Options{})
	relist := func(rv string, names ...string) {
		diff := &store.RelistDiff{ResourceVersion: rv}
		for _, n := range names {
			diff.Deleted = append(diff.Deleted, store.DiffEntry{Ref: store.Ref{Namespace: "a", Name: n}, OldUID: "u-" + n})
		}
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonRelistDiff, Diff: diff})
	}
	relist("20") // nothing missed: nothing raised
	if f.has(MissedDeletes) {
		t.Fatal("missed-deletes raised on a relist that missed nothing")
	}
	f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
	f.advance(90 * time.Second)
	relist("30", "x", "y")
	relist("40", "z")
	got, ok := f.e.Get(MissedDeletes)
	if !ok || got.Count != 3 || got.Evidence.ObjectsTotal != 3 || got.Evidence.Window == nil || got.Evidence.Window.Seconds != 90 ||
		!strings.Contains(got.Evidence.Text, "down for 1m30s") || !strings.Contains(got.Evidence.Text, "(3 in all, over every relist)") {
		t.Fatalf("want missed-deletes counting 3 over two relists, the watch down 90s: %v %+v", ok, got)
	}
}
