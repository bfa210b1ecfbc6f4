package observed

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/causal"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

func obj(name, uid, rv string) *store.Object {
	return &store.Object{Namespace: "ns", Name: name, UID: uid, ResourceVersion: rv}
}

func item(name, uid, rv string) reflector.Item { return reflector.Item{Object: obj(name, uid, rv)} }

func event(typ reflector.EventType, name, uid, rv string) reflector.WatchEvent {
	return reflector.WatchEvent{Type: typ, Item: item(name, uid, rv)}
}

// fixedClock is a clock the test moves.
type fixedClock struct{ now time.Time }

func (c *fixedClock) Now() time.Time { return c.now }

// newTestStream is a stream on a clock the test moves, and the notes it gave.
func newTestStream() (*Stream, *fixedClock, *[]reflector.Note) {
	clock := &fixedClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := NewStream(1, Client{UserAgent: "test"}, reflector.Target{}, clock.Now)
	var notes []reflector.Note
	s.OnNote(func(n reflector.Note) {
		_ = s.Counters() // a listener may read the stream (the metrics do)
		notes = append(notes, n)
	})
	return s, clock, &notes
}

func reasons(notes []reflector.Note) []reflector.Reason {
	var out []reflector.Reason
	for _, n := range notes {
		if n.Kind == reflector.NoteDecision {
			out = append(out, n.Decision.Reason)
		}
	}
	return out
}

// A client whose first list at a resourceVersion is refused with a 410 lists
// again: that is its first list, not a relist.
func TestAFirstListRefusedWithA410IsNoRelist(t *testing.T) {
	s, _, notes := newTestStream()
	r := s.Begin(reflector.VerbList, reflector.RequestOptions{ResourceVersion: "5", ResourceVersionMatch: "Exact"})
	gone := &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 5 (20)"}
	r.End(&reflector.RequestEnd{Reason: reflector.EndError, Status: gone})
	d := (*notes)[len(*notes)-1].Decision
	if want := `410 Gone at resourceVersion "5": history is gone; no list has completed yet; the first list starts again`; d == nil || d.String() != want {
		t.Errorf("the 410's decision says %v, want %s", d, want)
	}
	if st := s.Stats(); st.State != reflector.StateListing || st.Counters.Gone != 1 {
		t.Errorf("after the 410: %s, %d 410s; want Listing, 1", st.State, st.Counters.Gone)
	}
	r = s.Begin(reflector.VerbList, reflector.RequestOptions{})
	r.Page(&reflector.Page{ResourceVersion: "20", Items: []reflector.Item{item("a", "ua", "5")}})
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	if c := s.Counters(); c.Lists != 1 || c.Relists != 0 {
		t.Errorf("lists/relists: got %d/%d, want 1/0", c.Lists, c.Relists)
	}
}

// client-go's informer, as the proxy sees it: a LIST at resourceVersion 0,
// a watch, a 410 on the next watch, a relist that finds what was missed.
func TestAStreamFollowsAListWatchA410AndTheRelist(t *testing.T) {
	s, clock, notes := newTestStream()
	r := s.Begin(reflector.VerbList, reflector.RequestOptions{ResourceVersion: "0", Limit: 500})
	r.Page(&reflector.Page{ResourceVersion: "10", Items: []reflector.Item{item("a", "ua", "5"), item("b", "ub", "6"), item("c", "uc", "7")}})
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	// Listed, not Watching: until its next request, the client may never
	// watch (kubectl get).
	if st := s.Stats(); st.State != reflector.StateListed || st.ResourceVersion != "10" || s.Store().Len() != 3 || st.Synced.IsZero() {
		t.Fatalf("after the list: %s at %q with %d objects", st.State, st.ResourceVersion, s.Store().Len())
	}

	w := s.Begin(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "10", AllowWatchBookmarks: true, TimeoutSeconds: 300})
	if st := s.Stats(); st.State != reflector.StateWatching {
		t.Fatalf("once it asked for a watch: %s", st.State)
	}
	w.Event(event(reflector.EventModified, "a", "ua", "11"))
	w.Event(event(reflector.EventDeleted, "b", "ub", "12"))
	clock.now = clock.now.Add(time.Second)
	w.Event(reflector.WatchEvent{Type: reflector.EventBookmark, Item: reflector.Item{Object: &store.Object{ResourceVersion: "13"}}})
	w.End(&reflector.RequestEnd{Reason: reflector.EndClosed})

	w = s.Begin(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "13", AllowWatchBookmarks: true})
	gone := &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 13 (20)"}
	w.Event(reflector.WatchEvent{Type: reflector.EventError, Status: gone})
	w.End(&reflector.RequestEnd{Reason: reflector.EndError, Status: gone})
	if d := (*notes)[len(*notes)-1].Decision; d == nil || d.String() != `410 Gone at resourceVersion "13": history is gone; a relist follows` {
		t.Errorf("the 410's decision says %v", d)
	}
	if st := s.Stats(); st.State != reflector.StateRelisting || st.Counters.Gone != 1 || st.LastGone.IsZero() {
		t.Fatalf("after the 410: %s, %d 410s", st.State, st.Counters.Gone)
	}
	// Readers keep the old cache while the relist runs.
	r = s.Begin(reflector.VerbList, reflector.RequestOptions{Limit: 500})
	if s.Store().Len() != 2 {
		t.Fatalf("the cache during the relist holds %d objects, want the 2 before it", s.Store().Len())
	}
	r.Page(&reflector.Page{ResourceVersion: "25", Continue: "next", Items: []reflector.Item{item("a", "ua", "11")}})
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	r = s.Begin(reflector.VerbList, reflector.RequestOptions{Limit: 500, Continue: "next"})
	r.Page(&reflector.Page{ResourceVersion: "25", Items: []reflector.Item{item("c", "uc2", "21"), item("d", "ud", "22")}})
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})

	st := s.Stats()
	want := reflector.Counters{Lists: 2, Relists: 1, ListPages: 3, Watches: 2, Gone: 1, Bookmarks: 1, Modified: 1, Deleted: 1, WatchErrors: 0}
	if st.Counters != want {
		t.Errorf("counters %+v, want %+v", st.Counters, want)
	}
	if st.ResourceVersion != "25" || st.BookmarkRV != "13" || s.Store().Len() != 3 {
		t.Errorf("cursor %q, bookmark %q, %d objects; want 25, 13, 3", st.ResourceVersion, st.BookmarkRV, s.Store().Len())
	}
	d := st.LastRelistDiff
	if d == nil || len(d.Recreated) != 1 || len(d.Added) != 1 || d.Unchanged != 1 || len(d.Deleted) != 0 {
		t.Fatalf("relist diff %+v, want c recreated, d added, a unchanged", d)
	}
	if got := fmt.Sprint(reasons(*notes)); got != "[initial-list list-complete watch-closed gone list-complete relist-diff]" {
		t.Errorf("decisions %s", got)
	}
	if len(st.Requests) != 5 || st.Requests[0].Items != 3 || st.Requests[1].Events != 3 || st.Requests[0].Opts.ResourceVersion != "0" {
		t.Errorf("requests %+v", st.Requests)
	}
	var seq uint64
	for i, n := range *notes {
		if !n.Kind.Fact() {
			seq++ // a fact shares the Seq of the note before it
		}
		if n.Seq != seq {
			t.Fatalf("note %d (%s) has seq %d, want %d", i, n.Kind, n.Seq, seq)
		}
	}
	// In causal order, as a reflector's: a request's end before the decisions it caused.
	if err := causal.Check(causal.FromNotes(*notes)); err != nil {
		t.Error(err)
	}
}

// A streaming list: the initial events fill the list, the end bookmark
// installs it, later events apply to it.
func TestAStreamFollowsAStreamingList(t *testing.T) {
	s, _, notes := newTestStream()
	w := s.Begin(reflector.VerbWatch, reflector.RequestOptions{SendInitialEvents: true, ResourceVersionMatch: "NotOlderThan", AllowWatchBookmarks: true})
	if st := s.Stats(); st.State != reflector.StateStreamingList {
		t.Fatalf("state %s, want StreamingList", st.State)
	}
	w.Event(event(reflector.EventAdded, "a", "ua", "5"))
	w.Event(event(reflector.EventAdded, "b", "ub", "6"))
	if s.Store().Ready() {
		t.Fatal("the cache is ready before the end bookmark")
	}
	w.Event(reflector.WatchEvent{Type: reflector.EventBookmark, InitialEventsEnd: true, Item: reflector.Item{Object: &store.Object{ResourceVersion: "9"}}})
	// Its watch goes on: Watching, not Listed as after a LIST.
	if st := s.Stats(); st.State != reflector.StateWatching {
		t.Fatalf("after the end bookmark: %s, want Watching", st.State)
	}
	w.Event(event(reflector.EventAdded, "c", "uc", "10"))
	st := s.Stats()
	if !s.Store().Ready() || s.Store().Len() != 3 || st.Counters.Added != 1 || st.Counters.Lists != 1 || st.Counters.Watches != 1 || st.ResourceVersion != "10" {
		t.Fatalf("after the streaming list: ready %v, %d objects, %+v at %q", s.Store().Ready(), s.Store().Len(), st.Counters, st.ResourceVersion)
	}
	s.Close()
	if got := fmt.Sprint(reasons(*notes)); got != "[initial-list list-complete stopped]" {
		t.Errorf("decisions %s", got)
	}
	if st := s.Stats(); st.State != reflector.StateStopped || st.Current != nil || st.Requests[0].End.Reason != reflector.EndStopped {
		t.Errorf("after Close: %s, current %v, %+v", st.State, st.Current, st.Requests)
	}
}

// recording is a Recording that keeps what it was given.
type recording struct{ calls []string }

func (r *recording) Request(id int64, verb reflector.Verb, _ reflector.RequestOptions, _ string, _ time.Time) {
	r.calls = append(r.calls, fmt.Sprintf("request %d %s", id, verb))
}
func (r *recording) Page(id int64, p *reflector.Page) {
	r.calls = append(r.calls, fmt.Sprintf("page %d %d", id, len(p.Items)))
}
func (r *recording) Event(id int64, ev reflector.WatchEvent) {
	r.calls = append(r.calls, fmt.Sprintf("event %d %s", id, ev.Type))
}
func (r *recording) End(id int64, end *reflector.RequestEnd) {
	r.calls = append(r.calls, fmt.Sprintf("end %d %s", id, end.Reason))
}

// A request that starts before the last one was seen ending ends it as
// canceled, so the recording never has two open requests.
func TestARecordingGetsOneRequestAtATime(t *testing.T) {
	s, _, _ := newTestStream()
	rec := &recording{}
	s.Record(rec)
	r := s.Begin(reflector.VerbList, reflector.RequestOptions{})
	r.Page(&reflector.Page{ResourceVersion: "3", Items: []reflector.Item{item("a", "ua", "2")}})
	w := s.Begin(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "3"})
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed}) // too late: already ended
	w.Event(event(reflector.EventAdded, "b", "ub", "4"))
	w.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	want := "[request 1 list page 1 1 end 1 canceled request 2 watch event 2 ADDED end 2 closed]"
	if got := fmt.Sprint(rec.calls); got != want {
		t.Errorf("recorded %s\nwant %s", got, want)
	}
}

// A LIST answered 503 (or 429) before its first page is a failed request,
// not a list: a reflector counts a list when its first page arrives, and a
// stream counts what the client's reflector counts.
func TestAListThatFailsBeforeItsFirstPageIsNotCounted(t *testing.T) {
	s, _, notes := newTestStream()
	r := s.Begin(reflector.VerbList, reflector.RequestOptions{Limit: 10})
	unavailable := &metav1.Status{Code: 503, Reason: metav1.StatusReasonServiceUnavailable, Message: "try later"}
	r.End(&reflector.RequestEnd{Reason: reflector.EndError, Status: unavailable})
	if c := s.Counters(); c.Lists != 0 || c.Relists != 0 {
		t.Fatalf("after a 503 before the first page: %+v, want no list", c)
	}
	r = s.Begin(reflector.VerbList, reflector.RequestOptions{Limit: 10})
	if st := s.Stats(); st.State != reflector.StateListing {
		t.Errorf("the retry is in state %s, want Listing (it is the first list, not a relist)", st.State)
	}
	r.Page(&reflector.Page{ResourceVersion: "10", Items: []reflector.Item{item("a", "ua", "5")}})
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	if c := s.Counters(); c.Lists != 1 || c.Relists != 0 || c.ListPages != 1 {
		t.Errorf("after the retried list: %+v, want 1 list, no relist, 1 page", c)
	}
	if got := fmt.Sprint(reasons(*notes)); got != "[initial-list request-error list-complete]" {
		t.Errorf("decisions %s", got)
	}
}

// A streaming list's initial events are the list, whatever their type: a
// MODIFIED one fills it as an ADDED one does, and neither is a watch event
// of the live cache.
func TestAStreamingListsModifiedInitialEventsFillTheList(t *testing.T) {
	s, _, _ := newTestStream()
	w := s.Begin(reflector.VerbWatch, reflector.RequestOptions{SendInitialEvents: true, ResourceVersionMatch: "NotOlderThan", AllowWatchBookmarks: true})
	if c := s.Counters(); c.Lists != 0 || c.Watches != 1 {
		t.Fatalf("before its first event: %+v, want the watch counted and no list yet", c)
	}
	w.Event(event(reflector.EventAdded, "a", "ua", "5"))
	w.Event(event(reflector.EventModified, "b", "ub", "6"))
	if s.Store().Ready() || s.Store().Len() != 0 {
		t.Fatal("an initial event reached the cache before the end bookmark")
	}
	w.Event(reflector.WatchEvent{Type: reflector.EventBookmark, InitialEventsEnd: true, Item: reflector.Item{Object: &store.Object{ResourceVersion: "9"}}})
	c := s.Counters()
	if s.Store().Len() != 2 || c.Lists != 1 || c.Added != 0 || c.Modified != 0 {
		t.Errorf("after the streaming list: %d objects, %+v; want both listed, 1 list, no watch events", s.Store().Len(), c)
	}
}

// What a client asks for is read from its Accept header, as client-go's
// clients send it.
func TestParseAccept(t *testing.T) {
	for _, tc := range []struct {
		accept string
		want   Asked
	}{
		{"", Asked{Wire: reflector.WireJSON}},
		{"application/json, */*", Asked{Wire: reflector.WireJSON}},
		{"application/vnd.kubernetes.protobuf, */*", Asked{Wire: reflector.WireProtobuf}},
		{"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
			Asked{Wire: reflector.WireProtobuf, MetadataOnly: true}},
		{"application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
			Asked{Wire: reflector.WireProtobuf, MetadataOnly: true}},
		{"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", Asked{Wire: reflector.WireJSON, Table: true}},
		{"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", Asked{Wire: reflector.WireJSON, MetadataOnly: true}},
	} {
		if got := ParseAccept(tc.accept); got != tc.want {
			t.Errorf("ParseAccept(%q) = %+v, want %+v", tc.accept, got, tc.want)
		}
	}
}

// A stream whose client left keeps its state and says since when; the
// client's next request (it resumed) brings it back, and both are noted.
func TestAStreamSaysItsClientLeftAndCameBack(t *testing.T) {
	s, clock, notes := newTestStream()
	r := s.Begin(reflector.VerbList, reflector.RequestOptions{ResourceVersion: "0"})
	r.Page(&reflector.Page{ResourceVersion: "10", Items: []reflector.Item{item("a", "ua", "5")}})
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	w := s.Begin(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "10"})
	left := clock.now.Add(time.Second)
	clock.now = left
	s.ClientLeft(left) // a request is open: the client has not left
	if st := s.Stats(); !st.ClientLeft.IsZero() {
		t.Fatalf("a client with a request open was said to have left at %v", st.ClientLeft)
	}
	w.End(&reflector.RequestEnd{Reason: reflector.EndCanceled})
	clock.now = left.Add(5 * time.Second)
	s.ClientLeft(left)
	st := s.Stats()
	if !st.ClientLeft.Equal(left) || st.ClientLeftState != reflector.StateWatching || st.State != reflector.StateWatching {
		t.Fatalf("client left at %v in %s (state %s), want at %v in Watching", st.ClientLeft, st.ClientLeftState, st.State, left)
	}
	last := (*notes)[len(*notes)-1]
	if last.Reason() != reflector.ReasonClientLeft || last.Decision.Wait != 5*time.Second ||
		last.Decision.String() != "client left 5s ago (every connection it used closed, no request open); it was Watching" {
		t.Errorf("the last note: %s %q", last.Reason(), last.Decision)
	}
	clock.now = left.Add(8 * time.Second)
	s.Begin(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "10"})
	if st := s.Stats(); !st.ClientLeft.IsZero() {
		t.Errorf("the client that resumed is still said to have left at %v", st.ClientLeft)
	}
	got := reasons(*notes)
	if want := []reflector.Reason{reflector.ReasonInitialList, reflector.ReasonListComplete, reflector.ReasonClientLeft, reflector.ReasonClientBack}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("decisions %v, want %v", got, want)
	}
	if s.Counters().Relists != 0 {
		t.Errorf("%d relists", s.Counters().Relists)
	}
}

// A client that watches from "" or "0" without sendInitialEvents (Python's
// watch.stream without a resourceVersion, curl ?watch=1) gets the server's
// synthetic ADDED events of every object first, in no resourceVersion
// order: they are the state, not news. None is a move backwards, and no
// delivery lag is measured for them; after the first other event, the
// order counts again.
func TestAWatchWithoutAResourceVersionGetsItsStateInNoOrder(t *testing.T) {
	s, _, notes := newTestStream()
	w := s.Begin(reflector.VerbWatch, reflector.RequestOptions{})
	written := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) // a year before the stream's clock
	for _, o := range []struct{ name, rv string }{{"c", "30"}, {"a", "10"}, {"b", "20"}} {
		ev := event(reflector.EventAdded, o.name, "u"+o.name, o.rv)
		ev.Delivery = reflector.Delivery{Written: written, Lag: 365 * 24 * time.Hour}
		w.Event(ev)
	}
	if st := s.Stats(); st.Counters.ResourceVersionBackwards != 0 || st.ResourceVersion != "30" || st.Lag.Counts.Total() != 0 {
		t.Fatalf("after the state: %d backwards, cursor %q, %d lags measured; want 0, 30, 0", st.Counters.ResourceVersionBackwards, st.ResourceVersion, st.Lag.Counts.Total())
	}
	w.Event(event(reflector.EventModified, "a", "ua", "31"))
	w.Event(event(reflector.EventAdded, "d", "ud", "25")) // news now: backwards
	st := s.Stats()
	if st.Counters.ResourceVersionBackwards != 1 || st.Counters.Added != 4 || st.Counters.Modified != 1 || s.Store().Len() != 4 {
		t.Errorf("counters %+v with %d objects; want 1 move backwards, 4 added, 1 modified, 4 objects", st.Counters, s.Store().Len())
	}
	if got := fmt.Sprint(reasons(*notes)); got != "[resource-version-backwards]" {
		t.Errorf("decisions %s, want the one move backwards after the state", got)
	}
	// A watch from a resourceVersion is news from its first event.
	w.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	w = s.Begin(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "31"})
	w.Event(event(reflector.EventAdded, "e", "ue", "29"))
	if n := s.Stats().Counters.ResourceVersionBackwards; n != 2 {
		t.Errorf("a watch from 31 got an ADDED at 29: %d moves backwards, want 2", n)
	}
}

// The proxy makes a stream once discovery names its resource, after its
// first request was sent: the stream begins with that request, so the
// sync time counts from it (it said 0.001s for a 100ms list).
func TestAStreamBeginsWithItsFirstRequest(t *testing.T) {
	s, clock, _ := newTestStream()
	sent := clock.now.Add(-100 * time.Millisecond)
	r := s.BeginAt(reflector.VerbList, reflector.RequestOptions{}, sent)
	r.Page(&reflector.Page{ResourceVersion: "10", Items: []reflector.Item{item("a", "ua", "5")}})
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	st := s.Stats()
	if !st.Started.Equal(sent) || st.Synced.Sub(st.Started) != 100*time.Millisecond {
		t.Errorf("started %v, synced %v after; want %v and 100ms", st.Started, st.Synced.Sub(st.Started), sent)
	}
	// A later request sent "before" it moves nothing.
	s.BeginAt(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "10"}, sent.Add(-time.Hour))
	if got := s.Stats().Started; !got.Equal(sent) {
		t.Errorf("a second request moved the start to %v", got)
	}
}

// A watch the proxy's --fault gone ended (as a server ends one) is said to
// be the fault's doing, not the server's; the next close is the server's.
func TestAWatchGoneEndedIsTheFaultsNotTheServers(t *testing.T) {
	s, clock, notes := newTestStream()
	r := s.Begin(reflector.VerbList, reflector.RequestOptions{})
	r.Page(&reflector.Page{ResourceVersion: "10", Items: []reflector.Item{item("a", "ua", "5")}})
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	last := func() string { return (*notes)[len(*notes)-1].Decision.String() }
	w := s.Begin(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "10"})
	s.Fault(Fault{Spec: "gone@every=8s", What: "ended the watch; its resume will be answered 410 Gone"})
	w.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	if want := "watch ended by --fault gone@every=8s (the observing proxy, as a server ends one): its client resumes from resourceVersion 10 if it watches again"; last() != want {
		t.Errorf("got %q, want %q", last(), want)
	}
	w = s.Begin(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "10"})
	s.Fault(Fault{Spec: "drop-deletes", What: "dropped DELETED ns/a", Count: 1})
	clock.now = clock.now.Add(time.Minute)
	w.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	if want := "watch closed by the server: its client resumes from resourceVersion 10 if it watches again"; last() != want {
		t.Errorf("got %q, want %q", last(), want)
	}
}

// The last error is the reflector's: an error's cause, not a 410 (a
// relist), and it stands until a request is answered (a reviewer saw an
// old 410 under a proxy's row for good).
func TestTheLastErrorIsTheReflectorsAndGoesOnceARequestIsAnswered(t *testing.T) {
	s, _, _ := newTestStream()
	w := s.Begin(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "13"})
	gone := &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 13 (20)"}
	w.End(&reflector.RequestEnd{Reason: reflector.EndError, Status: gone})
	if e := s.Stats().LastError; e != "" {
		t.Errorf("after a 410: last error %q, want none", e)
	}
	r := s.Begin(reflector.VerbList, reflector.RequestOptions{})
	refused := &metav1.Status{Code: 500, Reason: metav1.StatusReasonInternalError, Message: "etcd is down"}
	end := &reflector.RequestEnd{Reason: reflector.EndError, Status: refused}
	r.End(end)
	if e := s.Stats().LastError; e == "" || e != end.Cause() {
		t.Errorf("after a 500: last error %q, want its cause %q", e, end.Cause())
	}
	s.BeginAnswered(reflector.VerbList, reflector.RequestOptions{}, time.Time{}, "application/json")
	if e := s.Stats().LastError; e != "" {
		t.Errorf("once a request was answered: last error %q, want none", e)
	}
}

// A stream whose objects are never diffed (kubectl get's Tables, metadata
// only) holds none of its list's JSON for a diff that never comes.
func TestAListOfRowsIsNotHeldForDiffs(t *testing.T) {
	for _, accept := range []string{"application/json;as=Table;v=v1;g=meta.k8s.io", "application/json"} {
		s, _, _ := newTestStream()
		s.Asked = ParseAccept(accept)
		s.Diff(100, false)
		r := s.Begin(reflector.VerbList, reflector.RequestOptions{})
		it := item("a", "ua", "5")
		it.Raw = []byte(`{"metadata":{"name":"a"}}`)
		r.Page(&reflector.Page{ResourceVersion: "5", Items: []reflector.Item{it}})
		if held, want := s.versions.Len(), map[bool]int{true: 0, false: 1}[s.Asked.Table]; held != want {
			t.Errorf("%s: %d objects held for diffs, want %d", accept, held, want)
		}
	}
}

// A relist's page answered 410 on its continue token is a relist again,
// as the reflector says it (it said Listing), and a too large
// resourceVersion says its cause.
func TestAContinueTokenExpiredInARelistIsRelisting(t *testing.T) {
	s, _, notes := newTestStream()
	r := s.Begin(reflector.VerbList, reflector.RequestOptions{Limit: 1})
	r.Page(&reflector.Page{ResourceVersion: "10", Items: []reflector.Item{item("a", "ua", "5")}})
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	r = s.Begin(reflector.VerbList, reflector.RequestOptions{Limit: 1})
	r.Page(&reflector.Page{ResourceVersion: "20", Continue: "tok", Items: []reflector.Item{item("a", "ua", "5")}})
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	r = s.Begin(reflector.VerbList, reflector.RequestOptions{Limit: 1, Continue: "tok"})
	expired := &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired, Message: "The provided continue parameter is too old"}
	r.End(&reflector.RequestEnd{Reason: reflector.EndError, Status: expired})
	if d := (*notes)[len(*notes)-1].Decision; d == nil || d.Reason != reflector.ReasonContinueGone || d.State != reflector.StateRelisting {
		t.Errorf("the expired continue token's decision: %+v, want continue-gone, Relisting", d)
	}
	w := s.Begin(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "99"})
	large := &metav1.Status{Code: 504, Reason: metav1.StatusReasonTimeout, Message: "Too large resource version: 99, current: 20",
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}}}
	w.End(&reflector.RequestEnd{Reason: reflector.EndError, Status: large})
	if d := (*notes)[len(*notes)-1].Decision; d == nil || d.Reason != reflector.ReasonTooLargeRV || d.Cause == "" {
		t.Errorf("the too large resourceVersion's decision: %+v, want too-large with its cause", d)
	}
}

// Diffs takes no lock a request's feeding holds: a listener, called as the
// stream is fed, may ask (as the dashboard asks from the screen's goroutine,
// whatever a large list's page holds).
func TestDiffsAnswersWhileTheStreamIsFed(t *testing.T) {
	s, _, _ := newTestStream()
	s.Diff(10, true)
	var diffs bool
	s.OnNote(func(reflector.Note) { diffs = s.Diffs() })
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Begin(reflector.VerbList, reflector.RequestOptions{ResourceVersion: "0"})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Diffs, asked by a listener, waited for the request's feeding")
	}
	if !diffs {
		t.Error("a JSON stream with Diff does not say it diffs")
	}
}
