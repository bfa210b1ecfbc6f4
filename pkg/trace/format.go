package trace

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// Version is the trace format version this package writes; it reads this
// one and version 1 (one resource, no `r` on lines).
const Version = 2

// Line kinds.
const (
	KindHeader  = "header"
	KindRequest = "request"
	KindItem    = "item"
	KindPage    = "page"
	KindEvent   = "event"
	KindEnd     = "end"
	KindNote    = "note"
	// KindResource adds a resource to an observed trace's header (see Header.Observed).
	KindResource = "resource"
	// KindProbe is one measure (or note) of the delivery probe (--probe),
	// under the resource of its Lease's watch.
	KindProbe = "probe"
	// KindFlowControl names FlowSchemas and PriorityLevelConfigurations that
	// 429s gave by UID, learned after those 429s; it is about the run, not
	// one resource (its r is 0), and while a rotating trace moves to a new
	// segment, both segments take it.
	KindFlowControl = "flowcontrol"
	// KindAudit is what an audit (the dashboard's a) found when it compared
	// the resource's cache with a fresh list (Line.Audit).
	KindAudit = "audit"
)

// ObjectMode says how much of each object a trace keeps.
type ObjectMode string

const (
	// ObjectsNone keeps identity only: apiVersion, kind, namespace, name, uid,
	// resourceVersion, and a bookmark's initial-events-end annotation (part
	// of the watch protocol, which a replay of a streaming list needs).
	ObjectsNone ObjectMode = "none"
	// ObjectsMetadata keeps metadata without managedFields (the default).
	ObjectsMetadata ObjectMode = "metadata"
	// ObjectsFull keeps the whole body (Secret values redacted unless asked otherwise).
	ObjectsFull ObjectMode = "full"
)

// Options is the header's `options`: the reflector configuration a replay reuses.
type Options struct {
	Strategy             reflector.Strategy `json:"strategy"`
	PageSize             int64              `json:"pageSize"`
	ResourceVersion      string             `json:"resourceVersion,omitempty"`
	ResourceVersionMatch string             `json:"resourceVersionMatch,omitempty"`
	WatchTimeout         Duration           `json:"watchTimeout"`
	IdleTimeout          Duration           `json:"idleTimeout"`
	InitialEventsTimeout Duration           `json:"initialEventsTimeout"`
	MaxPermanentRetries  int                `json:"maxPermanentRetries,omitempty"`
	GiveUpAfter          Duration           `json:"giveUpAfter,omitempty"`
	// Once is --once: the reflector stopped at its first complete list
	// (absent in traces written before it was recorded: those runs were
	// stopped from outside, a moment after it).
	Once bool `json:"once,omitempty"`
	// RetriesNotFound says a 404 after the first list was retried (absent
	// in traces written before 2026-12-06, whose runs failed on it: their
	// replays keep that rule).
	RetriesNotFound bool `json:"retriesNotFound,omitempty"`
	MetadataOnly    bool `json:"metadataOnly"`
	// UnsafeSecrets is true when the user asked to record Secret values unredacted.
	UnsafeSecrets bool `json:"unsafeSecrets,omitempty"`
	// Wire is the encoding the live run asked for: "protobuf" or "json"
	// (absent in traces written before it was recorded: JSON). In protobuf,
	// only what the store keeps is decoded, so objects hold only that.
	Wire reflector.Wire `json:"wire,omitempty"`
	// Backoff is the reflector's backoff after errors (absent in traces
	// written before it was recorded: the default). A replay waits each
	// backoff's recorded wait; this is what it computes when the trace has
	// none to give.
	Backoff *BackoffOptions `json:"backoff,omitempty"`
}

// BackoffOptions is the header's `options.backoff`: reflector.Backoff.
type BackoffOptions struct {
	Initial    Duration `json:"initial"`
	Max        Duration `json:"max"`
	Factor     float64  `json:"factor"`
	Jitter     float64  `json:"jitter"`
	ResetAfter Duration `json:"resetAfter"`
}

// BackoffOptionsOf is b as a header records it.
func BackoffOptionsOf(b reflector.Backoff) *BackoffOptions {
	return &BackoffOptions{Initial: Duration(b.Initial), Max: Duration(b.Max), Factor: b.Factor, Jitter: b.Jitter, ResetAfter: Duration(b.ResetAfter)}
}

// Backoff is the reflector.Backoff o records (the zero Backoff, so the
// default, for a nil o).
func (o *BackoffOptions) Backoff() reflector.Backoff {
	if o == nil {
		return reflector.Backoff{}
	}
	return reflector.Backoff{Initial: time.Duration(o.Initial), Max: time.Duration(o.Max), Factor: o.Factor, Jitter: o.Jitter, ResetAfter: time.Duration(o.ResetAfter)}
}

// Duration is a time.Duration written as a Go duration string ("5m0s").
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Header is the first line of a trace: the run, and the resources it
// watched, which the lines after it index by `r`.
type Header struct {
	K             string    `json:"k"`
	V             int       `json:"v"`
	StartedAt     time.Time `json:"startedAt"`
	Tool          string    `json:"tool"`
	Server        string    `json:"server"`
	ServerVersion string    `json:"serverVersion"`
	// Resources are the watched resources; a line's `r` is an index into them.
	Resources []ResourceHeader `json:"resources"`
	// Observed marks a trace of what other programs' reflectors did, as
	// "kubectl watchcache proxy" saw their traffic, rather than of this
	// tool's own reflectors: it replays as recorded (the caches and counters
	// rebuilt from the recorded traffic), never through a reflector of ours.
	// Its resources appear as the clients open them: the header may list
	// none, and each `resource` line adds the next one.
	Observed bool `json:"observed,omitempty"`
	// Segment numbers a rotating trace's segments after the first (from
	// 1; absent in the first): such a segment begins each resource with its
	// cache as the recording held it (a request marked `snapshot`).
	Segment int `json:"segment,omitempty"`
}

// ResourceHeader is one watched resource: what, where, and how.
type ResourceHeader struct {
	Resource      reflector.Resource `json:"resource"`
	Namespace     string             `json:"namespace"`
	LabelSelector string             `json:"labelSelector"`
	FieldSelector string             `json:"fieldSelector"`
	Objects       ObjectMode         `json:"objects"`
	Options       Options            `json:"options"`
}

// KeepsChangeValues says whether the trace keeps the old and new values of
// the resource's changes (--diff): only with whole objects, and never a
// Secret's (a diff keeps none of its values).
func (rh ResourceHeader) KeepsChangeValues() bool {
	return rh.Objects == ObjectsFull && !rh.Resource.Secrets()
}

// KeepsObjectValues says whether the trace's objects keep their values,
// so that replay --diff can diff them: whole objects, and for Secrets only
// when the user asked for their values (--trace-unsafe-secrets).
func (rh ResourceHeader) KeepsObjectValues() bool {
	return rh.Objects == ObjectsFull && (!rh.Resource.Secrets() || rh.Options.UnsafeSecrets)
}

// Target is what the resource's reflector watched.
func (h ResourceHeader) Target() reflector.Target {
	return reflector.Target{Resource: h.Resource, Namespace: h.Namespace, LabelSelector: h.LabelSelector, FieldSelector: h.FieldSelector}
}

// headerV1 is a version 1 header: one resource, at the top level.
type headerV1 struct {
	StartedAt     time.Time `json:"startedAt"`
	Tool          string    `json:"tool"`
	Server        string    `json:"server"`
	ServerVersion string    `json:"serverVersion"`
	ResourceHeader
}

// Client is the program whose traffic an observed trace's resource holds.
type Client struct {
	UserAgent  string `json:"userAgent,omitempty"`
	RemoteAddr string `json:"remoteAddr,omitempty"`
	// Accept is the Accept header of the stream's first request: what the
	// client asked for (encoding, as=PartialObjectMetadata, as=Table).
	Accept string `json:"accept,omitempty"`
}

// Status is the compact API Status of an `end` line.
type Status struct {
	Code    int32  `json:"code"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Causes keeps the status causes' types, which decide "too large resource version".
	Causes []string `json:"causes,omitempty"`
}

// APIStatus is s as the reflector saw it, nil for a nil s: what a replay
// hands back, and what decides whether an end was a 410 Gone or a "too large
// resource version".
func (s *Status) APIStatus() *metav1.Status {
	if s == nil {
		return nil
	}
	st := &metav1.Status{Status: metav1.StatusFailure, Code: s.Code, Reason: metav1.StatusReason(s.Reason), Message: s.Message}
	if len(s.Causes) > 0 {
		st.Details = &metav1.StatusDetails{}
		for _, c := range s.Causes {
			st.Details.Causes = append(st.Details.Causes, metav1.StatusCause{Type: metav1.CauseType(c)})
		}
	}
	return st
}

// Throttle is the `throttle` of an `end` line: a 429's Retry-After, and the
// FlowSchema and PriorityLevel of API Priority and Fairness, by UID (from
// the response headers) and by name (when the recording run could read
// them).
type Throttle struct {
	RetryAfter       Duration `json:"retryAfter,omitempty"`
	FlowSchemaUID    string   `json:"flowSchemaUID,omitempty"`
	PriorityLevelUID string   `json:"priorityLevelUID,omitempty"`
	FlowSchema       string   `json:"flowSchema,omitempty"`
	PriorityLevel    string   `json:"priorityLevel,omitempty"`
}

// ThrottleOf is t as an end line records it (nil for a nil t).
func ThrottleOf(t *reflector.Throttle) *Throttle {
	if t == nil {
		return nil
	}
	return &Throttle{RetryAfter: Duration(t.RetryAfter), FlowSchemaUID: t.FlowSchemaUID, PriorityLevelUID: t.PriorityLevelUID,
		FlowSchema: t.FlowSchema, PriorityLevel: t.PriorityLevel}
}

// Reflector is t as the reflector saw it (nil for a nil t).
func (t *Throttle) Reflector() *reflector.Throttle {
	if t == nil {
		return nil
	}
	return &reflector.Throttle{RetryAfter: time.Duration(t.RetryAfter), FlowSchemaUID: t.FlowSchemaUID, PriorityLevelUID: t.PriorityLevelUID,
		FlowSchema: t.FlowSchema, PriorityLevel: t.PriorityLevel}
}

// Line is any line after the header. Fields are set according to K.
type Line struct {
	K string `json:"k"`
	// R is the index of the line's resource in the header's (always 0 in version 1).
	R  int   `json:"r"`
	At int64 `json:"at"`
	ID int64 `json:"id,omitempty"`
	// request
	Verb string                    `json:"verb,omitempty"`
	Opts *reflector.RequestOptions `json:"opts,omitempty"`
	// Snapshot marks a request that was never sent: the start of a rotating
	// trace's segment, where a resource's cache is written as the list that
	// installed it.
	Snapshot bool `json:"snapshot,omitempty"`
	// ContentType (request lines of observed traces) is the Content-Type
	// of the response when the server answered with success.
	ContentType string `json:"contentType,omitempty"`
	// item, event
	Type   string          `json:"type,omitempty"`
	Object json.RawMessage `json:"object,omitempty"`
	// Written and Lag are an event's reflector.Delivery, when known
	// (absent in traces written before they were recorded): its object's
	// latest write time and how late it arrived, to the millisecond.
	Written *time.Time `json:"written,omitempty"`
	Lag     *Duration  `json:"lag,omitempty"`
	// Changes (MODIFIED event lines, with --diff) are the paths the event
	// changed, each with its field manager; with their old and new values
	// only when the trace keeps whole objects (--trace-objects full).
	Changes *diff.Changes `json:"changes,omitempty"`
	// probe: one renewal of the probe's Lease, answered at resourceVersion
	// (above): Write is from sending the update to its answer, Event from
	// sending it to its watch event (the line is written then). A probe
	// line without them is a note of the probe's, its Detail (below); with
	// a resourceVersion, a renewal whose watch event never came (lost).
	Write *Duration `json:"write,omitempty"`
	Event *Duration `json:"event,omitempty"`
	// page
	ResourceVersion    string `json:"resourceVersion,omitempty"`
	Continue           string `json:"continue,omitempty"`
	RemainingItemCount *int64 `json:"remainingItemCount,omitempty"`
	Items              *int   `json:"items,omitempty"`
	// Bytes (page) is the size of the LIST response's body as decoded
	// (uncompressed; absent when not known, and in older traces); on the
	// event line of the bookmark that ends a streaming list, the watch
	// body's size up to that bookmark (reflector.WatchEvent.Bytes).
	Bytes int64 `json:"bytes,omitempty"`
	// end
	Reason string  `json:"reason,omitempty"`
	Status *Status `json:"status,omitempty"`
	Error  string  `json:"error,omitempty"`
	// Throttle is what a 429's headers said (absent for other ends, and in
	// older traces).
	Throttle *Throttle `json:"throttle,omitempty"`
	// flowcontrol: the names learned, uid → name.
	FlowSchemas    map[string]string `json:"flowSchemas,omitempty"`
	PriorityLevels map[string]string `json:"priorityLevels,omitempty"`
	// resource (observed traces): the ResourceHeader that index R names
	// from this line on (kept raw: a line of another kind may use the name;
	// the Reader decodes it into Header().Resources)
	Resource json.RawMessage `json:"resource,omitempty"`
	// Client is who opened an observed resource's stream: its User-Agent,
	// the address of its first connection and its Accept (resource lines;
	// there ID is the stream's number, 0 when not recorded).
	Client *Client `json:"client,omitempty"`
	// num is the line's number in the trace (not written).
	num int
	// note: the decision's state, reason and sentence, and its structured
	// fields (resourceVersion above, and these), which a replay compares
	State   string      `json:"state,omitempty"`
	Detail  string      `json:"detail,omitempty"`
	Objects *int        `json:"objectCount,omitempty"`
	Code    int32       `json:"code,omitempty"`
	Cursor  string      `json:"cursor,omitempty"`
	Diff    *DiffCounts `json:"diff,omitempty"`
	// Wait is a backoff's wait, to the millisecond (absent in traces
	// written before it was recorded); in an observed trace, how long
	// before a client-left note its client left, or how long a client-back
	// note's client was away; on an observed request line, how long before
	// the line (its answer) the request came.
	Wait Duration `json:"wait,omitempty"`
	// Audit is an audit line's report; its list's resourceVersion is
	// ResourceVersion above.
	Audit *AuditRecord `json:"audit,omitempty"`
	// Fault and Count are a fault note's (observed traces): the --fault
	// spec as given, and how many times it acted.
	Fault string `json:"fault,omitempty"`
	Count int    `json:"count,omitempty"`
	// gap is, for a backoff note without Wait, the time from the note to
	// its resource's next request: what the recorded run waited (not written).
	gap time.Duration
}

// Delivery is an event line's reflector.Delivery: what the recording knew of
// how late the event arrived (zero when it did not record it).
func (l *Line) Delivery() reflector.Delivery {
	if l.Written == nil || l.Lag == nil {
		return reflector.Delivery{}
	}
	return reflector.Delivery{Written: *l.Written, Lag: time.Duration(*l.Lag)}
}

// setDelivery records an event's Delivery on its line.
func (l *Line) setDelivery(d reflector.Delivery) {
	if !d.Known() {
		return
	}
	w, lag := d.Written.UTC(), Duration(d.Lag)
	l.Written, l.Lag = &w, &lag
}

// recordedWait is what the recorded run waited at a backoff note: its
// recorded wait, else the time to its next request; 0 when unknown.
func (l *Line) recordedWait() time.Duration {
	if l.Wait > 0 {
		return time.Duration(l.Wait)
	}
	return l.gap
}

// DiffCounts is a relist-diff note's `diff`: how many objects the relist
// found deleted, recreated (same name, new UID), updated and added behind
// the watch's back, and how many were unchanged.
type DiffCounts struct {
	Deleted   int `json:"deleted"`
	Recreated int `json:"recreated"`
	Updated   int `json:"updated"`
	Added     int `json:"added"`
	Unchanged int `json:"unchanged"`
}

// AuditRecord is an `audit` line's `audit`: how many objects the fresh list
// and the cache held, and the objects on which they disagreed.
type AuditRecord struct {
	Listed int `json:"listed"`
	Cached int `json:"cached"`
	// Missing were listed but not cached; Extra cached but not listed;
	// Different cached with another UID or resourceVersion than listed.
	Missing   []AuditEntry `json:"missing,omitempty"`
	Extra     []AuditEntry `json:"extra,omitempty"`
	Different []AuditEntry `json:"different,omitempty"`
	// Omitted counts the objects of a large drift that the lists leave
	// out: they keep the first MaxAuditEntries, missing first, then extra,
	// then different, so that the line stays within MaxBytesOutsideObject.
	Omitted *AuditCounts `json:"omitted,omitempty"`
}

// AuditCounts counts an audit's objects by what it found of them.
type AuditCounts struct {
	Missing   int `json:"missing,omitempty"`
	Extra     int `json:"extra,omitempty"`
	Different int `json:"different,omitempty"`
}

// MaxAuditEntries bounds the objects an audit line lists (at most about
// 600 bytes each, with the longest names Kubernetes allows).
const MaxAuditEntries = 50

// AuditEntry is one object an audit found: the cache's UID and
// resourceVersion (old) and the list's (new), each absent where it had none.
type AuditEntry struct {
	Namespace          string `json:"namespace,omitempty"`
	Name               string `json:"name"`
	OldUID             string `json:"oldUID,omitempty"`
	OldResourceVersion string `json:"oldResourceVersion,omitempty"`
	NewUID             string `json:"newUID,omitempty"`
	NewResourceVersion string `json:"newResourceVersion,omitempty"`
}

// auditLine is the `audit` line of an audit's report: its first
// MaxAuditEntries objects, and the count of the rest.
func auditLine(a *reflector.AuditReport) *Line {
	room := MaxAuditEntries
	var omitted [3]int
	entries := func(es []store.DiffEntry, omittedBefore, i int) []AuditEntry {
		var out []AuditEntry
		for _, e := range es {
			if room == 0 {
				break
			}
			room--
			out = append(out, AuditEntry{Namespace: e.Ref.Namespace, Name: e.Ref.Name, OldUID: e.OldUID, OldResourceVersion: e.OldResourceVersion,
				NewUID: e.NewUID, NewResourceVersion: e.NewResourceVersion})
		}
		omitted[i] = omittedBefore + len(es) - len(out)
		return out
	}
	rec := &AuditRecord{Listed: a.Listed, Cached: a.Cached,
		Missing: entries(a.Missing, a.Omitted[0], 0), Extra: entries(a.Extra, a.Omitted[1], 1), Different: entries(a.Different, a.Omitted[2], 2)}
	if omitted != [3]int{} {
		rec.Omitted = &AuditCounts{Missing: omitted[0], Extra: omitted[1], Different: omitted[2]}
	}
	return &Line{K: KindAudit, ResourceVersion: a.ResourceVersion, Audit: rec}
}

// AuditReport is an audit line's report as the reflector made it.
func (l *Line) AuditReport() *reflector.AuditReport {
	if l.Audit == nil {
		return nil
	}
	entries := func(es []AuditEntry) []store.DiffEntry {
		var out []store.DiffEntry
		for _, e := range es {
			out = append(out, store.DiffEntry{Ref: store.Ref{Namespace: e.Namespace, Name: e.Name}, OldUID: e.OldUID, OldResourceVersion: e.OldResourceVersion,
				NewUID: e.NewUID, NewResourceVersion: e.NewResourceVersion})
		}
		return out
	}
	a := l.Audit
	rep := &reflector.AuditReport{ResourceVersion: l.ResourceVersion, Listed: a.Listed, Cached: a.Cached,
		Missing: entries(a.Missing), Extra: entries(a.Extra), Different: entries(a.Different)}
	if o := a.Omitted; o != nil {
		rep.Omitted = [3]int{o.Missing, o.Extra, o.Different}
	}
	return rep
}

// noteLine is the `note` line of a decision.
func noteLine(d *reflector.Decision) *Line {
	l := &Line{K: KindNote, State: d.State.String(), Reason: string(d.Reason), Detail: d.String(),
		ResourceVersion: d.ResourceVersion, Code: d.Code, Cursor: d.Cursor}
	if d.Reason == reflector.ReasonListComplete || d.Reason == reflector.ReasonClientGone {
		n := d.Objects
		l.Objects = &n
	}
	switch d.Reason {
	case reflector.ReasonBackoff, reflector.ReasonClientLeft, reflector.ReasonClientBack, reflector.ReasonClientGone:
		l.Wait = Duration(roundWait(d.Wait))
	}
	if d.Reason == reflector.ReasonFault {
		l.Fault, l.Count = d.Fault, d.Count
	}
	if d.Diff != nil {
		l.Diff = &DiffCounts{Deleted: len(d.Diff.Deleted), Recreated: len(d.Diff.Recreated), Updated: len(d.Diff.Updated), Added: len(d.Diff.Added), Unchanged: d.Diff.Unchanged}
	}
	return l
}

// roundWait rounds a backoff's wait to the millisecond, as a trace records
// it (a wait under a millisecond is kept as it is).
func roundWait(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d
	}
	return d.Round(time.Millisecond)
}
