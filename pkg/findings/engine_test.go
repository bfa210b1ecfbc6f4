package findings

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// feed builds notes as a reflector's ledger would, on a clock the test moves.
type feed struct {
	t      *testing.T
	e      *Engine
	now    time.Time
	seq    uint64
	id     int64
	lists  int64 // the lists begun: ListBegan's Number
	lag    reflector.LagStats
	raised []Finding
}

// Lag makes the feed the engine's Source.
func (f *feed) Lag() reflector.LagStats { return f.lag }

// bookmark notes a progress bookmark of the request in flight.
func (f *feed) bookmark() {
	f.note(reflector.Note{Kind: reflector.NoteBookmark, Bookmark: &reflector.Bookmark{ResourceVersion: "11"}})
}

// listBegan notes a relist that began, for cause (after a first list).
func (f *feed) listBegan(cause reflector.ListCause) {
	f.lists = max(f.lists, 1) + 1
	b := reflector.ListBegan{Number: f.lists}
	if b.Relist() {
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

// One note that raises three findings raises them in the rules' pass
// order: slow-delivery, uid-mismatch, then the open watch's no-bookmarks.
func TestANoteRaisesItsFindingsInPassOrder(t *testing.T) {
	f := newFeed(t, Options{})
	f.request(reflector.VerbWatch, bookmarked, 5*time.Minute, 0, nil, func() {
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
		f.advance(80 * time.Second)
		f.lag.Counts[reflector.LagBucketOf(time.Minute)] += minLagEvents
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Replaced},
			Delivery: reflector.Delivery{Written: f.now.Add(-time.Minute), Lag: time.Minute}})
	})
	var got []ID
	for _, x := range f.raised {
		got = append(got, x.ID)
	}
	if want := []ID{SlowDelivery, UIDMismatch, NoBookmarks}; !slices.Equal(got, want) {
		t.Fatalf("raised %v, want %v", got, want)
	}
}

// BenchmarkObserveAppliedNoisy is the cost per diffed MODIFIED event that
// changed only a timestamp, over 50 objects: past noisy-updates' threshold,
// raised, each event keeps the window's view for the next read.
func BenchmarkObserveAppliedNoisy(b *testing.B) {
	e := New(Options{}, &feed{})
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	started := reflector.RequestInfo{ID: 1, Verb: reflector.VerbWatch, Opts: bookmarked, Started: at}
	e.Observe(reflector.Note{Seq: 1, At: at, Kind: reflector.NoteRequestStarted, Request: &started})
	results := make([]*store.Result, 50)
	for i := range results {
		results[i] = &store.Result{Outcome: store.Modified, Object: &store.Object{Namespace: "ns", Name: fmt.Sprintf("cm-%d", i), UID: "u"}}
	}
	ch := heartbeat()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		e.Observe(reflector.Note{Seq: uint64(i + 2), At: at.Add(time.Duration(i) * time.Millisecond), Kind: reflector.NoteApplied, Event: reflector.EventModified,
			Applied: results[i%len(results)], Changes: ch, RequestID: 1})
	}
}

// BenchmarkObserveAppliedMixed is the cost per diffed MODIFIED event of a
// stream that never raises noisy-updates (each event checked): two in three
// change data, one in three only an annotation among 200.
func BenchmarkObserveAppliedMixed(b *testing.B) {
	e := New(Options{}, &feed{})
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	started := reflector.RequestInfo{ID: 1, Verb: reflector.VerbWatch, Opts: bookmarked, Started: at}
	e.Observe(reflector.Note{Seq: 1, At: at, Kind: reflector.NoteRequestStarted, Request: &started})
	res := &store.Result{Outcome: store.Modified, Object: &store.Object{Namespace: "ns", Name: "cm", UID: "u"}}
	changes := make([]*diff.Changes, 200)
	for i := range changes {
		changes[i] = &diff.Changes{Paths: []diff.Change{{Path: fmt.Sprintf(`.metadata.annotations["a/%d"]`, i), Op: diff.Changed, Manager: "m"}}}
	}
	data := dataChange()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ch := data
		if i%3 == 0 {
			ch = changes[i%len(changes)]
		}
		e.Observe(reflector.Note{Seq: uint64(i + 2), At: at.Add(time.Duration(i) * time.Millisecond), Kind: reflector.NoteApplied, Event: reflector.EventModified,
			Applied: res, Changes: ch, RequestID: 1})
	}
}
