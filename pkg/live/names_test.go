package live_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// flowControlAPI answers the flow-control lists from a script of codes, one
// per request (the last repeats): 429 with Retry-After and API Priority
// and Fairness's plain-text body, 403, or 200 with the lists.
type flowControlAPI struct {
	mu         sync.Mutex
	codes      []int
	retryAfter string
	requests   int
}

func (a *flowControlAPI) serve(t *testing.T) *rest.Config {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		code := a.codes[min(a.requests, len(a.codes)-1)]
		a.requests++
		a.mu.Unlock()
		switch code {
		case http.StatusTooManyRequests:
			w.Header().Set("Retry-After", a.retryAfter)
			http.Error(w, "Too many requests, please try again later.", code)
		case http.StatusForbidden:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_, _ = w.Write([]byte(forbidden))
		default:
			w.Header().Set("Content-Type", "application/json")
			if strings.HasSuffix(r.URL.Path, "/flowschemas") {
				_, _ = w.Write([]byte(flowSchemas))
			} else {
				_, _ = w.Write([]byte(priorityLevels))
			}
		}
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}

func (a *flowControlAPI) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests
}

// namesOnFakeClock is a FlowControlNames of a's server on a fake clock:
// ended receives once per lookup, after it ended; named receives what the
// listeners were told.
// waits receives how long each wait of Finish's for a Retry-After is.
func namesOnFakeClock(t *testing.T, a *flowControlAPI) (n *live.FlowControlNames, clk *testingclock.FakeClock, ended chan struct{}, named chan live.Named, waits chan time.Duration) {
	t.Helper()
	clk = testingclock.NewFakeClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	ended, named, waits = make(chan struct{}, 16), make(chan live.Named, 16), make(chan time.Duration, 16)
	n, err := live.NewFlowControlNamesOnClock(a.serve(t), clk, func() { ended <- struct{}{} }, func(d time.Duration) { waits <- d })
	if err != nil {
		t.Fatal(err)
	}
	n.OnNamed(func(x live.Named) { named <- x })
	return n, clk, ended, named, waits
}

// lookupEnded waits for the next lookup to end; a lookup that never comes
// fails the test (after a generous guard) rather than hanging it.
func lookupEnded(t *testing.T, ended chan struct{}) {
	t.Helper()
	select {
	case <-ended:
	case <-time.After(time.Minute):
		t.Fatal("no lookup ended")
	}
}

func throttleOf(fs, pl string) *reflector.Throttle {
	return &reflector.Throttle{RetryAfter: time.Second, FlowSchemaUID: fs, PriorityLevelUID: pl}
}

func wantNamed(t *testing.T, named chan live.Named) {
	t.Helper()
	select {
	case got := <-named:
		if got.FlowSchemas["fs-1"] != "slow-lane" || got.PriorityLevels["pl-1"] != "one-seat" || len(got.FlowSchemas)+len(got.PriorityLevels) != 2 {
			t.Errorf("named %+v, want fs-1 slow-lane and pl-1 one-seat", got)
		}
	default:
		t.Error("the listeners were not told the names")
	}
}

// A lookup that was itself answered 429 is looked up again once the
// server's Retry-After has run, with no 429 of the reflector's to prompt
// it, and what it learns goes to the listeners: the names of a 429 a
// throttled client could not read while it was throttled.
func TestAThrottledLookupIsRetriedAfterItsRetryAfterWithoutAnother429(t *testing.T) {
	a := &flowControlAPI{codes: []int{429, 200}, retryAfter: "3"}
	n, clk, ended, named, _ := namesOnFakeClock(t, a)
	th := throttleOf("fs-1", "pl-1")
	n.Fill(context.Background(), th)
	lookupEnded(t, ended)
	if th.FlowSchema != "" || th.PriorityLevel != "" || a.count() != 1 {
		t.Fatalf("after a throttled lookup: %+v named, %d requests; want no names, 1 request", th, a.count())
	}
	clk.Step(3*time.Second - time.Millisecond)
	if got := a.count(); got != 1 {
		t.Fatalf("%d requests before the Retry-After ran, want 1", got)
	}
	clk.Step(time.Millisecond)
	lookupEnded(t, ended)
	if got := a.count(); got != 3 {
		t.Errorf("%d requests once the Retry-After ran, want 3 (both lists)", got)
	}
	wantNamed(t, named)
	// From the cache now, without a request.
	th = throttleOf("fs-1", "pl-1")
	n.Fill(context.Background(), th)
	if th.FlowSchema != "slow-lane" || th.PriorityLevel != "one-seat" || a.count() != 3 {
		t.Errorf("a later 429: %+v, %d requests; want named from the cache, 3", th, a.count())
	}
}

// Lookups that keep failing back off: 1 s after the first, doubling, at
// most a minute apart; the server's Retry-After, when longer, wins.
func TestFailedLookupsBackOffFromTheRetryAfterToAMinute(t *testing.T) {
	for _, tc := range []struct {
		retryAfter string
		waits      []time.Duration
	}{
		{"1", []time.Duration{1, 2, 4, 8, 16, 32, 60, 60}},
		{"5", []time.Duration{5, 5, 5, 8, 16, 32, 60}},
		{"90", []time.Duration{90, 90}},
	} {
		t.Run("Retry-After "+tc.retryAfter, func(t *testing.T) {
			a := &flowControlAPI{codes: []int{429}, retryAfter: tc.retryAfter}
			n, clk, ended, named, _ := namesOnFakeClock(t, a)
			n.Fill(context.Background(), throttleOf("fs-1", "pl-1"))
			lookupEnded(t, ended)
			for i, w := range tc.waits {
				clk.Step(w*time.Second - time.Millisecond)
				if got := a.count(); got != i+1 {
					t.Fatalf("lookup %d came %s early", i+2, time.Millisecond)
				}
				clk.Step(time.Millisecond)
				lookupEnded(t, ended)
				if got := a.count(); got != i+2 {
					t.Fatalf("%d requests %s after lookup %d, want %d", got, w*time.Second, i+1, i+2)
				}
			}
			if len(named) > 0 {
				t.Errorf("named %+v by failed lookups", <-named)
			}
		})
	}
}

// A user who may not read the flow-control objects is asked once: no
// retry, and nothing at the end of the run.
func TestAForbiddenLookupIsNotRetriedNorLookedUpAtTheEnd(t *testing.T) {
	a := &flowControlAPI{codes: []int{403}}
	n, clk, ended, _, _ := namesOnFakeClock(t, a)
	n.Fill(context.Background(), throttleOf("fs-1", "pl-1"))
	lookupEnded(t, ended)
	if clk.HasWaiters() {
		t.Error("a retry is armed after a 403")
	}
	n.Finish(context.Background())
	n.Fill(context.Background(), throttleOf("fs-1", "pl-1"))
	if got := a.count(); got != 1 {
		t.Errorf("%d requests, want the one refused", got)
	}
}

// At the end of the run, Finish looks once more for what a 429 gave by UID
// alone, though the last lookup succeeded a moment ago (an object it did not
// hold then), and the listeners hear the names before it returns.
func TestFinishLooksOnceMoreAtTheEndOfTheRun(t *testing.T) {
	a := &flowControlAPI{codes: []int{200}}
	n, _, ended, named, _ := namesOnFakeClock(t, a)
	// The cache is filled by a first 429; a second, of a UID it does not
	// hold, may not look again for 10 s, and is not retried: it succeeded.
	n.Fill(context.Background(), throttleOf("fs-1", ""))
	lookupEnded(t, ended)
	th := throttleOf("fs-new", "pl-1")
	n.Fill(context.Background(), th)
	if th.FlowSchema != "" || th.PriorityLevel != "one-seat" || a.count() != 2 {
		t.Fatalf("%+v after %d requests, want fs-new unnamed, pl-1 named, 2 requests", th, a.count())
	}
	n.Finish(context.Background())
	lookupEnded(t, ended)
	if got := a.count(); got != 4 {
		t.Errorf("%d requests after Finish, want 4: both lists once more", got)
	}
	if len(named) != 0 {
		t.Errorf("told %+v: fs-new is in no list", <-named)
	}
}

// Finish waits out the Retry-After of the last lookup, throttled, then
// looks: the names are the listeners' before it returns.
func TestFinishWaitsTheRetryAfterThenNamesWhatItLearns(t *testing.T) {
	a := &flowControlAPI{codes: []int{429, 200}, retryAfter: "2"}
	n, clk, ended, named, waits := namesOnFakeClock(t, a)
	n.Fill(context.Background(), throttleOf("fs-1", "pl-1"))
	lookupEnded(t, ended)
	clk.Step(500 * time.Millisecond)
	finished := make(chan struct{})
	go func() {
		n.Finish(context.Background())
		close(finished)
	}()
	var w time.Duration
	select {
	case w = <-waits:
	case <-time.After(time.Minute):
		t.Fatal("Finish did not wait for the Retry-After")
	}
	if w != 1500*time.Millisecond {
		t.Errorf("Finish waits %s, want the 1.5 s left of the Retry-After", w)
	}
	if got := a.count(); got != 1 {
		t.Errorf("%d requests before the Retry-After ran, want 1", got)
	}
	clk.Step(1500 * time.Millisecond)
	select {
	case <-finished:
	case <-time.After(time.Minute):
		t.Fatal("Finish did not return")
	}
	wantNamed(t, named)
	if got := a.count(); got != 3 {
		t.Errorf("%d requests, want 3", got)
	}
}

// Finish does not wait for a Retry-After that outlasts its 5 s: the run
// ends without the names.
func TestFinishDoesNotWaitALongRetryAfter(t *testing.T) {
	a := &flowControlAPI{codes: []int{429}, retryAfter: "10"}
	n, clk, ended, _, _ := namesOnFakeClock(t, a)
	n.Fill(context.Background(), throttleOf("fs-1", "pl-1"))
	lookupEnded(t, ended)
	n.Finish(context.Background())
	if got := a.count(); got != 1 || clk.HasWaiters() {
		t.Errorf("%d requests, a timer left %t; want 1 and none", got, clk.HasWaiters())
	}
}

// A lookup that outlives Finish fills the cache and tells no listener:
// the run's outputs it would tell are closed by then (the lines' queue
// panicked on the send).
func TestALookupThatOutlivesFinishTellsNoOne(t *testing.T) {
	gate := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-gate
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/flowschemas") {
			_, _ = w.Write([]byte(flowSchemas))
		} else {
			_, _ = w.Write([]byte(priorityLevels))
		}
	}))
	defer srv.Close()
	defer close(gate)
	clk := testingclock.NewFakeClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	ended, named := make(chan struct{}, 4), make(chan live.Named, 4)
	n, err := live.NewFlowControlNamesOnClock(&rest.Config{Host: srv.URL}, clk, func() { ended <- struct{}{} }, nil)
	if err != nil {
		t.Fatal(err)
	}
	n.OnNamed(func(x live.Named) { named <- x })
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	n.Fill(canceled, throttleOf("fs-1", "pl-1")) // the lookup starts and hangs at the server
	finished := make(chan struct{})
	go func() { defer close(finished); n.Finish(context.Background()) }()
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	clk.Step(time.Minute) // Finish's time is up: it returns, the lookup still in flight
	<-finished
	// After Finish, Fill names from the cache alone: it does not wait for
	// the lookup still in flight.
	filled := make(chan struct{})
	go func() { defer close(filled); n.Fill(context.Background(), throttleOf("fs-1", "pl-1")) }()
	select {
	case <-filled:
	case <-time.After(10 * time.Second):
		t.Fatal("a Fill after Finish waits for the lookup that outlived it")
	}
	gate <- struct{}{} // the flow schemas' answer
	gate <- struct{}{} // the priority levels'
	lookupEnded(t, ended)
	if len(named) != 0 {
		t.Errorf("told %+v after Finish returned", <-named)
	}
	th := throttleOf("fs-1", "pl-1")
	n.Fill(canceled, th)
	if th.FlowSchema != "slow-lane" || th.PriorityLevel != "one-seat" {
		t.Errorf("%+v: the cache should hold what the late lookup learned", th)
	}
}
