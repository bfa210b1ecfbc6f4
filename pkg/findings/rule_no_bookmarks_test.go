package findings

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

func TestNoBookmarksNeedsAWatchOpenPastTheInterval(t *testing.T) {
	f := newFeed(t, Options{})
	// 70 s without a bookmark, then a bookmark on the next watch: quiet.
	f.request(reflector.VerbWatch, bookmarked, 70*time.Second, 0, &reflector.RequestEnd{Reason: reflector.EndError, Err: errors.New("unexpected EOF")}, nil)
	f.request(reflector.VerbWatch, bookmarked, 5*time.Minute, 5, nil, func() {
		f.advance(60 * time.Second)
		f.bookmark()
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
	})
	if f.has(NoBookmarks) {
		t.Fatalf("no-bookmarks raised on watches that got a bookmark or ended before 75s: %+v", f.e.List())
	}
	// A watch that did not ask for bookmarks is no evidence.
	f.request(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "10", TimeoutSeconds: 600}, 9*time.Minute, 0, nil, nil)
	if f.has(NoBookmarks) {
		t.Fatal("no-bookmarks raised on a watch that did not ask for them")
	}
	// A watch of a resource nothing changed: the server has no newer
	// resourceVersion to bookmark, open 9 minutes or to a timeout.
	f.request(reflector.VerbWatch, bookmarked, 9*time.Minute, 0, nil, nil)
	f.request(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "10", AllowWatchBookmarks: true, TimeoutSeconds: 15}, 15*time.Second, 0, nil, nil)
	// An event 1 s before a 15 s timeout: too late for the bookmark sent 2 s before it.
	f.request(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "10", AllowWatchBookmarks: true, TimeoutSeconds: 15}, 15*time.Second, 1, nil, func() {
		f.advance(14 * time.Second)
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
		f.advance(-14 * time.Second)
	})
	if f.has(NoBookmarks) {
		t.Fatalf("no-bookmarks raised on watches that had nothing to bookmark: %+v", f.e.List())
	}
	// An event at 5 s, then open past 80 s with no bookmark: raised while it
	// is open, at the first note past 75 s after the event.
	f.request(reflector.VerbWatch, bookmarked, 5*time.Minute, 2, nil, func() {
		f.advance(5 * time.Second)
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
		f.advance(70 * time.Second)
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
		if f.has(NoBookmarks) {
			t.Fatal("no-bookmarks raised 70s after the first event")
		}
		f.advance(10 * time.Second)
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
		if !f.has(NoBookmarks) {
			t.Fatal("no-bookmarks not raised on a watch open 80s after its first event without a bookmark")
		}
		f.advance(-85 * time.Second)
	})
	got, _ := f.e.Get(NoBookmarks)
	if got.Count != 1 || got.Severity != Warning || len(f.raised) != 1 {
		t.Fatalf("want one raise counting one watch, got count %d, raised %d: %+v", got.Count, len(f.raised), got)
	}
}

func TestNoBookmarksAtATimeoutNeedsAnEventBeforeThePreTimeoutBookmark(t *testing.T) {
	f := newFeed(t, Options{})
	short := reflector.RequestOptions{ResourceVersion: "10", AllowWatchBookmarks: true, TimeoutSeconds: 15}
	// An event at 5 s of a 15 s watch: the bookmark due 2 s before the timeout never came.
	f.request(reflector.VerbWatch, short, 15*time.Second, 1, nil, func() {
		f.advance(5 * time.Second)
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
		f.advance(-5 * time.Second)
	})
	// One such watch is weak evidence (a loaded healthy server can miss that
	// bookmark); a watch that gets its bookmark after it clears it.
	if got, ok := f.e.Get(NoBookmarks); ok {
		t.Fatalf("no-bookmarks on one watch that ran to its timeout: %+v", got)
	}
	f.request(reflector.VerbWatch, short, 15*time.Second, 1, nil, func() {
		f.advance(5 * time.Second)
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
		f.bookmark()
		f.advance(-5 * time.Second)
	})
	f.request(reflector.VerbWatch, short, 15*time.Second, 1, nil, func() {
		f.advance(5 * time.Second)
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
		f.advance(-5 * time.Second)
	})
	if got, ok := f.e.Get(NoBookmarks); ok {
		t.Fatalf("no-bookmarks on two misses with a bookmark between them: %+v", got)
	}
	f.request(reflector.VerbWatch, short, 15*time.Second, 1, nil, func() {
		f.advance(5 * time.Second)
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
		f.advance(-5 * time.Second)
	})
	got, ok := f.e.Get(NoBookmarks)
	if !ok || got.Count != 2 || !strings.Contains(got.Evidence.Text, "ran to its timeout (15s)") || len(got.Evidence.Requests) != 2 {
		t.Fatalf("want no-bookmarks on the second watch that ran to its timeout 10s after an event: %+v", got)
	}
	// The same with the bookmark: nothing more.
	f.request(reflector.VerbWatch, short, 15*time.Second, 1, nil, func() {
		f.advance(5 * time.Second)
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
		f.bookmark()
		f.advance(-5 * time.Second)
	})
	if got, _ := f.e.Get(NoBookmarks); got.Count != 2 {
		t.Fatalf("a watch that got its bookmark counted: %+v", got)
	}
}

// README promises no-bookmarks on "2 watches in a row (no watch with a
// bookmark between them)": a long watch that had its bookmarks between
// two misses clears the first, though it was checked while it was open.
func TestNoBookmarksALongBookmarkedWatchBetweenTwoMissesClearsThem(t *testing.T) {
	f := newFeed(t, Options{})
	short := reflector.RequestOptions{ResourceVersion: "10", AllowWatchBookmarks: true, TimeoutSeconds: 15}
	miss := func() {
		f.request(reflector.VerbWatch, short, 15*time.Second, 1, nil, func() {
			f.advance(5 * time.Second)
			f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
			f.advance(-5 * time.Second)
		})
	}
	miss()
	// A healthy 5-minute watch with events and a bookmark; its note past
	// 75 s after its first event checks it while it is open.
	f.request(reflector.VerbWatch, bookmarked, 5*time.Minute, 10, nil, func() {
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
		f.advance(50 * time.Second)
		f.bookmark()
		f.advance(40 * time.Second)
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
		f.advance(-90 * time.Second)
	})
	miss()
	if got, ok := f.e.Get(NoBookmarks); ok {
		t.Fatalf("no-bookmarks on two misses with a long watch that had a bookmark between them: %s", got.Detail())
	}
}

// A streaming list's end bookmark is the end of a list, not a progress
// bookmark: a watch past it that gets events and no bookmark for 75 s
// raises no-bookmarks (a ledger counts the two apart).
func TestTheStreamingListsEndBookmarkIsNoProgressBookmark(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	_, w := store.New()
	l := reflector.NewLedger(w, func() time.Time { return now }, 10)
	e := New(Options{Resource: "configmaps.v1"}, l)
	l.OnNote(e.Observe)
	obj := func(name, rv string) reflector.Item {
		return reflector.Item{Object: &store.Object{Namespace: "ns", Name: name, UID: "uid-" + name, ResourceVersion: rv}}
	}
	info := l.StartRequest(reflector.VerbWatch, reflector.RequestOptions{SendInitialEvents: true, ResourceVersionMatch: "NotOlderThan", AllowWatchBookmarks: true, TimeoutSeconds: 600}, now)
	for _, ev := range []reflector.WatchEvent{
		{Type: reflector.EventAdded, Item: obj("a", "10")},
		{Type: reflector.EventBookmark, Item: reflector.Item{Object: &store.Object{ResourceVersion: "11"}}, InitialEventsEnd: true},
	} {
		complete, err := l.Event(info, ev, now)
		if err != nil {
			t.Fatal(err)
		}
		if complete {
			if _, _, err := l.CompleteList("11", reflector.StateWatching); err != nil {
				t.Fatal(err)
			}
		}
	}
	if c, s := l.Counters(), l.Stats(); c.Bookmarks != 0 || c.InitialEventsEnd != 1 || !s.BookmarkAt.IsZero() {
		t.Fatalf("want the end bookmark counted apart, and no last bookmark: %+v, bookmark at %v", c, s.BookmarkAt)
	}
	for i := range 9 {
		now = now.Add(10 * time.Second)
		if _, err := l.Event(info, reflector.WatchEvent{Type: reflector.EventModified, Item: obj("a", fmt.Sprint(12+i))}, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := e.Get(NoBookmarks); !ok {
		t.Errorf("a watch 80 s past its first event with only the list's end bookmark raised no %s: %+v", NoBookmarks, e.List())
	}
}

// The title counts the watches in words that agree with the number.
func TestNoBookmarksTitleCountsItsWatches(t *testing.T) {
	r := &noBookmarks{}
	for n, want := range map[int64]string{1: "no bookmark arrived on 1 watch that asked for them", 3: "no bookmark arrived on 3 watches that asked for them"} {
		e := New(Options{}, nil)
		e.found[NoBookmarks] = &Finding{ID: NoBookmarks, Count: n - 1}
		r.raise(e, time.Time{}, 7, time.Minute, time.Second, false)
		if got := e.found[NoBookmarks].Title; got != want {
			t.Errorf("%d watches: got %q, want %q", n, got, want)
		}
	}
}
