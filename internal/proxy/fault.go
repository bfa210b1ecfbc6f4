package proxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/fault"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// Faults (Options.Faults, kubectl watchcache proxy --fault) are injected
// on the forwarding path of the streams Options.FaultTarget matches: a
// request answered by the proxy itself (410 Gone to a watch's resume, 429
// to a throttled request), or a watch's body read frame by frame (JSON
// objects, or protobuf's length-prefixed frames), each frame passed on
// whole and unchanged, held (delay) or left out (drop-deletes,
// no-bookmarks, stall-initial-list) or sent again later (stale), and the
// body ended early (gone, cut).
// The observer decodes what the client received, so each stream rebuilds
// the client's view, faults included; what each fault did is noted in the
// stream (observed.Stream.Fault) where it happened, among its events.
// Without faults none of this exists: the injector is nil and the
// forwarding is as it was.

// errFaultCut ends a watch body that --fault cut closed mid-stream: the
// forwarding aborts the client's connection, as a broken server
// connection does.
var errFaultCut = errors.New("cut by kubectl watchcache proxy --fault")

// maxFrame bounds one watch frame read by the fault filter (an object is
// at most wire.MaxObjectBytes; a frame adds its envelope).
const maxFrame = 2*wire.MaxObjectBytes + 1<<20

// injector injects the configured faults.
type injector struct {
	target fault.Target
	faults []*active

	mu    sync.Mutex
	open  map[*faultBody]bool // the watch bodies being forwarded
	armed map[*slot]*active   // gone: the slot's next watch is answered 410
	// pagedFrom is when each slot's paged LIST began (its first page's
	// request), and fired each scheduled gone's last firing: a continue
	// token of a list begun before a firing is answered 410, as the server
	// answers a token older than its history.
	pagedFrom map[*slot]time.Time
	fired     map[*active]time.Time
	// watched says the slot's last request was a watch: its next watch is
	// a resume, which an unscheduled gone answers 410. The watch after a
	// LIST starts from the list and is forwarded.
	watched map[*slot]bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

// active is one --fault and its schedule.
type active struct {
	spec  fault.Spec
	sched *fault.Schedule
}

// newInjector schedules specs from start (@p drawn from seed, one stream
// of draws per spec) and starts the firings of gone and cut.
func newInjector(specs []fault.Spec, target fault.Target, seed int64, start time.Time) *injector {
	inj := &injector{target: target, open: map[*faultBody]bool{}, armed: map[*slot]*active{}, pagedFrom: map[*slot]time.Time{}, fired: map[*active]time.Time{}, watched: map[*slot]bool{}, stop: make(chan struct{})}
	for i, s := range specs {
		a := &active{spec: s, sched: fault.NewSchedule(s, start, seed+int64(i))}
		inj.faults = append(inj.faults, a)
		if (s.Name == fault.Gone || s.Name == fault.Cut) && s.Scheduled() {
			inj.wg.Add(1)
			go inj.fire(a)
		}
	}
	return inj
}

// close stops the firings.
func (inj *injector) close() {
	close(inj.stop)
	inj.wg.Wait()
}

// matches says whether c, sent with userAgent, is in the faults' target.
func (inj *injector) matches(c call, userAgent string) bool {
	return inj.target.Matches(c.gvr.GroupResource(), userAgent)
}

// fire acts at each firing of a scheduled gone or cut.
func (inj *injector) fire(a *active) {
	defer inj.wg.Done()
	for {
		// The next firing after now, not after the last one: firings missed
		// (a stalled process, an act that took long) are not made up back
		// to back, as Schedule.Take makes up none either.
		next, ok := a.sched.Next(time.Now())
		if !ok {
			return
		}
		t := time.NewTimer(time.Until(next))
		select {
		case <-inj.stop:
			t.Stop()
			return
		case <-t.C:
		}
		inj.act(a)
	}
}

// act ends every open watch in the target (each with @p): gone arms its
// stream's next watch for a 410 first, then ends it as a server ends a
// watch; cut aborts it.
func (inj *injector) act(a *active) {
	inj.mu.Lock()
	if a.spec.Name == fault.Gone {
		inj.fired[a] = time.Now()
	}
	bodies := make([]*faultBody, 0, len(inj.open))
	for fb := range inj.open {
		bodies = append(bodies, fb)
	}
	inj.mu.Unlock()
	for _, fb := range bodies {
		if !a.sched.Chance() {
			continue
		}
		if a.spec.Name == fault.Gone {
			if !fb.end(a, io.EOF, 0, "ended the watch; its resume will be answered 410 Gone", func() { inj.arm(fb.slot, a) }) && fb.endedByFault() {
				// Another fault (a cut firing at the same moment) ended it
				// first: its resume is answered 410 all the same.
				inj.arm(fb.slot, a)
				fb.log.add(fb.log.passedNow(), a, 0, "found the watch already ended by another fault; its resume will be answered 410 Gone")
			}
		} else {
			fb.end(a, errFaultCut, 1, "cut the watch mid-stream (no 410): its client resumes from its last resourceVersion", nil)
		}
	}
}

// expiredContinue is the gone that expires a LIST's continue token (nil
// when none does): a scheduled gone that fired since the slot's paged list
// began (once). A LIST without a token begins a paged list. An unscheduled
// gone has no firing: it answers resumed watches, and a paged list pages
// on (expiring every token, it would never let a paged list end).
func (inj *injector) expiredContinue(sl *slot, c call, now time.Time) *active {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	if c.opts.Continue == "" {
		inj.pagedFrom[sl] = now
		return nil
	}
	from, paged := inj.pagedFrom[sl]
	for _, g := range inj.faults {
		if g.spec.Name != fault.Gone || !g.spec.Scheduled() {
			continue
		}
		if at, ok := inj.fired[g]; ok && paged && at.After(from) {
			inj.pagedFrom[sl] = now // once for this firing
			return g
		}
	}
	return nil
}

// forget drops what the injector keeps of a slot the proxy forgot: a
// proxy in front of many short-lived clients keeps nothing of each.
func (inj *injector) forget(sl *slot) {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	delete(inj.armed, sl)
	delete(inj.pagedFrom, sl)
	delete(inj.watched, sl)
}

func (inj *injector) arm(sl *slot, a *active) {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	inj.armed[sl] = a
}

// resumes says whether c, a request of the slot, resumes a watch the slot
// made before (not after a LIST, nor one that lists), and notes what c is.
func (inj *injector) resumes(sl *slot, c call) bool {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	watch := c.verb == reflector.VerbWatch
	resumed := watch && inj.watched[sl] && !c.opts.SendInitialEvents && !observed.StartsAfresh(c.verb, c.opts)
	inj.watched[sl] = watch
	return resumed
}

// takeArmed is the gone armed for the slot's next watch, disarmed.
func (inj *injector) takeArmed(sl *slot) *active {
	inj.mu.Lock()
	defer inj.mu.Unlock()
	a := inj.armed[sl]
	delete(inj.armed, sl)
	return a
}

// roundTrip forwards req, a LIST or WATCH in the target, with the faults
// that act on it; what they did goes to log.
func (inj *injector) roundTrip(rt http.RoundTripper, req *http.Request, c call, sl *slot, log *faultLog) (*http.Response, error) {
	now := time.Now()
	for _, a := range inj.faults {
		if a.spec.Name == fault.Throttle && a.sched.Take(now) {
			secs := int(math.Ceil(a.spec.Value.Seconds()))
			log.add(0, a, 1, fmt.Sprintf("answered the %s 429 Too Many Requests, Retry-After %ds, without forwarding it", strings.ToUpper(string(c.verb)), secs))
			return throttled(req, secs), nil
		}
	}
	resumed := inj.resumes(sl, c)
	watch := c.verb == reflector.VerbWatch
	if !watch {
		if a := inj.expiredContinue(sl, c, now); a != nil {
			log.add(0, a, 1, "answered 410 Gone to the LIST's continue token (expired, as after a compaction), without forwarding it")
			return continueGone(req, a.spec.Raw), nil
		}
	}
	if watch {
		a := inj.takeArmed(sl)
		if a == nil && resumed {
			for _, g := range inj.faults {
				if g.spec.Name == fault.Gone && !g.spec.Scheduled() && g.sched.Take(now) {
					a = g
					break
				}
			}
		}
		if a != nil {
			log.add(0, a, 1, fmt.Sprintf("answered 410 Gone to the watch from resourceVersion %q, without forwarding it", c.opts.ResourceVersion))
			return gone(req, c.opts.ResourceVersion, a.spec.Raw), nil
		}
	}
	resp, err := rt.RoundTrip(req)
	if err != nil || !watch || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	fb := inj.newBody(req.Context(), resp, sl, c, log)
	if fb == nil {
		return resp, nil
	}
	// A gzipped watch (the server compresses what a client accepts in
	// gzip) is passed on uncompressed: its frames are the same bytes.
	resp.Body, resp.ContentLength = fb, -1
	resp.Header.Del("Content-Length")
	resp.Header.Del("Content-Encoding")
	return resp, nil
}

// newBody wraps a watch's body in the faults that act on it (nil when none does).
func (inj *injector) newBody(ctx context.Context, resp *http.Response, sl *slot, c call, log *faultLog) *faultBody {
	fb := &faultBody{inj: inj, slot: sl, up: resp.Body, contentType: resp.Header.Get("Content-Type"), log: log,
		frames: make(chan frame, 1024), stop: make(chan struct{}), client: ctx.Done()}
	fb.proto = wire.IsProtobuf(fb.contentType)
	fb.table = sl != nil && sl.asked.Table && !fb.proto
	switch enc := resp.Header.Get("Content-Encoding"); {
	case strings.EqualFold(enc, "gzip"):
		fb.gzip = true
	case enc != "":
		return nil // not read: forwarded as it is
	}
	needed := false
	for _, a := range inj.faults {
		switch a.spec.Name {
		case fault.Gone:
			needed = needed || a.spec.Scheduled()
		case fault.Cut:
			needed = true
			if !a.spec.Scheduled() {
				fb.cutAfterFirst, fb.cutListing = a, c.opts.SendInitialEvents
			}
		case fault.Delay:
			needed = true
			fb.delays = append(fb.delays, a)
		case fault.DropDeletes, fault.NoBookmarks:
			needed = true
			fb.filters = append(fb.filters, a)
		case fault.StallInitialList:
			if c.opts.SendInitialEvents {
				needed = true
				fb.filters = append(fb.filters, a)
			}
		case fault.Stale:
			needed = true
			fb.stale, fb.listing = a, c.opts.SendInitialEvents
		}
	}
	if !needed || !wire.SupportedResponse(fb.contentType) {
		return nil
	}
	inj.mu.Lock()
	inj.open[fb] = true
	inj.mu.Unlock()
	go fb.read()
	return fb
}

// statusResponse is the proxy's own answer to req: a Status in JSON.
func statusResponse(req *http.Request, st metav1.Status, header http.Header) *http.Response {
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	st.Status = metav1.StatusFailure
	b, _ := json.Marshal(st)
	if header == nil {
		header = http.Header{}
	}
	header.Set("Content-Type", "application/json")
	header.Set("Content-Length", strconv.Itoa(len(b)))
	return &http.Response{StatusCode: int(st.Code), Status: fmt.Sprintf("%d %s", st.Code, http.StatusText(int(st.Code))), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: header, Body: io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b)), Request: req}
}

// gone is the 410 a server whose history no longer holds rv answers.
func gone(req *http.Request, rv, spec string) *http.Response {
	return statusResponse(req, metav1.Status{Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
		Message: fmt.Sprintf("too old resource version: %s (injected by kubectl watchcache proxy --fault %s)", rv, spec)}, nil)
}

// continueGone is the API server's answer to an expired continue token.
func continueGone(req *http.Request, spec string) *http.Response {
	return statusResponse(req, metav1.Status{Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
		Message: "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter. (injected by kubectl watchcache proxy --fault " + spec + ")"}, nil)
}

// throttled is API Priority and Fairness's 429, Retry-After secs.
func throttled(req *http.Request, secs int) *http.Response {
	h := http.Header{}
	h.Set("Retry-After", strconv.Itoa(secs))
	return statusResponse(req, metav1.Status{Code: http.StatusTooManyRequests, Reason: metav1.StatusReasonTooManyRequests,
		Message: "too many requests, please try again later (injected by kubectl watchcache proxy --fault throttle)",
		Details: &metav1.StatusDetails{RetryAfterSeconds: int32(secs)}}, h)
}

// frame is one watch event's bytes as the server sent them, and when they came.
type frame struct {
	b   []byte
	at  time.Time
	err error
}

// faultBody is a watch's body with the faults that act on it: its frames
// are read ahead, then passed on whole, in order, held or left out.
type faultBody struct {
	inj         *injector
	slot        *slot
	up          io.ReadCloser
	contentType string
	proto       bool
	gzip        bool // the server's body is gzipped: read through gzip
	// table: the client asked for Tables (kubectl get): each event's object
	// is a Table of one row, whose object the fault notes name.
	table bool
	log   *faultLog

	delays        []*active // delay
	filters       []*active // drop-deletes, no-bookmarks, stall-initial-list
	cutAfterFirst *active   // cut without a schedule: after the first frame
	// cutListing: cutAfterFirst waits for a streaming list's end, and then
	// for one more event. Cut in its initial events, a client never synced:
	// each retry listed afresh, on a new connection, as a new stream. Cut
	// right at its end, client-go's informer took the watch for a very
	// short one (under a second, no event) and listed again, every time.
	cutListing bool
	// cutListed: the streaming list has just ended; the cut waits for the
	// next event.
	cutListed bool

	// stale: the frame it holds to send again (nil: none), and the later
	// events to pass before; listing says a streaming list's initial
	// events are coming still (not sent again: they are not in order).
	stale      *active
	staleFrame []byte
	staleUID   string // the held event's object's
	staleWhat  string
	staleLeft  int
	listing    bool
	extra      [][]byte // frames to pass on after the one being passed

	frames chan frame
	stop   chan struct{}
	client <-chan struct{} // closed when the client has gone (its request's context)
	mu     sync.Mutex
	halted bool  // a fault (or Close) ends the body: stop is closed, or about to be
	why    error // what Read returns once stop is closed
	ended  bool  // Read has returned the body's end

	// the forwarding's, in Read
	cur  []byte
	done error
}

// read reads the server's frames ahead of Read.
func (fb *faultBody) read() {
	var r io.Reader = fb.up
	if fb.gzip {
		zr, err := gzip.NewReader(fb.up)
		if err != nil {
			select {
			case fb.frames <- frame{err: fmt.Errorf("reading the gzipped watch: %w", err), at: time.Now()}:
			case <-fb.stop:
			}
			return
		}
		r = zr
	}
	var dec *json.Decoder
	if !fb.proto {
		dec = json.NewDecoder(r)
	}
	for {
		var f frame
		if fb.proto {
			f.b, f.err = readProtoFrame(r)
		} else {
			var raw json.RawMessage
			if f.err = dec.Decode(&raw); f.err == nil {
				f.b = append(raw, '\n')
			}
		}
		f.at = time.Now()
		select {
		case fb.frames <- f:
		case <-fb.stop:
			return
		}
		if f.err != nil {
			return
		}
	}
}

// readProtoFrame reads one length-prefixed frame (its prefix included).
func readProtoFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err // io.EOF between frames
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrame {
		return nil, fmt.Errorf("a watch frame of %d bytes", n)
	}
	b := make([]byte, 4+int(n))
	copy(b, hdr[:])
	if _, err := io.ReadFull(r, b[4:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

// Read implements io.Reader: the frames the faults let through, each whole.
func (fb *faultBody) Read(p []byte) (int, error) {
	for len(fb.cur) == 0 {
		if fb.done != nil {
			return 0, fb.done
		}
		if len(fb.extra) > 0 {
			fb.cur, fb.extra = fb.extra[0], fb.extra[1:]
			break
		}
		select {
		case <-fb.stop: // a fault ended the body: before any frame left
			fb.finish(nil)
			continue
		default:
		}
		select {
		case <-fb.stop:
			fb.finish(nil)
			continue
		case f := <-fb.frames:
			if f.err != nil {
				fb.finish(f.err)
				continue
			}
			// A frame left out is not held: a delay holds only what it passes on.
			if fb.cur = fb.filter(f); fb.cur != nil && !fb.hold(f) {
				fb.cur = nil
				fb.finish(nil)
				continue
			}
		}
	}
	n := copy(p, fb.cur)
	fb.cur = fb.cur[n:]
	if len(fb.cur) == 0 {
		fb.log.pass()
		switch a := fb.cutAfterFirst; {
		case a == nil || fb.cutListing:
		case fb.cutListed:
			fb.cutListed = false
		case a.sched.Take(time.Now()):
			fb.end(a, errFaultCut, 1, "cut the watch after its first event (no 410): its client resumes from its last resourceVersion", nil)
		}
	}
	return n, nil
}

// finish is the end Read returns from now on: the fault's, when one ended the body.
func (fb *faultBody) finish(err error) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if fb.why != nil {
		err = fb.why
	}
	fb.ended = true
	fb.done = err
}

// hold waits until each delay that takes the frame has held it, and
// counts it held; false when the body was stopped meanwhile, or its client
// left (the frame is not passed on, nor counted: a client gone is noted as
// gone when it went, not a delay later).
func (fb *faultBody) hold(f frame) bool {
	var until time.Time
	var took []*active
	for _, a := range fb.delays {
		if a.sched.Take(f.at) {
			took = append(took, a)
			if u := f.at.Add(a.spec.Value); u.After(until) {
				until = u
			}
		}
	}
	if until.IsZero() {
		return true
	}
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-t.C:
		for _, a := range took {
			fb.log.held(a)
		}
		return true
	case <-fb.stop:
		return false
	case <-fb.client:
		fb.halt()
		return false
	}
}

// filter is the frame to pass on, or nil when a fault leaves it out.
func (fb *faultBody) filter(f frame) []byte {
	if len(fb.filters) == 0 && fb.stale == nil && !fb.cutListing {
		return f.b
	}
	ev, err := fb.decode(f.b)
	if err != nil {
		return f.b
	}
	rv := ""
	if ev.Item.Object != nil {
		rv = ev.Item.Object.ResourceVersion
	}
	for _, a := range fb.filters {
		var what string
		switch {
		case a.spec.Name == fault.DropDeletes && ev.Type == reflector.EventDeleted:
			o := ev.Item.Object
			what = fmt.Sprintf("dropped DELETED %s (uid %s, resourceVersion %s)", o.Ref(), o.UID, rv)
		case a.spec.Name == fault.NoBookmarks && ev.Type == reflector.EventBookmark && !ev.InitialEventsEnd:
			what = fmt.Sprintf("dropped BOOKMARK at resourceVersion %s", rv)
		case a.spec.Name == fault.StallInitialList && ev.Type == reflector.EventBookmark && ev.InitialEventsEnd:
			what = fmt.Sprintf("withheld the initial-events-end BOOKMARK at resourceVersion %s: the streaming list never completes", rv)
		default:
			continue
		}
		if a.sched.Take(f.at) {
			fb.log.add(fb.log.passedNow(), a, 1, what)
			return nil
		}
	}
	if fb.stale != nil {
		fb.staleAfter(f, ev.Type, ev.InitialEventsEnd, ev.Item.Object)
	}
	if ev.Type == reflector.EventBookmark && ev.InitialEventsEnd {
		// Passed on: the list is complete; its watch is cut after its next event.
		fb.cutListing, fb.cutListed = false, fb.cutListing
	}
	return f.b
}

// decode reads the one event a frame holds.
func (fb *faultBody) decode(b []byte) (reflector.WatchEvent, error) {
	if fb.table {
		return newTableWatch(bytes.NewReader(b), false).next()
	}
	st, err := wire.DecodeWatchResponse(io.NopCloser(bytes.NewReader(b)), fb.contentType, wire.WatchOptions{})
	if err != nil {
		return reflector.WatchEvent{}, err
	}
	defer st.Close()
	return st.Next()
}

// staleAfter is stale's part in passing on frame f, an event of type typ:
// once the streaming list (if any) has ended, it holds an ADDED or
// MODIFIED event it takes, and sends it again after fault.StaleAfter
// later events, one at a time; not once its object was deleted.
func (fb *faultBody) staleAfter(f frame, typ reflector.EventType, listEnd bool, o *store.Object) {
	if typ == reflector.EventBookmark && listEnd {
		fb.listing = false
	}
	if fb.listing || o == nil {
		return
	}
	switch typ {
	case reflector.EventAdded, reflector.EventModified, reflector.EventDeleted:
	default:
		return
	}
	if fb.staleFrame != nil {
		if typ == reflector.EventDeleted && o.UID == fb.staleUID {
			// Sent after its delete, it would come back as a ghost.
			fb.staleFrame = nil
			return
		}
		if fb.staleLeft--; fb.staleLeft == 0 {
			// After the frame being passed on: the note, then the event again.
			fb.log.add(fb.log.passedNow()+1, fb.stale, 1, fb.staleWhat)
			fb.extra = append(fb.extra, fb.staleFrame)
			fb.staleFrame = nil
		}
		return
	}
	if (typ == reflector.EventAdded || typ == reflector.EventModified) && fb.stale.sched.Take(f.at) {
		fb.staleFrame, fb.staleUID, fb.staleLeft = f.b, o.UID, fault.StaleAfter
		fb.staleWhat = fmt.Sprintf("sent %s %s (uid %s, resourceVersion %s) again, %d events after it was passed on: its resourceVersion goes backwards",
			typ, o.Ref(), o.UID, o.ResourceVersion, fault.StaleAfter)
	}
}

// end ends the body early on fault a: Read returns why from now on (once
// the frame being passed on is), and the server's body is closed. before
// runs first (gone arms the 410). It notes what a did, count times; false
// when the body had already ended.
func (fb *faultBody) end(a *active, why error, count int, what string, before func()) bool {
	fb.mu.Lock()
	if fb.ended || fb.halted {
		fb.mu.Unlock()
		return false
	}
	fb.halted = true
	fb.mu.Unlock()
	if before != nil {
		before()
	}
	fb.log.add(fb.log.passedNow(), a, count, what)
	fb.mu.Lock()
	fb.why = why
	close(fb.stop)
	fb.mu.Unlock()
	_ = fb.up.Close()
	return true
}

// endedByFault says a fault ended the forwarding (not its client, nor the server).
func (fb *faultBody) endedByFault() bool {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return fb.halted && fb.why != errClientGone
}

// halt ends the body for its client, which has gone.
func (fb *faultBody) halt() {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if !fb.halted {
		fb.halted, fb.why = true, errClientGone
		close(fb.stop)
	}
}

// Close implements io.Closer: the forwarding is over.
func (fb *faultBody) Close() error {
	fb.halt()
	fb.inj.mu.Lock()
	delete(fb.inj.open, fb)
	fb.inj.mu.Unlock()
	return fb.up.Close()
}

// faultLog is what the faults did to one request, for its stream: each
// note placed after the frames passed on before it.
type faultLog struct {
	mu    sync.Mutex
	notes []faultNote
	// holds are the delays that held an event, in the order of their
	// first holds, which their last notes keep.
	holds  []delayHeld
	passed int64
}

// delayHeld is a delay that held an event, and how many more it held after it.
type delayHeld struct {
	a    *active
	more int
}

type faultNote struct {
	after int64
	fault observed.Fault
}

// pass counts a frame passed on whole.
func (l *faultLog) pass() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.passed++
}

// passedNow is how many frames were passed on whole.
func (l *faultLog) passedNow() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.passed
}

func (l *faultLog) add(after int64, a *active, count int, what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.place(faultNote{after: after, fault: observed.Fault{Spec: a.spec.Raw, What: what, Count: count}})
}

// place adds a note after the notes placed after as many frames or fewer,
// so that upTo takes them in order (l.mu held).
func (l *faultLog) place(n faultNote) {
	i := len(l.notes)
	for i > 0 && l.notes[i-1].after > n.after {
		i--
	}
	l.notes = slices.Insert(l.notes, i, n)
}

// held counts an event a delay held. The first is noted at once, among the
// frames (before the event it holds, so a slow-delivery finding names the
// delay); the rest are counted when the request ends.
func (l *faultLog) held(a *active) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := slices.IndexFunc(l.holds, func(h delayHeld) bool { return h.a == a }); i >= 0 {
		l.holds[i].more++
		return
	}
	l.holds = append(l.holds, delayHeld{a: a})
	l.place(faultNote{after: l.passed, fault: observed.Fault{Spec: a.spec.Raw, Count: 1,
		What: fmt.Sprintf("held a watch event %s before passing it on; the events held after it are counted when the watch ends", a.spec.Value)}})
}

// upTo takes the notes placed after at most n frames; n < 0 takes them
// all, and what the delays held.
func (l *faultLog) upTo(n int64) []observed.Fault {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []observed.Fault
	i := 0
	for ; i < len(l.notes) && (n < 0 || l.notes[i].after <= n); i++ {
		out = append(out, l.notes[i].fault)
	}
	l.notes = l.notes[i:]
	if n < 0 {
		for _, h := range l.holds {
			if h.more > 0 {
				out = append(out, observed.Fault{Spec: h.a.spec.Raw, Count: h.more, What: fmt.Sprintf("held %s %s each before passing them on", format.PluralUngrouped(h.more, "more event"), h.a.spec.Value)})
			}
		}
		l.holds = nil
	}
	return out
}

// resolveTarget names each resource of t as the server does, as kubectl
// resolves names: a short name (cm), a plural with its version and group
// (deployments.v1.apps) or a core resource's version (configmaps.v1, as the
// tool prints it), so that it matches the streams it means. A name the
// server does not serve stays as given; unserved lists those.
func resolveTarget(mapper meta.RESTMapper, t fault.Target) (out fault.Target, unserved []fault.GroupResource) {
	out.Clients = t.Clients
	for _, r := range t.Resources {
		gvr, err := live.ResourceFor(mapper, r.String())
		if err != nil {
			out.Resources = append(out.Resources, r)
			unserved = append(unserved, r)
			continue
		}
		out.Resources = append(out.Resources, gvr.GroupResource())
	}
	return out, unserved
}

// FaultTarget is Options.FaultTarget with its resources named as the
// server names them (cm is configmaps).
func (p *Proxy) FaultTarget() fault.Target { return p.opts.FaultTarget }

// FaultTargetWarnings says which resources of Options.FaultTarget the
// server does not serve (a target that matches nothing).
func (p *Proxy) FaultTargetWarnings() []string {
	var out []string
	for _, r := range p.unservedTargets {
		out = append(out, fmt.Sprintf("--fault-target %s: the server serves no such resource (yet): no fault acts on it until it does", r))
	}
	return out
}
