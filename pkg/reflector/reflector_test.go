package reflector

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

func join(s []string) string { return strings.Join(s, " | ") }

func TestListThenWatchFromTheListResourceVersion(t *testing.T) {
	// LIST A, B at rv=120; A modified at 121; C created at 122: the cache is A', B, C.
	h := runFake(t, Config{},
		call{verb: VerbList, page: page("120", "", obj("a", "u-a", "100"), obj("b", "u-b", "110"))},
		call{verb: VerbWatch, events: []WatchEvent{ev(EventModified, obj("a", "u-a", "121")), ev(EventAdded, obj("c", "u-c", "122"))}},
	)
	if got, want := h.storeState(), "a:u-a@121 b:u-b@110 c:u-c@122"; got != want {
		t.Errorf("store: got %q, want %q", got, want)
	}
	if got, want := join(h.askedSummary()), "list rv= | watch rv=120"; got != want {
		t.Errorf("requests: got %q, want %q", got, want)
	}
	if got := h.r.Stats().ResourceVersion; got != "122" {
		t.Errorf("cursor: got %s, want 122", got)
	}
}

func TestBookmarkMovesOnlyTheCursor(t *testing.T) {
	// LIST rv=10, MODIFIED rv=11, DELETED rv=12, BOOKMARK rv=12, then BOOKMARK rv=15.
	h := runFake(t, Config{},
		call{verb: VerbList, page: page("10", "", obj("a", "u-a", "5"), obj("b", "u-b", "6"))},
		call{verb: VerbWatch, events: []WatchEvent{
			ev(EventModified, obj("a", "u-a", "11")),
			ev(EventDeleted, obj("b", "u-b", "12")),
			bookmark("12", false),
			bookmark("15", false),
		}},
	)
	st := h.r.Stats()
	if st.Counters.Bookmarks != 2 || st.BookmarkRV != "15" || st.ResourceVersion != "15" {
		t.Errorf("bookmarks/bookmark rv/cursor: got %d/%s/%s, want 2/15/15", st.Counters.Bookmarks, st.BookmarkRV, st.ResourceVersion)
	}
	if st.Counters.Modified != 1 || st.Counters.Deleted != 1 || st.Counters.Added != 0 {
		t.Errorf("object events: got %+v, want 1 modified and 1 deleted", st.Counters)
	}
	if got, want := h.storeState(), "a:u-a@11"; got != want {
		t.Errorf("store: got %q, want %q", got, want)
	}
}

func TestWatchClosedNormallyResumesFromTheLastResourceVersion(t *testing.T) {
	h := runFake(t, Config{},
		call{verb: VerbList, page: page("10", "", obj("a", "u-a", "10"))},
		call{verb: VerbWatch, events: []WatchEvent{ev(EventModified, obj("a", "u-a", "11"))}, end: closed},
		call{verb: VerbWatch, events: []WatchEvent{bookmark("20", false)}, end: &RequestEnd{Reason: EndError, Err: errors.New("connection reset by peer")}},
	)
	if got, want := join(h.askedSummary()), "list rv= | watch rv=10 | watch rv=11 | watch rv=20"; got != want {
		t.Errorf("requests: got %q, want %q", got, want)
	}
	c := h.r.Stats().Counters
	if c.Lists != 1 || c.Relists != 0 || c.WatchErrors != 1 || c.Backoffs != 1 {
		t.Errorf("lists/relists/watchErrors/backoffs: got %d/%d/%d/%d, want 1/0/1/1", c.Lists, c.Relists, c.WatchErrors, c.Backoffs)
	}
}

func TestGoneRelistsFromAConsistentReadAndReportsTheMissedDeletes(t *testing.T) {
	cases := []struct {
		name  string
		watch call
	}{
		{"ERROR event", call{verb: VerbWatch, events: []WatchEvent{errorEvent(410, metav1.StatusReasonExpired, "too old resource version: 900 (1200)")}}},
		{"HTTP 410", call{verb: VerbWatch, err: httpErr(410, metav1.StatusReasonGone, "gone")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := runFake(t, Config{},
				call{verb: VerbList, page: page("900", "", obj("a", "u-a", "800"), obj("b", "u-b", "850"), obj("c", "u-c", "890"))},
				tc.watch,
				call{verb: VerbList, page: page("1250", "", obj("a", "u-a", "800"), obj("c", "u-c2", "1100"), obj("d", "u-d", "1200"))},
			)
			// Local rv=900, LIST rv=1250: nothing between is replayed; the watch starts at 1250.
			if got, want := join(h.askedSummary()), "list rv= | watch rv=900 | list rv= | watch rv=1250"; got != want {
				t.Errorf("requests: got %q, want %q", got, want)
			}
			st := h.r.Stats()
			if st.Counters.Gone != 1 || st.Counters.Relists != 1 {
				t.Errorf("gone/relists: got %d/%d, want 1/1", st.Counters.Gone, st.Counters.Relists)
			}
			d := st.LastRelistDiff
			if d == nil || len(d.Deleted) != 1 || d.Deleted[0].Ref.Name != "b" || len(d.Recreated) != 1 || d.Recreated[0].Ref.Name != "c" || len(d.Added) != 1 || d.Unchanged != 1 {
				t.Fatalf("relist diff: got %+v", d)
			}
			if got, want := h.storeState(), "a:u-a@800 c:u-c2@1100 d:u-d@1200"; got != want {
				t.Errorf("store: got %q, want %q", got, want)
			}
		})
	}
}

func TestGoneOnAContinueTokenRestartsTheListWithoutTheToken(t *testing.T) {
	h := runFake(t, Config{PageSize: 1},
		call{verb: VerbList, page: page("50", "tok1", obj("a", "u-a", "1"))},
		call{verb: VerbList, err: httpErr(410, metav1.StatusReasonExpired, "The provided continue parameter is too old")},
		call{verb: VerbList, page: page("60", "tok2", obj("a", "u-a", "1"))},
		call{verb: VerbList, page: page("60", "", obj("b", "u-b", "55"))},
	)
	if got, want := join(h.askedSummary()), "list rv= | list rv= continue=tok1 | list rv= | list rv= continue=tok2 | watch rv=60"; got != want {
		t.Errorf("requests: got %q, want %q", got, want)
	}
	if got := h.reasons(); !strings.Contains(join(got), string(ReasonContinueGone)) {
		t.Errorf("notes: got %v, want a %s note", got, ReasonContinueGone)
	}
	if got, want := h.storeState(), "a:u-a@1 b:u-b@55"; got != want {
		t.Errorf("store: got %q, want %q", got, want)
	}
}

func TestTooLargeResourceVersionRelists(t *testing.T) {
	tooLarge := &metav1.Status{Code: 504, Reason: metav1.StatusReasonTimeout, Message: "Too large resource version: 99, current: 50",
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}}}
	h := runFake(t, Config{},
		call{verb: VerbList, page: page("99", "", obj("a", "u-a", "1"))},
		call{verb: VerbWatch, events: []WatchEvent{{Type: EventError, Status: tooLarge}}},
		call{verb: VerbList, page: page("50", "", obj("a", "u-a", "1"))},
	)
	if got, want := join(h.askedSummary()), "list rv= | watch rv=99 | list rv= | watch rv=50"; got != want {
		t.Errorf("requests: got %q, want %q", got, want)
	}
	if c := h.r.Stats().Counters; c.TooLargeResourceVersion != 1 || c.Relists != 1 {
		t.Errorf("tooLarge/relists: got %d/%d, want 1/1", c.TooLargeResourceVersion, c.Relists)
	}
}

func TestAFirstListRefusedAtItsResourceVersionListsAgainAndIsNoRelist(t *testing.T) {
	gone := httpErr(410, metav1.StatusReasonExpired, "too old resource version: 5 (300)")
	tooLarge := &RequestEnd{Reason: EndError, Status: &metav1.Status{Code: 504, Reason: metav1.StatusReasonTimeout, Message: "Too large resource version: 5, current: 3",
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}}}}
	cases := []struct {
		name     string
		strategy Strategy
		refusal  error
		asked    string
		said     string
	}{
		{"410 on a LIST", StrategyList, gone, "list rv=5 | list rv= | watch rv=300",
			`410 Gone at resourceVersion "5": history is gone; no list has completed yet; listing again from a consistent read (LIST, unpaginated)`},
		{"too large on a LIST", StrategyList, tooLarge, "list rv=5 | list rv= | watch rv=300",
			`resourceVersion "5" is too large for the server: no list has completed yet; listing again from a consistent read (LIST, unpaginated)`},
		{"410 on a streaming list", StrategyStream, gone, "watch rv=5 sendInitialEvents | watch rv= sendInitialEvents",
			`410 Gone at resourceVersion "5": history is gone; no list has completed yet; listing again from a consistent read (streaming list)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first := call{verb: VerbList, err: tc.refusal}
			again := call{verb: VerbList, page: page("300", "", obj("a", "u-a", "200"))}
			if tc.strategy == StrategyStream {
				first.verb = VerbWatch
				again = call{verb: VerbWatch, events: []WatchEvent{ev(EventAdded, obj("a", "u-a", "200")), bookmark("300", true)}}
			}
			h := runFake(t, Config{Strategy: tc.strategy, ResourceVersion: "5"}, first, again)
			if got := join(h.askedSummary()); got != tc.asked {
				t.Errorf("requests: got %q, want %q", got, tc.asked)
			}
			var said []string
			h.mu.Lock()
			for _, n := range h.notes {
				if n.Kind != NoteDecision {
					continue
				}
				if n.Decision.State == StateRelisting {
					t.Errorf("decision %q: state Relisting before any list completed", n.Decision)
				}
				said = append(said, n.Decision.String())
			}
			h.mu.Unlock()
			if !slices.Contains(said, tc.said) {
				t.Errorf("decisions: got %q, want one saying %q", said, tc.said)
			}
			if c := h.r.Stats().Counters; c.Lists != 1 || c.Relists != 0 {
				t.Errorf("lists/relists: got %d/%d, want 1/0", c.Lists, c.Relists)
			}
		})
	}
}

func TestThrottlingAndServerErrorsBackOffAndRetryTheSameResourceVersion(t *testing.T) {
	h := runFake(t, Config{},
		call{verb: VerbList, err: httpErr(429, metav1.StatusReasonTooManyRequests, "slow down")},
		call{verb: VerbList, page: page("10", "")},
		call{verb: VerbWatch, err: httpErr(500, metav1.StatusReasonInternalError, "boom")},
		call{verb: VerbWatch, err: httpErr(503, metav1.StatusReasonServiceUnavailable, "unavailable")},
	)
	if got, want := join(h.askedSummary()), "list rv= | list rv= | watch rv=10 | watch rv=10 | watch rv=10"; got != want {
		t.Errorf("requests: got %q, want %q", got, want)
	}
	if c := h.r.Stats().Counters; c.Backoffs != 3 || c.Relists != 0 {
		t.Errorf("backoffs/relists: got %d/%d, want 3/0", c.Backoffs, c.Relists)
	}
}

func TestBackoffGrowsExponentiallyWithJitterUpToTheCap(t *testing.T) {
	s := backoffState{cfg: Backoff{Initial: 800 * time.Millisecond, Max: 30 * time.Second, Factor: 2, Jitter: 0.5, ResetAfter: time.Minute}, rand: func() float64 { return 0.5 }}
	now := time.Unix(0, 0)
	var got []time.Duration
	for i := 0; i < 8; i++ {
		now = now.Add(time.Second)
		got = append(got, s.next(now))
	}
	want := []time.Duration{1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("backoff %d: got %v, want %v (all %v)", i, got[i], want[i]*time.Millisecond, got)
		}
	}
	if d := s.next(now.Add(2 * time.Minute)); d != 1000*time.Millisecond {
		t.Errorf("after a healthy period: got %v, want a reset to 1s", d)
	}
}

func TestForbiddenFailsAfterBoundedRetries(t *testing.T) {
	forbidden := httpErr(403, metav1.StatusReasonForbidden, `configmaps is forbidden: User "u" cannot list resource "configmaps" in API group "" in the namespace "ns"`)
	h := runFake(t, Config{MaxPermanentRetries: 2},
		call{verb: VerbList, err: forbidden},
		call{verb: VerbList, err: forbidden},
		call{verb: VerbList, err: forbidden},
	)
	want := `failed to perform initial object list: 403 Forbidden: configmaps is forbidden: User "u" cannot list resource "configmaps" in API group "" in the namespace "ns" (gave up after 3 attempts)`
	if h.err == nil || h.err.Error() != want {
		t.Fatalf("Run: got %v, want %s", h.err, want)
	}
	var re *Error
	if !errors.As(h.err, &re) || re.Phase != "initial list" {
		t.Errorf("error type: got %T %+v", h.err, re)
	}
	if st := h.r.Stats(); st.State != StateFailed || st.Counters.Backoffs != 2 {
		t.Errorf("state/backoffs: got %s/%d, want Failed/2", st.State, st.Counters.Backoffs)
	}
	// The decision carries what the server said apart from its status, for
	// the request-refused finding's evidence.
	if d := h.lastDecision(); d.Said != `configmaps is forbidden: User "u" cannot list resource "configmaps" in API group "" in the namespace "ns"` {
		t.Errorf("the failing decision: got %+v, want it to carry the Status message", d)
	}
}

// A 404 before anything was listed is a resource that is not there: it
// fails as a 403 does. Once a list completed, the resource was there: its
// CRD deleted (or its version unserved), maybe for a reinstall. A
// client-go informer retries until it comes back, and so does the
// reflector, backing off; a reviewer's run ended a second after the CRD
// went.
func TestA404AfterAListIsRetriedUntilTheResourceComesBack(t *testing.T) {
	notFound := httpErr(404, metav1.StatusReasonNotFound, "the server could not find the requested resource")
	h := runFake(t, Config{MaxPermanentRetries: 1}, call{verb: VerbList, err: notFound}, call{verb: VerbList, err: notFound})
	if h.err == nil || h.r.Stats().State != StateFailed {
		t.Fatalf("a 404 on the first list: got %v, want the run failed", h.err)
	}
	script := []call{{verb: VerbList, page: page("10", "", obj("a", "u-a", "5"))}}
	for range 4 {
		script = append(script, call{verb: VerbWatch, err: notFound})
	}
	script = append(script, call{verb: VerbWatch, events: []WatchEvent{ev(EventAdded, obj("b", "u-b", "20"))}})
	h = runFake(t, Config{MaxPermanentRetries: 1}, script...)
	if h.err != nil {
		t.Fatalf("Run: %v, want it to go on through the 404s", h.err)
	}
	if got, want := h.storeState(), "a:u-a@5 b:u-b@20"; got != want {
		t.Errorf("store: got %q, want %q once the resource was back", got, want)
	}
	if st := h.r.Stats(); st.Counters.Backoffs != 4 {
		t.Errorf("backoffs: got %d, want one after each of the 4 404s", st.Counters.Backoffs)
	}
	// The replay of a trace recorded before keeps the rule it was decided by.
	h = runFake(t, Config{MaxPermanentRetries: 1, NotFoundAfterListPermanent: true}, script...)
	if h.err == nil || !strings.Contains(h.err.Error(), "gave up after 2 attempts") {
		t.Errorf("with NotFoundAfterListPermanent: got %v, want the run failed after 2 attempts", h.err)
	}
}

func TestUnreachableServerGivesUpAfterTheConfiguredTime(t *testing.T) {
	refused := &RequestEnd{Reason: EndError, Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}
	script := make([]call, 0, 200)
	for i := 0; i < 200; i++ {
		script = append(script, call{verb: VerbList, err: refused})
	}
	h := runFake(t, Config{GiveUpAfter: 20 * time.Millisecond}, script...)
	if h.err == nil || !strings.Contains(h.err.Error(), "connection refused (no progress for") {
		t.Fatalf("Run: got %v, want a give-up error naming the connection error", h.err)
	}
}

func TestIdleTimeoutEndsASilentWatchAndResumes(t *testing.T) {
	h := runFake(t, Config{IdleTimeout: 30 * time.Millisecond},
		call{verb: VerbList, page: page("10", "")},
		call{verb: VerbWatch, events: []WatchEvent{ev(EventAdded, obj("a", "u-a", "11"))}}, // then silence
		call{verb: VerbWatch},
	)
	if got, want := join(h.askedSummary()), "list rv= | watch rv=10 | watch rv=11"; got != want {
		t.Errorf("requests: got %q, want %q", got, want)
	}
	reqs := h.r.Stats().Requests
	if len(reqs) < 2 || reqs[1].End.Reason != EndTimeout {
		t.Fatalf("second request end: got %+v, want timeout", reqs)
	}
	if !strings.Contains(join(h.reasons()), string(ReasonIdleTimeout)) {
		t.Errorf("notes: got %v, want %s", h.reasons(), ReasonIdleTimeout)
	}
}

func TestWatchThatClosesAtOnceBacksOffInsteadOfSpinning(t *testing.T) {
	h := runFake(t, Config{},
		call{verb: VerbList, page: page("10", "")},
		call{verb: VerbWatch, end: closed},
		call{verb: VerbWatch, end: closed},
	)
	if c := h.r.Stats().Counters; c.Backoffs != 2 {
		t.Errorf("backoffs: got %d, want 2", c.Backoffs)
	}
}

func TestStreamingListAppliesInitialEventsThenKeepsWatching(t *testing.T) {
	h := runFake(t, Config{Strategy: StrategyStream},
		call{verb: VerbWatch, events: []WatchEvent{
			ev(EventAdded, obj("a", "u-a", "5")),
			ev(EventAdded, obj("b", "u-b", "7")),
			bookmark("9", true),
			ev(EventModified, obj("a", "u-a", "10")),
		}, end: closed},
	)
	if got, want := join(h.askedSummary()), "watch rv= sendInitialEvents | watch rv=10"; got != want {
		t.Errorf("requests: got %q, want %q", got, want)
	}
	req := h.src.requests()[0].Opts
	if req.ResourceVersionMatch != "NotOlderThan" || !req.AllowWatchBookmarks {
		t.Errorf("streaming list options: got %+v", req)
	}
	c := h.r.Stats().Counters
	if c.Lists != 1 || c.Added != 0 || c.Modified != 1 {
		t.Errorf("lists/added/modified: got %d/%d/%d, want 1/0/1 (initial events are list items)", c.Lists, c.Added, c.Modified)
	}
	if got, want := h.storeState(), "a:u-a@10 b:u-b@7"; got != want {
		t.Errorf("store: got %q, want %q", got, want)
	}
}

func TestStreamingListRefusedFallsBackToList(t *testing.T) {
	refused := httpErr(422, metav1.StatusReasonInvalid, "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")
	cases := []struct {
		strategy Strategy
		// what the relist after a 410 uses
		relist string
	}{
		{StrategyStream, "watch rv= sendInitialEvents"},
		{StrategyAuto, "list rv="},
	}
	for _, tc := range cases {
		t.Run(string(tc.strategy), func(t *testing.T) {
			h := runFake(t, Config{Strategy: tc.strategy},
				call{verb: VerbWatch, err: refused},
				call{verb: VerbList, page: page("10", "", obj("a", "u-a", "3"))},
				call{verb: VerbWatch, events: []WatchEvent{errorEvent(410, metav1.StatusReasonExpired, "too old")}},
			)
			want := "watch rv= sendInitialEvents | list rv= | watch rv=10 | " + tc.relist
			if got := join(h.askedSummary()); got != want {
				t.Errorf("requests: got %q, want %q", got, want)
			}
			if !strings.Contains(join(h.reasons()), string(ReasonStreamRefused)) {
				t.Errorf("notes: got %v, want %s", h.reasons(), ReasonStreamRefused)
			}
		})
	}
}

// A 400 or 422 about the request's own options (a mistyped field selector)
// is no refusal of the streaming list: the run fails at once with the
// server's message, whatever the list method, and nothing is retried.
func TestABadSelectorFailsAtOnceAndIsNotCalledAStreamingRefusal(t *testing.T) {
	badField := httpErr(400, metav1.StatusReasonBadRequest, `"foo" is not a known field selector: only "metadata.name", "metadata.namespace"`)
	badLabel := httpErr(422, metav1.StatusReasonInvalid, "unable to parse requirement: found '=', expected: identifier")
	for _, tc := range []struct {
		name     string
		strategy Strategy
		verb     Verb
		err      error
		want     string
	}{
		{"stream, 400", StrategyAuto, VerbWatch, badField, `is not a known field selector`},
		{"list, 400", StrategyList, VerbList, badField, `is not a known field selector`},
		{"stream, 422", StrategyStream, VerbWatch, badLabel, `unable to parse requirement`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := runFake(t, Config{Strategy: tc.strategy}, call{verb: tc.verb, err: tc.err})
			if h.err == nil || !strings.Contains(h.err.Error(), tc.want) || !strings.Contains(h.err.Error(), "the same request would be refused again") {
				t.Fatalf("Run: got %v, want a failure with the server's message", h.err)
			}
			if got := len(h.src.requests()); got != 1 {
				t.Errorf("requests: got %d (%v), want the one refused", got, h.askedSummary())
			}
			reasons := join(h.reasons())
			if strings.Contains(reasons, string(ReasonStreamRefused)) || !strings.Contains(reasons, string(ReasonBadRequest)) {
				t.Errorf("notes: got %v, want %s and no %s", reasons, ReasonBadRequest, ReasonStreamRefused)
			}
		})
	}
}

func TestOnlyARefusalThatNamesSendInitialEventsIsAStreamingRefusal(t *testing.T) {
	for _, tc := range []struct {
		st           *metav1.Status
		refused, bad bool
	}{
		{&metav1.Status{Code: 422, Message: `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled`}, true, false},
		{&metav1.Status{Code: 422, Message: "invalid", Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Field: "sendInitialEvents"}}}}, true, false},
		{&metav1.Status{Code: 501, Message: "not implemented"}, true, false},
		{&metav1.Status{Code: 400, Message: `"foo" is not a known field selector`}, false, true},
		{&metav1.Status{Code: 422, Message: "unable to parse requirement"}, false, true},
		{&metav1.Status{Code: 403, Message: "forbidden"}, false, false},
		{nil, false, false},
	} {
		if got := IsStreamRefused(tc.st); got != tc.refused {
			t.Errorf("IsStreamRefused(%v): got %v, want %v", tc.st, got, tc.refused)
		}
		if got := IsBadRequest(tc.st); got != tc.bad {
			t.Errorf("IsBadRequest(%v): got %v, want %v", tc.st, got, tc.bad)
		}
	}
}

func TestStreamingListWithoutTheEndBookmarkFallsBackAfterTheTimeout(t *testing.T) {
	h := runFake(t, Config{Strategy: StrategyStream, InitialEventsTimeout: 30 * time.Millisecond},
		call{verb: VerbWatch, events: []WatchEvent{ev(EventAdded, obj("a", "u-a", "3"))}}, // no end bookmark, then silence
		call{verb: VerbList, page: page("10", "", obj("a", "u-a", "3"))},
	)
	if got, want := join(h.askedSummary()), "watch rv= sendInitialEvents | list rv= | watch rv=10"; got != want {
		t.Errorf("requests: got %q, want %q", got, want)
	}
	if !strings.Contains(join(h.reasons()), string(ReasonInitialEventsEnd)) {
		t.Errorf("notes: got %v, want %s", h.reasons(), ReasonInitialEventsEnd)
	}
	if st := h.r.Stats(); st.Requests[0].End.Reason != EndCanceled {
		t.Errorf("streaming request end: got %s, want canceled", st.Requests[0].End.Reason)
	}
}

func TestResourceVersionGoingBackwardsIsNotedAndNotTrusted(t *testing.T) {
	h := runFake(t, Config{},
		call{verb: VerbList, page: page("10", "")},
		call{verb: VerbWatch, events: []WatchEvent{ev(EventAdded, obj("a", "u-a", "20")), ev(EventAdded, obj("b", "u-b", "15"))}},
	)
	if got := h.r.Stats().ResourceVersion; got != "20" {
		t.Errorf("cursor: got %s, want 20", got)
	}
	if !strings.Contains(join(h.reasons()), string(ReasonRVBackwards)) {
		t.Errorf("notes: got %v, want %s", h.reasons(), ReasonRVBackwards)
	}
}

func TestStaleDeleteAndDuplicatesAreCounted(t *testing.T) {
	// UID-1 deleted, UID-2 created under the same name, a late UID-1 delete must leave UID-2.
	h := runFake(t, Config{},
		call{verb: VerbList, page: page("10", "", obj("w", "uid-1", "5"))},
		call{verb: VerbWatch, events: []WatchEvent{
			ev(EventDeleted, obj("w", "uid-1", "11")),
			ev(EventAdded, obj("w", "uid-2", "12")),
			ev(EventDeleted, obj("w", "uid-1", "13")),
			ev(EventAdded, obj("w", "uid-2", "12")),
		}},
	)
	if got, want := h.storeState(), "w:uid-2@12"; got != want {
		t.Errorf("store: got %q, want %q", got, want)
	}
	if c := h.r.Stats().Counters; c.UIDMismatches != 1 || c.Duplicates != 1 {
		t.Errorf("uidMismatches/duplicates: got %d/%d, want 1/1", c.UIDMismatches, c.Duplicates)
	}
}

func TestForceRelistRelistsWhileTheOldSnapshotStaysReadable(t *testing.T) {
	src := newFake(t,
		call{verb: VerbList, page: page("10", "", obj("a", "u-a", "3"))},
		call{verb: VerbWatch}, // hangs until canceled
	)
	// Driven by hand: force a relist once the watch is open.
	st, r := startManual(t, src)
	waitFor(t, func() bool { return r.Stats().State == StateWatching && r.Stats().Current != nil })
	src.mu.Lock()
	src.script = append(src.script, call{verb: VerbList, page: page("20", "", obj("b", "u-b", "15"))})
	src.mu.Unlock()
	if st.Len() != 1 {
		t.Fatalf("store before the forced relist: got %d objects, want 1", st.Len())
	}
	r.ForceRelist()
	waitFor(t, func() bool { return r.Stats().Counters.Relists == 1 && r.Stats().ResourceVersion == "20" })
	if got := sortedNames(st); got != "b" {
		t.Errorf("store after the forced relist: got %q, want b", got)
	}
	reqs := r.Stats().Requests
	if reqs[1].End == nil || reqs[1].End.Reason != EndCanceled {
		t.Errorf("the watch interrupted by the forced relist: got %+v, want canceled", reqs[1].End)
	}
}

func TestForceRelistCutsABackoffShort(t *testing.T) {
	src := newFake(t, call{verb: VerbList, err: httpErr(503, metav1.StatusReasonServiceUnavailable, "down")})
	r, st := runInBackground(t, Config{Source: src, Backoff: Backoff{Initial: time.Hour, Max: time.Hour}})
	waitFor(t, func() bool { return r.Stats().State == StateBackoff })
	src.mu.Lock()
	src.script = append(src.script, call{verb: VerbList, page: page("7", "", obj("a", "u-a", "7"))})
	src.mu.Unlock()
	r.ForceRelist()
	waitFor(t, func() bool { return st.Ready() })
}

// A forced relist that Run takes at once, while ForceRelist is still
// returning, leaves no wake token behind: one would cut the next backoff,
// however unrelated, short at once. The request's cancel func runs between
// ForceRelist's taking of the lock and its return, so Run's takeForced runs
// there, as it may on Run's goroutine.
func TestARelistForcedAndTakenAtOnceLeavesNoWakeForALaterBackoff(t *testing.T) {
	st, w := store.New()
	t.Cleanup(w.Close)
	r, err := New(Config{Source: newFake(t)}, w, st)
	if err != nil {
		t.Fatal(err)
	}
	took := false
	r.cancel = func(error) { took = r.takeForced() }
	r.ForceRelist()
	if !took {
		t.Fatal("takeForced did not see the forced relist")
	}
	select {
	case <-r.wake:
		t.Error("a wake token is left after the forced relist was taken: the next backoff would end at once")
	default:
	}
}

// A list counts when it begins: a LIST's first page, a streaming list's
// first event. A streaming list answered 503, or cut before any event,
// is a failed request and not a list; the proxy counts a client's lists
// the same way (docs/design.md, Counters).
func TestAListCountsWhenItsFirstPageOrEventArrives(t *testing.T) {
	h := runFake(t, Config{Strategy: StrategyStream},
		call{verb: VerbWatch, err: httpErr(503, metav1.StatusReasonServiceUnavailable, "try later")},
		call{verb: VerbWatch, end: &RequestEnd{Reason: EndError, Err: errors.New("connection reset")}},
		call{verb: VerbWatch, events: []WatchEvent{ev(EventModified, obj("a", "u-a", "3")), bookmark("10", true)}},
	)
	c := h.r.Counters()
	if c.Lists != 1 || c.Relists != 0 || c.Watches != 3 || c.Modified != 0 || c.WatchErrors != 0 {
		t.Errorf("counters %+v, want 1 list, no relist, 3 watches, no watch event nor watch error", c)
	}
	if got, want := h.storeState(), "a:u-a@3"; got != want {
		t.Errorf("store: got %q, want %q (a MODIFIED initial event is listed)", got, want)
	}
}

// A transport error names its cause first, then its request, shortened: a
// clipped header line still says "connection refused".
func TestATransportErrorSaysItsCauseFirst(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = http.Get("http://" + addr + "/api/v1/namespaces/shop/configmaps?allowWatchBookmarks=true&resourceVersion=391&timeoutSeconds=300&watch=true")
	if err == nil {
		t.Fatal("a GET to a closed port succeeded")
	}
	got := EndOf(err).Cause()
	want := "connection refused (GET /api/v1/namespaces/shop/configmaps?allowWatchBookmarks=true&resourceVersion…)"
	if got != want {
		t.Errorf("Cause():\n got %q\nwant %q", got, want)
	}
	// The replay has only the recorded message, and says the same.
	if got := EndOf(errors.New(err.Error())).Cause(); got != want {
		t.Errorf("Cause() of the recorded message:\n got %q\nwant %q", got, want)
	}
	for _, msg := range []string{"unexpected EOF", "idle timeout", "http2: server sent GOAWAY and closed the connection"} {
		if got := EndOf(errors.New(msg)).Cause(); got != msg {
			t.Errorf("Cause() of %q: got %q, want it unchanged", msg, got)
		}
	}
}

// A replay gives each backoff the recorded wait: the reflector still
// decides to back off (and counts the failure), taking the wait it is given.
func TestChooseBackoffSetsTheWaitOfEachBackoff(t *testing.T) {
	var computed []time.Duration
	chosen := []time.Duration{2 * time.Millisecond, 3 * time.Millisecond}
	h := runFake(t, Config{Backoff: Backoff{Initial: time.Millisecond, Max: time.Second}, Rand: func() float64 { return 0 },
		ChooseBackoff: func(d time.Duration) time.Duration {
			computed = append(computed, d)
			return chosen[len(computed)-1]
		}},
		call{verb: VerbList, page: page("10", "")},
		call{verb: VerbWatch, err: httpErr(500, metav1.StatusReasonInternalError, "boom")},
		call{verb: VerbWatch, err: httpErr(503, metav1.StatusReasonServiceUnavailable, "unavailable")},
	)
	var waits []time.Duration
	h.mu.Lock()
	for _, n := range h.notes {
		if d := n.Decision; d != nil && d.Reason == ReasonBackoff {
			waits = append(waits, d.Wait)
		}
	}
	h.mu.Unlock()
	if fmt.Sprint(waits) != fmt.Sprint(chosen) {
		t.Errorf("backoff waits: got %v, want the chosen %v", waits, chosen)
	}
	if want := []time.Duration{time.Millisecond, 2 * time.Millisecond}; fmt.Sprint(computed) != fmt.Sprint(want) {
		t.Errorf("computed waits handed to ChooseBackoff: got %v, want %v (the reflector keeps counting)", computed, want)
	}
}

// A 429's Retry-After is the least a backoff waits (client-go's REST client
// waits it out too): a reviewer saw a retry 1.1 s after a 429 that said 2 s.
func TestABackoffAfterA429WaitsAtLeastItsRetryAfter(t *testing.T) {
	var computed []time.Duration
	throttled := &RequestEnd{Reason: EndError, Status: status(429, metav1.StatusReasonTooManyRequests, "slow down"), Throttle: &Throttle{RetryAfter: 2 * time.Second}}
	runFake(t, Config{Backoff: Backoff{Initial: time.Millisecond, Max: time.Minute}, Rand: func() float64 { return 0 },
		ChooseBackoff: func(d time.Duration) time.Duration {
			computed = append(computed, d)
			return time.Millisecond // the test does not wait it
		}},
		call{verb: VerbList, page: page("10", "")},
		call{verb: VerbWatch, err: throttled},
		call{verb: VerbWatch, err: httpErr(500, metav1.StatusReasonInternalError, "boom")},
	)
	if want := []time.Duration{2 * time.Second, 2 * time.Millisecond}; fmt.Sprint(computed) != fmt.Sprint(want) {
		t.Errorf("backoff waits: got %v, want %v (the 429's Retry-After, then the backoff's own)", computed, want)
	}
}

// --give-up-after cuts a long backoff short, so the next failure gives up on
// time, but never below a 429's Retry-After: the server asked for it.
func TestGiveUpAfterNeverCutsABackoffBelowItsRetryAfter(t *testing.T) {
	var computed []time.Duration
	throttled := &RequestEnd{Reason: EndError, Status: status(429, metav1.StatusReasonTooManyRequests, "slow down"), Throttle: &Throttle{RetryAfter: 2 * time.Second}}
	runFake(t, Config{Backoff: Backoff{Initial: time.Minute, Max: time.Hour}, Rand: func() float64 { return 0 }, GiveUpAfter: time.Second,
		ChooseBackoff: func(d time.Duration) time.Duration {
			computed = append(computed, d)
			return time.Millisecond // the test does not wait it
		}},
		call{verb: VerbList, page: page("10", "")},
		call{verb: VerbWatch, err: throttled},
	)
	if len(computed) != 1 || computed[0] != 2*time.Second {
		t.Errorf("backoff waits: got %v, want [2s] (the minute's backoff cut to the 429's Retry-After, not to the second left)", computed)
	}
}

// Once (--once) stops at the first complete list, by itself: no watch
// follows a LIST, and a streaming list's watch ends at the bookmark that
// completes it, so what came after the list is not in the cache (the run's
// cancel used to come a moment later, and a watch applied what arrived in
// between).
func TestOnceStopsAtTheFirstCompleteListWithNothingAfterIt(t *testing.T) {
	for _, tc := range []struct {
		name     string
		strategy Strategy
		script   []call
		asked    string
	}{
		{"list", StrategyList, []call{
			{verb: VerbList, page: page("120", "", obj("a", "u-a", "100"), obj("b", "u-b", "110"))},
			{verb: VerbWatch, events: []WatchEvent{ev(EventAdded, obj("c", "u-c", "121"))}},
		}, "list rv="},
		{"streaming list", StrategyStream, []call{
			{verb: VerbWatch, events: []WatchEvent{
				ev(EventAdded, obj("a", "u-a", "100")), ev(EventAdded, obj("b", "u-b", "110")), bookmark("120", true),
				ev(EventAdded, obj("c", "u-c", "121")), ev(EventDeleted, obj("a", "u-a", "122")),
			}},
		}, "watch rv= sendInitialEvents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := runFake(t, Config{Strategy: tc.strategy, Once: true}, tc.script...)
			if h.err != nil {
				t.Fatal(h.err)
			}
			if got, want := h.storeState(), "a:u-a@100 b:u-b@110"; got != want {
				t.Errorf("store: got %q, want the list's %q", got, want)
			}
			st := h.r.Stats()
			if got := join(h.askedSummary()); got != tc.asked {
				t.Errorf("requests: got %q, want %q", got, tc.asked)
			}
			if c := st.Counters; st.State != StateStopped || st.ResourceVersion != "120" || c.Added+c.Deleted != 0 {
				t.Errorf("state %s at %s with %d added and %d deleted, want Stopped at the list's 120, no event after it", st.State, st.ResourceVersion, c.Added, c.Deleted)
			}
			if rs := h.reasons(); rs[len(rs)-1] != string(ReasonStopped) || slices.Contains(rs, string(ReasonWatchError)) {
				t.Errorf("decisions %v, want the list's, then stopped", rs)
			}
			if last := st.Requests[len(st.Requests)-1]; last.End == nil || (tc.strategy == StrategyStream && last.End.Reason != EndStopped) {
				t.Errorf("the last request ended %+v, want ended (stopped, for the streaming list's watch)", last.End)
			}
		})
	}
}

// A backoff after repeated 410s says what did not happen between them: a
// watch event or bookmark (a relist that completed is no such sign; a
// reviewer read "without progress" right after one).
func TestABackoffAfterRepeated410sSaysNoWatchEventCameBetween(t *testing.T) {
	got := Decision{Reason: ReasonBackoff, Next: VerbList, GoneInARow: 3}.String()
	if want := "backing off before the next LIST: 3 410s in a row, no watch event or bookmark between them (a list alone does not count)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// stopper is a source that says the run stops here (a replay at its
// trace's end), ending the run's context as a replay's end does.
type stopper struct {
	Source
	stop context.CancelFunc
}

func (s *stopper) StopsHere(context.Context) bool {
	s.stop()
	return true
}

// A relist forced before a replay's source says the run stops is decided,
// as recorded, though the source's end ends the run's context as it says
// so (CI saw a recording cut after a forced relist replay as stopped).
func TestARelistForcedBeforeTheSourceStopsIsDecided(t *testing.T) {
	st, w := store.New()
	t.Cleanup(w.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var reasons []Reason
	r, err := New(Config{Source: &stopper{Source: newFake(t), stop: cancel}, OnNote: func(n Note) {
		if n.Kind == NoteDecision {
			reasons = append(reasons, n.Decision.Reason)
		}
	}}, w, st)
	if err != nil {
		t.Fatal(err)
	}
	r.ForceRelist()
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if want := []Reason{ReasonInitialList, ReasonForcedRelist, ReasonStopped}; !slices.Equal(reasons, want) {
		t.Errorf("decisions %v, want %v", reasons, want)
	}
}
