// Package observed rebuilds what a client's reflector did from the traffic it
// exchanged with the API server: its requests with their options as sent,
// the pages and events it received, the 410s it got, the lists and relists it
// made (and each relist's diff), its bookmarks, and the cache it holds,
// rebuilt in a store.Writer from what it received. Nothing here decides
// anything or sends a request: a Stream only follows.
//
// The observing proxy (internal/proxy) feeds a Stream from responses it
// forwards; the replay of an observed trace feeds one from the trace's
// lines. Either way the Stream speaks the reflector's vocabulary (Notes,
// Stats, Counters), so the dashboard, the line output, the metrics and the
// trace recorder take it as they take a reflector.
package observed

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// maxRequests is how many finished requests Stats keeps, as a reflector does.
const maxRequests = 50

// Client is who opened a stream: the User-Agent it sent and the address of
// the connection its first request came on.
type Client struct {
	UserAgent  string
	RemoteAddr string
}

// Recording receives everything a Stream observes, in order, for a trace.
// Calls for one Stream never overlap.
type Recording interface {
	Request(id int64, verb reflector.Verb, opts reflector.RequestOptions)
	Page(id int64, page *reflector.Page)
	Event(id int64, ev reflector.WatchEvent)
	End(id int64, end *reflector.RequestEnd)
}

// Stream is one client reflector's view of one resource (in one namespace,
// with one pair of selectors), rebuilt from its traffic. It is safe for
// concurrent use; the requests of one Stream must be fed one after another
// (Begin, then the request's Page or Events, then End), as a reflector makes
// them.
type Stream struct {
	// ID numbers the streams of a proxy (or a replay) from 1.
	ID     int
	Client Client
	Target reflector.Target

	now    func() time.Time
	st     *store.Store
	writer *store.Writer

	mu       sync.Mutex
	stats    reflector.Stats
	seq      uint64
	nextID   int64
	listing  bool // a complete list is being received (pages or a streaming list)
	listed   bool // a complete list was installed
	streamed bool // the list in progress is a streaming list
	wire     reflector.Wire
	onNote   []func(reflector.Note)
	rec      Recording
	closed   bool
	pending  []reflector.Note // notes made under mu, handed out by deliver

	deliverMu sync.Mutex // serializes deliveries, so notes keep their order
}

// NewStream starts following one client reflector. now is the clock of its
// notes and stats (time.Now live; a replay's virtual clock).
func NewStream(id int, client Client, target reflector.Target, now func() time.Time) *Stream {
	if now == nil {
		now = time.Now
	}
	st, w := store.New()
	s := &Stream{ID: id, Client: client, Target: target, now: now, st: st, writer: w}
	s.stats.Started = now()
	s.stats.StateSince = s.stats.Started
	return s
}

// OnNote adds a listener of the stream's notes; call it before the stream is
// fed. Listeners are called in order, right after each change (not under
// the stream's lock: they may read it), and must not block.
func (s *Stream) OnNote(f func(reflector.Note)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onNote = append(s.onNote, f)
}

// Record sends everything observed from now on to rec; call it before the
// stream is fed.
func (s *Stream) Record(rec Recording) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec = rec
}

// Store is the cache the client holds, as rebuilt from what it received.
func (s *Stream) Store() *store.Store { return s.st }

// Stats is a snapshot in the reflector's terms.
func (s *Stream) Stats() reflector.Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.stats
	if out.Current != nil {
		c := *out.Current
		out.Current = &c
	}
	out.Requests = append([]reflector.RequestInfo(nil), s.stats.Requests...)
	return out
}

// Counters are the stream's running totals.
func (s *Stream) Counters() reflector.Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats.Counters
}

// Wire is the encoding of the last response the client received ("" before one).
func (s *Stream) Wire() reflector.Wire {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wire
}

// SetWire records the encoding of a response the client received.
func (s *Stream) SetWire(w reflector.Wire) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wire = w
}

// Close ends the stream: its store gets no more changes.
func (s *Stream) Close() {
	defer s.deliver()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if s.stats.Current != nil {
		s.finishLocked(&reflector.RequestEnd{Reason: reflector.EndCanceled})
	}
	s.setStateLocked(reflector.StateStopped)
	s.decideLocked(reflector.Decision{State: reflector.StateStopped, Reason: reflector.ReasonStopped})
	s.writer.Close()
}

// Request is one observed LIST or WATCH of a Stream.
type Request struct {
	s    *Stream
	info *reflector.RequestInfo
	// complete: its page was a list's last; rv is the list's resourceVersion
	complete bool
	rv       string
}

// Begin records the start of a request with its options as sent, and
// returns it. A LIST without a continue token, or a watch with
// sendInitialEvents, starts a complete list (a relist after the first).
func (s *Stream) Begin(verb reflector.Verb, opts reflector.RequestOptions) *Request {
	return s.BeginAt(verb, opts, time.Time{})
}

// BeginAt is Begin for a request the client sent at started (zero: now),
// when it is fed to the stream later (once its answer came).
func (s *Stream) BeginAt(verb reflector.Verb, opts reflector.RequestOptions, started time.Time) *Request {
	defer s.deliver()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stats.Current != nil {
		// The client started another request before we saw the last one end.
		s.finishLocked(&reflector.RequestEnd{Reason: reflector.EndCanceled})
	}
	s.nextID++
	now := started
	if now.IsZero() {
		now = s.now()
	}
	info := &reflector.RequestInfo{ID: s.nextID, Verb: verb, Opts: opts, Started: now}
	s.stats.Current = info
	startsList := (verb == reflector.VerbList && opts.Continue == "") || (verb == reflector.VerbWatch && opts.SendInitialEvents)
	if verb == reflector.VerbList && opts.Continue != "" && !s.listing {
		startsList = true // we missed its first page: count it from here
	}
	if verb == reflector.VerbWatch {
		s.stats.Counters.Watches++
	}
	if s.rec != nil {
		s.rec.Request(info.ID, verb, opts)
	}
	state := reflector.StateWatching
	if startsList {
		s.stats.Counters.Lists++
		relist := s.listed || s.stats.Counters.Lists > 1
		if relist {
			s.stats.Counters.Relists++
		}
		s.listing, s.streamed = true, verb == reflector.VerbWatch
		state = reflector.StateListing
		switch {
		case s.streamed:
			state = reflector.StateStreamingList
		case relist:
			state = reflector.StateRelisting
		}
	} else if s.listing {
		state = s.stats.State
	}
	s.setStateLocked(state)
	s.noteLocked(reflector.Note{Kind: reflector.NoteRequestStarted, RequestID: info.ID, Request: copyInfo(info)})
	if startsList && s.stats.Counters.Lists == 1 {
		m := reflector.ListMethod{Stream: s.streamed, PageSize: opts.Limit}
		s.decideLocked(reflector.Decision{State: state, Reason: reflector.ReasonInitialList, List: &m})
	}
	if startsList {
		// Readers keep the old snapshot until the list completes.
		_, _ = s.writer.ApplyEvent(store.Event{Type: store.Init})
	}
	return &Request{s: s, info: info}
}

// ID is the request's number in its stream, from 1.
func (r *Request) ID() int64 { return r.info.ID }

// Page records a LIST response the client received whole.
func (r *Request) Page(page *reflector.Page) {
	s := r.s
	defer s.deliver()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec != nil {
		s.rec.Page(r.info.ID, page)
	}
	now := s.now()
	s.stats.LastReceived = now
	s.stats.Counters.ListPages++
	r.info.Items += len(page.Items)
	if !s.listing {
		// A continue page whose list we did not see start: take it as a list.
		s.listing = true
		_, _ = s.writer.ApplyEvent(store.Event{Type: store.Init})
	}
	for _, it := range page.Items {
		if it.Object == nil {
			continue
		}
		_, _ = s.writer.ApplyEvent(store.Event{Type: store.InitApply, Object: it.Object})
	}
	if page.Continue == "" {
		// The list is complete once its response is: End installs it, after
		// the request's end, as a reflector does.
		r.complete, r.rv = true, page.ResourceVersion
	}
}

// completeListLocked installs the list received so far. Caller holds mu.
func (s *Stream) completeListLocked(rv string) {
	res, err := s.writer.ApplyEvent(store.Event{Type: store.InitDone, ResourceVersion: rv})
	if err != nil {
		return
	}
	wasRelist := s.listed
	s.listed, s.listing, s.streamed = true, false, false
	s.stats.ResourceVersion = rv
	if wasRelist {
		s.stats.LastRelistDiff = res.Diff
	} else {
		s.stats.Synced = s.now()
	}
	n := 0
	if res.Diff != nil {
		n = res.Diff.After
	}
	s.setStateLocked(reflector.StateWatching)
	s.decideLocked(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: rv, Objects: n})
	if wasRelist && res.Diff != nil {
		s.decideLocked(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonRelistDiff, ResourceVersion: rv, Diff: res.Diff})
	}
}

// Event records one watch event the client received.
func (r *Request) Event(ev reflector.WatchEvent) {
	s := r.s
	defer s.deliver()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec != nil {
		s.rec.Event(r.info.ID, ev)
	}
	now := s.now()
	if ev.Type != reflector.EventError {
		s.stats.LastReceived = now
	}
	r.info.Events++
	switch ev.Type {
	case reflector.EventError:
		// The watch ends with it; End says how.
		return
	case reflector.EventBookmark:
		if ev.Item.Object == nil {
			return
		}
		rv := ev.Item.Object.ResourceVersion
		s.stats.Counters.Bookmarks++
		s.stats.BookmarkRV, s.stats.BookmarkAt = rv, now
		if s.listing && s.streamed && ev.InitialEventsEnd {
			s.completeListLocked(rv)
			return
		}
		_, _ = s.writer.ApplyEvent(store.Event{Type: store.Bookmark, ResourceVersion: rv})
		s.advanceLocked(rv)
		return
	}
	if ev.Item.Object == nil {
		return
	}
	if s.listing && s.streamed && ev.Type == reflector.EventAdded {
		// A streaming list's initial events fill the list, not the live cache.
		_, _ = s.writer.ApplyEvent(store.Event{Type: store.InitApply, Object: ev.Item.Object})
		return
	}
	typ := store.Apply
	if ev.Type == reflector.EventDeleted {
		typ = store.Delete
	}
	res, err := s.writer.ApplyEvent(store.Event{Type: typ, Object: ev.Item.Object})
	if err != nil {
		return
	}
	c := &s.stats.Counters
	switch ev.Type {
	case reflector.EventAdded:
		c.Added++
	case reflector.EventModified:
		c.Modified++
	case reflector.EventDeleted:
		c.Deleted++
	}
	if res.Outcome.UIDMismatch() {
		c.UIDMismatches++
	}
	if res.Outcome == store.Duplicate {
		c.Duplicates++
	}
	s.noteLocked(reflector.Note{Kind: reflector.NoteApplied, RequestID: r.info.ID, Event: ev.Type, Applied: &res})
	s.advanceLocked(ev.Item.Object.ResourceVersion)
}

// advanceLocked moves the cursor, noting a move backwards. Caller holds mu.
func (s *Stream) advanceLocked(rv string) {
	if rv == "" {
		return
	}
	last := s.stats.ResourceVersion
	if last != "" {
		if cmp, err := resourceversion.CompareResourceVersion(rv, last); err == nil && cmp < 0 {
			s.stats.Counters.ResourceVersionBackwards++
			s.decideLocked(reflector.Decision{State: s.stats.State, Reason: reflector.ReasonRVBackwards, ResourceVersion: rv, Cursor: last})
			return
		}
	}
	s.stats.ResourceVersion = rv
}

// End records how the request ended: closed, error (with the server's
// Status, or the error), or canceled by the client.
func (r *Request) End(end *reflector.RequestEnd) {
	s := r.s
	defer s.deliver()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stats.Current != r.info {
		return // already ended (the client moved on before we saw this end)
	}
	s.finishLocked(end)
	if r.complete && end.Reason == reflector.EndClosed {
		s.completeListLocked(r.rv)
	}
}

// finishLocked ends the current request and takes the decisions its end
// implies. Caller holds mu.
func (s *Stream) finishLocked(end *reflector.RequestEnd) {
	info := s.stats.Current
	s.stats.Current = nil
	now := s.now()
	info.Duration = now.Sub(info.Started)
	info.End = end
	if s.rec != nil {
		s.rec.End(info.ID, end)
	}
	s.stats.Requests = append(s.stats.Requests, *info)
	if len(s.stats.Requests) > maxRequests {
		s.stats.Requests = append(s.stats.Requests[:0], s.stats.Requests[len(s.stats.Requests)-maxRequests:]...)
	}
	s.noteLocked(reflector.Note{Kind: reflector.NoteRequestEnded, RequestID: info.ID, Request: copyInfo(info)})
	if end.Reason == reflector.EndError && end.Status == nil && end.Err != nil {
		s.stats.LastError = end.Err.Error()
	}
	if end.Status != nil {
		s.stats.LastError = end.Cause()
	}
	watch := info.Verb == reflector.VerbWatch
	switch {
	case end.IsGone():
		s.stats.Counters.Gone++
		s.stats.LastGone = now
		s.listing = false
		reason, state := reflector.ReasonGone, reflector.StateRelisting
		if info.Verb == reflector.VerbList && info.Opts.Continue != "" {
			reason, state = reflector.ReasonContinueGone, reflector.StateListing
		}
		s.setStateLocked(state)
		s.decideLocked(reflector.Decision{State: state, Reason: reason, ResourceVersion: info.Opts.ResourceVersion, Code: end.Code(), Cause: end.Cause()})
	case end.IsTooLargeResourceVersion():
		s.stats.Counters.TooLargeResourceVersion++
		s.listing = false
		s.setStateLocked(reflector.StateRelisting)
		s.decideLocked(reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonTooLargeRV, ResourceVersion: info.Opts.ResourceVersion, Code: end.Code()})
	case end.Reason == reflector.EndError && watch:
		s.stats.Counters.WatchErrors++
		streaming := s.listing && s.streamed
		if streaming {
			s.listing = false
		}
		s.decideLocked(reflector.Decision{State: s.stats.State, Reason: reflector.ReasonWatchError, ResourceVersion: s.stats.ResourceVersion, Code: end.Code(), Cause: end.Cause(), Streaming: streaming})
	case end.Reason == reflector.EndError:
		s.listing = false
		s.decideLocked(reflector.Decision{State: s.stats.State, Reason: reflector.ReasonRequestError, Code: end.Code(), Cause: end.Cause()})
	case watch && end.Reason == reflector.EndClosed && !s.listing:
		s.decideLocked(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonWatchClosed, ResourceVersion: s.stats.ResourceVersion,
			AtOnce: info.Events == 0 && info.Duration < time.Second})
	case watch && s.listing && s.streamed:
		s.listing = false // a streaming list that ended before its end bookmark
	}
}

// setStateLocked changes the state. Caller holds mu.
func (s *Stream) setStateLocked(st reflector.State) {
	if s.stats.State != st {
		s.stats.State = st
		s.stats.StateSince = s.now()
	}
}

// decideLocked notes a decision the client's reflector made (as its traffic
// shows it). Caller holds mu.
func (s *Stream) decideLocked(d reflector.Decision) {
	s.noteLocked(reflector.Note{Kind: reflector.NoteDecision, RequestID: s.lastRequestLocked(), Decision: &d})
}

func (s *Stream) lastRequestLocked() int64 { return s.nextID }

// noteLocked numbers a note and queues it for deliver. Caller holds mu.
func (s *Stream) noteLocked(n reflector.Note) {
	s.seq++
	n.Seq = s.seq
	n.At = s.now()
	n.State = s.stats.State
	s.pending = append(s.pending, n)
}

// deliver hands the queued notes to the listeners, in order, without
// holding mu: a listener may read the stream (the metrics read its
// Counters). Called after every change, once mu is released.
func (s *Stream) deliver() {
	s.deliverMu.Lock()
	defer s.deliverMu.Unlock()
	s.mu.Lock()
	notes, listeners := s.pending, s.onNote
	s.pending = nil
	s.mu.Unlock()
	for _, n := range notes {
		for _, f := range listeners {
			f(n)
		}
	}
}

func copyInfo(info *reflector.RequestInfo) *reflector.RequestInfo {
	c := *info
	return &c
}
