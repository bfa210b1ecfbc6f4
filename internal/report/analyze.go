package report

import (
	"errors"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// Options bound what a report keeps; zero values take the defaults.
type Options struct {
	// Name is the trace's name as the report shows it.
	Name string
	// MaxRequests is how many requests per resource are drawn and listed
	// (default 20,000): past it, the first and the last half are kept.
	MaxRequests int
	// MaxRelists is how many relists per resource the relist table keeps
	// (default 1,000), the first and the last half.
	MaxRelists int
	// MaxDiffEntries is how many objects of each kind (deleted, recreated,
	// updated, added) a relist lists (default 100); the counts are complete.
	MaxDiffEntries int
	// MaxMarkers is how many markers of each kind are drawn (default 2,000).
	MaxMarkers int
	// MaxBuckets bounds the time buckets (default 1,024): a bucket's width
	// doubles whenever the trace outgrows them, so a report has between half
	// and all of MaxBuckets, whatever the trace's length.
	MaxBuckets int
	// MaxAlerts is how many tripped alert rules are listed (default 1,000).
	MaxAlerts int
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxRequests, 20000)
	def(&o.MaxRelists, 1000)
	def(&o.MaxDiffEntries, 100)
	def(&o.MaxMarkers, 2000)
	def(&o.MaxBuckets, 1024)
	def(&o.MaxAlerts, 1000)
	// Two halves, and bucket pairs that merge.
	o.MaxRequests = max(o.MaxRequests, 2)
	o.MaxRelists = max(o.MaxRelists, 2)
	o.MaxBuckets = max(o.MaxBuckets, 2)
	return o
}

// Analyze reads the rest of rd (its header already read) and returns the
// report. A line the reader refuses, or an object that cannot be decoded, is
// an error naming its line; lines that do not fit what came before (an end
// for a request that is not open) are skipped with a warning.
func Analyze(rd *trace.Reader, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	h := rd.Header()
	a := &analyzer{opts: opts, rd: rd, rep: &Report{Name: opts.Name, Header: h}}
	// One state per resource of the header (a version-1 trace has one); the
	// reader has checked every line's index against the header.
	for i, rh := range h.Resources {
		a.resources = append(a.resources, a.newResource(i, rh))
	}
	var maxAt int64
	for {
		l, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		a.rep.Lines++
		maxAt = max(maxAt, l.At)
		if err := a.line(l); err != nil {
			return nil, &trace.LineError{Name: rd.Name(), Line: rd.LineNumber(), Err: err}
		}
	}
	a.rep.Duration = time.Duration(maxAt)
	// An observed trace's header grew with its resource lines.
	a.rep.Header = rd.Header()
	for _, rs := range a.resources {
		a.rep.Resources = append(a.rep.Resources, rs.finish(time.Duration(maxAt)))
	}
	a.rep.Warnings = append(rd.Warnings(), a.warnings...)
	if a.dropped > 0 {
		a.rep.Warnings = append(a.rep.Warnings, fmt.Sprintf("%d more lines were skipped", a.dropped))
	}
	return a.rep, nil
}

// maxWarnings is how many of its own warnings the analysis keeps.
const maxWarnings = 100

type analyzer struct {
	opts      Options
	rd        *trace.Reader
	rep       *Report
	resources []*resourceState
	warnings  []string
	dropped   int
}

func (a *analyzer) warn(format string, args ...any) {
	if len(a.warnings) >= maxWarnings {
		a.dropped++
		return
	}
	a.warnings = append(a.warnings, fmt.Sprintf("line %d: ", a.rd.LineNumber())+fmt.Sprintf(format, args...))
}

// resource is the resource a line belongs to, by its index (0 in a version-1 trace).
func (a *analyzer) resource(l *trace.Line) *resourceState { return a.resources[l.R] }

func (a *analyzer) line(l *trace.Line) error {
	if l.K == trace.KindResource {
		// An observed trace names each stream as a client opens it; the
		// reader has added it to the header, in index order.
		rs := a.newResource(l.R, a.rd.Header().Resources[l.R])
		rs.res.Client = l.Client
		a.resources = append(a.resources, rs)
		return nil
	}
	rs := a.resource(l)
	at := time.Duration(l.At)
	switch l.K {
	case trace.KindNote:
		a.note(rs, l, at)
		return nil
	case trace.KindRequest:
		rs.request(l, at)
		return nil
	}
	q := rs.open[l.ID]
	if q == nil {
		a.warn("%s line of request %d, which is not open: skipped", l.K, l.ID)
		return nil
	}
	switch l.K {
	case trace.KindItem:
		obj, err := wire.DecodeObject(l.Object, false)
		if err != nil {
			return err
		}
		q.items = append(q.items, obj)
	case trace.KindPage:
		q.r.PageRV, q.r.Continue, q.r.Remaining = l.ResourceVersion, l.Continue, l.RemainingItemCount
	case trace.KindEvent:
		return rs.event(q, l, at)
	case trace.KindEnd:
		rs.end(q, l, at)
	}
	return nil
}

// note takes what the report shows from a recorded decision: backoffs (the
// client's own choice, not on the wire) and alerts.
func (a *analyzer) note(rs *resourceState, l *trace.Line, at time.Duration) {
	a.rep.Decisions++
	rs.res.BackoffsKnown = true
	switch reflector.Reason(l.Reason) {
	case reflector.ReasonBackoff:
		rs.res.Counters.Backoffs++
		rs.closeBackoff(at)
		rs.backoff = &Marker{Kind: MarkBackoff, At: at, End: at, Detail: l.Detail}
	case ReasonAlert:
		al := &a.rep.Alerts
		al.Evaluated = true
		al.Total++
		if len(al.Tripped) < a.opts.MaxAlerts {
			al.Tripped = append(al.Tripped, Alert{At: at, Resource: rs.res.Name, Rule: l.State, Detail: l.Detail})
		}
	}
}

func (a *analyzer) newResource(i int, h trace.ResourceHeader) *resourceState {
	st, w := store.New()
	return &resourceState{
		a: a,
		res: &Resource{Index: i, Header: h, Info: h.Resource, Name: h.Resource.String(), Namespace: h.Namespace, LabelSelector: h.LabelSelector, FieldSelector: h.FieldSelector,
			BookmarkAt: -1, MarkersDropped: map[MarkerKind]int{}},
		st: st, w: w,
		open:     map[int64]*openRequest{},
		markers:  map[MarkerKind]int{},
		requests: newCapped[*Request](a.opts.MaxRequests),
		relists:  newCapped[*Relist](a.opts.MaxRelists),
		buckets:  newBuckets(a.opts.MaxBuckets),
	}
}

// resourceState follows one resource through the trace: the cache, the
// cursor, the requests in flight and the list being made.
type resourceState struct {
	a   *analyzer
	res *Resource
	st  *store.Store
	w   *store.Writer
	// open are the requests whose end has not come yet, by id. A trace of
	// our own reflector has one at a time; another client's may have several.
	open     map[int64]*openRequest
	requests *capped[*Request]
	relists  *capped[*Relist]
	buckets  *buckets
	// lists counts the full lists started; listing is the one in progress
	// (nil between a complete list and the next).
	lists      int
	listing    *Relist // nil for the first list, which is not a relist
	inList     bool
	listedOnce bool
	cursor     string
	// trigger is the last request whose end can lead to a relist (a watch's
	// end, or a 410 or too-large answer to a LIST): a relist says it came after it.
	trigger *Request
	// backoff is the recorded backoff waiting for the next request to end its span.
	backoff *Marker
	markers map[MarkerKind]int // drawn so far, by kind
}

// openRequest is a request in flight.
type openRequest struct {
	r *Request
	// opened is true once a line other than the request came for it.
	opened bool
	// streaming is true during a streaming list's initial events.
	streaming bool
	items     []*store.Object
	// status is an ERROR event's Status; the watch is over after it.
	status *metav1.Status
}

func (rs *resourceState) request(l *trace.Line, at time.Duration) {
	rs.closeBackoff(at)
	r := &Request{ID: l.ID, Verb: reflector.Verb(l.Verb), Kind: KindListPage, Start: at, End: at, Class: EndOpen}
	if l.Opts != nil {
		r.Opts = *l.Opts
	}
	q := &openRequest{r: r}
	if r.Verb == reflector.VerbWatch {
		rs.res.Counters.Watches++
		r.Kind = KindWatch
		if r.Opts.SendInitialEvents {
			r.Kind, q.streaming = KindStreamingList, true
		}
	}
	rs.open[l.ID] = q
	rs.res.RequestsTotal++
	rs.requests.add(r)
}

func (rs *resourceState) closeBackoff(at time.Duration) {
	if rs.backoff == nil {
		return
	}
	rs.backoff.End = max(at, rs.backoff.At)
	rs.mark(*rs.backoff)
	rs.backoff = nil
}

func (rs *resourceState) mark(m Marker) {
	if rs.countMarker(m.Kind) {
		rs.res.Markers = append(rs.res.Markers, m)
	}
}

// countMarker reports whether one more marker of kind k is drawn, counting those that are not.
func (rs *resourceState) countMarker(k MarkerKind) bool {
	if rs.markers[k] >= rs.a.opts.MaxMarkers {
		rs.res.MarkersDropped[k]++
		return false
	}
	rs.markers[k]++
	return true
}

// open marks a watch as opened: a streaming list starts its full list then,
// as the reflector does once the server answered.
func (rs *resourceState) opened(q *openRequest, at time.Duration) {
	if q.opened {
		return
	}
	q.opened = true
	if q.streaming {
		rs.beginList(q.r, at)
	}
}

func (rs *resourceState) event(q *openRequest, l *trace.Line, at time.Duration) error {
	rs.opened(q, at)
	r := q.r
	r.Events++
	if q.status != nil {
		return nil // the watch ended at its ERROR event
	}
	ev, err := wire.DecodeWatchEvent(l.Type, l.Object, false)
	if err != nil {
		return err
	}
	c := &rs.res.Counters
	switch ev.Type {
	case reflector.EventError:
		q.status = ev.Status
	case reflector.EventBookmark:
		rv := ev.Item.Object.ResourceVersion
		c.Bookmarks++
		r.Bookmarks++
		rs.res.BookmarkRV, rs.res.BookmarkAt = rv, at
		rs.buckets.at(at).bookmark(at)
		rs.advance(rv, r, at)
		if q.streaming && ev.InitialEventsEnd {
			q.streaming = false
			r.InitialEventsEnd = at
			rs.completeList(rv, at)
		}
	case reflector.EventAdded, reflector.EventModified, reflector.EventDeleted:
		obj := ev.Item.Object
		if q.streaming {
			if ev.Type != reflector.EventDeleted {
				rs.apply(store.Event{Type: store.InitApply, Object: obj})
			}
			return nil
		}
		typ := store.Apply
		if ev.Type == reflector.EventDeleted {
			typ = store.Delete
		}
		res := rs.apply(store.Event{Type: typ, Object: obj})
		rs.advance(obj.ResourceVersion, r, at)
		b := rs.buckets.at(at)
		switch ev.Type {
		case reflector.EventAdded:
			c.Added++
			b.Added++
		case reflector.EventModified:
			c.Modified++
			b.Modified++
		default:
			c.Deleted++
			b.Deleted++
		}
		if res.Outcome.UIDMismatch() {
			c.UIDMismatches++
		}
		if res.Outcome == store.Duplicate {
			c.Duplicates++
		}
		if res.Outcome == store.Added || res.Outcome == store.Deleted {
			rs.sampleObjects(at)
		}
	}
	return nil
}

// apply applies ev to the cache; an event the store refuses is skipped with a warning.
func (rs *resourceState) apply(ev store.Event) store.Result {
	res, err := rs.w.ApplyEvent(ev)
	if err != nil {
		rs.a.warn("%v", err)
	}
	return res
}

// advance moves the cursor to rv, refusing (and marking) a move backwards, as the reflector does.
func (rs *resourceState) advance(rv string, r *Request, at time.Duration) {
	if rv == "" {
		return
	}
	if reflector.ResourceVersionBackwards(rv, rs.cursor) {
		rs.res.Counters.ResourceVersionBackwards++
		rs.mark(Marker{Kind: MarkRVBackwards, At: at, End: at, Request: r.ID,
			Detail: fmt.Sprintf("resourceVersion went backwards from %s to %s in watch #%d", rs.cursor, rv, r.ID)})
		return
	}
	rs.cursor = rv
}

func (rs *resourceState) sampleObjects(at time.Duration) {
	rs.buckets.at(at).objects(rs.st.Len())
}

// beginList starts a full list at request r, counting it as the reflector does.
func (rs *resourceState) beginList(r *Request, at time.Duration) {
	if rs.listing != nil && rs.listing.Outcome == RelistUnfinished {
		rs.listing.Outcome, rs.listing.End = RelistRestarted, r.Start
	}
	rs.apply(store.Event{Type: store.Init})
	rs.lists++
	r.List = rs.lists
	rs.inList = true
	rs.listing = nil
	c := &rs.res.Counters
	c.Lists++
	if rs.lists > 1 {
		c.Relists++
		rs.res.RelistsTotal++
		rl := &Relist{Number: rs.lists, FirstRequest: r.ID, LastRequest: r.ID, Start: r.Start, Outcome: RelistUnfinished, End: at}
		if rs.trigger != nil {
			rl.After = fmt.Sprintf("%s #%d: %s", rs.trigger.Kind.Noun(), rs.trigger.ID, describeEnd(rs.trigger))
		}
		rs.listing = rl
		rs.relists.add(rl)
	}
}

// completeList installs the list at rv, as InitDone does, and notes the relist's diff.
func (rs *resourceState) completeList(rv string, at time.Duration) {
	var replaced []*store.Object // the cache the relist replaces, for the labels of missed deletes
	if rs.listedOnce && rs.listing != nil {
		replaced = rs.st.List()
	}
	res := rs.apply(store.Event{Type: store.InitDone, ResourceVersion: rv})
	wasRelist := rs.listedOnce
	rs.listedOnce, rs.inList = true, false
	rs.cursor = rv
	rs.sampleObjects(at)
	if rl := rs.listing; rl != nil {
		rl.End = at
		rl.Outcome = RelistFirstComplete
		if wasRelist && res.Diff != nil {
			rl.Outcome = RelistCompleted
			rl.Diff = rs.capDiff(res.Diff, replaced)
		}
	}
	if wasRelist && res.Diff != nil {
		d := res.Diff
		rs.mark(Marker{Kind: MarkRelist, At: at, End: at, Relist: rs.lists, Detail: fmt.Sprintf("relist complete: %d objects at resourceVersion %s (was %d); missed %d deletes, %d recreates, %d updates, %d adds",
			d.After, rv, d.Before, len(d.Deleted), len(d.Recreated), len(d.Updated), len(d.Added))})
	}
	rs.listing = nil
}

// capDiff keeps the first entries of each kind of d, with the objects'
// labels: the listed object's from the cache, a missed delete's from replaced.
func (rs *resourceState) capDiff(d *store.RelistDiff, replaced []*store.Object) *Diff {
	n := rs.a.opts.MaxDiffEntries
	listed := func(es []store.DiffEntry) []DiffObject {
		out := make([]DiffObject, 0, min(len(es), n))
		for _, e := range es[:min(len(es), n)] {
			o := DiffObject{DiffEntry: e}
			if obj, ok := rs.st.Get(e.Ref); ok {
				o.Labels = obj.Labels
			}
			out = append(out, o)
		}
		return out
	}
	deleted := make([]DiffObject, 0, min(len(d.Deleted), n))
	want := map[store.Ref]int{}
	for i, e := range d.Deleted[:min(len(d.Deleted), n)] {
		deleted = append(deleted, DiffObject{DiffEntry: e})
		want[e.Ref] = i
	}
	for _, obj := range replaced {
		if len(want) == 0 {
			break
		}
		if i, ok := want[obj.Ref()]; ok {
			deleted[i].Labels = obj.Labels
			delete(want, obj.Ref())
		}
	}
	return &Diff{ResourceVersion: d.ResourceVersion, Before: d.Before, After: d.After,
		Deleted: deleted, Recreated: listed(d.Recreated), Updated: listed(d.Updated), Added: listed(d.Added),
		NDeleted: len(d.Deleted), NRecreated: len(d.Recreated), NUpdated: len(d.Updated), NAdded: len(d.Added), Unchanged: d.Unchanged}
}

func (rs *resourceState) end(q *openRequest, l *trace.Line, at time.Duration) {
	r := q.r
	delete(rs.open, r.ID)
	first := !q.opened
	r.End, r.Reason, r.Error = at, reflector.EndReason(l.Reason), l.Error
	st := q.status
	if st == nil {
		st = l.Status.APIStatus()
	} else {
		r.Reason = reflector.EndError // the reflector ends a watch at its ERROR event
	}
	if st != nil {
		r.Code, r.StatusReason, r.Message = st.Code, string(st.Reason), st.Message
	}
	r.Class = classify(r.Reason, st)
	c := &rs.res.Counters
	if r.Verb == reflector.VerbList {
		rs.endList(q, at, st)
		return
	}
	// A watch that failed to open ends right after its request; any other
	// end means it was open (a streaming list's full list started then).
	if !(first && r.Reason == reflector.EndError) {
		rs.opened(q, at)
	}
	rs.trigger = r
	if r.Class == EndGone {
		rs.mark(Marker{Kind: MarkGone, At: at, End: at, Request: r.ID, Detail: fmt.Sprintf("%s #%d: %s", r.Kind.Noun(), r.ID, describeEnd(r))})
	}
	switch {
	case r.Reason == reflector.EndCanceled:
		// Stopped, forced to relist, or a stalled streaming list: nothing is counted.
	case q.streaming && reflector.IsStreamRefused(st):
	case reflector.IsGone(st):
		c.Gone++
	case reflector.IsTooLargeResourceVersion(st):
		c.TooLargeResourceVersion++
	case q.streaming, r.Reason == reflector.EndTimeout, r.Reason == reflector.EndClosed:
	default:
		c.WatchErrors++
	}
	if q.streaming && rs.listing != nil {
		rs.listing.LastRequest, rs.listing.End = r.ID, at
	}
}

func (rs *resourceState) endList(q *openRequest, at time.Duration, st *metav1.Status) {
	r := q.r
	c := &rs.res.Counters
	r.Items = len(q.items)
	if r.Reason != reflector.EndClosed {
		switch {
		case r.Reason == reflector.EndCanceled:
		case reflector.IsGone(st):
			c.Gone++
			rs.trigger = r
			rs.mark(Marker{Kind: MarkGone, At: at, End: at, Request: r.ID, Detail: fmt.Sprintf("list #%d: %s", r.ID, describeEnd(r))})
		case reflector.IsTooLargeResourceVersion(st):
			c.TooLargeResourceVersion++
			rs.trigger = r
		}
		return
	}
	c.ListPages++
	if r.Opts.Continue == "" || !rs.inList {
		if r.Opts.Continue != "" {
			rs.a.warn("list #%d continues a list that did not start in this trace", r.ID)
		}
		rs.beginList(r, at)
	}
	r.List = rs.lists
	if rs.listing != nil {
		rs.listing.LastRequest, rs.listing.End = r.ID, at
	}
	for _, obj := range q.items {
		rs.apply(store.Event{Type: store.InitApply, Object: obj})
	}
	q.items = nil
	if r.Continue == "" {
		rs.completeList(r.PageRV, at)
	}
}

// finish closes what the trace left open and returns the resource's report.
func (rs *resourceState) finish(end time.Duration) *Resource {
	for _, q := range rs.open {
		q.r.End = end
	}
	rs.closeBackoff(end)
	if rs.listing != nil {
		rs.listing.End = end
	}
	res := rs.res
	res.Requests, res.RequestsGap = rs.requests.all()
	res.Relists, res.RelistsGap = rs.relists.all()
	res.Objects = rs.st.Len()
	res.ResourceVersion = rs.cursor
	res.Buckets, res.BucketWidth = rs.buckets.b, rs.buckets.width
	rs.w.Close()
	return res
}

// classify is the colour of an end: its reason, or 410 Gone.
func classify(reason reflector.EndReason, st *metav1.Status) EndClass {
	if reflector.IsGone(st) {
		return EndGone
	}
	switch reason {
	case reflector.EndClosed:
		return EndClosed
	case reflector.EndTimeout:
		return EndTimeout
	case reflector.EndCanceled:
		return EndCanceled
	case reflector.EndError:
		return EndError
	}
	return EndOpen
}

// Noun names the kind in sentences: "list", "streaming list", "watch".
func (k RequestKind) Noun() string {
	if k == KindStreamingList {
		return "streaming list"
	}
	return string(k)
}

// describeEnd says how a request ended, as the rest of the tool says it
// (reflector.RequestEnd.Format): "error 410 Expired: too old resource version: 211 (214)".
func describeEnd(r *Request) string {
	if r.Class == EndOpen {
		return "no end (the trace stops first)"
	}
	e := &reflector.RequestEnd{Reason: r.Reason}
	if r.Code != 0 || r.StatusReason != "" || r.Message != "" {
		e.Status = &metav1.Status{Code: r.Code, Reason: metav1.StatusReason(r.StatusReason), Message: r.Message}
	}
	if r.Error != "" {
		e.Err = errors.New(r.Error)
	}
	return e.Format(false)
}

// capped keeps the first and the last max/2 values added.
type capped[T any] struct {
	head []T
	tail []T // a ring once full
	next int
	half int
}

func newCapped[T any](max int) *capped[T] { return &capped[T]{half: max / 2} }

func (c *capped[T]) add(v T) {
	if len(c.head) < c.half {
		c.head = append(c.head, v)
		return
	}
	if len(c.tail) < c.half {
		c.tail = append(c.tail, v)
		return
	}
	c.tail[c.next] = v
	c.next = (c.next + 1) % c.half
}

// all returns the values kept, in the order they were added, and the index
// of the first one after those left out.
func (c *capped[T]) all() ([]T, int) {
	out := make([]T, 0, len(c.head)+len(c.tail))
	out = append(out, c.head...)
	out = append(out, c.tail[c.next:]...)
	return append(out, c.tail[:c.next]...), len(c.head)
}

// buckets aggregates by time in at most max buckets, doubling their width
// (and merging neighbours) when the trace outgrows them.
type buckets struct {
	width time.Duration
	max   int
	b     []Bucket
}

// firstBucketWidth is where bucket widths start: a trace of a second has
// buckets of a millisecond or two.
const firstBucketWidth = time.Millisecond

func newBuckets(max int) *buckets { return &buckets{width: firstBucketWidth, max: max} }

func (bs *buckets) at(at time.Duration) *Bucket {
	at = max(at, 0)
	i := int64(at / bs.width)
	for i >= int64(bs.max) {
		bs.double()
		i = int64(at / bs.width)
	}
	for int64(len(bs.b)) <= i {
		bs.b = append(bs.b, Bucket{})
	}
	return &bs.b[i]
}

func (bs *buckets) double() {
	bs.width *= 2
	n := (len(bs.b) + 1) / 2
	for i := 0; i < n; i++ {
		m := bs.b[2*i]
		if 2*i+1 < len(bs.b) {
			m.merge(&bs.b[2*i+1])
		}
		bs.b[i] = m
	}
	bs.b = bs.b[:n]
}

func (b *Bucket) bookmark(at time.Duration) {
	if b.Bookmarks == 0 || at < b.FirstBookmark {
		b.FirstBookmark = at
	}
	if b.Bookmarks == 0 || at > b.LastBookmark {
		b.LastBookmark = at
	}
	b.Bookmarks++
}

func (b *Bucket) objects(n int) {
	if !b.HasObjects {
		b.HasObjects, b.ObjectsMin, b.ObjectsMax = true, n, n
	}
	b.ObjectsMin, b.ObjectsMax, b.ObjectsLast = min(b.ObjectsMin, n), max(b.ObjectsMax, n), n
}

// merge adds the later bucket n to b.
func (b *Bucket) merge(n *Bucket) {
	b.Added += n.Added
	b.Modified += n.Modified
	b.Deleted += n.Deleted
	if n.Bookmarks > 0 {
		if b.Bookmarks == 0 {
			b.FirstBookmark = n.FirstBookmark
		}
		b.LastBookmark = n.LastBookmark
		b.Bookmarks += n.Bookmarks
	}
	if n.HasObjects {
		if !b.HasObjects {
			b.HasObjects, b.ObjectsMin, b.ObjectsMax = true, n.ObjectsMin, n.ObjectsMax
		}
		b.ObjectsMin, b.ObjectsMax, b.ObjectsLast = min(b.ObjectsMin, n.ObjectsMin), max(b.ObjectsMax, n.ObjectsMax), n.ObjectsLast
	}
}
