package trace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// Divergence is reported when the replayed reflector makes a request of
// another verb than the next recorded one.
type Divergence struct {
	Line     int
	Expected reflector.Verb
	Got      reflector.Verb
}

func (d *Divergence) Error() string {
	return fmt.Sprintf("replay diverged at line %d: the trace has a %s request there, but the reflector asked for a %s", d.Line, d.Expected, d.Got)
}

// Replay serves a recorded trace to a reflector as its Source, with a virtual
// clock that follows the recorded times. The end of the trace ends the replay:
// Done is closed, and the request the reflector makes after the last recorded
// one waits until the caller cancels the reflector.
type Replay struct {
	rd    *Reader
	speed float64
	clock *virtualClock

	mu        sync.Mutex
	pending   *Line // a line read ahead
	curID     int64
	err       error
	done      chan struct{}
	onForce   func()
	decisions decisionComparison
	wallStart time.Time
	firstAt   int64
	paced     bool
}

// NewReplay replays rd. speed 0 serves as fast as possible, 1 in real time, N
// N times faster than recorded.
func NewReplay(rd *Reader, speed float64) *Replay {
	h := rd.Header()
	return &Replay{rd: rd, speed: speed, clock: newvirtualClock(h.StartedAt), done: make(chan struct{})}
}

// Header is the trace's header.
func (p *Replay) Header() Header { return p.rd.Header() }

// Clock is the virtual clock the reflector must use.
func (p *Replay) Clock() reflector.Clock { return p.clock }

// OnClockAdvance registers f, called with the new time whenever the replay's
// clock moves forward: before the trace line that moved it is served, so f
// sees the run as it stood just before that moment (an age at its largest).
// f runs on the goroutine reading the trace, the reflector's, and must not block.
func (p *Replay) OnClockAdvance(f func(now time.Time)) {
	p.clock.mu.Lock()
	p.clock.hooks = append(p.clock.hooks, f)
	p.clock.mu.Unlock()
}

// Done is closed at the end of the trace or at a divergence.
func (p *Replay) Done() <-chan struct{} { return p.done }

// Err is the divergence or read error that ended the replay early, if any.
func (p *Replay) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Warnings are the reader's warnings (truncated last line, unknown kinds).
func (p *Replay) Warnings() []string { return p.rd.Warnings() }

// Progress is how far the replay has read, in bytes of the file, and the file's size (0 if unknown).
func (p *Replay) Progress() (done, total int64) { return p.rd.Offset(), p.rd.Size() }

// SetForceRelist gives the replay the reflector's ForceRelist, so a relist the
// user forced while recording is forced again at the same point.
func (p *Replay) SetForceRelist(f func()) {
	p.mu.Lock()
	p.onForce = f
	p.mu.Unlock()
}

// Note collects the replayed reflector's decisions for Differences; pass it as (part of) OnNote.
func (p *Replay) Note(n reflector.Note) {
	if n.Kind != reflector.NoteDecision || n.Decision == nil {
		return
	}
	p.mu.Lock()
	p.decisions.replayed(noteLine(n.Decision))
	p.mu.Unlock()
}

// RecordedDecisions is how many decisions (`note` lines) the trace held so far.
func (p *Replay) RecordedDecisions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.decisions.recordedCount
}

// Differences describes where the replayed decisions differ from the
// recorded ones (at most max of them) and counts them all. Decisions are
// compared by state, reason and the structured fields the recorded note
// has (resourceVersion, objects, code, cursor, diff counts), never by their
// sentences. Call it after the replay ended.
func (p *Replay) Differences(max int) (shown []string, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.decisions.finish(max)
}

// ReflectorConfig is the recorded reflector configuration wired to this
// replay: its Source, clock, deterministic jitter and note comparison. Chain
// OnNote if the caller needs notes too.
func (p *Replay) ReflectorConfig() reflector.Config {
	o := p.rd.Header().Options
	return reflector.Config{
		Source:               p.Source(),
		Strategy:             o.Strategy,
		PageSize:             o.PageSize,
		ResourceVersion:      o.ResourceVersion,
		ResourceVersionMatch: o.ResourceVersionMatch,
		WatchTimeout:         time.Duration(o.WatchTimeout),
		IdleTimeout:          time.Duration(o.IdleTimeout),
		InitialEventsTimeout: time.Duration(o.InitialEventsTimeout),
		MaxPermanentRetries:  o.MaxPermanentRetries,
		GiveUpAfter:          time.Duration(o.GiveUpAfter),
		ChooseWatchTimeout:   p.watchTimeout,
		Clock:                p.clock,
		// Only backoff jitter is left to chance, and backoffs pass at once on the virtual clock.
		Rand:   func() float64 { return 0.5 },
		OnNote: p.Note,
	}
}

// watchTimeout is the replayed reflector's ChooseWatchTimeout: the timeout
// of the next recorded request when it is a watch, so the replayed requests
// show the options actually sent; base otherwise.
func (p *Replay) watchTimeout(base time.Duration) time.Duration {
	l, err := p.next(context.Background())
	if err != nil {
		return base
	}
	p.unread(l)
	if l.K != KindRequest || l.Opts == nil || l.Opts.TimeoutSeconds <= 0 {
		return base
	}
	return time.Duration(l.Opts.TimeoutSeconds) * time.Second
}

// Run runs r (built from ReflectorConfig, with SetForceRelist done) until the
// trace ends, then stops it. It returns the divergence or read error, if any.
func (p *Replay) Run(ctx context.Context, r *reflector.Reflector) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- r.Run(ctx) }()
	select {
	case <-p.done:
		cancel()
		runErr := <-errc
		if err := p.Err(); err != nil {
			return err
		}
		return runErr
	case err := <-errc:
		// The reflector failed (e.g. the recorded run failed the same way).
		if perr := p.Err(); perr != nil {
			return perr
		}
		return err
	case <-ctx.Done():
		<-errc
		return ctx.Err()
	}
}

// Source is the reflector.Source that serves the recorded requests.
func (p *Replay) Source() reflector.Source { return &replaySource{p: p} }

func (p *Replay) finish(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil && err != nil {
		p.err = err
	}
	select {
	case <-p.done:
	default:
		close(p.done)
	}
}

// next returns the next line, collecting note lines on the way.
func (p *Replay) next(ctx context.Context) (*Line, error) {
	for {
		p.mu.Lock()
		l := p.pending
		p.pending = nil
		p.mu.Unlock()
		if l == nil {
			var err error
			l, err = p.rd.Next()
			if err != nil {
				return nil, err
			}
		}
		if err := p.pace(ctx, l.At); err != nil {
			return nil, err
		}
		p.clock.advanceTo(p.rd.Header().StartedAt.Add(time.Duration(l.At)))
		if err := ctx.Err(); err != nil {
			// Stopped, possibly by a clock hook at this very line: serve nothing more.
			return nil, err
		}
		if l.K == KindNote {
			p.mu.Lock()
			p.decisions.recorded(l, p.rd.LineNumber())
			p.mu.Unlock()
			continue
		}
		return l, nil
	}
}

func (p *Replay) unread(l *Line) {
	p.mu.Lock()
	p.pending = l
	p.mu.Unlock()
}

// pace sleeps so lines are served at the recorded pace divided by speed.
func (p *Replay) pace(ctx context.Context, at int64) error {
	if p.speed <= 0 {
		// As fast as possible, but a stopped replay stops at once, not at
		// the end of the request it is in.
		return ctx.Err()
	}
	if !p.paced {
		p.paced, p.wallStart, p.firstAt = true, time.Now(), at
		return nil
	}
	due := p.wallStart.Add(time.Duration(float64(at-p.firstAt) / p.speed))
	d := time.Until(due)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// nextRequest finds the next request line, skipping the rest of the previous
// request (e.g. the end after an ERROR event the reflector stopped at).
func (p *Replay) nextRequest(ctx context.Context, verb reflector.Verb) (*Line, error) {
	for {
		l, err := p.next(ctx)
		if errors.Is(err, io.EOF) {
			p.finish(nil)
			return nil, err
		}
		if err != nil {
			p.finish(err)
			return nil, err
		}
		if l.K != KindRequest {
			if l.ID == p.curID {
				continue
			}
			err := &LineError{p.rd.name, p.rd.LineNumber(), fmt.Errorf("%s line of request %d outside its request", l.K, l.ID)}
			p.finish(err)
			return nil, err
		}
		p.curID = l.ID
		if reflector.Verb(l.Verb) != verb {
			err := &Divergence{Line: p.rd.LineNumber(), Expected: reflector.Verb(l.Verb), Got: verb}
			p.finish(err)
			return nil, err
		}
		return l, nil
	}
}

// drain reads the rest of a trace whose run has stopped, collecting its notes.
func (p *Replay) drain(ctx context.Context) error {
	for {
		l, err := p.next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if l.K == KindRequest {
			return &LineError{p.rd.name, p.rd.LineNumber(), errors.New("a request after the recorded run stopped")}
		}
	}
}

// errEndOfTrace ends the request the reflector makes after the trace's last.
var errEndOfTrace = errors.New("end of trace")

// endOfTrace blocks the reflector's request after the trace's end until the caller stops it.
func endOfTrace(ctx context.Context) error {
	<-ctx.Done()
	return &reflector.RequestEnd{Reason: reflector.EndCanceled, Err: errEndOfTrace}
}

// requestEnd turns a recorded `end` line into what the reflector saw.
func (p *Replay) requestEnd(ctx context.Context, l *Line) error {
	switch reflector.EndReason(l.Reason) {
	case reflector.EndClosed:
		return &reflector.RequestEnd{Reason: reflector.EndClosed}
	case reflector.EndTimeout:
		return &reflector.RequestEnd{Reason: reflector.EndTimeout, Err: reflector.ErrIdleTimeout}
	case reflector.EndCanceled:
		switch l.Error {
		case reflector.ErrForcedRelist.Error():
			p.mu.Lock()
			force := p.onForce
			p.mu.Unlock()
			if force != nil {
				force()
			}
			return &reflector.RequestEnd{Reason: reflector.EndCanceled, Err: reflector.ErrForcedRelist}
		case reflector.ErrInitialEventsTimeout.Error():
			return &reflector.RequestEnd{Reason: reflector.EndCanceled, Err: reflector.ErrInitialEventsTimeout}
		}
		// The recorded run was stopped here: this is where the replay ends,
		// after the decisions it recorded while stopping.
		p.finish(p.drain(ctx))
		return endOfTrace(ctx)
	}
	end := &reflector.RequestEnd{Reason: reflector.EndError}
	end.Status = l.Status.APIStatus()
	if l.Error != "" {
		end.Err = errors.New(l.Error)
	}
	return end
}

type replaySource struct{ p *Replay }

func (s *replaySource) keepBody() bool { return s.p.rd.Header().Objects == ObjectsFull }

// List implements reflector.Source.
func (s *replaySource) List(ctx context.Context, _ reflector.RequestOptions) (*reflector.Page, error) {
	p := s.p
	req, err := p.nextRequest(ctx, reflector.VerbList)
	if err != nil {
		return nil, endOfTrace(ctx)
	}
	page := &reflector.Page{}
	for {
		l, err := p.next(ctx)
		if err != nil {
			// The trace ended inside the request (a crash while recording): the replay ends here.
			p.finish(nil)
			if !errors.Is(err, io.EOF) {
				p.finish(err)
			}
			return nil, endOfTrace(ctx)
		}
		if l.ID != req.ID {
			err := &LineError{p.rd.name, p.rd.LineNumber(), fmt.Errorf("%s line of request %d inside request %d", l.K, l.ID, req.ID)}
			p.finish(err)
			return nil, endOfTrace(ctx)
		}
		switch l.K {
		case KindItem:
			obj, err := reflector.DecodeObject(l.Object, s.keepBody())
			if err != nil {
				err = &LineError{p.rd.name, p.rd.LineNumber(), err}
				p.finish(err)
				return nil, endOfTrace(ctx)
			}
			page.Items = append(page.Items, reflector.Item{Object: obj, Raw: l.Object})
		case KindPage:
			page.ResourceVersion, page.Continue, page.RemainingItemCount = l.ResourceVersion, l.Continue, l.RemainingItemCount
		case KindEnd:
			if l.Reason == string(reflector.EndClosed) {
				return page, nil
			}
			return nil, p.requestEnd(ctx, l)
		}
	}
}

// Watch implements reflector.Source.
func (s *replaySource) Watch(ctx context.Context, _ reflector.RequestOptions) (reflector.Stream, error) {
	p := s.p
	req, err := p.nextRequest(ctx, reflector.VerbWatch)
	if err != nil {
		return &replayStream{ctx: ctx, s: s, over: true}, nil
	}
	// A watch that failed to open has its end right after the request, with a
	// Status or a transport error.
	l, err := p.next(ctx)
	if err == nil && l.K == KindEnd && l.ID == req.ID && l.Reason == string(reflector.EndError) {
		return nil, p.requestEnd(ctx, l)
	}
	if err == nil {
		p.unread(l)
	}
	return &replayStream{ctx: ctx, s: s, id: req.ID}, nil
}

type replayStream struct {
	ctx  context.Context
	s    *replaySource
	id   int64
	over bool
}

func (st *replayStream) Next() (reflector.WatchEvent, error) {
	p := st.s.p
	if st.over {
		return reflector.WatchEvent{}, endOfTrace(st.ctx)
	}
	l, err := p.next(st.ctx)
	if err != nil || l.ID != st.id {
		if err == nil {
			err = &LineError{p.rd.name, p.rd.LineNumber(), fmt.Errorf("%s line of request %d inside watch %d", l.K, l.ID, st.id)}
		}
		st.over = true
		if errors.Is(err, io.EOF) {
			err = nil
		}
		p.finish(err)
		return reflector.WatchEvent{}, endOfTrace(st.ctx)
	}
	switch l.K {
	case KindEvent:
		ev, err := reflector.DecodeWatchEvent(l.Type, l.Object, st.s.keepBody())
		if err != nil {
			st.over = true
			p.finish(&LineError{p.rd.name, p.rd.LineNumber(), err})
			return reflector.WatchEvent{}, endOfTrace(st.ctx)
		}
		return ev, nil
	case KindEnd:
		st.over = true
		return reflector.WatchEvent{}, p.requestEnd(st.ctx, l)
	}
	st.over = true
	err = &LineError{p.rd.name, p.rd.LineNumber(), fmt.Errorf("unexpected %s line inside watch %d", l.K, st.id)}
	p.finish(err)
	return reflector.WatchEvent{}, endOfTrace(st.ctx)
}

func (st *replayStream) Close() {}

// virtualClock is the replay's clock: Now follows the recorded times, After
// fires at once, and AfterFunc timers never fire — the
// trace already says how each request ended.
type virtualClock struct {
	mu    sync.Mutex
	now   time.Time
	hooks []func(time.Time)
}

// NewvirtualClock starts at t.
func newvirtualClock(t time.Time) *virtualClock { return &virtualClock{now: t} }

// Now implements reflector.Clock.
func (c *virtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After implements reflector.Clock: a backoff wait passes at once, and the
// virtual time stays where the recording says (the next line's `at` moves it).
func (c *virtualClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return ch
}

// AfterFunc implements reflector.Clock with a timer that never fires.
func (c *virtualClock) AfterFunc(time.Duration, func()) reflector.Timer { return idleTimer{} }

func (c *virtualClock) advanceTo(t time.Time) {
	c.mu.Lock()
	moved := t.After(c.now)
	if moved {
		c.now = t
	}
	hooks := c.hooks
	c.mu.Unlock()
	if moved {
		for _, f := range hooks {
			f(t)
		}
	}
}

type idleTimer struct{}

func (idleTimer) Stop() bool               { return true }
func (idleTimer) Reset(time.Duration) bool { return true }
