package trace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/jsonscan"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// FlushInterval is how often a Recorder flushes its buffer to the file.
const FlushInterval = time.Second

// Recorder writes a trace of one or more resources, each watched by its own
// reflector: wrap resource i's Source with Source(i, src) so the trace sees
// exactly what the reflector sees, and pass Notes(i) as (part of) its
// OnNote. A write error is kept (Err) and ends recording; the reflectors
// keep running.
type Recorder struct {
	mu sync.Mutex
	// seg is the file lines go to; with a Rotation, a segment of the trace,
	// and rot says which segment each resource's lines go to.
	seg       *segment
	rot       *rotation
	sources   map[int]*recordingSource // resource i's, for a rotation's lines
	now       func() time.Time
	resMu     sync.RWMutex // guards resources, which an observed trace appends to
	resources []recordedResource
	err       error
	closed    bool
	stop      chan struct{}
	done      chan struct{}
	failed    chan struct{}
	finished  chan struct{} // closed once Close has flushed and closed the files
}

// Create opens path for a new trace (mode 0600, truncating an existing file;
// gzip when the name ends in .gz) and writes the header.
func Create(path string, h Header) (*Recorder, error) {
	seg, err := createSegment(path)
	if err != nil {
		return nil, err
	}
	r, err := newRecorder(seg, h, time.Now)
	if err != nil {
		_ = seg.close()
	}
	return r, err
}

// NewRecorder writes a trace to w (for tests and pipes). As Create's, it
// flushes every FlushInterval on a goroutine of its own until Close, which
// flushes the rest: w is written from that goroutine too.
func NewRecorder(w io.Writer, h Header, now func() time.Time) (*Recorder, error) {
	return newRecorder(newSegment(w, nil, nil, nil), h, now)
}

// recordedResource is how the trace keeps one resource's objects.
type recordedResource struct {
	objects ObjectMode
	redact  bool
	secrets bool // core/v1 secrets
	// keepChangeValues: ResourceHeader.KeepsChangeValues.
	keepChangeValues bool
}

// newRecorder writes the header to seg and starts the periodic flush. The
// lines' at count from h.StartedAt as given, monotonic reading included.
func newRecorder(seg *segment, h Header, now func() time.Time) (*Recorder, error) {
	seg.started = h.StartedAt
	r := &Recorder{
		seg: seg, now: now,
		stop: make(chan struct{}), done: make(chan struct{}), failed: make(chan struct{}), finished: make(chan struct{}),
	}
	for _, rh := range h.Resources {
		r.resources = append(r.resources, newRecordedResource(rh))
	}
	if err := seg.enc.Encode(headerLine(h)); err != nil {
		return nil, fmt.Errorf("writing trace header: %w", err)
	}
	go r.flushLoop()
	return r, nil
}

func newRecordedResource(rh ResourceHeader) recordedResource {
	objects := rh.Objects
	if objects == "" {
		objects = ObjectsMetadata
	}
	return recordedResource{objects: objects, redact: !rh.Options.UnsafeSecrets,
		secrets: rh.Resource.Secrets(), keepChangeValues: rh.KeepsChangeValues()}
}

// headerLine is h as a trace writes it: its times in UTC ("Z"), whatever
// the zone of the run's clock, and each resource's object mode, filled in
// a copy of the caller's resources.
func headerLine(h Header) Header {
	h.K, h.V, h.StartedAt = KindHeader, Version, h.StartedAt.UTC()
	h.Resources = slices.Clone(h.Resources)
	for i := range h.Resources {
		if h.Resources[i].Objects == "" {
			h.Resources[i].Objects = ObjectsMetadata
		}
	}
	return h
}

func (r *Recorder) flushLoop() {
	defer close(r.done)
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			if r.err == nil && !r.closed {
				r.flush()
			}
			r.mu.Unlock()
		}
	}
}

// fail keeps the first error and signals Failed. Caller holds mu.
func (r *Recorder) fail(err error) {
	if r.err != nil {
		return
	}
	r.err = err
	close(r.failed)
}

// Failed is closed at the first write error (disk full, file removed), so a
// live view can say the trace stopped while the reflector keeps running.
func (r *Recorder) Failed() <-chan struct{} { return r.failed }

// Closed is closed once Close has stopped the periodic flush.
func (r *Recorder) Closed() <-chan struct{} { return r.done }

// Err is the first write error, if any: recording stopped there.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Flush writes buffered lines to the file now.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil || r.closed {
		return r.err
	}
	r.flush()
	return r.err
}

// flush writes the buffered lines of every open segment, through gzip's
// buffer too, so a run killed (SIGKILL, a crash) leaves a .gz trace that
// reads up to its last flush. Caller holds mu.
func (r *Recorder) flush() {
	for _, seg := range r.segments() {
		if err := seg.flush(); err != nil {
			r.fail(fmt.Errorf("writing trace: %w", err))
			return
		}
	}
}

// Close flushes and closes the trace. It returns the first write error, if
// any; a second Close returns it once the first has closed the trace.
func (r *Recorder) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		<-r.finished
		return r.Err()
	}
	r.closed = true
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	defer close(r.finished)
	r.finishRotation()
	for _, seg := range r.segments() {
		r.closeSegment(seg)
	}
	return r.err
}

// closeSegment flushes seg, unless recording failed, and closes it. Caller holds mu.
func (r *Recorder) closeSegment(seg *segment) {
	if r.err == nil {
		if err := seg.buf.Flush(); err != nil {
			r.fail(fmt.Errorf("writing trace: %w", err))
		}
	}
	if err := seg.close(); err != nil {
		r.fail(err)
	}
}

// write encodes lines atomically (no other line between them). Caller must not hold mu.
func (r *Recorder) write(lines ...*Line) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil || r.closed || len(lines) == 0 {
		return
	}
	segs := []*segment{r.segmentOf(lines[0].R)}
	if lines[0].K == KindFlowControl {
		// About the run, not one resource: each open segment takes it, so
		// that each replays with the names (a rotation may be under way).
		segs = r.segments()
	}
	for _, seg := range segs {
		at := r.now().Sub(seg.started).Nanoseconds()
		for _, l := range lines {
			l.At = at
			if err := seg.encode(l); err != nil {
				r.fail(fmt.Errorf("writing trace: %w", err))
				return
			}
		}
	}
	// Full when the segment's history past the caches it begins with has
	// reached the size, no rotation under way: a cache larger than the size
	// does not start a segment at every resume.
	if rot := r.rot; rot != nil && rot.prev == nil && r.seg.size()-r.seg.begun >= rot.MaxBytes {
		rot.full = true
	}
}

// encode writes one line. An item or event line whose object is compact JSON
// is written directly: the bytes encoding/json would write, without its
// reflection and its second pass over the object. Caller holds the
// Recorder's mu.
func (s *segment) encode(l *Line) error {
	if !directLine(l) {
		return s.enc.Encode(l)
	}
	p := s.buf.AvailableBuffer()
	p = append(append(append(p, `{"k":"`...), l.K...), `","r":`...)
	p = strconv.AppendInt(p, int64(l.R), 10)
	p = strconv.AppendInt(append(p, `,"at":`...), l.At, 10)
	if l.ID != 0 {
		p = strconv.AppendInt(append(p, `,"id":`...), l.ID, 10)
	}
	if l.Type != "" {
		p = append(append(append(p, `,"type":"`...), l.Type...), '"')
	}
	p = append(p, `,"object":`...)
	_, _ = s.buf.Write(p)
	_, _ = s.buf.Write(l.Object)
	if l.Written != nil && l.Lag != nil {
		p = s.buf.AvailableBuffer()
		p = l.Written.UTC().AppendFormat(append(p, `,"written":"`...), time.RFC3339Nano)
		p = append(append(append(p, `","lag":"`...), time.Duration(*l.Lag).String()...), '"')
		_, _ = s.buf.Write(p)
	}
	_, err := s.buf.WriteString("}\n")
	return err
}

// directLine reports whether encode may write l itself: an item or event
// line with nothing but its id, a known event type, a compact, valid object
// and its delivery (written and lag, both or neither). Every other field
// of Line is checked here (TestObjectLinesAreWrittenByteForByteAsEncodingJSONWritesThem
// sets each in turn), so that none is dropped.
func directLine(l *Line) bool {
	switch {
	case l.K != KindItem && l.K != KindEvent, len(l.Object) == 0, (l.Written == nil) != (l.Lag == nil),
		l.Verb != "", l.Opts != nil, l.Snapshot, l.ContentType != "", l.ResourceVersion != "", l.Continue != "", l.RemainingItemCount != nil, l.Items != nil,
		l.Reason != "", l.Status != nil, l.Error != "", l.Throttle != nil, l.Bytes != 0, l.State != "", l.Detail != "",
		l.Objects != nil, l.Code != 0, l.Cursor != "", l.Diff != nil, l.Write != nil, l.Event != nil, l.Changes != nil,
		l.FlowSchemas != nil, l.PriorityLevels != nil, l.Resource != nil, l.Client != nil, l.Wait != 0, l.Audit != nil,
		l.Fault != "", l.Count != 0:
		return false
	}
	switch reflector.EventType(l.Type) {
	case "", reflector.EventAdded, reflector.EventModified, reflector.EventDeleted, reflector.EventBookmark, reflector.EventError:
	default:
		return false
	}
	var sc jsonscan.Scanner
	sc.Reset(l.Object)
	sc.Skip()
	return sc.End() == nil && sc.Compact()
}

// Notes is the OnNote listener that records resource i's decisions and
// audits (request notes are recorded by the Source wrapper).
func (r *Recorder) Notes(i int) func(reflector.Note) {
	return func(n reflector.Note) {
		var l *Line
		switch {
		case n.Kind == reflector.NoteDecision && n.Decision != nil:
			l = noteLine(n.Decision)
		case n.Kind == reflector.NoteAudit && n.Audit != nil:
			l = auditLine(n.Audit)
		default:
			return
		}
		l.R = i
		if n.Kind == reflector.NoteDecision {
			r.noteFallback(i, n.Decision)
		}
		r.write(l)
	}
}

// AddResource adds a resource to an observed trace (Header.Observed): it
// writes a `resource` line and returns the resource's index, which the
// resource's lines carry from then on. client says whose traffic it is.
func (r *Recorder) AddResource(h ResourceHeader, client Client) (int, error) {
	return r.AddStream(h, client, 0)
}

// AddStream is AddResource for the stream numbered id (from 1; 0 records
// no number): the resource line carries it as its `id`, so a replay numbers
// the stream as the proxy did.
func (r *Recorder) AddStream(h ResourceHeader, client Client, id int) (int, error) {
	if h.Objects == "" {
		h.Objects = ObjectsMetadata
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	if r.closed {
		return 0, errors.New("adding a resource to the trace: the trace is closed")
	}
	r.resMu.Lock()
	i := len(r.resources)
	if i >= MaxResources {
		r.resMu.Unlock()
		return 0, fmt.Errorf("adding a resource to the trace: more than %d resources", MaxResources)
	}
	r.resources = append(r.resources, newRecordedResource(h))
	r.resMu.Unlock()
	raw, err := json.Marshal(h)
	if err != nil {
		return 0, fmt.Errorf("adding a resource to the trace: %w", err)
	}
	l := &Line{K: KindResource, R: i, ID: int64(id), At: r.now().Sub(r.seg.started).Nanoseconds(), Resource: raw}
	if client != (Client{}) {
		l.Client = &client
	}
	if err := r.seg.encode(l); err != nil {
		r.fail(fmt.Errorf("writing trace: %w", err))
		return 0, r.err
	}
	return i, nil
}

// Observed is the recording of resource i of an observed trace: what a
// client requested and received, line by line, as an observing proxy sees
// it (request, then the page or events, then the end). Decisions are
// recorded by Notes(i), as for a reflector.
func (r *Recorder) Observed(i int) *ObservedRecording {
	return &ObservedRecording{rec: r, r: i}
}

// ObservedRecording records one observed resource's requests. Its calls
// must not overlap (one request after another, as a reflector makes them).
type ObservedRecording struct {
	rec *Recorder
	r   int
}

// Request records the start of a request with its options as sent, and the
// Content-Type of its successful response. The line is written when the
// answer came; started is when the request did (zero: then), kept as the
// line's wait, so the replay times the request as the live run did.
func (o *ObservedRecording) Request(id int64, verb reflector.Verb, opts reflector.RequestOptions, contentType string, started time.Time) {
	l := &Line{K: KindRequest, R: o.r, ID: id, Verb: string(verb), Opts: &opts, ContentType: contentType}
	if !started.IsZero() {
		l.Wait = Duration(max(o.rec.now().Sub(started), 0))
	}
	o.rec.write(l)
}

// Page records a LIST response: its items, then its page line.
func (o *ObservedRecording) Page(id int64, page *reflector.Page) {
	o.rec.write(o.rec.pageLines(o.r, id, page)...)
}

// pageLines are the lines of LIST response page, of request id on resource
// res: its items, then its page line (with room for one more line).
func (r *Recorder) pageLines(res int, id int64, page *reflector.Page) []*Line {
	lines := make([]*Line, 0, len(page.Items)+2)
	for _, it := range page.Items {
		lines = append(lines, &Line{K: KindItem, R: res, ID: id, Object: r.object(res, it.Raw)})
	}
	n := len(page.Items)
	return append(lines, &Line{K: KindPage, R: res, ID: id, ResourceVersion: page.ResourceVersion, Continue: page.Continue, RemainingItemCount: page.RemainingItemCount, Items: &n, Bytes: page.Bytes})
}

// Event records one watch event.
func (o *ObservedRecording) Event(id int64, ev reflector.WatchEvent) {
	o.rec.write(o.rec.eventLine(o.r, id, ev))
}

// eventLine is the line of watch event ev, of request id on resource r.
func (r *Recorder) eventLine(res int, id int64, ev reflector.WatchEvent) *Line {
	l := &Line{K: KindEvent, R: res, ID: id, Type: string(ev.Type), Changes: r.changes(res, ev.Changes), Bytes: ev.Bytes}
	if ev.Type == reflector.EventError {
		l.Object, _ = json.Marshal(ev.Status)
	} else {
		l.Object = r.object(res, ev.Item.Raw)
	}
	l.setDelivery(ev.Delivery)
	return l
}

// End records how the request ended.
func (o *ObservedRecording) End(id int64, end *reflector.RequestEnd) {
	o.rec.write(endLine(o.r, id, end))
}

// Probe records one renewal of the delivery probe's Lease, watched as
// resource i: answered at resourceVersion rv, write from sending to the
// answer, event from sending to the watch event (now).
func (r *Recorder) Probe(i int, rv string, write, event time.Duration) {
	w, e := Duration(write), Duration(event)
	r.write(&Line{K: KindProbe, R: i, ResourceVersion: rv, Write: &w, Event: &e})
}

// ProbeLost records a renewal of the delivery probe's Lease, answered at
// resourceVersion rv, whose watch event never came (within the probe's
// bound), under resource i; detail says so. A reader that does not know
// it takes it for a note of the probe's.
func (r *Recorder) ProbeLost(i int, rv, detail string) {
	r.write(&Line{K: KindProbe, R: i, ResourceVersion: rv, Detail: detail})
}

// ProbeNote records a note of the delivery probe's (its Lease created,
// deleted, an update that failed) under resource i.
func (r *Recorder) ProbeNote(i int, detail string) { r.ProbeLost(i, "", detail) }

// FlowControlNames records the names of FlowSchemas and
// PriorityLevelConfigurations (uid → name) that 429s gave by UID alone,
// learned since.
func (r *Recorder) FlowControlNames(flowSchemas, priorityLevels map[string]string) {
	r.write(&Line{K: KindFlowControl, FlowSchemas: flowSchemas, PriorityLevels: priorityLevels})
}

// Source wraps resource i's src so every request and answer is recorded.
func (r *Recorder) Source(i int, src reflector.Source) reflector.Source {
	s := &recordingSource{rec: r, src: src, r: i}
	r.mu.Lock()
	if r.sources == nil {
		r.sources = map[int]*recordingSource{}
	}
	r.sources[i] = s
	r.mu.Unlock()
	return s
}

type recordingSource struct {
	rec    *Recorder
	src    reflector.Source
	r      int
	nextID atomic.Int64
	// streamEnd is the end line of the resource's last streaming list, and
	// fallback its refusal once an auto resource fell back to LIST for
	// good (see Recorder.noteFallback). Guarded by the Recorder's mu.
	streamEnd *Line
	fallback  *streamFallback
}

func (s *recordingSource) id() int64 { return s.nextID.Add(1) }

func (s *recordingSource) List(ctx context.Context, opts reflector.RequestOptions) (*reflector.Page, error) {
	id := s.id()
	s.rec.write(&Line{K: KindRequest, R: s.r, ID: id, Verb: string(reflector.VerbList), Opts: &opts})
	page, err := s.src.List(ctx, opts)
	if err != nil {
		s.rec.write(endLine(s.r, id, withCause(ctx, err)))
		return nil, err
	}
	s.rec.write(append(s.rec.pageLines(s.r, id, page), &Line{K: KindEnd, R: s.r, ID: id, Reason: string(reflector.EndClosed)})...)
	return page, nil
}

func (s *recordingSource) Watch(ctx context.Context, opts reflector.RequestOptions) (reflector.Stream, error) {
	id := s.rec.move(s, opts)
	if id == 0 {
		id = s.id()
		s.rec.write(&Line{K: KindRequest, R: s.r, ID: id, Verb: string(reflector.VerbWatch), Opts: &opts})
	}
	st, err := s.src.Watch(ctx, opts)
	if err != nil {
		s.endWatch(endLine(s.r, id, withCause(ctx, err)), opts.SendInitialEvents)
		return nil, err
	}
	return &recordingStream{src: s, id: id, ctx: ctx, st: st, streaming: opts.SendInitialEvents}, nil
}

// endWatch writes a watch's end line, and keeps it when the watch was a
// streaming list: the reflector may fall back to LIST at it.
func (s *recordingSource) endWatch(l *Line, streaming bool) {
	if streaming {
		s.rec.mu.Lock()
		s.streamEnd = l
		s.rec.mu.Unlock()
	}
	s.rec.write(l)
}

type recordingStream struct {
	src       *recordingSource
	id        int64
	ctx       context.Context
	st        reflector.Stream
	streaming bool // a streaming list (sendInitialEvents)
	ended     bool
}

func (s *recordingStream) Next() (reflector.WatchEvent, error) {
	ev, err := s.st.Next()
	if err != nil {
		s.end(err)
		return ev, err
	}
	s.src.rec.write(s.src.rec.eventLine(s.src.r, s.id, ev))
	if ev.Type == reflector.EventError {
		// The reflector ends the watch at an ERROR event; record the end with its Status now.
		s.end(&reflector.RequestEnd{Reason: reflector.EndError, Status: ev.Status})
	}
	return ev, nil
}

// end writes the stream's end line once. A context canceled by the
// reflector carries its reason (idle timeout, forced relist…) as the cause.
func (s *recordingStream) end(err error) {
	if s.ended {
		return
	}
	s.ended = true
	s.src.endWatch(endLine(s.src.r, s.id, withCause(s.ctx, err)), s.streaming)
}

// withCause prefers the reason the reflector gave for canceling ctx (idle
// timeout, forced relist…) over the transport's view of the same end. A
// context ended from outside (ctrl+c, --once, --duration's deadline, a
// closed stdout) is the run stopping: "stopped", never the reflector's own
// "timeout", nor an error the replay would back off after.
func withCause(ctx context.Context, err error) error {
	switch cause := context.Cause(ctx); {
	case cause == nil:
		return err
	case reflector.StoppedBy(cause):
		return reflector.ErrStopped
	default:
		return cause
	}
}

func (s *recordingStream) Close() {
	s.end(context.Cause(s.ctx))
	s.st.Close()
}

// endLine is the `end` line for a request that ended with err (nil: closed).
func endLine(r int, id int64, err error) *Line {
	l := &Line{K: KindEnd, R: r, ID: id}
	switch {
	case errors.Is(err, reflector.ErrIdleTimeout):
		l.Reason, l.Error = string(reflector.EndTimeout), err.Error()
		return l
	case errors.Is(err, reflector.ErrForcedRelist), errors.Is(err, reflector.ErrInitialEventsTimeout):
		// The reason's own words, which a replay reads back, not those of
		// an end that wraps it (a replay recorded again ends so).
		l.Reason, l.Error = string(reflector.EndCanceled), reflector.ErrInitialEventsTimeout.Error()
		if errors.Is(err, reflector.ErrForcedRelist) {
			l.Error = reflector.ErrForcedRelist.Error()
		}
		return l
	case errors.Is(err, reflector.ErrStopped):
		l.Reason = string(reflector.EndStopped)
		return l
	}
	end := reflector.EndOf(err)
	l.Reason = string(end.Reason)
	if end.Status != nil {
		l.Status = compactStatus(end.Status)
	}
	if end.Err != nil {
		l.Error = end.Err.Error()
	}
	l.Throttle = ThrottleOf(end.Throttle)
	return l
}

func compactStatus(st *metav1.Status) *Status {
	s := &Status{Code: st.Code, Reason: string(st.Reason), Message: st.Message}
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			s.Causes = append(s.Causes, string(c.Type))
		}
	}
	return s
}
