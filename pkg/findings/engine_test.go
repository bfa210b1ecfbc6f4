package findings

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// feed builds notes as a reflector's ledger would, on a clock the test moves.
type feed struct {
	t        *testing.T
	e        *Engine
	now      time.Time
	seq      uint64
	id       int64
	counters reflector.Counters
	lag      reflector.LagStats
	raised   []Finding
}

// Counters and Lag make the feed the engine's Source.
func (f *feed) Counters() reflector.Counters { return f.counters }
func (f *feed) Lag() reflector.LagStats      { return f.lag }

// bookmark notes a progress bookmark of the request in flight.
func (f *feed) bookmark() {
	f.counters.Bookmarks++
	f.note(reflector.Note{Kind: reflector.NoteBookmark, Bookmark: &reflector.Bookmark{ResourceVersion: "11"}})
}

// listBegan notes a relist that began, for cause (after a first list).
func (f *feed) listBegan(cause reflector.ListCause) {
	f.counters.Lists = max(f.counters.Lists, 1) + 1
	b := reflector.ListBegan{Number: f.counters.Lists}
	if b.Relist() {
		f.counters.Relists++
		b.Cause = cause
	}
	f.note(reflector.Note{Kind: reflector.NoteListBegan, List: &b})
}

func newFeed(t *testing.T, opts Options) *feed {
	f := &feed{t: t, now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	f.e = New(opts, f)
	f.e.OnRaise(func(x Finding) { f.raised = append(f.raised, x) })
	return f
}

func (f *feed) note(n reflector.Note) {
	f.seq++
	n.Seq, n.At = f.seq, f.now
	if n.RequestID == 0 {
		n.RequestID = f.id
	}
	f.e.Observe(n)
}

func (f *feed) advance(d time.Duration) { f.now = f.now.Add(d) }

// request runs one request of d with events, ended by end (nil: closed).
func (f *feed) request(verb reflector.Verb, opts reflector.RequestOptions, d time.Duration, events int, end *reflector.RequestEnd, during func()) {
	f.id++
	info := reflector.RequestInfo{ID: f.id, Verb: verb, Opts: opts, Started: f.now}
	started := info
	f.note(reflector.Note{Kind: reflector.NoteRequestStarted, Request: &started})
	if during != nil {
		during()
	}
	f.advance(d)
	if end == nil {
		end = &reflector.RequestEnd{Reason: reflector.EndClosed}
	}
	info.Duration, info.Events, info.End = d, events, end
	f.note(reflector.Note{Kind: reflector.NoteRequestEnded, Request: &info})
}

func (f *feed) decide(d reflector.Decision) {
	f.note(reflector.Note{Kind: reflector.NoteDecision, Decision: &d})
}

func (f *feed) has(id ID) bool {
	_, ok := f.e.Get(id)
	return ok
}

var bookmarked = reflector.RequestOptions{ResourceVersion: "10", AllowWatchBookmarks: true, TimeoutSeconds: 600}

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

func TestRelistStormNeedsThreeRelistsInTheWindow(t *testing.T) {
	f := newFeed(t, Options{})
	relist := func() {
		f.decide(reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonGone, ResourceVersion: "5"})
		f.request(reflector.VerbList, reflector.RequestOptions{}, 100*time.Millisecond, 0, nil, nil)
		f.listBegan(reflector.CauseGone)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "20"})
	}
	relist()
	f.advance(6 * time.Minute)
	relist()
	f.advance(6 * time.Minute) // the first is out of the window now
	relist()
	if f.has(RelistStorm) {
		t.Fatal("relist-storm raised on 2 relists within 10 minutes")
	}
	f.advance(time.Minute)
	relist()
	got, ok := f.e.Get(RelistStorm)
	if !ok || got.Count != 3 || got.Severity != Error {
		t.Fatalf("want relist-storm with 3 relists, got %v %+v", ok, got)
	}
	if got.Evidence.Window == nil || got.Evidence.Window.Seconds < 7*60 {
		t.Fatalf("the window should span the three relists: %+v", got.Evidence.Window)
	}
}

func TestRelistStormSaysThe410sCameOnReconnect(t *testing.T) {
	f := newFeed(t, Options{})
	gone := &reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired}}
	for range 3 {
		// A watch that ran a minute, cut by a restart; the reconnect's
		// watch waits 3 s for the restarted server's watch cache, then 410.
		f.request(reflector.VerbWatch, bookmarked, time.Minute, 5, &reflector.RequestEnd{Reason: reflector.EndError, Err: errors.New("connection reset by peer")}, nil)
		f.advance(time.Second)
		f.request(reflector.VerbWatch, bookmarked, 3*time.Second, 0, gone, nil)
		f.decide(reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonGone, ResourceVersion: "5"})
		f.request(reflector.VerbList, reflector.RequestOptions{}, 100*time.Millisecond, 0, nil, nil)
		f.listBegan(reflector.CauseGone)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "20"})
	}
	got, ok := f.e.Get(RelistStorm)
	if !ok || !strings.Contains(got.Cause, "3 410 Gone came right after a reconnect") {
		t.Fatalf("want the 410s on reconnect as the cause: %v %+v", ok, got)
	}
}

func TestFlappingCountsOnlyWatchesThatWereOpen(t *testing.T) {
	f := newFeed(t, Options{})
	refused := &reflector.RequestEnd{Reason: reflector.EndError, Err: errors.New(`Get "https://127.0.0.1:6443/api/v1/configmaps?watch=true": dial tcp 127.0.0.1:6443: connect: connection refused`)}
	unavailable := &reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 503, Message: "unavailable"}}
	short := reflector.RequestOptions{ResourceVersion: "10", TimeoutSeconds: 2}
	for range 6 {
		f.request(reflector.VerbWatch, bookmarked, time.Millisecond, 0, refused, nil)
		f.request(reflector.VerbWatch, bookmarked, time.Millisecond, 0, unavailable, nil)
		f.request(reflector.VerbWatch, short, 2*time.Second, 0, nil, nil) // ran to the timeout it asked for
		f.advance(10 * time.Second)
	}
	if f.has(WatchFlapping) {
		t.Fatalf("watch-flapping raised on refused connections, error answers and short timeouts: %+v", f.e.List())
	}
	cut := &reflector.RequestEnd{Reason: reflector.EndError, Err: errors.New("reading watch stream: unexpected EOF")}
	for i := range 5 {
		f.request(reflector.VerbWatch, bookmarked, 2*time.Second, 0, cut, nil)
		if i < 4 && f.has(WatchFlapping) {
			t.Fatalf("watch-flapping raised after %d cuts", i+1)
		}
	}
	got, ok := f.e.Get(WatchFlapping)
	if !ok || got.Count != 5 || got.Evidence.Facts["typicalLifetime"] != "2s" {
		t.Fatalf("want watch-flapping over 5 watches of 2s, got %v %+v", ok, got)
	}
}

func TestIgnoredFindingsAreKeptAndMarked(t *testing.T) {
	f := newFeed(t, Options{})
	f.e.Configure(Options{Ignore: []ID{MissedDeletes}})
	diff := &store.RelistDiff{ResourceVersion: "30", Deleted: []store.DiffEntry{{Ref: store.Ref{Namespace: "a", Name: "x"}, OldUID: "u1"}},
		Recreated: []store.DiffEntry{{Ref: store.Ref{Namespace: "a", Name: "y"}, OldUID: "u2", NewUID: "u3"}}}
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonRelistDiff, Diff: diff})
	got, ok := f.e.Get(MissedDeletes)
	if !ok || !got.Ignored || got.Count != 2 || len(got.Evidence.Objects) != 2 || got.Evidence.Objects[1].NewUID != "u3" {
		t.Fatalf("want an ignored missed-deletes naming both objects, got %v %+v", ok, got)
	}
	if n := CountAtLeast(f.e.List(), Warning); n != 0 {
		t.Fatalf("an ignored finding is counted: %d", n)
	}
}

func TestStreamRefusalIsInfoUnlessAskedFor(t *testing.T) {
	for _, asked := range []bool{false, true} {
		f := newFeed(t, Options{StreamAsked: asked})
		f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialList})
		f.request(reflector.VerbWatch, reflector.RequestOptions{SendInitialEvents: true, AllowWatchBookmarks: true}, 5*time.Millisecond, 0,
			&reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 422}}, nil)
		f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonStreamRefused, Cause: "422 Invalid: sendInitialEvents is forbidden"})
		f.request(reflector.VerbList, reflector.RequestOptions{Limit: 500}, 2*time.Second, 0, nil, nil)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, Objects: 1200})
		got, ok := f.e.Get(WatchListUnsupported)
		want := Info
		if asked {
			want = Warning
		}
		if !ok || got.Severity != want || got.Evidence.Facts["listObjects"] != "1200" {
			t.Fatalf("asked=%v: want %s with the LIST's cost, got %v %+v", asked, want, ok, got)
		}
	}
}

func TestThrottledSkipsTheCacheInitializing429(t *testing.T) {
	f := newFeed(t, Options{})
	f.request(reflector.VerbWatch, bookmarked, time.Millisecond, 0, &reflector.RequestEnd{Reason: reflector.EndError,
		Status: &metav1.Status{Code: 429, Message: "storage is (re)initializing"}}, nil)
	if f.has(Throttled) {
		t.Fatal("a watch cache initializing after a restart is not throttling")
	}
	f.request(reflector.VerbList, reflector.RequestOptions{}, time.Millisecond, 0, &reflector.RequestEnd{Reason: reflector.EndError,
		Status:   &metav1.Status{Code: 429, Message: "Too many requests, please try again later."},
		Throttle: &reflector.Throttle{RetryAfter: time.Second, FlowSchemaUID: "fs-1", FlowSchema: "tight", PriorityLevelUID: "pl-1"}}, nil)
	got, ok := f.e.Get(Throttled)
	if !ok || got.Evidence.Facts["flowSchema"] != "tight (uid fs-1)" || got.Evidence.Facts["priorityLevel"] != "uid pl-1" || got.Evidence.Facts["retryAfter"] != "1s" {
		t.Fatalf("want throttled naming the flow schema, got %v %+v", ok, got)
	}
}

// BenchmarkObserveApplied is the engine's cost per applied watch event, the
// note a busy watch makes most.
func BenchmarkObserveApplied(b *testing.B) {
	e := New(Options{}, &feed{})
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	started := reflector.RequestInfo{ID: 1, Verb: reflector.VerbWatch, Opts: bookmarked, Started: at}
	e.Observe(reflector.Note{Seq: 1, At: at, Kind: reflector.NoteRequestStarted, Request: &started})
	res := &store.Result{Outcome: store.Modified}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		e.Observe(reflector.Note{Seq: uint64(i + 2), At: at.Add(time.Duration(i) * time.Millisecond), Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: res})
	}
}

func TestSlowDeliveryNeedsEnoughLateEventsOrProbeSamples(t *testing.T) {
	f := newFeed(t, Options{})
	applied := func(lag time.Duration) {
		f.lag.Counts[reflector.LagBucketOf(lag)]++
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified},
			Delivery: reflector.Delivery{Written: f.now.Add(-lag), Lag: lag}})
	}
	for range 10 {
		applied(20 * time.Second)
	}
	if f.has(SlowDelivery) {
		t.Fatal("slow-delivery raised on 10 events")
	}
	// One old object's late event among 40 (the p99 of under 100 events is
	// the slowest), then a second: no evidence yet; the third is.
	f = newFeed(t, Options{})
	for range 40 {
		applied(300 * time.Millisecond)
	}
	applied(10 * time.Minute)
	applied(20 * time.Second)
	if f.has(SlowDelivery) {
		t.Fatal("slow-delivery raised on 2 late events of 42")
	}
	applied(20 * time.Second)
	if !f.has(SlowDelivery) {
		t.Fatal("no slow-delivery on 3 late events of 43")
	}
	g0 := newFeed(t, Options{})
	f = g0
	for range 200 {
		applied(3 * time.Second)
	}
	applied(20 * time.Second) // 1 in 201: the p99 is still in 2-5s
	if f.has(SlowDelivery) {
		t.Fatal("slow-delivery raised when the p99 is in 2-5s")
	}
	for range 9 {
		applied(20 * time.Second)
	}
	got, ok := f.e.Get(SlowDelivery)
	if !ok || got.Count != 10 || got.Evidence.Facts["lag"] != "<2s 0, 2-5s 200, 5-15s 0, 15-60s 10, >60s 0" {
		t.Fatalf("want slow-delivery counting 10 late events, got %v %+v", ok, got)
	}

	g := newFeed(t, Options{})
	g.e.Probe(g.now, 4, 1, time.Second, 3*time.Second, 100*time.Millisecond)
	g.e.Probe(g.now, 5, 0, time.Second, 1900*time.Millisecond, 100*time.Millisecond)
	if g.has(SlowDelivery) {
		t.Fatal("slow-delivery raised on 4 samples, or a p99 under 2s")
	}
	g.e.Probe(g.now, 5, 1, time.Second, 2500*time.Millisecond, 100*time.Millisecond)
	g.e.Probe(g.now, 6, 2, time.Second, 2500*time.Millisecond, 100*time.Millisecond)
	if g.has(SlowDelivery) {
		t.Fatal("slow-delivery raised on 2 slow samples: under 100 samples the p99 is the slowest")
	}
	g.e.Probe(g.now, 7, 3, time.Second, 2500*time.Millisecond, 100*time.Millisecond)
	if got, ok := g.e.Get(SlowDelivery); !ok || got.Evidence.Facts["probe p99"] != "2.5s" || len(g.raised) != 1 {
		t.Fatalf("want slow-delivery from the probe, raised once, got %v %+v", ok, got)
	}
}

func TestRelistsTheUserForcedAreNoStorm(t *testing.T) {
	f := newFeed(t, Options{})
	for range 4 {
		f.decide(reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonForcedRelist})
		f.request(reflector.VerbList, reflector.RequestOptions{}, 100*time.Millisecond, 0, nil, nil)
		f.listBegan(reflector.CauseForced)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "20"})
		f.advance(time.Minute)
	}
	if f.has(RelistStorm) {
		t.Fatalf("4 relists the user forced raised relist-storm: %+v", f.e.List())
	}
}

func TestLargeInitialListNeedsOneMeasureOverItsBound(t *testing.T) {
	list := func(objects int, bytes int64, took time.Duration) *feed {
		f := newFeed(t, Options{})
		f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialList})
		f.advance(2 * time.Minute) // waiting for --max-concurrent-lists: not the list's time
		f.request(reflector.VerbList, reflector.RequestOptions{Limit: 500}, took, 0, nil, nil)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "20", Objects: objects, Bytes: bytes})
		return f
	}
	for _, tc := range []struct {
		name    string
		objects int
		bytes   int64
		took    time.Duration
		want    bool
	}{
		{"just under every bound", 50000, 100 << 20, 30 * time.Second, false},
		{"bytes", 110, 100<<20 + 1, time.Second, true},
		{"objects", 50001, 0, time.Second, true},
		{"time", 10, 1 << 10, 31 * time.Second, true},
	} {
		f := list(tc.objects, tc.bytes, tc.took)
		got, ok := f.e.Get(LargeInitialList)
		if ok != tc.want {
			t.Errorf("%s: raised %v, want %v: %+v", tc.name, ok, tc.want, got)
			continue
		}
		if ok && (got.Severity != Warning || got.Evidence.Facts["bytes"] != fmt.Sprint(tc.bytes) || got.Evidence.Facts["objects"] != fmt.Sprint(tc.objects)) {
			t.Errorf("%s: want a warning with the measured size and count: %+v", tc.name, got)
		}
	}
	// Only the first list: a relist of any size raises nothing.
	f := list(10, 1<<10, time.Second)
	f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonGone})
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "30", Objects: 60000, Bytes: 200 << 20})
	if f.has(LargeInitialList) {
		t.Error("a relist raised large-initial-list")
	}
}

func TestAStalledStreamingListIsNotTheLISTsTime(t *testing.T) {
	f := newFeed(t, Options{})
	f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialList})
	f.request(reflector.VerbWatch, reflector.RequestOptions{SendInitialEvents: true, AllowWatchBookmarks: true}, time.Minute, 0,
		&reflector.RequestEnd{Reason: reflector.EndCanceled}, nil)
	f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialEventsEnd, Wait: time.Minute})
	f.request(reflector.VerbList, reflector.RequestOptions{Limit: 500}, 200*time.Millisecond, 0, nil, nil)
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, Objects: 12, Bytes: 20 << 10})
	if f.has(LargeInitialList) {
		got, _ := f.e.Get(LargeInitialList)
		t.Errorf("a 200ms LIST of 12 objects after a stalled streaming list raised %s", got.Detail())
	}
	got, ok := f.e.Get(WatchListUnsupported)
	if !ok || got.Evidence.Facts["listSeconds"] != "0.2" || !strings.Contains(got.Title, "stalled") {
		t.Errorf("want the stall, and the LIST's own 0.2s: %+v", got)
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
			if _, _, err := l.CompleteList("11"); err != nil {
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
