package findings

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

func TestMissedDeletesCountsEveryRelistAndTheWatchsDowntime(t *testing.T) {
	f := newFeed(t, Options{})
	relist := func(rv string, names ...string) {
		// As the ledger says it: the list complete, then what it found.
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: rv})
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
	f.advance(12 * time.Second)
	relist("40", "z")
	got, ok := f.e.Get(MissedDeletes)
	// The last relist's downtime begins at the list before it, 12 s
	// earlier, not at the last event before that list (it said 1m42s);
	// the window spans both relists' (90 s and 12 s), so that it holds
	// every object listed (a reviewer found two of three outside it).
	if !ok || got.Count != 3 || got.Evidence.ObjectsTotal != 3 || got.Evidence.Window == nil || got.Evidence.Window.Seconds != 102 ||
		!strings.Contains(got.Evidence.Text, "down for 12s before it, from its last sign of life") || !strings.Contains(got.Evidence.Text, "(3 in all, over 2 relists; the window spans them all)") {
		t.Fatalf("want missed-deletes counting 3 over two relists, down 12s, the window 102s: %v %+v", ok, got)
	}
}

// Deletes the observing proxy dropped on purpose (proxy --fault) are missed
// deletes that the fault caused: the finding says so first in its cause,
// naming each fault that provokes it, as given; a fault that provokes
// something else is not named.
func TestMissedDeletesNamesTheInjectedFaultsAsItsCause(t *testing.T) {
	f := newFeed(t, Options{})
	for _, spec := range []string{"drop-deletes@p=0.5", "delay=300ms", "gone@every=20s"} {
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonFault, Fault: spec, Cause: "acted", Count: 1})
	}
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "9"})
	diff := &store.RelistDiff{ResourceVersion: "9", Deleted: []store.DiffEntry{{Ref: store.Ref{Namespace: "a", Name: "x"}, OldUID: "u-x"}}}
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonRelistDiff, Diff: diff})
	got, ok := f.e.Get(MissedDeletes)
	const want = "caused by --fault drop-deletes@p=0.5, --fault gone@every=20s (injected by the observing proxy). "
	if !ok || !strings.HasPrefix(got.Cause, want) || strings.Count(got.Cause, "caused by --fault") != 1 {
		t.Fatalf("want the cause to begin %q: %v %q", want, ok, got.Cause)
	}
	// The server sent the deletes, and the proxy left them out: the
	// cause says that, not that history was gone.
	if !strings.Contains(got.Cause, "the DELETED events were left out on their way to the client") || strings.Contains(got.Cause, "history was gone") {
		t.Errorf("cause %q, want it to say the deletes were left out", got.Cause)
	}
	// A second relist that missed more: the faults are named once.
	diff = &store.RelistDiff{ResourceVersion: "12", Deleted: []store.DiffEntry{{Ref: store.Ref{Namespace: "a", Name: "y"}, OldUID: "u-y"}}}
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonRelistDiff, Diff: diff})
	if got, _ := f.e.Get(MissedDeletes); strings.Count(got.Cause, "caused by --fault") != 1 || got.Count != 2 {
		t.Fatalf("after a second relist: count %d, cause %q", got.Count, got.Cause)
	}
}

// The evidence links the watch that missed the deletes (the last that
// ended before the relist's list), then the relist that found them; a
// reviewer found only the relist linked.
func TestMissedDeletesLinksTheWatchThatMissedThemAndTheRelist(t *testing.T) {
	f := newFeed(t, Options{})
	f.request(reflector.VerbList, reflector.RequestOptions{}, time.Second, 0, nil, nil) // #1, the first list
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "10"})
	f.request(reflector.VerbWatch, bookmarked, time.Minute, 3, &reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 410}}, nil) // #2
	f.request(reflector.VerbList, reflector.RequestOptions{}, time.Second, 0, nil, func() {                                                               // #3, the relist
		f.advance(time.Second)
		f.relistFindsXDeleted()
	})
	got, ok := f.e.Get(MissedDeletes)
	if !ok || !slices.Equal(got.Evidence.Requests, []int64{2, 3}) {
		t.Fatalf("want missed-deletes linking watch #2 and relist #3: %v %v", ok, got.Evidence.Requests)
	}

	// The watch that delivered, cut; its resume answered 410 at once (a
	// compaction, or the proxy's --fault gone); the relist: all three are
	// linked, the one that was up first (a reviewer saw only the resume).
	f = newFeed(t, Options{})
	f.request(reflector.VerbList, reflector.RequestOptions{}, time.Second, 0, nil, nil) // #1
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "10"})
	f.request(reflector.VerbWatch, bookmarked, time.Minute, 1, &reflector.RequestEnd{Reason: reflector.EndClosed}, func() { // #2, delivered an event
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
	})
	f.request(reflector.VerbWatch, bookmarked, time.Millisecond, 0, &reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 410}}, nil) // #3
	f.request(reflector.VerbList, reflector.RequestOptions{}, time.Second, 0, nil, func() {                                                                    // #4
		f.relistFindsXDeleted()
	})
	if got, ok := f.e.Get(MissedDeletes); !ok || !slices.Equal(got.Evidence.Requests, []int64{2, 3, 4}) {
		t.Fatalf("want missed-deletes linking watch #2, its resume #3 and relist #4: %v %v", ok, got.Evidence.Requests)
	}
}

// Deletes the proxy dropped on purpose came while the watch was up: the
// window runs from the list before the relist, not from the watch's last
// sign of life (a reviewer read "down for 4ms" of deletes made 12 s before).
// Drops before that list are not counted: deletes made while no watch was
// open are not said to be dropped (a reviewer read "the watch was up" of
// two deletes made between a 410 and the resume).
func TestMissedDeletesDroppedByTheProxyLieBetweenTheTwoLists(t *testing.T) {
	for _, dropped := range []string{"none", "before the list", "on the watch"} {
		f := newFeed(t, Options{})
		drop := func() {
			f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonFault, Fault: "drop-deletes", Cause: "acted", Count: 1})
		}
		if dropped == "before the list" {
			drop()
		}
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "10"})
		f.request(reflector.VerbWatch, bookmarked, 10*time.Second, 1, nil, func() {
			f.advance(5 * time.Second)
			f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
			if dropped == "on the watch" {
				drop()
			}
		})
		f.advance(time.Second)
		f.relistFindsXDeleted()
		got, ok := f.e.Get(MissedDeletes)
		want, seconds := "the watch was down for 1s before it", 1.0
		if dropped == "on the watch" {
			want, seconds = "in the 16s from the list before it to the relist, the observing proxy dropped 1 DELETED event on an open watch", 16
		}
		if !ok || got.Evidence.Window == nil || got.Evidence.Window.Seconds != seconds || !strings.Contains(got.Evidence.Text, want) || strings.Contains(got.Evidence.Text, "the other") {
			t.Errorf("dropped %s: want the window %vs and %q: %v %+v", dropped, seconds, want, ok, got.Evidence)
		}
	}

	// Three deletes found, one dropped: the other two are said to be
	// missed otherwise, in the evidence and in the cause.
	f := newFeed(t, Options{})
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "10"})
	f.request(reflector.VerbWatch, bookmarked, 10*time.Second, 1, nil, func() {
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonFault, Fault: "drop-deletes", Cause: "acted", Count: 1})
	})
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "30"})
	diff := &store.RelistDiff{ResourceVersion: "30", Deleted: []store.DiffEntry{{Ref: store.Ref{Namespace: "a", Name: "x"}}, {Ref: store.Ref{Namespace: "a", Name: "y"}}, {Ref: store.Ref{Namespace: "a", Name: "z"}}}}
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonRelistDiff, Diff: diff})
	got, _ := f.e.Get(MissedDeletes)
	if !strings.Contains(got.Evidence.Text, "dropped 1 DELETED event on an open watch: the other 2 were never sent to it (made while no watch was open)") ||
		!strings.Contains(got.Cause, "the observing proxy left DELETED events out on their way to the client, and history was gone") {
		t.Errorf("one dropped of three: %q\n%q", got.Evidence.Text, got.Cause)
	}
}

// A watch that was open and said nothing after the last sign of life (its
// deletes dropped on the way, say, by a proxy the client cannot see) was
// not down: the evidence says how long a watch was open in the window and
// links it, and the cause does not blame history alone (a reviewer read
// "the watch was down for 15.8s" of a watch open for 15 s of it).
func TestMissedDeletesSaysAWatchWasOpenButSilent(t *testing.T) {
	f := newFeed(t, Options{})
	f.request(reflector.VerbList, reflector.RequestOptions{}, time.Second, 0, nil, nil) // #1
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "10"})
	f.deliveringWatch(5 * time.Second) // #2
	f.advance(500 * time.Millisecond)
	f.request(reflector.VerbWatch, bookmarked, 15*time.Second, 0, nil, nil) // #3, open and silent
	f.advance(300 * time.Millisecond)
	f.request(reflector.VerbWatch, bookmarked, time.Millisecond, 0, &reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 410}}, nil) // #4
	f.request(reflector.VerbList, reflector.RequestOptions{}, time.Second, 0, nil, func() {                                                                    // #5, the relist
		f.relistFindsXDeleted()
	})
	got, ok := f.e.Get(MissedDeletes)
	if !ok {
		t.Fatal("missed-deletes not raised")
	}
	const want = "in the 15.8s from the watch's last sign of life (an event, a list, or the end of a watch that delivered one) to the relist, a watch was open for 15s and delivered nothing"
	if !strings.Contains(got.Evidence.Text, want) || strings.Contains(got.Evidence.Text, "down") {
		t.Errorf("evidence %q, want it to say %q", got.Evidence.Text, want)
	}
	if !slices.Equal(got.Evidence.Requests, []int64{2, 3, 4, 5}) {
		t.Errorf("requests %v, want the watch that delivered (#2), the silent one (#3), the 410 (#4) and the relist (#5)", got.Evidence.Requests)
	}
	if !strings.Contains(got.Cause, "lost on a watch that was open") {
		t.Errorf("cause %q, want it to say the deletes may have been lost on the open watch", got.Cause)
	}
}

// A streaming list that broke before its end bookmark was a list in
// progress, not a watch open and silent: its time is not counted as such.
func TestMissedDeletesDoesNotTakeABrokenStreamingListForASilentWatch(t *testing.T) {
	f := newFeed(t, Options{})
	f.request(reflector.VerbList, reflector.RequestOptions{}, time.Second, 0, nil, nil) // #1
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "10"})
	f.deliveringWatch(5 * time.Second) // #2
	streaming := reflector.RequestOptions{SendInitialEvents: true, AllowWatchBookmarks: true}
	f.request(reflector.VerbWatch, streaming, 10*time.Second, 0, &reflector.RequestEnd{Reason: reflector.EndError}, nil) // #3, broke
	f.request(reflector.VerbList, reflector.RequestOptions{}, time.Second, 0, nil, func() {                              // #4
		f.relistFindsXDeleted()
	})
	got, ok := f.e.Get(MissedDeletes)
	if !ok || !strings.Contains(got.Evidence.Text, "the watch was down for 10s before it") || strings.Contains(got.Cause, "lost on a watch that was open") {
		t.Errorf("want the watch down for the 10s of the broken streaming list, no silent watch: %v %q %q", ok, got.Evidence.Text, got.Cause)
	}
}

// relistFindsXDeleted is a relist's list completing at resourceVersion 30,
// and its diff: a/x deleted, which the watch never said.
func (f *feed) relistFindsXDeleted() {
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "30"})
	diff := &store.RelistDiff{ResourceVersion: "30", Deleted: []store.DiffEntry{{Ref: store.Ref{Namespace: "a", Name: "x"}, OldUID: "u-x"}}}
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonRelistDiff, Diff: diff})
}

// deliveringWatch is a watch open for d that applied one event.
func (f *feed) deliveringWatch(d time.Duration) {
	f.request(reflector.VerbWatch, bookmarked, d, 1, nil, func() {
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
	})
}
