// Package report turns a trace into one self-contained HTML page: the run's
// header, its findings (what is wrong, the evidence linked to the requests
// it rests on, the cause and what to do), counters, a timeline per resource (every request as a bar,
// markers for 410s, relists, backoffs, bookmarks and resourceVersion
// anomalies, the object count, the bookmark age and event rates over time,
// the delivery latency: the events' passive lag estimate and the probe's
// samples), what the MODIFIED events changed when the trace recorded their
// changes (--diff: the paths that changed most with their managers, the
// objects that took most events, the last diffs), and tables of the
// relists and requests.
//
// It reads the trace through the replay the replay command runs (a
// reflector and its store per resource on the replay's virtual clock, or
// for a trace of kubectl watchcache proxy, internal/observed's replay of
// each client's stream) and counts nothing itself: the counters, the cache
// and the relist diffs are the replay's, and the timeline and tables are
// laid out from the replay's notes, at the recorded times of the lines they
// are about (trace.ResourceReplay.OnLine). Memory is bounded by the cache,
// the capped lists of requests and relists, and a fixed number of time
// buckets, never by the number of events.
package report

import (
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/probe"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// Report is what a trace says, ready to render.
type Report struct {
	// Name is the trace's name as the report shows it (its file name).
	Name   string
	Header trace.Header
	// Duration is the largest `at` of the lines the replay served: how long
	// the recording ran, up to its last whole line.
	Duration time.Duration
	// Lines counts the whole lines after the header, those the reader
	// skipped included; a truncated last line, which it warns of, is not one.
	Lines int
	// Decisions counts the trace's `note` lines: the recorded decisions; in
	// an observed trace, every note the proxy recorded (its streams'
	// decisions, and what their clients and its --fault did).
	Decisions int
	// Warnings are the reader's, and the replay's when a reflector stopped on an error.
	Warnings []string
	// Resources has one entry per watched resource; a version-1 trace has one.
	Resources []*Section
	// Alerts are the alert rules that tripped while recording.
	Alerts AlertSection
}

// AlertSection is where the alert rules a recording evaluated report what
// tripped. Until a trace carries alert notes, Evaluated is false and the
// report says that no alert rules were evaluated.
type AlertSection struct {
	// Evaluated is true when the trace has at least one alert note.
	Evaluated bool
	// Tripped are the alert notes, capped at MaxAlerts; Total counts them all.
	Tripped []Alert
	Total   int
}

// Alert is one alert rule that tripped, from a `note` line whose reason is
// reflector.ReasonAlert: its detail says which rule tripped, where and with
// what value ("--fail-on RULE tripped on RESOURCE: MEASURE is VALUE").
// Traces written by hand before the rules recorded trips named the rule by
// the note's state instead; the report reads both.
type Alert struct {
	At       time.Duration
	Resource string
	// Rule is the tripped rule's name (the note's state), Detail its sentence.
	Rule, Detail string
}

// Section is the part of the report about one watched resource: its
// counters, timeline and tables.
type Section struct {
	// Index is the resource's position in the trace (0 in a version-1 trace).
	Index int
	// Header is the resource as the trace's header describes it: what was
	// watched, where, how much of each object was kept, and the options.
	Header trace.ResourceHeader
	// Client is, in an observed trace (recorded by kubectl watchcache
	// proxy), the program whose stream this is: its User-Agent and address.
	Client *trace.Client
	// Stream is, in an observed trace, the stream as its replay ends: its
	// number and what its client asked for.
	Stream *summary.StreamSummary
	// Name is "resource.version.group", as the summary names it.
	Name string
	// Counters are the replay's. Backoffs are the replayed reflector's
	// decisions, which stand for the recording's when the trace recorded
	// its decisions: BackoffsKnown is false when it has none (and for an
	// observed stream, whose waits are not on the wire).
	Counters      reflector.Counters
	BackoffsKnown bool
	// Objects and ResourceVersion are the cache and the cursor at the end.
	Objects         int
	ResourceVersion string
	// BookmarkRV and BookmarkAt are the last bookmark (BookmarkAt < 0: none).
	BookmarkRV string
	BookmarkAt time.Duration
	// Requests are the requests shown, in order: all of them, or the first
	// and last MaxRequests/2 when there are more (RequestsTotal counts all).
	Requests      []*Request
	RequestsTotal int
	// RequestsGap is the index in Requests of the first one after those
	// left out (meaningful when RequestsTotal > len(Requests)).
	RequestsGap int
	// Relists are the full lists after the first (the `relists` counter),
	// capped like Requests.
	Relists      []*Relist
	RelistsTotal int
	RelistsGap   int
	// Markers are the timeline's point and span markers (see MarkerKind).
	Markers []Marker
	// MarkersDropped counts markers beyond MaxMarkers, per kind.
	MarkersDropped map[MarkerKind]int
	// Buckets aggregate events, bookmarks and the object count over time;
	// each is BucketWidth long, the first starting at 0.
	Buckets     []Bucket
	BucketWidth time.Duration
	// Findings are what the replay's findings engine raised, in the order
	// it raised them: the same as the recorded run's (and the summary's).
	Findings []findings.Finding
	// Lag is the passive delivery estimate of the resource's watch events
	// (the replay's, reflector.Stats Lag): each bucket's count holds the
	// events of that lag bucket, Bucket.Lag the same per time bucket.
	Lag reflector.LagCounts
	// Probe is the delivery probe's figures over the whole run when this
	// resource watches the probe's Lease (nil otherwise): the replay's, as
	// `replay --summary` reports them (of the last probe.MaxSamples
	// samples, as a live run's); its samples are in the buckets
	// (Bucket.ProbeN…).
	Probe *probe.Figures
	// Churn is what the MODIFIED events changed, when the trace recorded
	// their changes (--diff): the replay's, as its summary's churn says it
	// (nil otherwise). RecentChanges are the last MaxRecentChanges of those
	// events, oldest first; RecentChangesTotal counts them all.
	Churn              *diff.Summary
	RecentChanges      []ChangedEvent
	RecentChangesTotal int64
	// Faults are what the observing proxy's --fault did to the stream: its
	// summary's faults.
	Faults []summary.FaultSummary

	// pendingBackoff and openRelist are what the trace's end closes.
	pendingBackoff *Marker
	openRelist     *Relist
}

// RequestKind says how a request is drawn.
type RequestKind string

const (
	// KindListPage is one LIST request (one page).
	KindListPage RequestKind = "list"
	// KindStreamingList is a watch with sendInitialEvents=true.
	KindStreamingList RequestKind = "stream"
	// KindWatch is any other watch.
	KindWatch RequestKind = "watch"
)

// EndClass is what a request's colour says about its end.
type EndClass string

// End classes: the end reasons, 410 Gone (an end with status 410, or an
// ERROR event with it), and no end at all (the trace stops first).
const (
	EndClosed   EndClass = "closed"
	EndTimeout  EndClass = "timeout"
	EndError    EndClass = "error"
	EndGone     EndClass = "gone"
	EndCanceled EndClass = "canceled"
	EndStopped  EndClass = "stopped"
	EndOpen     EndClass = "open"
)

// Request is one LIST or WATCH request and how it ended.
type Request struct {
	ID   int64
	Verb reflector.Verb
	Kind RequestKind
	// Opts are the options as sent.
	Opts reflector.RequestOptions
	// Start and End are offsets from the trace's start. End is its end
	// line's time, else its ERROR event's (it ended there), else, for an
	// observed request canceled without one, its client's next request's;
	// the trace's end when it has no end (Class EndOpen).
	Start, End time.Duration
	// Class is how it ended; Reason is the end line's reason ("" if none).
	Class  EndClass
	Reason reflector.EndReason
	// Code, StatusReason and Message are the server's Status (an ERROR
	// event's, else the end line's); Error is the end line's error.
	Code                  int32
	StatusReason, Message string
	Error                 string
	// Items are a LIST's item lines; Events a watch's event lines (bookmarks
	// and ERROR included), Bookmarks its bookmarks.
	Items, Events, Bookmarks int
	// InitialEventsEnd is when a streaming list's initial-events-end
	// bookmark came (0: it did not).
	InitialEventsEnd time.Duration

	// recorded is set once the request has its line in the trace (the
	// replay's reflector makes one more request after the trace's last);
	// ended once it has its end; goneMark while its 410 waits for its end line.
	recorded, ended, goneMark bool
	// replayed is the replayed reflector's number of it, which a relist's
	// ListBegan.After names: ID is the trace's, the live run's (the same but
	// in a rotating trace's later segments, numbered from 1 when replayed).
	replayed int64
}

// Relist is one full list after the first, and what it found.
type Relist struct {
	// Number is the list's number (2 for the first relist).
	Number int
	// After says what ended the request before the relist started.
	After string
	// FirstRequest and LastRequest are the list's requests.
	FirstRequest, LastRequest int64
	Start                     time.Duration
	// Outcome is how the list ended; End is when (the trace's end if it did not).
	Outcome RelistOutcome
	End     time.Duration
	// Diff is the store's relist diff when a complete list replaced an
	// earlier one; entries beyond MaxDiffEntries per kind are dropped, the
	// counts stay.
	Diff *Diff
}

// RelistOutcome says how a relist ended.
type RelistOutcome string

const (
	// RelistCompleted: the list completed and replaced the cache.
	RelistCompleted RelistOutcome = "completed"
	// RelistFirstComplete: it completed, but no list had completed before
	// (the first list did not), so there is nothing to compare.
	RelistFirstComplete RelistOutcome = "first-complete"
	// RelistRestarted: a new list started before it completed.
	RelistRestarted RelistOutcome = "restarted"
	// RelistUnfinished: the trace ended before it completed.
	RelistUnfinished RelistOutcome = "unfinished"
)

// Diff is a relist diff with its entries capped.
type Diff struct {
	ResourceVersion string
	Before, After   int
	// Deleted, Recreated, Updated and Added are the first entries of each
	// kind, sorted by namespace and name; the counts are of all of them.
	Deleted, Recreated, Updated, Added                []DiffObject
	NDeleted, NRecreated, NUpdated, NAdded, Unchanged int
}

// DiffObject is one object of a relist diff and its labels: the listed
// object's, or for a missed delete the cached one's.
type DiffObject struct {
	store.DiffEntry
	Labels map[string]string
}

// MarkerKind names a timeline marker.
type MarkerKind string

const (
	// MarkGone: a request ended with 410 Gone.
	MarkGone MarkerKind = "gone"
	// MarkRelist: a full list completed after an earlier one (list-complete after the first).
	MarkRelist MarkerKind = "relist"
	// MarkBackoff: a recorded backoff, from its decision to the next request.
	MarkBackoff MarkerKind = "backoff"
	// MarkRVBackwards: an event or bookmark carried a resourceVersion older than the cursor.
	MarkRVBackwards MarkerKind = "rv-backwards"
)

// Marker is one point (At) or span (At to End) on the timeline.
type Marker struct {
	Kind    MarkerKind
	At, End time.Duration
	// Request is the request it belongs to (0 for none); Relist the
	// number of the relist it completes (0 for none).
	Request int64
	Relist  int
	Detail  string
}

// Bucket aggregates one stretch of time.
type Bucket struct {
	// Added, Modified and Deleted count the watch events applied (as the counters do).
	Added, Modified, Deleted int
	// Bookmarks counts bookmarks; FirstBookmark and LastBookmark are the
	// first's and last's times (valid when Bookmarks > 0).
	Bookmarks                   int
	FirstBookmark, LastBookmark time.Duration
	// HasObjects is true when the object count changed in the bucket;
	// ObjectsMin, ObjectsMax and ObjectsLast are its values then.
	HasObjects                          bool
	ObjectsMin, ObjectsMax, ObjectsLast int
	// Lag counts the applied watch events whose object carried a write
	// time, by lag bucket (<2s, 2-5s, 5-15s, 15-60s, >60s).
	Lag reflector.LagCounts
	// ProbeN counts the probe's samples sent in the bucket; ProbeMin and
	// ProbeMax are their least and greatest write-to-event times, ProbeAt
	// when the greatest was sent (valid when ProbeN > 0).
	ProbeN             int
	ProbeMin, ProbeMax time.Duration
	ProbeAt            time.Duration
}
