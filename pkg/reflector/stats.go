package reflector

import (
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// State is where the reflector's state machine is.
type State int

const (
	// StateEmpty: nothing has been requested yet.
	StateEmpty State = iota
	// StateListing: paging through the first LIST; the store is not ready yet.
	StateListing
	// StateStreamingList: receiving the initial events of a streaming list
	// (a watch with sendInitialEvents=true) until the initial-events-end bookmark.
	StateStreamingList
	// StateWatching: watching from the last resourceVersion; the cache is up to date as far as the watch says.
	StateWatching
	// StateRelisting: listing again (after 410 Gone, a too-large resourceVersion or
	// a forced relist); readers keep the old snapshot until the new list is complete.
	StateRelisting
	// StateBackoff: waiting before retrying after an error.
	StateBackoff
	// StateFailed: the reflector gave up, and Run has returned why: a
	// permanent error outlasted its retries (permanent-error), the server
	// refused the request's own options (bad-request), or nothing made
	// progress for Config.GiveUpAfter (gave-up).
	StateFailed
	// StateStopped: the run stopped without failing: Run's context ended
	// (whatever its cause), Config.Once had its list, or a replayed recording
	// stopped there; an observed stream stops when the proxy closes it.
	StateStopped
	// StateListed: another program's client (a stream the observing proxy
	// follows) has a complete list and has not asked for a watch: kubectl
	// get stays here. Its next request says what it does. Our reflector
	// never is Listed: it watches as soon as a list is complete.
	StateListed
)

// States are every state, in the order a list of them reads best: the
// way to a complete cache, watching, and the ends.
func States() []State {
	return []State{StateEmpty, StateListing, StateStreamingList, StateListed, StateWatching,
		StateRelisting, StateBackoff, StateFailed, StateStopped}
}

// String returns the state's display name.
func (s State) String() string {
	names := [...]string{StateEmpty: "Empty", StateListing: "Listing", StateStreamingList: "StreamingList",
		StateWatching: "Watching", StateRelisting: "Relisting", StateBackoff: "Backoff", StateFailed: "Failed",
		StateStopped: "Stopped", StateListed: "Listed"}
	if s < 0 || int(s) >= len(names) {
		return "Unknown"
	}
	return names[s]
}

// NoteKind says what a note is about.
type NoteKind string

const (
	// NoteRequestStarted: a LIST or WATCH request was sent (Note.Request has its options).
	NoteRequestStarted NoteKind = "request-started"
	// NoteRequestEnded: a request ended (Note.Request has its duration, counts and end).
	NoteRequestEnded NoteKind = "request-ended"
	// NoteApplied: one watch event (ADDED/MODIFIED/DELETED) was applied to the store
	// (Note.Event and Note.Applied say which and what it did). List items have no
	// such note: the list-complete decision counts them.
	NoteApplied NoteKind = "applied"
	// NoteDecision: the reflector decided something (state change, relist, backoff,
	// fallback, relist diff, resourceVersion anomaly). These are the trace's `note` lines.
	NoteDecision NoteKind = "decision"
	// NoteAudit: an Audit compared the cache with a fresh LIST (Note.Audit has the report).
	NoteAudit NoteKind = "audit"

	// The facts below report no request, event or decision of their own:
	// they say what a request's answer did to the list and the cursor, in
	// order with the other notes, and share the Seq of the note before them
	// (a view that shows none of them sees no gap).

	// NoteListBegan: a full list began (Note.List says which, and why): a
	// LIST's first page arrived, or a streaming list's first event.
	NoteListBegan NoteKind = "list-began"
	// NotePage: a LIST page's items were applied to the list in progress
	// (Note.Page).
	NotePage NoteKind = "page"
	// NoteBookmark: a BOOKMARK arrived (Note.Bookmark): a progress
	// bookmark, which moved the cursor, or the one that ends a streaming
	// list, whose completion moves it (list-complete).
	NoteBookmark NoteKind = "bookmark"
)

// Fact reports whether the note is one of the facts (list-began, page,
// bookmark) that share the Seq of the note before them.
func (k NoteKind) Fact() bool {
	return k == NoteListBegan || k == NotePage || k == NoteBookmark
}

// ListBegan is a full list that began (NoteListBegan).
type ListBegan struct {
	// Number counts the lists from 1: a relist is any after the first.
	Number int64
	// Cause is why a relist began (see ListCause); "" for the first list.
	Cause ListCause
	// Stream is a streaming list (a watch with sendInitialEvents).
	Stream bool
	// After is the request whose end led to it (a watch's end, or a LIST's
	// 410 or too-large answer); 0 when none did.
	After int64
}

// Relist reports whether the list is not the first.
func (b ListBegan) Relist() bool { return b.Number > 1 }

// PageApplied is a LIST page applied to the list in progress (NotePage).
type PageApplied struct {
	Items int
	// Bytes is the page's body as received (0 when not known).
	Bytes int64
	// Last is the list's last page (no continue token).
	Last bool
}

// Bookmark is a BOOKMARK that arrived (NoteBookmark).
type Bookmark struct {
	ResourceVersion string
	// ListEnd is the bookmark that ended a streaming list (annotated
	// k8s.io/initial-events-end): the end of a list, not a progress bookmark.
	ListEnd bool
}

// Note is one thing the reflector did or saw, for the UI, the line output and
// the trace, in the order it happened: Seq numbers a reflector's requests,
// applied events, decisions and audits from 1 without gaps, so a consumer
// that drops notes can say how many and where (facts, NoteKind.Fact, share
// the Seq of the note before them).
// The order is causal: a request's start, its events (and the store changes
// they made), its end, then the decisions it caused and the changes those
// made (a relist's result after the list that produced it).
type Note struct {
	// Seq is the note's sequence number, assigned when the thing happened.
	Seq  uint64
	At   time.Time
	Kind NoteKind
	// RequestID is the request the note is about or was caused by (the
	// request in flight, or the one that just ended); 0 before the first.
	RequestID int64
	// State is the reflector's state after the note.
	State State
	// Decision is set for decision notes.
	Decision *Decision
	// Request is set for request notes.
	Request *RequestInfo
	// Event and Applied are set for applied notes.
	Event   EventType
	Applied *store.Result
	// Delivery is, for an applied note, how late the event arrived after
	// its object's last write, when known (see Delivery).
	Delivery Delivery
	// Changes is, for an applied MODIFIED event diffed (--diff), what it
	// changed (WatchEvent.Changes).
	Changes *diff.Changes
	// Audit is set for audit notes.
	Audit *AuditReport
	// List, Page and Bookmark are set for list-began, page and bookmark notes.
	List     *ListBegan
	Page     *PageApplied
	Bookmark *Bookmark
}

// Reason is the decision's reason, "" for other notes.
func (n Note) Reason() Reason {
	if n.Decision == nil {
		return ""
	}
	return n.Decision.Reason
}

// RequestInfo describes one request, while it runs and after it ended.
type RequestInfo struct {
	ID      int64
	Verb    Verb
	Opts    RequestOptions
	Started time.Time
	// Duration is set once the request ended.
	Duration time.Duration
	// Items (LIST) or Events (WATCH) received so far.
	Items  int
	Events int
	// Bytes is the size of the LIST response bodies received so far, when
	// the Source says (Page.Bytes).
	Bytes int64
	// End is set once the request ended.
	End *RequestEnd
	// Awaiting says the server has not answered yet: our reflector's watch
	// sent, its response headers not come (a hung connection, a TLS
	// handshake that does not end). An observed request is fed once
	// answered.
	Awaiting bool
}

// Ended reports whether the request is over.
func (r *RequestInfo) Ended() bool { return r.End != nil }

// ClosedAtOnce reports whether an ended watch was closed within a second
// with no event: a server that does that must not make a client spin (our
// reflector backs off; an observed client's decision says it).
func (r *RequestInfo) ClosedAtOnce() bool { return r.Events == 0 && r.Duration < time.Second }

// Counters are the reflector's running totals (the summary contract's
// `counters`), kept by a Ledger: each has one meaning for a reflector, its
// replay and an observed stream (docs/design.md, "Counters").
type Counters struct {
	// Lists counts the full lists that began: a LIST's first page arrived,
	// or a streaming list's first event (an initial event or its end
	// bookmark). A list that failed before that is not one. Relists are
	// those after the first.
	Lists   int64 `json:"lists"`
	Relists int64 `json:"relists"`
	// ListPages counts LIST responses received whole.
	ListPages int64 `json:"listPages"`
	// Watches counts WATCH requests sent (streaming lists included), whatever their answer.
	Watches int64 `json:"watches"`
	// Gone counts 410 Gone answers (watch ERROR events, HTTP 410, expired continue tokens).
	Gone int64 `json:"gone"`
	// TooLargeResourceVersion counts "too large resource version" answers.
	TooLargeResourceVersion int64 `json:"tooLargeResourceVersion"`
	// Bookmarks counts progress bookmarks: BOOKMARK events that move the
	// cursor of a watch, not the one that ends a streaming list (that one is
	// InitialEventsEnd). Only these say that the server sends bookmarks.
	Bookmarks int64 `json:"bookmarks"`
	// InitialEventsEnd counts the bookmarks that ended a streaming list
	// (annotated k8s.io/initial-events-end): the end of a list, not progress.
	InitialEventsEnd int64 `json:"initialEventsEnd"`
	// Added, Modified, Deleted count watch events by type (not list items,
	// nor a streaming list's initial events).
	Added    int64 `json:"added"`
	Modified int64 `json:"modified"`
	Deleted  int64 `json:"deleted"`
	// UIDMismatches counts applies that replaced another UID and deletes of a stale UID.
	UIDMismatches int64 `json:"uidMismatches"`
	// Duplicates counts events that carried the cached (UID, resourceVersion) again.
	Duplicates int64 `json:"duplicates"`
	// WatchErrors counts watches past their list (not a streaming list
	// before its end bookmark) that ended in an error other than 410 Gone or
	// a too-large resourceVersion: an error status, an ERROR event, a
	// transport error.
	WatchErrors int64 `json:"watchErrors"`
	// Backoffs counts waits after errors (a reflector's own; an observed
	// stream cannot see a client's waits).
	Backoffs int64 `json:"backoffs"`
	// ResourceVersionBackwards counts events and progress bookmarks whose resourceVersion was older than the cursor.
	ResourceVersionBackwards int64 `json:"resourceVersionBackwards"`
}

// Add adds o's counts to c, field by field: the totals of several
// reflectors (the metrics sum one client's like streams).
func (c *Counters) Add(o Counters) {
	c.Lists += o.Lists
	c.Relists += o.Relists
	c.ListPages += o.ListPages
	c.Watches += o.Watches
	c.Gone += o.Gone
	c.TooLargeResourceVersion += o.TooLargeResourceVersion
	c.Bookmarks += o.Bookmarks
	c.InitialEventsEnd += o.InitialEventsEnd
	c.Added += o.Added
	c.Modified += o.Modified
	c.Deleted += o.Deleted
	c.UIDMismatches += o.UIDMismatches
	c.Duplicates += o.Duplicates
	c.WatchErrors += o.WatchErrors
	c.Backoffs += o.Backoffs
	c.ResourceVersionBackwards += o.ResourceVersionBackwards
}

// ListCause is why a relist began.
type ListCause string

// The causes of relists.
const (
	// CauseGone: a 410 Gone (on a watch, a LIST or a continue token).
	CauseGone ListCause = "gone"
	// CauseForced: the user asked (ForceRelist).
	CauseForced ListCause = "forced"
	// CauseTooLarge: a "too large resource version" answer.
	CauseTooLarge ListCause = "too-large"
	// CauseFallback: a streaming list was refused or stalled; LIST again.
	CauseFallback ListCause = "fallback"
	// CauseError: anything else, such as a streaming list that broke after
	// it began, or a client observed listing again after a cut.
	CauseError ListCause = "error"
)

// ListCauses are the causes, in the order the metrics show them.
func ListCauses() []ListCause {
	return []ListCause{CauseGone, CauseForced, CauseTooLarge, CauseFallback, CauseError}
}

// RelistCounts counts relists by cause.
type RelistCounts struct{ Gone, Forced, TooLarge, Fallback, Error int64 }

// Of is the count of cause c.
func (r RelistCounts) Of(c ListCause) int64 { return *r.of(c) }

// of is where the count of cause c is kept: Error for any cause but the others.
func (r *RelistCounts) of(c ListCause) *int64 {
	switch c {
	case CauseGone:
		return &r.Gone
	case CauseForced:
		return &r.Forced
	case CauseTooLarge:
		return &r.TooLarge
	case CauseFallback:
		return &r.Fallback
	}
	return &r.Error
}

// ListResults count full lists by how they ended: Complete (installed),
// Restarted (a decision to list again came first: a 410, a too-large
// resourceVersion, a fallback, a forced relist), Failed (the reflector
// failed) and Canceled (the run stopped). A list counts from the decision
// to make it, so one that never began counts too.
type ListResults struct{ Complete, Restarted, Failed, Canceled int64 }

// GoneOn counts 410 Gone answers by the request that got one: a watch, a
// LIST, a LIST's continue token. They add up to Counters.Gone.
type GoneOn struct{ Watch, List, Continue int64 }

// PageResults count LIST requests (pages) by how they ended: OK (a page
// received), Gone (410), TooLarge, Error, Timeout, Canceled, Stopped.
type PageResults struct{ OK, Gone, TooLarge, Error, Timeout, Canceled, Stopped int64 }

// MissedCounts sum what relist diffs found the watch had missed.
type MissedCounts struct {
	Deletes   int64 `json:"deletes"`
	Recreates int64 `json:"recreates"`
	Updates   int64 `json:"updates"`
	Adds      int64 `json:"adds"`
}

// Total is every missed object.
func (m MissedCounts) Total() int64 { return m.Deletes + m.Recreates + m.Updates + m.Adds }

// Totals are the running totals the views show beside the summary's
// counters: they break Counters down (relists by cause, 410s by request,
// pages and lists by how they ended) and add what only decisions say
// (what relists missed, the time spent backing off). Like Counters, they
// are kept by the Ledger, once, for every view.
type Totals struct {
	// Requests counts the requests sent (LIST pages and watches).
	Requests  int64
	Relists   RelistCounts
	Lists     ListResults
	Gone      GoneOn
	Pages     PageResults
	Missed    MissedCounts
	Decisions int64
	// BackoffWait is the time spent waiting in backoffs, as decided.
	BackoffWait time.Duration
}

// Add adds o to t, field by field (the totals of several streams).
func (t *Totals) Add(o Totals) {
	t.Requests += o.Requests
	t.Relists.Gone += o.Relists.Gone
	t.Relists.Forced += o.Relists.Forced
	t.Relists.TooLarge += o.Relists.TooLarge
	t.Relists.Fallback += o.Relists.Fallback
	t.Relists.Error += o.Relists.Error
	t.Lists.Complete += o.Lists.Complete
	t.Lists.Restarted += o.Lists.Restarted
	t.Lists.Failed += o.Lists.Failed
	t.Lists.Canceled += o.Lists.Canceled
	t.Gone.Watch += o.Gone.Watch
	t.Gone.List += o.Gone.List
	t.Gone.Continue += o.Gone.Continue
	t.Pages.OK += o.Pages.OK
	t.Pages.Gone += o.Pages.Gone
	t.Pages.TooLarge += o.Pages.TooLarge
	t.Pages.Error += o.Pages.Error
	t.Pages.Timeout += o.Pages.Timeout
	t.Pages.Canceled += o.Pages.Canceled
	t.Pages.Stopped += o.Pages.Stopped
	t.Missed.Deletes += o.Missed.Deletes
	t.Missed.Recreates += o.Missed.Recreates
	t.Missed.Updates += o.Missed.Updates
	t.Missed.Adds += o.Missed.Adds
	t.Decisions += o.Decisions
	t.BackoffWait += o.BackoffWait
}

// FaultCount is one fault injected into an observed stream: the --fault
// spec as given, when it first acted (or was first noted), and how many
// times it acted (deletes dropped, 410s answered, streams cut…).
type FaultCount struct {
	Fault string
	First time.Time
	Count int
}

// Stats is a snapshot of the reflector for the UI, cheap to take often.
type Stats struct {
	State      State
	StateSince time.Time
	// ResourceVersion is the cursor: the last resourceVersion seen (events and bookmarks).
	ResourceVersion string
	// Bookmark is the last progress bookmark's resourceVersion and arrival
	// (not a streaming list's end bookmark: see Counters.Bookmarks); zero
	// before the first.
	BookmarkRV string
	BookmarkAt time.Time
	// LastGone is when the last 410 arrived; zero if never.
	LastGone time.Time
	// BackoffUntil is set while in StateBackoff.
	BackoffUntil time.Time
	// Started is when Run began; Synced is when the first complete list was
	// installed (zero before). Synced.Sub(Started) is the time to sync.
	Started time.Time
	Synced  time.Time
	// LastReceived is when the reflector last received data from the server:
	// a LIST page, or a watch event (ADDED, MODIFIED, DELETED, BOOKMARK;
	// a streaming list's initial events included, ERROR events not). Zero
	// before the first.
	LastReceived time.Time
	// LastError is the last request error, if any.
	LastError string
	Counters  Counters
	// Totals break the counters down, and add what decisions say.
	Totals Totals
	// Faults are the faults the observing proxy injected into an observed
	// stream (kubectl watchcache proxy --fault), in the order they first
	// acted; none for our own reflector.
	Faults []FaultCount
	// Current is the request in flight, if any.
	Current *RequestInfo
	// Requests are the last finished requests, oldest first.
	Requests []RequestInfo
	// LastRelistDiff is the diff of the last completed relist (nil before
	// the first relist), LastRelistAt when that relist completed.
	LastRelistDiff *store.RelistDiff
	LastRelistAt   time.Time
	// ApplyLatency summarises the time from a watch event's arrival to its
	// application in the store, over the last samples.
	ApplyLatency Latency
	// ClientLeft is set on an observed stream (internal/observed) whose
	// client has left: when every connection its requests came on had
	// closed, with no request open. ClientLeftState is the state it was
	// in then. Both are zero while the client is there (a reflector of our
	// own never sets them), and again once it comes back.
	ClientLeft      time.Time
	ClientLeftState State
	// ClientLeftWas says it for people: the state's name ("Listed" for a
	// client whose complete list was its last request: kubectl get).
	ClientLeftWas string
	// Forgotten is set on an observed stream whose client stayed away:
	// the proxy dropped the ForgottenObjects it held (ReasonClientGone).
	Forgotten        bool
	ForgottenObjects int
	// Lag is the passive delivery estimate: how late the watch events
	// applied past their list arrived after their object's last write
	// (events whose object carries no write time are not counted).
	Lag LagStats
}

// Latency is a summary of recent durations.
type Latency struct {
	Samples       int
	P50, P99, Max time.Duration
}

// latencyOf is the percentiles of s, which it sorts.
func latencyOf(s []time.Duration) Latency {
	n := len(s)
	if n == 0 {
		return Latency{}
	}
	slices.Sort(s)
	return Latency{Samples: n, P50: s[n/2], P99: s[(n*99)/100], Max: s[n-1]}
}

// IsGone reports whether st is 410 Gone / Expired, on a watch ERROR event or
// an HTTP answer: the answer that makes the reflector relist.
func IsGone(st *metav1.Status) bool {
	return st != nil && (st.Code == 410 || st.Reason == metav1.StatusReasonExpired || st.Reason == metav1.StatusReasonGone)
}

// IsTooLargeResourceVersion reports whether st is the apiserver's "too large
// resource version" answer, which also makes the reflector relist.
func IsTooLargeResourceVersion(st *metav1.Status) bool {
	if st == nil {
		return false
	}
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			if c.Type == metav1.CauseTypeResourceVersionTooLarge || c.Message == "Too large resource version" {
				return true
			}
		}
	}
	return st.Reason == metav1.StatusReasonTimeout && strings.Contains(strings.ToLower(st.Message), "too large resource version")
}

// IsStreamRefused reports whether st is a server's refusal of a streaming
// list itself (a watch with sendInitialEvents=true), which the reflector
// answers by falling back to LIST: 501 Not Implemented, or a 400 or 422 that
// names sendInitialEvents (an apiserver with WatchList off answers 422
// "sendInitialEvents is forbidden for watch unless the WatchList feature gate
// is enabled"). Any other 400 or 422 is about the request's own options (a
// selector, say) and is a bad request, whatever the list method.
func IsStreamRefused(st *metav1.Status) bool {
	if st == nil {
		return false
	}
	switch st.Code {
	case 501:
		return true
	case 400, 422:
		return namesStreamingOption(st)
	}
	return false
}

// IsBadRequest reports whether st refuses the request's own options (400
// Bad Request or 422 Invalid, other than a refusal of the streaming list):
// the same request will be refused again, so the reflector fails at once, as
// kubectl get does, with the server's message.
func IsBadRequest(st *metav1.Status) bool {
	return st != nil && (st.Code == 400 || st.Code == 422) && !namesStreamingOption(st)
}

// namesStreamingOption says whether a refusal names the streaming list's
// own option.
func namesStreamingOption(st *metav1.Status) bool {
	const option = "sendInitialEvents"
	if strings.Contains(st.Message, option) {
		return true
	}
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			if strings.Contains(c.Field, option) || strings.Contains(c.Message, option) {
				return true
			}
		}
	}
	return false
}

// ResourceVersionBackwards reports whether rv, carried by an event or a
// bookmark, is older than the cursor: the reflector notes it and keeps the
// cursor. resourceVersions that cannot be compared are never backwards.
func ResourceVersionBackwards(rv, cursor string) bool {
	if rv == "" || cursor == "" {
		return false
	}
	cmp, err := resourceversion.CompareResourceVersion(rv, cursor)
	return err == nil && cmp < 0
}

// Permanent says st is an answer that retrying will not fix without
// someone acting (401, 403, 405: credentials, RBAC; 404: a resource the
// server does not serve), as the reflector counts its permanent retries. A
// 404 once a list has completed (listed) is not one: the resource was
// there, its CRD was deleted or its version is no longer served, maybe for
// a reinstall, and a client-go informer retries until it is back; so does
// the reflector, backing off.
func Permanent(st *metav1.Status, listed bool) bool {
	if st == nil {
		return false
	}
	switch st.Code {
	case 401, 403, 405:
		return true
	case 404:
		return !listed
	}
	return false
}

// BookmarkAge is the time at now since the last progress bookmark; with none yet,
// since watching began (the first complete list); 0 before that.
func (s Stats) BookmarkAge(now time.Time) time.Duration {
	switch {
	case !s.BookmarkAt.IsZero():
		return max(now.Sub(s.BookmarkAt), 0)
	case !s.Synced.IsZero():
		return max(now.Sub(s.Synced), 0)
	}
	return 0
}

// NoProgress is the time at now since the reflector last received data (see
// LastReceived), or since Run began when nothing has arrived yet; 0 before Run.
func (s Stats) NoProgress(now time.Time) time.Duration {
	last := s.LastReceived
	if last.Before(s.Started) {
		last = s.Started
	}
	if last.IsZero() {
		return 0
	}
	return max(now.Sub(last), 0)
}

// TimeToSync is the time from the start of Run to the first complete list;
// while the first list is not complete, the time waited so far at now; 0 before Run.
func (s Stats) TimeToSync(now time.Time) time.Duration {
	switch {
	case s.Started.IsZero():
		return 0
	case !s.Synced.IsZero():
		return max(s.Synced.Sub(s.Started), 0)
	}
	return max(now.Sub(s.Started), 0)
}
