package report

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/probe"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
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
	// MaxBuckets bounds the time buckets (default 1,024): they start a
	// millisecond wide, and their width doubles whenever the trace outgrows
	// them, so a report has at most MaxBuckets, whatever the trace's length
	// (and at least half of them once their width has doubled).
	MaxBuckets int
	// MaxAlerts is how many tripped alert rules are listed (default 1,000).
	MaxAlerts int
	// MaxRecentChanges is how many of a resource's last diffed MODIFIED
	// events "What changed" lists (default 10), when the trace recorded
	// their changes (--diff).
	MaxRecentChanges int
	// Findings tune the replay's findings engines (--ignore-finding, --relist-storm).
	Findings findings.Options
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
	def(&o.MaxRecentChanges, 10)
	// Two halves, and bucket pairs that merge.
	o.MaxRequests = max(o.MaxRequests, 2)
	o.MaxRelists = max(o.MaxRelists, 2)
	o.MaxBuckets = max(o.MaxBuckets, 2)
	return o
}

// Analyze replays the rest of rd (its header read) as `kubectl watchcache
// replay --speed 0` does, and returns the report: every subject of the
// replay's session (a resource of our reflector's trace, or a stream of an
// observed trace, recorded by kubectl watchcache proxy) laid out from its
// notes, at the recorded times of the lines the replay takes for it. The
// report counts nothing itself: its counters are the replay's. A line the
// reader refuses, or a replay that diverges from the trace, is an error; a
// recorded reflector that stopped on an error stops the same way in the
// replay, which the report says in a warning. ctx ending before the trace
// does is an error too: the report would show part of the run as all of it.
func Analyze(ctx context.Context, rd *trace.Reader, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	rep := &Report{Name: opts.Name}
	sess, err := session.NewReplayOf(rd, 0)
	if err != nil {
		return nil, fmt.Errorf("replaying the trace: %w", err)
	}
	var cs []*collector // the subjects' own: each is fed on its subject's goroutine
	var mu sync.Mutex
	collectorOf := func(i int) *collector {
		mu.Lock()
		defer mu.Unlock()
		return cs[i]
	}
	sess.OnSubject(func(sub session.Subject) {
		sub.Findings().Configure(opts.Findings)
		rh, client := sub.Describe()
		mu.Lock()
		c := newCollector(opts, len(cs), rh, sub.Store())
		cs = append(cs, c)
		mu.Unlock()
		if client != (trace.Client{}) {
			c.res.Client = &trace.Client{UserAgent: client.UserAgent, RemoteAddr: client.RemoteAddr}
		}
		sub.OnNote(c.note)
	})
	sess.OnLine(func(i int, l *trace.Line) { collectorOf(i).line(l) })
	runErr := sess.Run(ctx)
	var lineErr *trace.LineError
	var div *trace.Divergence
	if errors.As(runErr, &lineErr) || errors.As(runErr, &div) {
		return nil, runErr
	}
	if !sess.Replay.ReadToEnd() && ctx.Err() != nil {
		return nil, fmt.Errorf("stopped at %s of the recording, before its end: %w", sess.Replay.Now().UTC().Format("15:04:05.000"), context.Cause(ctx))
	}
	if runErr != nil {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the replayed reflector stopped: %v", runErr))
	}
	mergeAlerts(rep, cs, opts.MaxAlerts)
	if sess.Probe.On() && sess.ProbeIndex >= 0 && sess.ProbeIndex < len(cs) {
		cs[sess.ProbeIndex].probe(rd.Header().StartedAt, sess.Probe)
	}
	rep.Decisions = sess.Replay.RecordedDecisions()
	// As replay and explain say it; a trace without decisions has nothing to compare.
	if _, total := sess.Replay.Differences(0); total > 0 && rep.Decisions > 0 && !sess.Replay.EndedEarly() { // EndedEarly is known once Differences ran
		rep.Warnings = append(rep.Warnings, trace.DifferedText(total)+": the report shows the replay")
	}
	if sess.Replay.RecordingCut() {
		rep.Warnings = append(rep.Warnings, trace.EndedEarlyText+"; the report shows the run up to there")
	}
	for i, sub := range sess.Subjects() {
		c := cs[i]
		c.stop(sub.Stats())
		c.res.Findings = sub.Findings().List()
		sum := sub.Summary(sess.Now())
		c.res.Churn, c.res.Faults, c.res.Stream = sum.Churn, sum.Faults, sum.Stream
		rep.Resources = append(rep.Resources, c.res)
	}
	for _, w := range sess.Resources {
		cs[w.Index].res.BackoffsKnown = w.Replay.RecordedDecisions() > 0
	}
	// An observed trace's header grew with its resource lines.
	rep.Header = rd.Header()
	// The reader has counted the header and its attempt past the last whole
	// line: a read that found nothing, or a truncated line.
	rep.Lines = max(rd.LineNumber()-2, 0)
	rep.Warnings = slices.Concat(rd.Warnings(), rep.Warnings)
	rep.Duration, _ = sess.Replay.Player().Position() // the largest at of the lines served
	for _, res := range rep.Resources {
		res.finish(rep.Duration)
	}
	return rep, nil
}

// collector lays one resource's replay out for the page: requests, relists,
// markers and buckets, from the notes in order and the recorded time of what
// they are about.
type collector struct {
	opts Options
	res  *Section
	st   *store.Store
	// at is the recorded time of the last line the replay took: the time of
	// whatever the next note is about.
	at time.Duration
	// cur is the request in flight, last the one that ended last; reqLine is
	// a request line the replay took before the reflector noted the request
	// (it reads a watch's line ahead for its timeout).
	cur, last *Request
	reqLine   *trace.Line
	requests  *capped[*Request]
	relists   *capped[*Relist]
	buckets   *buckets
	// replaced is the cache a relist in progress replaces: the labels of its missed deletes.
	replaced []*store.Object
	backoff  *Marker
	// backoffRecorded is set once the backoff has the recorded decision's time.
	backoffRecorded bool
	markers         map[MarkerKind]int
	alerts          AlertSection
	// recentChanges are the last MODIFIED events whose changes the trace recorded.
	recentChanges capped[ChangedEvent]
}

func newCollector(opts Options, i int, h trace.ResourceHeader, st *store.Store) *collector {
	return &collector{opts: opts, st: st,
		res:           &Section{Index: i, Header: h, Name: h.Resource.String(), BookmarkAt: -1, MarkersDropped: map[MarkerKind]int{}},
		markers:       map[MarkerKind]int{},
		requests:      newCapped[*Request](opts.MaxRequests),
		relists:       newCapped[*Relist](opts.MaxRelists),
		buckets:       newBuckets(opts.MaxBuckets),
		recentChanges: capped[ChangedEvent]{tails: opts.MaxRecentChanges},
	}
}

// line takes the recorded time of the next line the replay serves the
// reflector, the recorded number of a request, and the recording's alerts.
func (c *collector) line(l *trace.Line) {
	c.at = time.Duration(l.At)
	switch l.K {
	case trace.KindRequest:
		if c.cur != nil && !c.cur.recorded {
			c.attach(c.cur, l)
		} else {
			c.reqLine = l
		}
	case trace.KindEnd:
		// The end line of a watch the reflector ended at its ERROR event
		// comes after: the request ends where the trace says.
		for _, r := range []*Request{c.cur, c.last} {
			if r != nil && r.recorded && r.ID == l.ID && !r.ended {
				r.End, r.ended, r.Error = c.at, true, l.Error
				c.markGone(r)
			}
		}
	case trace.KindNote:
		switch reflector.Reason(l.Reason) {
		case reflector.ReasonAlert:
			c.alert(alertRule(l), strings.TrimPrefix(l.Detail, "--fail-on "))
		case reflector.ReasonBackoff:
			// The replay takes the recorded backoff after deciding its own:
			// the span starts when the recording decided it.
			if b := c.backoff; b != nil && !c.backoffRecorded {
				b.At, b.End, c.backoffRecorded = c.at, c.at, true
			}
		}
	}
}

// markGone marks a 410 at the request's end, once its end is where the trace puts it.
func (c *collector) markGone(r *Request) {
	if r.goneMark {
		r.goneMark = false
		c.mark(Marker{Kind: MarkGone, At: r.End, End: r.End, Request: r.ID, Detail: fmt.Sprintf("%s #%d: %s", r.Kind.Noun(), r.ID, describeEnd(r))})
	}
}

// alert keeps a recorded alert in the resource's own section: the
// resources' collectors run on their reflectors' goroutines.
func (c *collector) alert(rule, detail string) {
	al := &c.alerts
	al.Evaluated = true
	al.Total++
	if len(al.Tripped) < c.opts.MaxAlerts {
		al.Tripped = append(al.Tripped, Alert{At: c.at, Resource: c.res.Name, Rule: rule, Detail: detail})
	}
}

// mergeAlerts gathers the resources' alerts in time order, the first MaxAlerts of them.
func mergeAlerts(rep *Report, cs []*collector, maxAlerts int) {
	al := &rep.Alerts
	for _, c := range cs {
		al.Evaluated = al.Evaluated || c.alerts.Evaluated
		al.Total += c.alerts.Total
		al.Tripped = append(al.Tripped, c.alerts.Tripped...)
	}
	sort.SliceStable(al.Tripped, func(i, j int) bool { return al.Tripped[i].At < al.Tripped[j].At })
	al.Tripped = al.Tripped[:min(len(al.Tripped), maxAlerts)]
}

// attach gives r its recorded number and start: from here it is one of the trace's requests.
func (c *collector) attach(r *Request, l *trace.Line) {
	r.ID, r.Start, r.End, r.recorded = l.ID, time.Duration(l.At), time.Duration(l.At), true
	c.closeBackoff(r.Start)
	c.requests.add(r)
}

// bookmark lays out a progress bookmark (a streaming list's end is the end
// of its list's band).
func (c *collector) bookmark(b *reflector.Bookmark) {
	if b == nil || b.ListEnd {
		return
	}
	c.res.BookmarkAt = c.at
	c.buckets.at(c.at).bookmark(c.at)
	if r := c.cur; r != nil {
		r.Bookmarks++
	}
}

// current is the request a list or a page belongs to: the one in flight,
// else the one that ended last (a LIST's page is applied after its end).
func (c *collector) current() *Request {
	if c.cur != nil {
		return c.cur
	}
	return c.last
}

// note lays out one note of the replay.
func (c *collector) note(n reflector.Note) {
	switch n.Kind {
	case reflector.NoteListBegan:
		c.beginList(c.current(), n.List)
	case reflector.NoteBookmark:
		c.bookmark(n.Bookmark)
	case reflector.NoteRequestStarted:
		c.started(n.Request)
	case reflector.NoteRequestEnded:
		c.ended(n.Request)
	case reflector.NoteApplied:
		c.applied(n.Event, n.Applied, n.Delivery)
		c.changed(n)
	case reflector.NoteDecision:
		c.decision(n.Decision)
	}
}

func (c *collector) started(info *reflector.RequestInfo) {
	r := &Request{Verb: info.Verb, Kind: KindListPage, Opts: info.Opts, Class: EndOpen, replayed: info.ID}
	if r.Verb == reflector.VerbWatch {
		r.Kind = KindWatch
		if r.Opts.SendInitialEvents {
			r.Kind = KindStreamingList
		}
	}
	if r.Kind == KindStreamingList || (r.Verb == reflector.VerbList && r.Opts.Continue == "") {
		c.keepReplaced()
	}
	c.cur = r
	if c.reqLine != nil {
		c.attach(r, c.reqLine)
	}
	c.reqLine = nil
}

// keepReplaced keeps the cache a list that starts now may replace, for the
// labels of its missed deletes: the store serves it until the list is
// installed, and a one-page relist is installed before its next note (an
// observed one before its request's end is noted).
func (c *collector) keepReplaced() {
	if c.st.Ready() {
		c.replaced = c.st.List()
	}
}

func (c *collector) ended(info *reflector.RequestInfo) {
	r := c.cur
	c.cur = nil
	if r == nil || !r.recorded {
		return // the request the replay's reflector makes after the trace's last
	}
	c.last = r
	end := info.End
	r.Items, r.Events = info.Items, info.Events
	if !r.ended && end.Reason == reflector.EndCanceled && end.Err == nil && end.Status == nil && c.reqLine != nil {
		// A bare cancel with no end line while the next request's line is
		// taken: an observed stream follows one request at a time, and its
		// client started the next one there.
		r.End, r.ended = c.at, true
	}
	if !r.ended && end.Status == nil {
		return // the trace stops inside it: it has no end
	}
	if !r.ended {
		// Ended at an ERROR event: its end line, if any, comes later.
		r.End = c.at
	}
	r.Reason = end.Reason
	// The recorded error, when the end line has one: the replay's own
	// cancel of a stopped run says "end of trace".
	if r.Error == "" && end.Err != nil && end.Reason != reflector.EndStopped && end.Reason != reflector.EndCanceled {
		r.Error = end.Err.Error()
	}
	st := end.Status
	if st != nil {
		r.Code, r.StatusReason, r.Message = st.Code, string(st.Reason), st.Message
	}
	r.Class = classify(r.Reason, st)
	if r.Class == EndGone {
		r.goneMark = true
		if r.ended {
			c.markGone(r)
		}
	}
	if rl := c.openRelist(); rl != nil && rl.FirstRequest <= r.ID && (r.Kind == KindStreamingList || (r.Verb == reflector.VerbList && end.Reason == reflector.EndClosed && r.Opts.Continue != "")) {
		rl.LastRequest, rl.End = r.ID, c.at
	}
}

// openRelist is the relist in progress: the last one begun, while unfinished.
func (c *collector) openRelist() *Relist {
	if rl, ok := c.relists.last(); ok && rl.Outcome == RelistUnfinished {
		return rl
	}
	return nil
}

// listNumber is the number of the list in progress or last begun.
func (c *collector) listNumber() int {
	if rl, ok := c.relists.last(); ok {
		return rl.Number
	}
	return 1
}

func (c *collector) applied(ev reflector.EventType, res *store.Result, d reflector.Delivery) {
	b := c.buckets.at(c.at)
	if d.Known() {
		// As the replay's Ledger counts it (reflector.Stats Lag).
		b.Lag[reflector.LagBucketOf(d.Lag)]++
	}
	switch ev {
	case reflector.EventAdded:
		b.Added++
	case reflector.EventModified:
		b.Modified++
	case reflector.EventDeleted:
		b.Deleted++
	}
	if res != nil && (res.Outcome == store.Added || res.Outcome == store.Deleted) {
		c.sampleObjects()
	}
}

// probe puts the delivery probe's samples (those the replay kept) in the
// buckets of the resource that watches its Lease, each at the time its
// update was sent, and takes its figures over the whole run. It runs after
// the replay, whose samples came from the Lease's reflector goroutine.
func (c *collector) probe(start time.Time, st *probe.Stats) {
	for _, x := range st.Samples() {
		at := max(x.At.Sub(start), 0)
		c.buckets.at(at).probe(at, x.Event)
	}
	figures := st.Figures(time.Time{})
	c.res.Probe = &figures
}

func (c *collector) sampleObjects() { c.buckets.at(c.at).objects(c.st.Len()) }

func (c *collector) decision(d *reflector.Decision) {
	switch d.Reason {
	case reflector.ReasonBackoff:
		c.closeBackoff(c.at)
		c.backoff, c.backoffRecorded = &Marker{Kind: MarkBackoff, At: c.at, End: c.at, Detail: d.String()}, false
	case reflector.ReasonRVBackwards:
		var id int64
		if c.cur != nil {
			id = c.cur.ID
		}
		c.mark(Marker{Kind: MarkRVBackwards, At: c.at, End: c.at, Request: id,
			Detail: fmt.Sprintf("resourceVersion went backwards from %s to %s in watch #%d", d.Cursor, d.ResourceVersion, id)})
	case reflector.ReasonListComplete:
		c.completeList(d)
	case reflector.ReasonClientGone: // the proxy forgot the stream's objects: its store is empty
		c.sampleObjects()
	case reflector.ReasonRelistDiff:
		c.relistDiff(d)
	}
}

// beginList starts a full list at request r, as the ledger noted it: a
// relist gets its row, and the relist left unfinished before it is restarted.
func (c *collector) beginList(r *Request, b *reflector.ListBegan) {
	if b == nil {
		return
	}
	if rl := c.openRelist(); rl != nil {
		rl.Outcome = RelistRestarted
		if r != nil {
			rl.End = r.Start
		}
	}
	if r == nil {
		return
	}
	if b.Relist() {
		rl := &Relist{Number: int(b.Number), FirstRequest: r.ID, LastRequest: r.ID, Start: r.Start, Outcome: RelistUnfinished, End: c.at}
		// The request whose end led to it is one of the last kept (the
		// numbers grow): looked up newest first, as far as its number.
		for t := range c.requests.backward() {
			if t.replayed == b.After {
				rl.After = fmt.Sprintf("%s #%d: %s", t.Kind.Noun(), t.ID, describeEnd(t))
			}
			if t.replayed <= b.After {
				break
			}
		}
		c.relists.add(rl)
	}
}

// completeList lays out a list's completion (the decision says whether a
// relist): the object count, the streaming list's end, the relist's outcome.
func (c *collector) completeList(d *reflector.Decision) {
	c.sampleObjects()
	if r := c.cur; r != nil && r.Kind == KindStreamingList {
		r.InitialEventsEnd = c.at
	}
	if rl := c.openRelist(); rl != nil {
		rl.End = c.at
		rl.Outcome = RelistCompleted
		if !d.Relist {
			rl.Outcome = RelistFirstComplete // the lists before it never completed
		}
	}
	if !d.Relist {
		c.replaced = nil
	}
}

func (c *collector) relistDiff(dec *reflector.Decision) {
	d := dec.Diff
	rl, _ := c.relists.last()
	if rl != nil && d != nil {
		rl.Diff = c.capDiff(d, c.replaced)
	}
	if d != nil {
		c.mark(Marker{Kind: MarkRelist, At: c.at, End: c.at, Relist: c.listNumber(), Detail: fmt.Sprintf("relist complete: %s at resourceVersion %s (was %d); missed %s, %s, %s, %s",
			format.PluralUngrouped(d.After, "object"), d.ResourceVersion, d.Before, format.PluralUngrouped(len(d.Deleted), "delete"),
			format.PluralUngrouped(len(d.Recreated), "recreate"), format.PluralUngrouped(len(d.Updated), "update"), format.PluralUngrouped(len(d.Added), "add"))})
	}
	c.replaced = nil
}

func (c *collector) closeBackoff(at time.Duration) {
	if c.backoff == nil {
		return
	}
	c.backoff.End = max(at, c.backoff.At)
	c.mark(*c.backoff)
	c.backoff = nil
}

func (c *collector) mark(m Marker) {
	if c.markers[m.Kind] >= c.opts.MaxMarkers {
		c.res.MarkersDropped[m.Kind]++
		return
	}
	c.markers[m.Kind]++
	c.res.Markers = append(c.res.Markers, m)
}

// stop takes the replay's end state: its counters, cursor and last bookmark.
func (c *collector) stop(s reflector.Stats) {
	if c.last != nil {
		c.markGone(c.last) // ended at a 410 ERROR event, without an end line
	}
	res := c.res
	res.Counters = s.Counters
	res.Lag = s.Lag.Counts
	res.ResourceVersion = s.ResourceVersion
	res.BookmarkRV = s.BookmarkRV
	if s.BookmarkRV == "" {
		res.BookmarkAt = -1
	}
	res.Objects = c.st.Len()
	res.RequestsTotal, res.RelistsTotal = int(c.requests.n), int(s.Counters.Relists)
	res.Requests, res.RequestsGap = c.requests.all()
	res.Relists, res.RelistsGap = c.relists.all()
	res.Buckets, res.BucketWidth = c.buckets.b, c.buckets.width
	res.pendingBackoff = c.backoff
	res.openRelist = c.openRelist()
	res.RecentChanges, _ = c.recentChanges.all()
	res.RecentChangesTotal = c.recentChanges.n
}

// finish closes what the trace left open at its end.
func (res *Section) finish(end time.Duration) {
	for _, r := range res.Requests {
		// One that ended at its ERROR event keeps that end: only its end line is cut off.
		if !r.ended && r.Class == EndOpen {
			r.End = end
		}
	}
	if b := res.pendingBackoff; b != nil {
		b.End = max(end, b.At)
		res.Markers = append(res.Markers, *b)
	}
	if !res.BackoffsKnown {
		// Without recorded decisions the page says backoffs are unknown, and draws none.
		kept := res.Markers[:0]
		for _, m := range res.Markers {
			if m.Kind != MarkBackoff {
				kept = append(kept, m)
			}
		}
		res.Markers = kept
		delete(res.MarkersDropped, MarkBackoff)
	}
	if rl := res.openRelist; rl != nil {
		rl.End = end
	}
	res.pendingBackoff, res.openRelist = nil, nil
}

// capDiff keeps the first entries of each kind of d, with the objects'
// labels: the listed object's from the cache, a missed delete's from replaced.
func (c *collector) capDiff(d *store.RelistDiff, replaced []*store.Object) *Diff {
	n := c.opts.MaxDiffEntries
	listed := func(es []store.DiffEntry) []DiffObject {
		out := make([]DiffObject, 0, min(len(es), n))
		for _, e := range es[:min(len(es), n)] {
			o := DiffObject{DiffEntry: e}
			if obj, ok := c.st.Get(e.Ref); ok {
				o.Labels = obj.Labels.Map()
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
			deleted[i].Labels = obj.Labels.Map()
			delete(want, obj.Ref())
		}
	}
	return &Diff{ResourceVersion: d.ResourceVersion, Before: d.Before, After: d.After,
		Deleted: deleted, Recreated: listed(d.Recreated), Updated: listed(d.Updated), Added: listed(d.Added),
		NDeleted: len(d.Deleted), NRecreated: len(d.Recreated), NUpdated: len(d.Updated), NAdded: len(d.Added), Unchanged: d.Unchanged}
}

// classify is the colour of an end: its reason, or 410 Gone.
func classify(reason reflector.EndReason, st *metav1.Status) EndClass {
	switch {
	case reflector.IsGone(st):
		return EndGone
	case reason == reflector.EndClosed, reason == reflector.EndTimeout, reason == reflector.EndCanceled, reason == reflector.EndStopped, reason == reflector.EndError:
		return EndClass(reason) // the classes of the end reasons are named as they are
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

// capped keeps the first heads and the last tails values added, and counts them all.
type capped[T any] struct {
	head, tail   []T // tail: a ring once full
	next         int
	heads, tails int
	n            int64
}

// newCapped keeps the first and the last max/2.
func newCapped[T any](max int) *capped[T] { return &capped[T]{heads: max / 2, tails: max / 2} }

func (c *capped[T]) add(v T) {
	c.n++
	switch {
	case len(c.head) < c.heads:
		c.head = append(c.head, v)
	case len(c.tail) < c.tails:
		c.tail = append(c.tail, v)
	case c.tails > 0:
		c.tail[c.next] = v
		c.next = (c.next + 1) % c.tails
	}
}

// last is the value added last.
func (c *capped[T]) last() (T, bool) {
	for v := range c.backward() {
		return v, true
	}
	var zero T
	return zero, false
}

// backward yields the values kept, the last added first.
func (c *capped[T]) backward() iter.Seq[T] {
	return func(yield func(T) bool) {
		for i := range len(c.tail) {
			if !yield(c.tail[(c.next-1-i+len(c.tail))%len(c.tail)]) {
				return
			}
		}
		for _, v := range slices.Backward(c.head) {
			if !yield(v) {
				return
			}
		}
	}
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

// probe counts a probe sample sent at at, its write-to-event time event.
func (b *Bucket) probe(at, event time.Duration) {
	if b.ProbeN == 0 || event < b.ProbeMin {
		b.ProbeMin = event
	}
	if b.ProbeN == 0 || event > b.ProbeMax {
		b.ProbeMax, b.ProbeAt = event, at
	}
	b.ProbeN++
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
	for i, v := range n.Lag {
		b.Lag[i] += v
	}
	if n.ProbeN > 0 {
		if b.ProbeN == 0 {
			b.ProbeMin, b.ProbeMax, b.ProbeAt = n.ProbeMin, n.ProbeMax, n.ProbeAt
		}
		b.ProbeMin = min(b.ProbeMin, n.ProbeMin)
		if n.ProbeMax > b.ProbeMax {
			b.ProbeMax, b.ProbeAt = n.ProbeMax, n.ProbeAt
		}
		b.ProbeN += n.ProbeN
	}
	if n.HasObjects { // its range, then its last value
		b.objects(n.ObjectsMin)
		b.objects(n.ObjectsMax)
		b.objects(n.ObjectsLast)
	}
}

// alertRule is the rule an alert note names: its state in a trace written
// by hand, else the words before " tripped on " in its detail.
func alertRule(l *trace.Line) string {
	if !slices.ContainsFunc(reflector.States(), func(s reflector.State) bool { return s.String() == l.State }) {
		return l.State
	}
	rule, _, _ := strings.Cut(strings.TrimPrefix(l.Detail, "--fail-on "), " tripped on ")
	return rule
}
