package reflector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// Reflector lists and watches one resource through a Source and applies what
// it sees to a store.Writer. Run drives it, on one goroutine; every other
// exported method (Stats, State, Counters, Lag, Churn, ForceRelist, Audit,
// NoteAudit, Report) may be called from other goroutines, during Run.
//
// The Reflector decides (what to request next, timers, backoff, the list
// gate, giving up); everything it records (store writes, counters, cursor,
// request history, notes) goes through its Ledger, the one the observing
// proxy's streams use too.
type Reflector struct {
	cfg    Config
	store  *store.Store
	ledger *Ledger

	mu     sync.Mutex
	cancel context.CancelCauseFunc // cancels the request in flight
	forced bool
	wake   chan struct{} // cuts a backoff wait short for a forced relist

	// Owned by Run's goroutine.
	backoff      backoffState
	preferList   bool // StrategyAuto fell back once
	listedOnce   bool
	lastProgress time.Time // see progress
	permanent    int       // consecutive permanent errors
	goneInARow   int       // 410s without a watch making progress in between
	gateHeld     bool      // holds a slot of Config.InitialLists
}

// Error is a reflector failure, named after the phase it happened in.
type Error struct {
	// Phase is "initial list", "relist" or "watch".
	Phase string
	// Streaming says the list was a streaming list, which the server
	// authorizes as a watch: its 403 says "cannot watch".
	Streaming bool
	Err       error
}

func (e *Error) Error() string {
	how := ""
	if e.Streaming {
		how = " (a streaming list, which is a watch)"
	}
	switch e.Phase {
	case "watch":
		return fmt.Sprintf("failed to watch: %v", e.Err)
	case "relist":
		return fmt.Sprintf("failed to relist%s: %v", how, e.Err)
	}
	return fmt.Sprintf("failed to perform initial object list%s: %v", how, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Why the reflector canceled its own request. A replayed trace maps a recorded
// end's error text back to these, so the replayed reflector decides the same.
var (
	// ErrForcedRelist: ForceRelist interrupted the request.
	ErrForcedRelist = errors.New("forced relist")
	// ErrIdleTimeout: the watch received nothing for the idle timeout.
	ErrIdleTimeout = errors.New("idle timeout")
	// ErrInitialEventsTimeout: a streaming list delivered no initial event
	// for the initial-events timeout before its initial-events-end bookmark.
	ErrInitialEventsTimeout = errors.New("initial-events-end bookmark did not arrive in time")
	// ErrStopped: the run ended while the request was open (the user asked,
	// or a --fail-on rule stopped it): the request ends as EndStopped.
	ErrStopped = errors.New("the run was stopped")
)

// New builds a reflector that writes to w; st is w's read handle (Audit compares against it).
func New(cfg Config, w *store.Writer, st *store.Store) (*Reflector, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if w == nil || st == nil {
		return nil, errors.New("reflector: a store writer and its read handle are required")
	}
	r := &Reflector{
		cfg:    cfg,
		store:  st,
		ledger: NewLedger(w, cfg.Clock.Now, cfg.RequestHistory),
		wake:   make(chan struct{}, 1),
	}
	r.ledger.OnNote(cfg.OnNote)
	r.backoff = backoffState{cfg: cfg.Backoff, rand: cfg.Rand}
	return r, nil
}

// phaseKind is the kind of step Run takes next.
type phaseKind int

const (
	phaseList phaseKind = iota
	phaseStream
	phaseWatch
)

// phase is the next step: one LIST page, one streaming list, or one watch.
type phase struct {
	kind    phaseKind
	relist  bool
	rv      string // list: the first page's resourceVersion; watch: the cursor
	rvMatch string
	cont    string // list: the continue token of the next page
}

// Run lists and watches until ctx ends (returning nil), or until a permanent
// error outlasts its retries or nothing makes progress for GiveUpAfter
// (returning an *Error).
func (r *Reflector) Run(ctx context.Context) error {
	defer r.releaseGate()
	defer r.ledger.endNotes()
	r.progress()
	r.ledger.Start(r.lastProgress)
	p := r.listPhase(false)
	r.decide(Decision{State: r.displayState(p), Reason: ReasonInitialList, List: r.method(p)})
	for {
		if ctx.Err() == nil && !r.listedOnce && p.kind != phaseWatch {
			r.holdGate(ctx)
		}
		// A replay is asked before the forced relist is taken: reading on to
		// its next request, it forces the relists the recording forced with
		// no request open (during a backoff, or between two requests). A
		// recording cut right after a forced relist stops there, with the
		// relist decided as recorded.
		// The run's own end is read before the source is asked: a replay
		// that reads its trace's end there ends the run's context too, and
		// the relist forced before the cut is still decided, as recorded.
		ended := ctx.Err() != nil
		stops := ended || r.cfg.Once && r.listedOnce || r.sourceStopsHere(ctx)
		if !ended && r.takeForced() {
			p = r.listPhase(true)
			r.decide(Decision{State: r.displayState(p), Reason: ReasonForcedRelist, List: r.method(p)})
		}
		if stops || ctx.Err() != nil {
			r.decide(Decision{State: StateStopped, Reason: ReasonStopped})
			return nil
		}
		var err error
		switch p.kind {
		case phaseList:
			p, err = r.stepList(ctx, p)
		default:
			p, err = r.stepWatch(ctx, p)
		}
		if err != nil {
			return err
		}
	}
}

// sourceStopsHere is whether the source (a replay) says that the run stops
// before its next request.
func (r *Reflector) sourceStopsHere(ctx context.Context) bool {
	s, ok := r.cfg.Source.(Stopper)
	return ok && s.StopsHere(ctx)
}

// listPhase is the start of a full list with the configured strategy. A
// consistent one reads the newest state (resourceVersion ""), as the list
// after a 410 or a too-large resourceVersion does; otherwise it reads at the
// configured resourceVersion. It is a relist once a list has completed.
func (r *Reflector) listPhase(consistent bool) phase {
	p := phase{kind: phaseList, relist: r.listedOnce}
	if !consistent {
		p.rv, p.rvMatch = r.cfg.ResourceVersion, r.cfg.ResourceVersionMatch
	}
	if r.cfg.Strategy != StrategyList && !r.preferList {
		p.kind = phaseStream
	}
	return p
}

// method is how the list that p starts is made.
func (r *Reflector) method(p phase) *ListMethod {
	if p.kind == phaseStream {
		return &ListMethod{Stream: true}
	}
	return &ListMethod{PageSize: r.cfg.PageSize}
}

func (r *Reflector) displayState(p phase) State {
	switch {
	case p.kind == phaseWatch:
		return StateWatching
	case p.relist:
		return StateRelisting
	case p.kind == phaseStream:
		return StateStreamingList
	}
	return StateListing
}

func (r *Reflector) errPhase(p phase) string {
	switch {
	case p.kind == phaseWatch:
		return "watch"
	case p.relist:
		return "relist"
	}
	return "initial list"
}

// stepList fetches one LIST page and applies it.
func (r *Reflector) stepList(ctx context.Context, p phase) (phase, error) {
	r.ledger.SetState(r.displayState(p))
	opts := RequestOptions{Limit: r.cfg.PageSize}
	if p.cont != "" {
		opts.Continue = p.cont
	} else {
		opts.ResourceVersion, opts.ResourceVersionMatch = p.rv, p.rvMatch
	}
	rctx, _, info := r.startRequest(ctx, VerbList, opts)
	page, err := r.cfg.Source.List(rctx, opts)
	if err != nil {
		end := r.endRequest(rctx, info, err)
		return r.afterFailedList(ctx, p, end)
	}
	r.ledger.ReceivedPage(info, page)
	r.endRequest(rctx, info, nil)
	r.succeeded()
	if err := r.ledger.ApplyPage(info, page); err != nil {
		return p, &Error{Phase: r.errPhase(p), Err: err}
	}
	if page.Continue != "" {
		return phase{kind: phaseList, relist: p.relist, cont: page.Continue}, nil
	}
	if err := r.completeList(p, page.ResourceVersion); err != nil {
		return p, err
	}
	return phase{kind: phaseWatch, rv: page.ResourceVersion}, nil
}

func (r *Reflector) afterFailedList(ctx context.Context, p phase, end *RequestEnd) (phase, error) {
	if ctx.Err() != nil || end.Reason == EndCanceled || end.Reason == EndStopped {
		return p, nil
	}
	st := end.Status
	switch {
	case IsGone(st):
		r.goneInARow++
		restart := r.listPhase(true)
		restart.kind = phaseList
		d := Decision{State: r.displayState(restart), Reason: ReasonGone, ResourceVersion: p.rv, List: r.method(restart), Code: st.Code, Cause: end.Cause()}
		if p.cont != "" {
			d.Reason, d.ResourceVersion = ReasonContinueGone, ""
		}
		r.decide(d)
		r.goneBackoff(ctx, restart)
		return restart, nil
	case IsTooLargeResourceVersion(st):
		restart := r.listPhase(true)
		restart.kind = phaseList
		r.decide(Decision{State: r.displayState(restart), Reason: ReasonTooLargeRV, ResourceVersion: p.rv, List: r.method(restart), Code: st.Code, Cause: end.Cause()})
		return restart, r.failed(ctx, restart, end)
	}
	if IsBadRequest(st) {
		return p, r.badRequest(p, end)
	}
	r.decide(Decision{State: r.displayState(p), Reason: ReasonRequestError, Code: end.Code(), Cause: end.Cause()})
	return p, r.failed(ctx, p, end)
}

// completeList swaps the listed snapshot in and moves the cursor to the list's resourceVersion.
func (r *Reflector) completeList(p phase, rv string) error {
	diff, relist, err := r.ledger.CompleteList(rv, StateWatching)
	if err != nil {
		return &Error{Phase: r.errPhase(p), Err: err}
	}
	r.listedOnce = true
	r.backoff.reset()
	// The slot goes back after the list-complete decision is noted, so no
	// other first list is seen to start before this one is seen to end.
	r.releaseGate()
	r.ledger.NoteRelistDiff(rv, diff, relist)
	return nil
}

// stepWatch runs one watch (a streaming list first, when p.kind is phaseStream) until it ends.
func (r *Reflector) stepWatch(ctx context.Context, p phase) (phase, error) {
	streaming := p.kind == phaseStream
	r.ledger.SetState(r.displayState(p))
	opts := RequestOptions{ResourceVersion: p.rv, AllowWatchBookmarks: true, TimeoutSeconds: int64(r.watchTimeout() / time.Second)}
	if streaming {
		opts.SendInitialEvents = true
		opts.ResourceVersionMatch = "NotOlderThan"
	}
	rctx, cancel, info := r.startRequest(ctx, VerbWatch, opts)
	r.ledger.SetAwaiting(info, true)
	stream, err := r.cfg.Source.Watch(rctx, opts)
	r.ledger.SetAwaiting(info, false)
	if err != nil {
		end := r.endRequest(rctx, info, err)
		return r.afterWatch(ctx, p, streaming, end, info)
	}
	r.succeeded()
	// The idle timeout and the streaming list's stall timeout both count from
	// the last thing received (the response headers at first): a watch that
	// streams is healthy, however long it lasts.
	idle := r.cfg.IdleTimeout
	idleTimer := r.cfg.Clock.AfterFunc(idle, func() { cancel(ErrIdleTimeout) })
	defer idleTimer.Stop()
	var stallTimer Timer
	// initial: the streaming list's events are still its initial ones, all
	// ADDED; a change (MODIFIED, DELETED) says it has passed them (their
	// end may still come: the server sends it at its next bookmark tick),
	// and no event puts the stall timeout off from then on.
	initial := streaming
	if streaming {
		stallTimer = r.cfg.Clock.AfterFunc(r.cfg.InitialEventsTimeout, func() { cancel(ErrInitialEventsTimeout) })
		defer stallTimer.Stop()
	}
	var end *RequestEnd
	for end == nil {
		ev, err := stream.Next()
		if err != nil {
			end = EndOf(err)
			break
		}
		arrived := r.cfg.Clock.Now()
		r.progressAt(arrived)
		idleTimer.Reset(idle)
		if initial = initial && (ev.Type == EventAdded || ev.Type == EventBookmark); initial && ev.Type == EventAdded {
			// An initial event; a progress bookmark is none.
			stallTimer.Reset(r.cfg.InitialEventsTimeout)
		}
		complete, err := r.ledger.Event(info, ev, arrived)
		if err != nil {
			stream.Close()
			if streaming {
				return p, &Error{Phase: r.errPhase(p), Err: err}
			}
			return p, &Error{Phase: "watch", Err: err}
		}
		switch ev.Type {
		case EventError:
			end = &RequestEnd{Reason: EndError, Status: ev.Status}
		case EventBookmark:
			if !streaming {
				r.goneInARow = 0
			}
			if complete {
				stallTimer.Stop()
				streaming, initial = false, false
				if err := r.completeList(p, ev.Item.Object.ResourceVersion); err != nil {
					stream.Close()
					return p, err
				}
				p = phase{kind: phaseWatch, rv: ev.Item.Object.ResourceVersion}
				if r.cfg.Once {
					cancel(ErrStopped) // so the request ends as stopped everywhere, the trace too
					end = &RequestEnd{Reason: EndStopped, Err: ErrStopped}
				}
			}
		case EventAdded, EventModified, EventDeleted:
			if !streaming {
				r.goneInARow = 0
			}
		default:
			end = &RequestEnd{Reason: EndError, Err: fmt.Errorf("unexpected watch event type %q", ev.Type)}
		}
	}
	stream.Close()
	end = r.endRequest(rctx, info, end)
	if r.cfg.Once && r.listedOnce {
		return p, nil // Run stops
	}
	// The watch was open until now: the server was there.
	r.progress()
	if !streaming {
		// The cursor has moved past the list (or was already past it).
		p = phase{kind: phaseWatch, rv: r.ledger.Cursor()}
	}
	return r.afterWatch(ctx, p, streaming, end, info)
}

// afterWatch decides what follows a watch's end (or failure to start).
func (r *Reflector) afterWatch(ctx context.Context, p phase, streaming bool, end *RequestEnd, info *RequestInfo) (phase, error) {
	if ctx.Err() != nil || errors.Is(end.Err, ErrForcedRelist) {
		return p, nil
	}
	st := end.Status
	if streaming {
		refused := IsStreamRefused(st)
		if refused || errors.Is(end.Err, ErrInitialEventsTimeout) {
			fallback := phase{kind: phaseList, relist: p.relist, rv: p.rv, rvMatch: p.rvMatch}
			if r.cfg.Strategy == StrategyAuto {
				r.preferList = true
			}
			d := Decision{State: r.displayState(fallback), Reason: ReasonStreamRefused, List: r.method(fallback), Code: end.Code(), Cause: end.Cause()}
			if !refused {
				d.Reason, d.Wait, d.Cause = ReasonInitialEventsEnd, r.cfg.InitialEventsTimeout, ""
			}
			r.decide(d)
			return fallback, nil
		}
	}
	switch {
	case IsGone(st):
		r.goneInARow++
		relist := r.listPhase(true)
		r.decide(Decision{State: r.displayState(relist), Reason: ReasonGone, ResourceVersion: p.rv, List: r.method(relist), Code: st.Code, Cause: end.Cause()})
		r.goneBackoff(ctx, relist)
		return relist, nil
	case IsTooLargeResourceVersion(st):
		relist := r.listPhase(true)
		r.decide(Decision{State: r.displayState(relist), Reason: ReasonTooLargeRV, ResourceVersion: p.rv, List: r.method(relist), Code: st.Code, Cause: end.Cause()})
		return relist, r.failed(ctx, relist, end)
	}
	if IsBadRequest(st) {
		return p, r.badRequest(p, end)
	}
	if streaming {
		// The streaming list broke before it completed: start it again.
		r.decide(Decision{State: r.displayState(p), Reason: ReasonWatchError, Streaming: true, Code: end.Code(), Cause: end.Cause()})
		return p, r.failed(ctx, p, end)
	}
	switch end.Reason {
	case EndTimeout:
		r.decide(Decision{State: StateWatching, Reason: ReasonIdleTimeout, ResourceVersion: p.rv})
		return p, nil
	case EndClosed:
		if info.ClosedAtOnce() {
			// A server that closes watches at once must not become a hot loop.
			r.decide(Decision{State: StateWatching, Reason: ReasonWatchClosed, ResourceVersion: p.rv, AtOnce: true})
			return p, r.failed(ctx, p, end)
		}
		r.decide(Decision{State: StateWatching, Reason: ReasonWatchClosed, ResourceVersion: p.rv})
		return p, nil
	}
	r.decide(Decision{State: StateWatching, Reason: ReasonWatchError, ResourceVersion: p.rv, Code: end.Code(), Cause: end.Cause()})
	return p, r.failed(ctx, p, end)
}

// goneBackoff relists at once after a 410, but backs off when 410s repeat
// without a watch making progress (an event or bookmark after a completed
// list) in between: a list whose resourceVersion is already gone again when
// the watch starts must not become a relist storm.
func (r *Reflector) goneBackoff(ctx context.Context, next phase) {
	if r.goneInARow > 1 {
		r.wait(ctx, Decision{Next: r.verb(next), GoneInARow: r.goneInARow}, 0)
	}
}

// permanentHere says st is an answer no retry fixes, as Permanent says
// (unless Config.NotFoundAfterListPermanent keeps the older rule).
func (r *Reflector) permanentHere(st *metav1.Status) bool {
	return Permanent(st, r.listedOnce && !r.cfg.NotFoundAfterListPermanent)
}

// failed handles a failed request: the reflector fails when a permanent
// error outlasted its retries or when nothing made progress for
// GiveUpAfter; otherwise it backs off before next.
func (r *Reflector) failed(ctx context.Context, next phase, end *RequestEnd) error {
	r.ledger.RecordError(end.Cause())
	if end.Status != nil {
		r.progress() // the server answered, if only with an error
	}
	if r.permanentHere(end.Status) {
		r.permanent++
		if r.permanent > r.cfg.MaxPermanentRetries {
			return r.fail(next, Decision{Reason: ReasonPermanentError, Code: end.Code(), Cause: end.Cause(), Said: end.Said(), Attempts: r.permanent}, end)
		}
	} else {
		r.permanent = 0
	}
	if r.cfg.GiveUpAfter > 0 {
		if since := r.cfg.Clock.Now().Sub(r.lastProgress); since >= r.cfg.GiveUpAfter {
			return r.fail(next, Decision{Reason: ReasonGaveUp, Code: end.Code(), Cause: end.Cause(), Wait: since}, end)
		}
	}
	// A 429 says when to come back (Retry-After): not before, as client-go's
	// REST client waits it out too.
	var retryAfter time.Duration
	if th := end.Throttle; th != nil {
		retryAfter = th.RetryAfter
	}
	r.wait(ctx, Decision{Next: r.verb(next), Cause: end.Cause()}, retryAfter)
	return nil
}

// StoppedBy says whether cause, a request context's cause, is the end of the
// run itself rather than one of the reflector's own reasons to cut a request
// (ErrIdleTimeout, ErrForcedRelist, ErrInitialEventsTimeout). Any other cause
// came from outside: Run's context was canceled or passed its deadline, with
// or without a cause of the caller's own (the plugin's "stdout closed" when
// what read its output went away), and the run stopped; a nil cause is no
// cancellation at all.
func StoppedBy(cause error) bool {
	return cause != nil && !errors.Is(cause, ErrIdleTimeout) && !errors.Is(cause, ErrForcedRelist) && !errors.Is(cause, ErrInitialEventsTimeout)
}

// badRequest fails at once: the server refused the request's own options,
// and retrying the same request would only be refused again.
func (r *Reflector) badRequest(p phase, end *RequestEnd) error {
	r.ledger.RecordError(end.Cause())
	return r.fail(p, Decision{Reason: ReasonBadRequest, Code: end.Code(), Cause: end.Cause(), Said: end.Said()}, end)
}

// fail records the decision that ends Run and returns its error.
func (r *Reflector) fail(p phase, d Decision, end *RequestEnd) error {
	d.State = StateFailed
	r.decide(d)
	return &Error{Phase: r.errPhase(p), Streaming: p.kind == phaseStream, Err: &failure{d: d, end: end}}
}

// failure is the decision that failed a run; it unwraps to the request end that caused it.
type failure struct {
	d   Decision
	end *RequestEnd
}

func (f *failure) Error() string { return f.d.String() }
func (f *failure) Unwrap() error { return f.end }

// holdGate takes a slot of Config.InitialLists for the first list, waiting
// for one (or for ctx) when all are taken.
func (r *Reflector) holdGate(ctx context.Context) {
	if r.cfg.InitialLists == nil || r.gateHeld {
		return
	}
	if r.cfg.InitialLists.acquire(ctx) == nil {
		r.gateHeld = true
	}
}

// releaseGate gives the slot back: the first list is complete, or the
// reflector backs off or stops.
func (r *Reflector) releaseGate() {
	if r.gateHeld {
		r.gateHeld = false
		r.cfg.InitialLists.release()
	}
}

// wait is one backoff, of at least atLeast (a 429's Retry-After): it notes
// the wait (d says why) and sleeps on the clock.
func (r *Reflector) wait(ctx context.Context, d Decision, atLeast time.Duration) {
	r.releaseGate()
	now := r.cfg.Clock.Now()
	d.State, d.Reason, d.Wait = StateBackoff, ReasonBackoff, max(r.backoff.next(now), atLeast)
	if g := r.cfg.GiveUpAfter; g > 0 {
		// A backoff that outlasts GiveUpAfter ends when it runs out, so a
		// next failure gives up on time, not up to a whole backoff late.
		if left := r.lastProgress.Add(g).Sub(now); left > 0 && left < d.Wait {
			d.Wait = max(left, atLeast) // never before a 429's Retry-After
		}
	}
	if r.cfg.ChooseBackoff != nil {
		d.Wait = r.cfg.ChooseBackoff(d.Wait)
	}
	r.ledger.BackingOff(now.Add(d.Wait))
	r.decide(d)
	select {
	case <-ctx.Done():
	case <-r.cfg.Clock.After(d.Wait):
	case <-r.wake:
	}
	r.ledger.BackoffOver()
}

func (r *Reflector) verb(p phase) Verb {
	if p.kind == phaseList {
		return VerbList
	}
	return VerbWatch
}

// progress records that the server answered: response headers (an error
// status included), a LIST page, a watch event or bookmark, or the end of a
// watch that was open (it streamed until then). GiveUpAfter counts from the
// last progress, so a healthy watch cut by a restart, a GOAWAY or a proxy
// never gives up on its own; only time without any answer does.
func (r *Reflector) progress() { r.progressAt(r.cfg.Clock.Now()) }

func (r *Reflector) progressAt(t time.Time) { r.lastProgress = t }

// succeeded records a request that got a 2xx answer: progress, and the end
// of a run of permanent errors.
func (r *Reflector) succeeded() {
	r.progress()
	r.permanent = 0
	r.ledger.RecordError("") // the last error no longer stands
}

// watchTimeout is the next watch's server-side timeout.
func (r *Reflector) watchTimeout() time.Duration {
	if r.cfg.ChooseWatchTimeout != nil {
		return r.cfg.ChooseWatchTimeout(r.cfg.WatchTimeout)
	}
	base := r.cfg.WatchTimeout
	d := base + time.Duration(float64(base)*r.cfg.Rand())
	return d.Truncate(time.Second)
}

// startRequest registers a request in flight and gives it a context that
// cancel cancels (with the reflector's reason as its cause).
func (r *Reflector) startRequest(ctx context.Context, verb Verb, opts RequestOptions) (rctx context.Context, cancel context.CancelCauseFunc, info *RequestInfo) {
	rctx, cancel = context.WithCancelCause(ctx)
	r.mu.Lock()
	r.cancel = cancel
	forced := r.forced
	r.mu.Unlock()
	if forced {
		cancel(ErrForcedRelist)
	}
	return rctx, cancel, r.ledger.StartRequest(verb, opts, time.Time{})
}

// endRequest records how a request ended; causes of our own cancellations
// (idle timeout, forced relist, fallback) take precedence over the transport's view.
func (r *Reflector) endRequest(rctx context.Context, info *RequestInfo, err error) *RequestEnd {
	var end *RequestEnd
	if e, ok := err.(*RequestEnd); ok && e != nil {
		end = e
	} else {
		end = EndOf(err)
	}
	switch cause := context.Cause(rctx); {
	case errors.Is(cause, ErrIdleTimeout):
		end = &RequestEnd{Reason: EndTimeout, Err: cause}
	case errors.Is(cause, ErrForcedRelist), errors.Is(cause, ErrInitialEventsTimeout):
		end = &RequestEnd{Reason: EndCanceled, Err: cause}
	case StoppedBy(cause):
		// Run's context ended (--duration's deadline included): the run
		// stopped, whatever the transport made of it.
		end = &RequestEnd{Reason: EndStopped, Err: ErrStopped}
	}
	r.mu.Lock()
	cancel := r.cancel
	r.cancel = nil
	r.mu.Unlock()
	if cancel != nil {
		cancel(context.Canceled)
	}
	r.ledger.EndRequest(info, end)
	return end
}

// decide moves to d.State and notes the decision.
func (r *Reflector) decide(d Decision) { r.ledger.Decide(d) }

// Report notes a decision made outside the reflector about its run (a
// trace that stopped recording, say), in order with its own notes. It may
// be called from any goroutine; d.State is replaced by the current state.
// Once Run has returned, nothing more is noted.
func (r *Reflector) Report(d Decision) {
	d.State = r.State()
	r.ledger.Note(Note{Kind: NoteDecision, Decision: &d})
}

// State is the current state.
func (r *Reflector) State() State { return r.ledger.State() }

// ForceRelist makes the reflector drop its current request and relist, as
// after a 410; the store keeps serving the old snapshot until the list completes.
func (r *Reflector) ForceRelist() {
	r.mu.Lock()
	r.forced = true
	cancel := r.cancel
	// The wake token goes with forced, under mu: sent after it, Run's
	// takeForced could take the relist in between, and the token left
	// would cut a later, unrelated backoff short at once.
	select {
	case r.wake <- struct{}{}:
	default:
	}
	r.mu.Unlock()
	if cancel != nil {
		cancel(ErrForcedRelist)
	}
}

func (r *Reflector) takeForced() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.forced
	r.forced = false
	if f {
		select {
		case <-r.wake: // consumed by this relist
		default:
		}
	}
	return f
}

// Counters returns the running totals: Stats().Counters without the cost
// of the rest of Stats, cheap enough to call from an OnNote listener.
func (r *Reflector) Counters() Counters { return r.ledger.Counters() }

// Lag is the passive delivery estimate so far: Stats().Lag without the
// cost of the rest of Stats.
func (r *Reflector) Lag() LagStats { return r.ledger.Lag() }

// Churn is what the MODIFIED events diffed so far changed (--diff), with
// the top paths and objects (Ledger.Churn).
func (r *Reflector) Churn(top int) diff.Summary { return r.ledger.Churn(top) }

// Stats returns a snapshot of the reflector's state and counters.
func (r *Reflector) Stats() Stats { return r.ledger.Stats() }
