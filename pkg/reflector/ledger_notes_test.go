package reflector

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// The ledger says every fact once, in causal order, and keeps the running
// totals every view reads: a list's beginning (with its cause), each page,
// each bookmark (a streaming list's end apart), what a relist missed.
func TestTheLedgerNotesListsPagesAndBookmarksAndCountsTheirTotals(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	_, w := store.New()
	l := NewLedger(w, func() time.Time { return now }, 10)
	var notes []Note
	l.OnNote(func(n Note) { notes = append(notes, n) })
	obj := func(name, uid, rv string) Item {
		return Item{Object: &store.Object{Namespace: "ns", Name: name, UID: uid, ResourceVersion: rv}}
	}

	// A first list of two pages.
	l.Decide(Decision{State: StateListing, Reason: ReasonInitialList, List: &ListMethod{PageSize: 2}})
	for _, p := range []*Page{{Items: []Item{obj("a", "ua", "5"), obj("b", "ub", "6")}, Continue: "c", Bytes: 100}, {Items: []Item{obj("c", "uc", "7")}, ResourceVersion: "10", Bytes: 50}} {
		info := l.StartRequest(VerbList, RequestOptions{Limit: 2, Continue: map[bool]string{true: "c"}[p.Continue == ""]}, time.Time{})
		l.ReceivedPage(info, p)
		l.EndRequest(info, &RequestEnd{Reason: EndClosed})
		if err := l.ApplyPage(info, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := l.CompleteList("10", StateWatching); err != nil {
		t.Fatal(err)
	}
	// A watch: a bookmark, an event, then 410 Gone.
	now = now.Add(time.Minute)
	watch := l.StartRequest(VerbWatch, RequestOptions{ResourceVersion: "10", AllowWatchBookmarks: true}, time.Time{})
	for _, ev := range []WatchEvent{{Type: EventBookmark, Item: Item{Object: &store.Object{ResourceVersion: "11"}}}, {Type: EventModified, Item: obj("a", "ua", "12")}} {
		if _, err := l.Event(watch, ev, now); err != nil {
			t.Fatal(err)
		}
	}
	l.EndRequest(watch, &RequestEnd{Reason: EndError, Status: &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired}})
	l.Decide(Decision{State: StateRelisting, Reason: ReasonGone, ResourceVersion: "12"})
	// The relist, streamed: b deleted, c recreated while the watch was gone.
	now = now.Add(time.Second)
	stream := l.StartRequest(VerbWatch, RequestOptions{SendInitialEvents: true, AllowWatchBookmarks: true}, time.Time{})
	for _, ev := range []WatchEvent{
		{Type: EventAdded, Item: obj("a", "ua", "12")}, {Type: EventAdded, Item: obj("c", "uc2", "15")},
		{Type: EventBookmark, Item: Item{Object: &store.Object{ResourceVersion: "20"}}, InitialEventsEnd: true},
	} {
		complete, err := l.Event(stream, ev, now)
		if err != nil {
			t.Fatal(err)
		}
		if complete {
			diff, relist, err := l.CompleteList("20", StateWatching)
			if err != nil {
				t.Fatal(err)
			}
			l.NoteRelistDiff("20", diff, relist)
		}
	}

	var kinds []string
	var began []ListBegan
	var bookmarks []Bookmark
	var complete []Decision
	for _, n := range notes {
		kinds = append(kinds, string(n.Kind)+":"+string(n.Reason()))
		switch {
		case n.Kind == NoteListBegan:
			began = append(began, *n.List)
		case n.Kind == NoteBookmark:
			bookmarks = append(bookmarks, *n.Bookmark)
		case n.Reason() == ReasonListComplete:
			complete = append(complete, *n.Decision)
		}
	}
	wantKinds := []string{"decision:initial-list",
		"request-started:", "request-ended:", "list-began:", "page:",
		"request-started:", "request-ended:", "page:", "decision:list-complete",
		"request-started:", "bookmark:", "applied:", "request-ended:", "decision:gone",
		"request-started:", "list-began:", "bookmark:", "decision:list-complete", "decision:relist-diff"}
	if !reflect.DeepEqual(kinds, wantKinds) {
		t.Errorf("notes:\n got %v\nwant %v", kinds, wantKinds)
	}
	if want := []ListBegan{{Number: 1}, {Number: 2, Cause: CauseGone, Stream: true, After: watch.ID}}; !reflect.DeepEqual(began, want) {
		t.Errorf("lists began: got %+v, want %+v", began, want)
	}
	if want := []Bookmark{{ResourceVersion: "11"}, {ResourceVersion: "20", ListEnd: true}}; !reflect.DeepEqual(bookmarks, want) {
		t.Errorf("bookmarks: got %+v, want %+v", bookmarks, want)
	}
	if len(complete) != 2 || !complete[0].Decided || complete[0].Relist || !complete[1].Decided || !complete[1].Relist || complete[1].Took != time.Second {
		t.Errorf("list-complete decisions: %+v", complete)
	}
	// A list's time runs from the request that began it (its first page's,
	// the streaming watch's), not from the decision to list.
	if first := stream.Started.Add(-time.Minute - time.Second); len(complete) == 2 && (!complete[0].Began.Equal(first) || !complete[1].Began.Equal(stream.Started)) {
		t.Errorf("lists began at %v and %v, want %v and %v", complete[0].Began, complete[1].Began, first, stream.Started)
	}
	st := l.Stats()
	want := Totals{Requests: 4, Relists: RelistCounts{Gone: 1}, Lists: ListResults{Complete: 2}, Gone: GoneOn{Watch: 1},
		Pages: PageResults{OK: 2}, Missed: MissedCounts{Deletes: 1, Recreates: 1, Updates: 0}, Decisions: 5}
	if st.Totals != want {
		t.Errorf("totals:\n got %+v\nwant %+v", st.Totals, want)
	}
	if c := st.Counters; c.Lists != 2 || c.Relists != 1 || c.Bookmarks != 1 || c.InitialEventsEnd != 1 || c.Gone != 1 || c.Modified != 1 {
		t.Errorf("counters: %+v", c)
	}
	// Facts share the Seq of the note before them.
	for i, n := range notes {
		if n.Kind.Fact() && (i == 0 || n.Seq != notes[i-1].Seq) {
			t.Errorf("note %d (%s) has seq %d after %d", i, n.Kind, n.Seq, notes[i-1].Seq)
		}
	}
}

// A request's started note is at the time it was sent: an observed
// request is fed to its ledger once its answer came, and "started" at the
// answer's time made a 6 s LIST look as if it took no time.
func TestARequestStartedNoteIsAtTheTimeTheRequestWasSent(t *testing.T) {
	now := time.Date(2026, 12, 6, 3, 36, 31, 886e6, time.UTC)
	_, w := store.New()
	l := NewLedger(w, func() time.Time { return now }, 10)
	var notes []Note
	l.OnNote(func(n Note) { notes = append(notes, n) })
	sent := now.Add(-6 * time.Second)
	info := l.StartRequest(VerbList, RequestOptions{}, sent)
	l.EndRequest(info, &RequestEnd{Reason: EndClosed})
	l.StartRequest(VerbWatch, RequestOptions{ResourceVersion: "5"}, time.Time{}) // sent now
	if len(notes) != 3 {
		t.Fatalf("%d notes, want 3", len(notes))
	}
	if !notes[0].At.Equal(sent) || !notes[1].At.Equal(now) || !notes[2].At.Equal(now) {
		t.Errorf("started at %v, ended at %v, next started at %v; want %v, %v, %v", notes[0].At, notes[1].At, notes[2].At, sent, now, now)
	}
	// A request sent before the last note (the proxy passes a list on
	// before it has decoded it, and its client's watch comes meanwhile):
	// its note is at the last note's time, never before; its RequestInfo
	// keeps when it was sent.
	early := now.Add(-3 * time.Millisecond)
	info = l.StartRequest(VerbWatch, RequestOptions{ResourceVersion: "6"}, early)
	if last := notes[len(notes)-1]; !last.At.Equal(now) || !info.Started.Equal(early) {
		t.Errorf("a request sent at %v after a note at %v: its note at %v, started %v", early, now, last.At, info.Started)
	}
}

// A bookmark's note comes before what moving the cursor to it decides, as
// an event's does: a view reads "went backwards" after what went back.
func TestABookmarkBehindTheCursorIsNotedBeforeItsDecision(t *testing.T) {
	_, w := store.New()
	l := NewLedger(w, time.Now, 10)
	var kinds []string
	l.OnNote(func(n Note) { kinds = append(kinds, string(n.Kind)+":"+string(n.Reason())) })
	l.Decide(Decision{State: StateListing, Reason: ReasonInitialList})
	listEmpty(t, l, l.StartRequest(VerbList, RequestOptions{}, time.Time{}), "10")
	watch := l.StartRequest(VerbWatch, RequestOptions{ResourceVersion: "10", AllowWatchBookmarks: true}, time.Time{})
	kinds = nil
	for _, ev := range []WatchEvent{
		{Type: EventModified, Item: Item{Object: &store.Object{Namespace: "ns", Name: "a", UID: "ua", ResourceVersion: "9"}}},
		{Type: EventBookmark, Item: Item{Object: &store.Object{ResourceVersion: "8"}}},
	} {
		if _, err := l.Event(watch, ev, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"applied:", "decision:resource-version-backwards", "bookmark:", "decision:resource-version-backwards"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("notes:\n got %v\nwant %v", kinds, want)
	}
}

// An observed client's list is decided as its answer comes, 6 s after its
// request was sent: the list took those 6 s (list_duration_seconds said
// microseconds), as a list decided before its request takes from the
// decision.
func TestAListDecidedAfterItsRequestWasSentTookFromTheRequest(t *testing.T) {
	now := time.Date(2026, 12, 6, 21, 8, 31, 0, time.UTC)
	_, w := store.New()
	l := NewLedger(w, func() time.Time { return now }, 10)
	var took []time.Duration
	l.OnNote(func(n Note) {
		if n.Reason() == ReasonListComplete {
			took = append(took, n.Decision.Took)
		}
	})
	list := func(sent time.Time, decideFirst bool, answeredAfter time.Duration) {
		if decideFirst {
			l.Decide(Decision{State: StateListing, Reason: ReasonInitialList})
		}
		info := l.StartRequest(VerbList, RequestOptions{}, sent)
		now = now.Add(answeredAfter)
		if !decideFirst {
			l.Decide(Decision{State: StateListing, Reason: ReasonInitialList})
		}
		listEmpty(t, l, info, "10")
	}
	list(now.Add(-6*time.Second), false, 0) // the proxy's: sent 6 s before, decided now
	list(time.Time{}, true, 2*time.Second)  // our reflector's: decided, sent, answered 2 s later
	if len(took) != 2 || took[0] != 6*time.Second || took[1] != 2*time.Second {
		t.Errorf("lists took %v, want 6s (from the request sent before the decision) and 2s (from the decision)", took)
	}
}

// listEmpty answers the LIST info with no object at rv and completes the list.
func listEmpty(t *testing.T, l *Ledger, info *RequestInfo, rv string) {
	t.Helper()
	p := &Page{ResourceVersion: rv}
	l.ReceivedPage(info, p)
	l.EndRequest(info, &RequestEnd{Reason: EndClosed})
	if err := l.ApplyPage(info, p); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.CompleteList(rv, StateWatching); err != nil {
		t.Fatal(err)
	}
}
