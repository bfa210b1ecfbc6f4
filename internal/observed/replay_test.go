package observed

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

func raw(name, uid, rv string) []byte {
	return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns","name":"` + name + `","uid":"` + uid + `","resourceVersion":"` + rv + `"}}`)
}

func rawItem(name, uid, rv string) reflector.Item {
	return reflector.Item{Object: obj(name, uid, rv), Raw: raw(name, uid, rv)}
}

// What a stream observed, recorded in an observed trace, replays as
// recorded: the same cache and counters, no reflector involved.
func TestAnObservedTraceReplaysAsRecorded(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fixedClock{now: start}
	live, rec, buf := recordedStream(t, clock)

	r := live.Begin(reflector.VerbList, reflector.RequestOptions{ResourceVersion: "0", Limit: 500})
	r.Page(&reflector.Page{ResourceVersion: "10", Items: []reflector.Item{rawItem("a", "ua", "5"), rawItem("b", "ub", "6")}})
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	clock.now = clock.now.Add(time.Second)
	w := live.Begin(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "10"})
	w.Event(reflector.WatchEvent{Type: reflector.EventModified, Item: rawItem("a", "ua", "11")})
	gone := &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old"}
	w.Event(reflector.WatchEvent{Type: reflector.EventError, Status: gone})
	w.End(&reflector.RequestEnd{Reason: reflector.EndError, Status: gone})
	r = live.Begin(reflector.VerbList, reflector.RequestOptions{})
	r.Page(&reflector.Page{ResourceVersion: "20", Items: []reflector.Item{rawItem("a", "ua", "11")}})
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	left := clock.now.Add(time.Second)
	clock.now = left.Add(5 * time.Second)
	live.ClientLeft(left) // its connections closed, with nothing open
	seen, rp := replayRecorded(t, rec, buf)
	if len(seen) != 1 || seen[0].Client.UserAgent != "ctrl/1" || seen[0].Target().Namespace != "ns" {
		t.Fatalf("replayed streams %+v", seen)
	}
	got, want := seen[0].Stats(), live.Stats()
	if got.Counters != want.Counters || got.ResourceVersion != want.ResourceVersion || seen[0].Store().Len() != live.Store().Len() {
		t.Errorf("replayed %+v at %q with %d objects, recorded %+v at %q with %d", got.Counters, got.ResourceVersion, seen[0].Store().Len(),
			want.Counters, want.ResourceVersion, live.Store().Len())
	}
	if got.Counters.Gone != 1 || got.Counters.Relists != 1 || got.LastRelistDiff == nil || len(got.LastRelistDiff.Deleted) != 1 {
		t.Errorf("the replayed 410 and relist: %+v, diff %+v", got.Counters, got.LastRelistDiff)
	}
	// That the client left is in the trace: the replay says it, since when
	// and in what state (its relist was complete and it asked for no watch).
	if !got.ClientLeft.Equal(left) || got.ClientLeftState != reflector.StateListed {
		t.Errorf("the replayed client left at %v in %s, want at %v in Listed", got.ClientLeft, got.ClientLeftState, left)
	}
	if !rp.Now().Equal(start.Add(7 * time.Second)) {
		t.Errorf("the replay's clock ends at %v, want the last line's time", rp.Now())
	}
}

// The size of a streaming list, which the bookmark ending it carries, is
// in the trace: the replayed list-complete decision says it as the live one
// did.
func TestAReplayedStreamingListKeepsItsBytes(t *testing.T) {
	clock := &fixedClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	live, rec, buf := recordedStream(t, clock)
	var liveBytes int64 = -1
	live.OnNote(func(n reflector.Note) {
		if d := n.Decision; d != nil && d.Reason == reflector.ReasonListComplete {
			liveBytes = d.Bytes
		}
	})
	w := live.Begin(reflector.VerbWatch, reflector.RequestOptions{SendInitialEvents: true, ResourceVersionMatch: "NotOlderThan", AllowWatchBookmarks: true})
	w.Event(reflector.WatchEvent{Type: reflector.EventAdded, Item: rawItem("a", "ua", "5")})
	end := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}`)
	w.Event(reflector.WatchEvent{Type: reflector.EventBookmark, InitialEventsEnd: true, Bytes: 1234,
		Item: reflector.Item{Object: &store.Object{ResourceVersion: "9"}, Raw: end}})
	var replayed int64 = -1
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := trace.NewReader("t.jsonl", strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	rp, err := newFeedReplay(rd, 0, func(s *Stream) {
		s.OnNote(func(n reflector.Note) {
			if d := n.Decision; d != nil && d.Reason == reflector.ReasonListComplete {
				replayed = d.Bytes
			}
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if liveBytes != 1234 || replayed != liveBytes {
		t.Errorf("the streaming list's bytes: replayed %d, live %d; want 1234", replayed, liveBytes)
	}
}

// A trace of our own reflectors is not replayed as observed.
func TestAReflectorTraceIsNotAnObservedOne(t *testing.T) {
	rd, err := trace.NewReader("t.jsonl", strings.NewReader(`{"k":"header","v":2,"resources":[{"resource":{"version":"v1","resource":"pods"}}]}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newFeedReplay(rd, 0, nil); err == nil {
		t.Error("a reflector's trace was taken as an observed one")
	}
}

// The player paces an observed replay as it paces a reflector's: paused, it
// serves nothing; a step serves lines up to the next request or decision;
// resumed, it runs to the end. The trace is kubectl get -w through the proxy.
func TestThePlayerPausesAndStepsAnObservedReplay(t *testing.T) {
	rd, err := trace.Open("../../testdata/traces/proxy.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rp, err := newFeedReplay(rd, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl := rp.Player()
	pl.Pause()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- rp.Run(ctx) }()
	waitHeld := func(what string) {
		t.Helper()
		for !pl.Held() {
			if ctx.Err() != nil {
				t.Fatalf("the replay was not held %s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitHeld("before its first line")
	if n := len(rp.Streams()); n != 0 {
		t.Fatalf("paused before the first line, the replay opened %d streams", n)
	}
	// The first step serves the stream's resource line and its first request.
	pl.Step()
	for {
		if _, served := pl.Position(); served > 0 && pl.Held() {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the step did not end held")
		}
		time.Sleep(time.Millisecond)
	}
	streams := rp.Streams()
	if len(streams) != 1 {
		t.Fatalf("after a step: %d streams, want 1", len(streams))
	}
	// The LIST has started, none of its items is served yet: it is in
	// flight, and counts as a list only when its first page arrives, as a
	// reflector's does (docs/design.md, Counters).
	st := streams[0].Stats()
	if c := st.Counters; c.Lists != 0 || c.Watches != 0 || st.Current == nil || st.Current.Verb != reflector.VerbList || st.State != reflector.StateListing || streams[0].Store().Len() != 0 {
		t.Fatalf("a step to the first request: %s, counters %+v, request in flight %+v, %d objects; want the list started, nothing listed", st.State, c, st.Current, streams[0].Store().Len())
	}
	pl.SetSpeed(0)
	pl.Resume()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	s := streams[0]
	if c := s.Counters(); c.Lists != 1 || c.Added != 9 || c.Deleted != 1 || s.Store().Len() != 10 {
		t.Errorf("at the end: counters %+v, %d objects; want 1 list, 9 added, 1 deleted, 10 objects", c, s.Store().Len())
	}
}

// A stream's number and what its client asked for are recorded on its
// resource line: the replay numbers the streams as the proxy did, whatever
// order their resource lines came in, and asks for the same.
func TestAReplayKeepsTheStreamsNumbersAndWhatTheirClientsAskedFor(t *testing.T) {
	var buf bytes.Buffer
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fixedClock{now: start}
	rec, err := trace.NewRecorder(&buf, trace.Header{StartedAt: start, Observed: true}, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	target := reflector.Target{Resource: reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}}
	const typed = "application/vnd.kubernetes.protobuf, */*"
	const meta = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
	var live []*Stream
	for _, tc := range []struct {
		id     int
		accept string
		ct     string
	}{{7, meta, "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"}, {3, typed, "application/vnd.kubernetes.protobuf"}} {
		s := NewStream(tc.id, Client{UserAgent: "ctrl/v1 (linux/amd64) kubernetes/abc/shared-informers", RemoteAddr: "127.0.0.1:5000"}, target, clock.Now)
		s.Asked = ParseAccept(tc.accept)
		s.Asked.Accept = tc.accept
		s.Options = OptionsOf(reflector.VerbList, reflector.RequestOptions{Limit: 500})
		rh, client := s.Describe()
		i, err := rec.AddStream(rh, client, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		s.Record(rec.Observed(i))
		r := s.BeginAnswered(reflector.VerbList, reflector.RequestOptions{Limit: 500}, time.Time{}, tc.ct)
		r.Page(&reflector.Page{ResourceVersion: "10", Items: []reflector.Item{rawItem("a", "ua", "5")}})
		r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
		live = append(live, s)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := trace.NewReader("t.jsonl", strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	rp, err := newFeedReplay(rd, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rp.Streams()
	if len(got) != 2 {
		t.Fatalf("%d streams replayed, want 2", len(got))
	}
	for i, s := range got {
		l := live[i]
		if s.ID != l.ID || s.Asked != l.Asked || s.Options != l.Options || s.ContentType() != l.ContentType() || s.Wire() != l.Wire() {
			t.Errorf("stream %d replayed as #%d %+v %+v %q %s, recorded as #%d %+v %+v %q %s", i, s.ID, s.Asked, s.Options, s.ContentType(), s.Wire(),
				l.ID, l.Asked, l.Options, l.ContentType(), l.Wire())
		}
	}
	if !got[0].Asked.MetadataOnly || got[0].Asked.Wire != reflector.WireProtobuf || got[1].Asked.MetadataOnly || got[0].Options.Strategy != reflector.StrategyList {
		t.Errorf("replayed %+v and %+v", got[0].Asked, got[1].Asked)
	}
}

// A trace written before stream numbers were recorded numbers its streams
// in the order of their resource lines, and asks for what its options say.
func TestAnOlderObservedTraceNumbersItsStreamsInOrder(t *testing.T) {
	const tr = `{"k":"header","v":2,"observed":true,"resources":[]}
{"k":"resource","r":0,"resource":{"resource":{"version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true},"options":{"strategy":"","wire":"protobuf"}},"client":{"userAgent":"a"}}
{"k":"resource","r":1,"resource":{"resource":{"version":"v1","resource":"pods","kind":"Pod","namespaced":true}},"client":{"userAgent":"b"}}
`
	rd, err := trace.NewReader("t.jsonl", strings.NewReader(tr))
	if err != nil {
		t.Fatal(err)
	}
	rp, err := newFeedReplay(rd, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rp.Streams()
	if len(got) != 2 || got[0].ID != 1 || got[1].ID != 2 || got[0].Asked.Wire != reflector.WireProtobuf || got[1].Asked.Wire != "" {
		t.Errorf("streams %v", got)
	}
}

// feedReplay is the replay of an observed trace as a session wires it: a
// trace.Replay that feeds a Feed.
type feedReplay struct {
	rp   *trace.Replay
	feed *Feed
}

func newFeedReplay(rd *trace.Reader, speed float64, onStream func(*Stream)) (*feedReplay, error) {
	rp := trace.NewReplay(rd, speed)
	f, err := NewFeed(rd, rp.Now, onStream)
	if err != nil {
		return nil, err
	}
	rp.Feed(f.Line)
	return &feedReplay{rp: rp, feed: f}, nil
}

func (r *feedReplay) Run(ctx context.Context) error {
	defer r.feed.Close()
	return r.rp.Run(ctx)
}

func (r *feedReplay) Now() time.Time        { return r.rp.Now() }
func (r *feedReplay) Player() *trace.Player { return r.rp.Player() }
func (r *feedReplay) Streams() []*Stream    { return r.feed.Streams() }

// The proxy feeds a request to its stream once the answer came, with the
// time it came: the trace keeps that time, and the replay times the request
// (and the sync) as the live stream did, not from the answer.
func TestAReplayTimesARequestFromWhenItCameNotFromItsAnswer(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fixedClock{now: start}
	live, rec, buf := recordedStream(t, clock)
	clock.now = start.Add(2 * time.Second)
	sent := clock.now
	clock.now = sent.Add(400 * time.Millisecond) // the server took 400 ms to answer
	r := live.BeginAt(reflector.VerbList, reflector.RequestOptions{ResourceVersion: "0"}, sent)
	clock.now = clock.now.Add(100 * time.Millisecond) // and 100 ms more to send the page
	r.Page(&reflector.Page{ResourceVersion: "10", Items: []reflector.Item{rawItem("a", "ua", "5")}})
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	seen, _ := replayRecorded(t, rec, buf)
	got, want := seen[0].Stats(), live.Stats()
	if len(got.Requests) != 1 || len(want.Requests) != 1 {
		t.Fatalf("requests: replayed %d, live %d; want 1 each", len(got.Requests), len(want.Requests))
	}
	g, w := got.Requests[0], want.Requests[0]
	if w.Duration != 500*time.Millisecond || g.Duration != w.Duration || !g.Started.Equal(w.Started) {
		t.Errorf("the request: replayed from %v for %v, live from %v for %v; want 500ms", g.Started, g.Duration, w.Started, w.Duration)
	}
	if gs, ws := got.Synced.Sub(got.Started), want.Synced.Sub(want.Started); gs != ws {
		t.Errorf("time to sync: replayed %v, live %v", gs, ws)
	}
}

// recordedStream is a stream of configmaps in ns whose client is ctrl/1,
// recorded, with its notes, in an observed trace that starts at clock's now.
func recordedStream(t *testing.T, clock *fixedClock) (*Stream, *trace.Recorder, *bytes.Buffer) {
	t.Helper()
	buf := &bytes.Buffer{}
	rec, err := trace.NewRecorder(buf, trace.Header{StartedAt: clock.now, Observed: true}, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	target := reflector.Target{Resource: reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}, Namespace: "ns"}
	live := NewStream(1, Client{UserAgent: "ctrl/1", RemoteAddr: "127.0.0.1:5000"}, target, clock.Now)
	i, err := rec.AddResource(trace.ResourceHeader{Resource: target.Resource, Namespace: "ns"}, trace.Client{UserAgent: "ctrl/1", RemoteAddr: "127.0.0.1:5000"})
	if err != nil {
		t.Fatal(err)
	}
	live.Record(rec.Observed(i))
	live.OnNote(rec.Notes(i))
	return live, rec, buf
}

// replayRecorded closes rec and replays what it wrote to buf as fast as
// possible: the streams it made, and the replay.
func replayRecorded(t *testing.T, rec *trace.Recorder, buf *bytes.Buffer) ([]*Stream, *feedReplay) {
	t.Helper()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := trace.NewReader("t.jsonl", strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	var seen []*Stream
	rp, err := newFeedReplay(rd, 0, func(s *Stream) { seen = append(seen, s) })
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return seen, rp
}
