package reflector

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Each timer of the reflector, measured from the moment it should be: these
// tests run on a manual clock, so "ten seconds of streaming" takes none.

// modifications is n MODIFIED events of object a, at resourceVersions from+1…from+n.
func modifications(n, from int) []WatchEvent {
	out := make([]WatchEvent, n)
	for i := range out {
		out[i] = ev(EventModified, obj("a", "u-a", fmt.Sprint(from+i+1)))
	}
	return out
}

var goaway = &RequestEnd{Reason: EndError, Err: errors.New(`reading watch stream: http2: server sent GOAWAY and closed the connection; LastStreamID=3, ErrCode=NO_ERROR, debug=""`)}

func refusedCalls(verb Verb, n int) []call {
	refused := &RequestEnd{Reason: EndError, Err: errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")}
	out := make([]call, n)
	for i := range out {
		out[i] = call{verb: verb, err: refused}
	}
	return out
}

func TestAWatchThatStreamedLongerThanGiveUpAfterSurvivesItsCut(t *testing.T) {
	h := runFake(t, Config{GiveUpAfter: 3 * time.Second, Clock: newManualClock()},
		call{verb: VerbList, page: page("10", "", obj("a", "u-a", "10"))},
		// Ten seconds of events, one a second, then the apiserver goes away.
		call{verb: VerbWatch, events: modifications(10, 10), end: goaway, gap: time.Second},
		call{verb: VerbWatch},
	)
	if h.err != nil {
		t.Fatalf("Run: %v; a watch that streamed until its cut must not give up", h.err)
	}
	if got, want := join(h.askedSummary()), "list rv= | watch rv=10 | watch rv=20"; got != want {
		t.Errorf("requests: got %q, want %q", got, want)
	}
}

func TestASilentWatchOpenLongerThanGiveUpAfterSurvivesItsCut(t *testing.T) {
	// No event for a minute (a quiet namespace), then a GOAWAY: the watch was
	// open, and so the server was there, until the cut.
	h := runFake(t, Config{GiveUpAfter: 3 * time.Second, Clock: newManualClock()},
		call{verb: VerbList, page: page("10", "", obj("a", "u-a", "10"))},
		call{verb: VerbWatch, end: goaway, gap: time.Minute},
		call{verb: VerbWatch},
	)
	if h.err != nil {
		t.Fatalf("Run: %v", h.err)
	}
}

func TestAnUnreachableServerAfterACutGivesUpOnceNothingProgressedForGiveUpAfter(t *testing.T) {
	clock := newManualClock()
	script := []call{
		{verb: VerbList, page: page("10", "", obj("a", "u-a", "10"))},
		{verb: VerbWatch, events: modifications(10, 10), end: goaway, gap: time.Second},
	}
	script = append(script, refusedCalls(VerbWatch, 50)...)
	h := runFake(t, Config{GiveUpAfter: 3 * time.Second, Clock: clock, Backoff: Backoff{Initial: 500 * time.Millisecond, Max: time.Second}}, script...)
	var re *Error
	if !errors.As(h.err, &re) || re.Phase != "watch" {
		t.Fatalf("Run: got %v, want a watch-phase give-up", h.err)
	}
	if !strings.Contains(h.err.Error(), "connection refused (no progress for") {
		t.Errorf("error: got %q, want the cause and the time without progress", h.err)
	}
	reasons := h.reasons()
	if reasons[len(reasons)-1] != string(ReasonGaveUp) {
		t.Errorf("last decision: got %v, want %s", reasons, ReasonGaveUp)
	}
	// Failed attempts for at least 3s after the cut, not one more than needed.
	d := h.lastDecision()
	if d.Wait < 3*time.Second || d.Wait > 4*time.Second {
		t.Errorf("gave up after %s without progress, want 3s to 4s (the backoff's granularity)", d.Wait)
	}
}

// TestGiveUpAfterEndsOnTimeNotABackoffLate: a backoff longer than what is
// left of GiveUpAfter is cut to it, so the run gives up when GiveUpAfter
// runs out. With backoffs of 2s and GiveUpAfter 3s, it gave up after 4s:
// the default backoff's 30s could add up to 30s to a --give-up-after.
func TestGiveUpAfterEndsOnTimeNotABackoffLate(t *testing.T) {
	clock := newManualClock()
	script := []call{
		{verb: VerbList, page: page("10", "", obj("a", "u-a", "10"))},
		{verb: VerbWatch, end: goaway},
	}
	script = append(script, refusedCalls(VerbWatch, 10)...)
	h := runFake(t, Config{GiveUpAfter: 3 * time.Second, Clock: clock, Backoff: Backoff{Initial: 2 * time.Second, Max: 2 * time.Second}}, script...)
	if reasons := h.reasons(); reasons[len(reasons)-1] != string(ReasonGaveUp) {
		t.Fatalf("last decision: got %v, want %s", reasons, ReasonGaveUp)
	}
	if d := h.lastDecision(); d.Wait != 3*time.Second {
		t.Errorf("gave up after %s without progress, want 3s: a backoff past GiveUpAfter is cut to it", d.Wait)
	}
}

func TestAStreamingListThatKeepsDeliveringIsNeverCutByTheInitialEventsTimeout(t *testing.T) {
	// 50 initial events 10s apart: 500s in all, far past the 60s timeout,
	// which counts from the last initial event.
	events := make([]WatchEvent, 0, 51)
	for i := 0; i < 50; i++ {
		events = append(events, ev(EventAdded, obj(fmt.Sprint("o", i), fmt.Sprint("u", i), fmt.Sprint(i+1))))
	}
	events = append(events, bookmark("50", true))
	h := runFake(t, Config{Strategy: StrategyStream, InitialEventsTimeout: time.Minute, Clock: newManualClock()},
		call{verb: VerbWatch, events: events, gap: 10 * time.Second},
	)
	if got := h.st.Len(); got != 50 {
		t.Errorf("objects: got %d, want 50", got)
	}
	for _, r := range h.reasons() {
		if r == string(ReasonInitialEventsEnd) {
			t.Fatalf("the streaming list was cut while it delivered: %v", h.reasons())
		}
	}
}

func TestAStreamingListThatStallsFallsBackToList(t *testing.T) {
	h := runFake(t, Config{Strategy: StrategyStream, InitialEventsTimeout: time.Minute, Clock: newManualClock()},
		// One initial event, then 61 s of nothing.
		call{verb: VerbWatch, events: []WatchEvent{ev(EventAdded, obj("a", "u-a", "5")), bookmark("9", true)}, gap: 61 * time.Second},
		call{verb: VerbList, page: page("9", "", obj("a", "u-a", "5"))},
	)
	if got, want := join(h.askedSummary()), "watch rv= sendInitialEvents | list rv="; !strings.HasPrefix(got, want) {
		t.Errorf("requests: got %q, want %q…", got, want)
	}
	if !strings.Contains(join(h.reasons()), string(ReasonInitialEventsEnd)) {
		t.Errorf("decisions: got %v, want %s", h.reasons(), ReasonInitialEventsEnd)
	}
}

// Progress bookmarks (the server's, about once a minute) are no initial
// events: they do not put off the fallback of a stalled streaming list. A
// run behind a proxy that withheld the list's end fell back after 120 s,
// or never, instead of 60 s after its last initial event.
func TestProgressBookmarksDoNotPutOffAStalledStreamingListsFallback(t *testing.T) {
	h := runFake(t, Config{Strategy: StrategyStream, InitialEventsTimeout: time.Minute, Clock: newManualClock()},
		// One initial event, then a progress bookmark every 40 s, and no end.
		call{verb: VerbWatch, events: []WatchEvent{ev(EventAdded, obj("a", "u-a", "5")), bookmark("6", false), bookmark("7", false), bookmark("8", false)}, gap: 40 * time.Second},
		call{verb: VerbList, page: page("9", "", obj("a", "u-a", "5"))},
	)
	if !strings.Contains(join(h.reasons()), string(ReasonInitialEventsEnd)) {
		t.Errorf("decisions: got %v, want %s", h.reasons(), ReasonInitialEventsEnd)
	}
	if got, want := join(h.askedSummary()), "watch rv= sendInitialEvents | list rv="; !strings.HasPrefix(got, want) {
		t.Errorf("requests: got %q, want %q…", got, want)
	}
}

// A change (MODIFIED, DELETED) is no initial event either: once one came,
// the initial events are over, and nothing puts the stall timeout off,
// counted from the last initial event. A stalled list of a busy resource
// never fell back: each change put it off (h67f).
func TestChangesDoNotPutOffAStalledStreamingListsFallback(t *testing.T) {
	for name, later := range map[string][]WatchEvent{
		"deletes": {ev(EventDeleted, obj("x", "u-x", "6")), ev(EventDeleted, obj("y", "u-y", "7")), ev(EventDeleted, obj("z", "u-z", "8")), ev(EventDeleted, obj("w", "u-w", "9"))},
		// After a change, a creation is no initial event either.
		"a change, then creations": {ev(EventModified, obj("a", "u-a", "6")), ev(EventAdded, obj("b", "u-b", "7")), ev(EventAdded, obj("c", "u-c", "8")), ev(EventAdded, obj("d", "u-d", "9"))},
	} {
		// One initial event, then one every 25 s, and no end: the timeout
		// (a minute from the initial event) comes after the third.
		h := runFake(t, Config{Strategy: StrategyStream, InitialEventsTimeout: time.Minute, Clock: newManualClock()},
			call{verb: VerbWatch, events: append([]WatchEvent{ev(EventAdded, obj("a", "u-a", "5"))}, later...), gap: 25 * time.Second},
			call{verb: VerbList, page: page("9", "", obj("a", "u-a", "5"))},
		)
		if !strings.Contains(join(h.reasons()), string(ReasonInitialEventsEnd)) {
			t.Errorf("%s: decisions %v, want %s", name, h.reasons(), ReasonInitialEventsEnd)
		}
		if reqs := h.r.Stats().Requests; len(reqs) == 0 || reqs[0].Events != 3 {
			t.Errorf("%s: requests %+v, want the streaming list cut a minute after its initial event, after 3 events", name, reqs)
		}
	}
}

func TestTheIdleTimeoutCountsFromTheLastEvent(t *testing.T) {
	// Events every 20s for 200s with a 30s idle timeout: never idle.
	h := runFake(t, Config{IdleTimeout: 30 * time.Second, Clock: newManualClock()},
		call{verb: VerbList, page: page("10", "", obj("a", "u-a", "10"))},
		call{verb: VerbWatch, events: modifications(10, 10), end: closed, gap: 20 * time.Second},
		call{verb: VerbWatch},
	)
	for _, r := range h.r.Stats().Requests {
		if r.End.Reason == EndTimeout {
			t.Errorf("request %d ended by the idle timeout although events kept coming", r.ID)
		}
	}
	if got := h.r.Stats().ResourceVersion; got != "20" {
		t.Errorf("cursor: got %s, want 20", got)
	}
}

func TestGoneAgainRightAfterARelistBacksOff(t *testing.T) {
	gone := errorEvent(410, metav1.StatusReasonExpired, "too old resource version: 10 (20)")
	h := runFake(t, Config{Clock: newManualClock()},
		call{verb: VerbList, page: page("10", "", obj("a", "u-a", "10"))},
		call{verb: VerbWatch, events: []WatchEvent{ev(EventModified, obj("a", "u-a", "11")), gone}},
		call{verb: VerbList, page: page("20", "", obj("a", "u-a", "20"))},
		// The new list's resourceVersion is gone again before the watch made any progress.
		call{verb: VerbWatch, events: []WatchEvent{gone}},
		call{verb: VerbList, page: page("30", "", obj("a", "u-a", "30"))},
		call{verb: VerbWatch, events: []WatchEvent{ev(EventModified, obj("a", "u-a", "31")), gone}},
		call{verb: VerbList, page: page("40", "", obj("a", "u-a", "40"))},
	)
	// The first 410 relists at once; the second, with no progress since,
	// backs off; the third, after the watch delivered an event, relists at once again.
	got := join(h.reasons())
	want := "initial-list | list-complete | gone | list-complete | relist-diff | gone | backoff | list-complete | relist-diff | gone | list-complete | relist-diff"
	if !strings.HasPrefix(got, want) {
		t.Errorf("decisions:\ngot  %s\nwant %s…", got, want)
	}
}

func TestBackoffResetsAfterAHealthyPeriodMeasuredFromTheLastFailure(t *testing.T) {
	clock := newManualClock()
	b := backoffState{cfg: Backoff{Initial: time.Second, Max: 30 * time.Second, Factor: 2, ResetAfter: 2 * time.Minute, Jitter: 0}.withDefaults(), rand: func() float64 { return 0 }}
	now := clock.Now()
	b.next(now)
	b.next(now.Add(time.Second))
	if d := b.next(now.Add(3 * time.Second)); d != 4*time.Second {
		t.Fatalf("third failure in a row: got %v, want 4s", d)
	}
	// A watch healthy for three minutes since that failure.
	if d := b.next(now.Add(3*time.Second + 3*time.Minute)); d != time.Second {
		t.Errorf("after three healthy minutes: got %v, want the initial 1s", d)
	}
}

// lastDecision is the last decision the reflector noted.
func (h *harness) lastDecision() Decision {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.notes) - 1; i >= 0; i-- {
		if d := h.notes[i].Decision; d != nil {
			return *d
		}
	}
	return Decision{}
}

func TestAServerThatAnswersWithErrorsIsReachableAndNeverGivesUp(t *testing.T) {
	// An apiserver starting up answers 503 for a while: it is there, so
	// GiveUpAfter does not apply; the backoff bounds the retries.
	unavailable := httpErr(503, metav1.StatusReasonServiceUnavailable, "the server is currently unable to handle the request")
	script := []call{{verb: VerbList, page: page("10", "", obj("a", "u-a", "10"))}}
	for i := 0; i < 20; i++ {
		script = append(script, call{verb: VerbWatch, err: unavailable})
	}
	script = append(script, call{verb: VerbWatch})
	h := runFake(t, Config{GiveUpAfter: 3 * time.Second, Clock: newManualClock(), Backoff: Backoff{Initial: 500 * time.Millisecond, Max: time.Second}}, script...)
	if h.err != nil {
		t.Fatalf("Run: %v", h.err)
	}
	if n := len(h.src.requests()); n != 22 {
		t.Errorf("requests: got %d, want 22", n)
	}
}

func TestAListGateLetsOnlyItsSizeOfFirstListsRunAtOnce(t *testing.T) {
	gate := NewListGate(2)
	var mu sync.Mutex
	inFlight, most := 0, 0
	release := make(chan struct{})
	list := func(context.Context, RequestOptions) (*Page, error) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		return page("10", ""), nil
	}
	// What the notes say must hold too: between a reflector's first request
	// and its list-complete decision, at most two first lists are open.
	noted, notedMost := 0, 0
	onNote := func(n Note) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case n.Kind == NoteRequestStarted && n.Request.ID == 1:
			noted++
			notedMost = max(notedMost, noted)
		case n.Kind == NoteDecision && n.Decision.Reason == ReasonListComplete:
			noted--
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stores []*store.Store
	for i := 0; i < 5; i++ {
		st, w := store.New()
		r, err := New(Config{Source: listOnly(list), InitialLists: gate, OnNote: onNote}, w, st)
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, st)
		go func() { _ = r.Run(ctx) }()
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return inFlight == 2 })
	close(release)
	for _, st := range stores {
		if err := st.WaitUntilReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 2 || notedMost != 2 {
		t.Errorf("first lists at once: at most %d (by the notes %d), want 2", most, notedMost)
	}
}

// listOnly answers LISTs with list and leaves watches open until canceled.
type listOnly func(context.Context, RequestOptions) (*Page, error)

func (l listOnly) List(ctx context.Context, o RequestOptions) (*Page, error) { return l(ctx, o) }

func (l listOnly) Watch(ctx context.Context, _ RequestOptions) (Stream, error) {
	return &fakeStream{ctx: ctx, src: &fakeSource{drained: make(chan struct{})}}, nil
}

// answerGate is a Source whose watch waits for release before the server
// "answers" (its response headers), as over a hung connection.
type answerGate struct {
	release chan struct{}
	src     *fakeSource
}

func (g *answerGate) List(ctx context.Context, o RequestOptions) (*Page, error) {
	return g.src.List(ctx, o)
}

func (g *answerGate) Watch(ctx context.Context, o RequestOptions) (Stream, error) {
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.src.Watch(ctx, o)
}

// A watch whose answer has not come is awaiting it (Stats.Current), and
// no longer once the server answered: the dashboard tells a hung
// connection from a quiet watch by it.
func TestAWatchAwaitsTheServersAnswer(t *testing.T) {
	g := &answerGate{release: make(chan struct{}), src: newFake(t, call{verb: VerbList, page: page("10", "")})}
	r, _ := runInBackground(t, Config{Source: g, Strategy: StrategyList})
	awaiting := func(want bool) func() bool {
		return func() bool {
			c := r.Stats().Current
			return c != nil && c.Verb == VerbWatch && c.Awaiting == want
		}
	}
	waitFor(t, awaiting(true))
	close(g.release)
	waitFor(t, awaiting(false))
}

// After its end, a streaming list's watch goes on as any watch: a creation
// a minute later is no initial event, and does not start the stall timeout
// again (the watch would be cut a minute after it).
func TestACreationAfterAStreamingListsEndDoesNotCutTheWatch(t *testing.T) {
	h := runFake(t, Config{Strategy: StrategyStream, InitialEventsTimeout: time.Minute, Clock: newManualClock()},
		call{verb: VerbWatch, events: []WatchEvent{ev(EventAdded, obj("a", "u-a", "5")), bookmark("5", true), ev(EventAdded, obj("b", "u-b", "6")),
			bookmark("7", false), bookmark("8", false), bookmark("9", false)}, gap: 50 * time.Second, end: closed},
		call{verb: VerbWatch},
	)
	if reqs := h.r.Stats().Requests; len(reqs) == 0 || reqs[0].End == nil || reqs[0].End.Reason != EndClosed {
		t.Errorf("requests %+v: want the streaming list's watch closed by the server, not cut", reqs)
	}
}
