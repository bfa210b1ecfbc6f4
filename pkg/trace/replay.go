package trace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
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

// Replay serves a recorded trace back to one reflector per resource of the
// trace, as their Sources, with a virtual clock that follows the recorded
// times. One goroutine reads the trace and hands each line, in the order
// recorded, to its resource's reflector. The end of the trace ends the replay:
// Done is closed, and the request a reflector makes after its last recorded
// one waits until the caller cancels it.
type Replay struct {
	// runCtx is Run's context, set before its goroutines start.
	runCtx    context.Context
	rd        *Reader
	start     time.Time // the header's StartedAt, read once
	player    *Player
	clock     *virtualClock
	resources []*ResourceReplay
	// allStopped is closed once every resource's run has stopped.
	allStopped chan struct{}
	running    atomic.Int64

	mu      sync.Mutex
	err     error
	eof     error // what next returns once the trace is read: io.EOF or the read error
	done    chan struct{}
	started bool

	// Owned by the reading goroutine: the lines read ahead of the one
	// being served (see lookAhead), and the read error met while reading
	// them, returned after them.
	ahead    []*Line
	aheadErr error

	// onProbe is called with each probe line (see OnProbe).
	onProbe func(at time.Time, l *Line)
	// feed takes every line of an observed trace (see Feed); fed counts
	// the recorded decisions it was given.
	feed func(*Line) error
	fed  atomic.Int64
	// fedStopped says, of each stream a request was fed for, whether its
	// stopped note was fed too (under mu).
	fedStopped map[int]bool
	// onFlowControl is called with each flowcontrol line (see OnFlowControlNames).
	onFlowControl func(flowSchemas, priorityLevels map[string]string)
}

// maxLookAhead bounds the lines read ahead to find what a backoff waited.
const maxLookAhead = 1024

// ResourceReplay is the replay of one resource of a trace: the Source, the
// configuration and the decision comparison of that resource's reflector.
type ResourceReplay struct {
	p      *Replay
	header ResourceHeader
	lines  chan *Line    // from the reading goroutine, in recorded order
	stop   chan struct{} // closed when the resource's run has stopped: its lines are dropped
	once   sync.Once

	mu        sync.Mutex
	now       time.Time // the time of the last line the resource took: its reflector's clock
	pending   *Line     // a line read ahead
	curID     int64
	onForce   func()
	forced    bool // onForce was called at a forced-relist end line, whose forced-relist note is to come
	onAudit   func(*reflector.AuditReport)
	onLine    func(*Line)
	decisions decisionComparison
}

// NewReplay replays rd. speed 0 serves as fast as possible, 1 in real time, N
// N times faster than recorded; Player changes that while the replay runs.
func NewReplay(rd *Reader, speed float64) *Replay {
	h := rd.Header()
	p := &Replay{rd: rd, start: h.StartedAt, player: newPlayer(speed, time.Now), clock: newVirtualClock(h.StartedAt), done: make(chan struct{}), allStopped: make(chan struct{})}
	for _, rh := range h.Resources {
		p.resources = append(p.resources, &ResourceReplay{p: p, header: rh, lines: make(chan *Line), stop: make(chan struct{}), now: h.StartedAt})
	}
	p.running.Store(int64(len(p.resources)))
	return p
}

// Header is the trace's header.
func (p *Replay) Header() Header { return p.rd.Header() }

// at is the wall time line l was recorded at.
func (p *Replay) at(l *Line) time.Time { return p.start.Add(time.Duration(l.At)) }

// Resources are the replays of the trace's resources, in the header's order.
func (p *Replay) Resources() []*ResourceReplay { return p.resources }

// Player controls the replay's pace: pause, step, speed and jumps forward.
func (p *Replay) Player() *Player { return p.player }

// Clock is the virtual clock the reflectors must use.
func (p *Replay) Clock() reflector.Clock { return p.clock }

// OnClockAdvance registers f, called with the new time whenever the replay's
// clock moves forward: before the trace line that moved it is served, so f
// sees the run as it stood just before that moment (an age at its largest).
// f runs on the goroutine that took the line (a resource's reflector's, or
// the one reading an observed trace): with several resources, on several
// goroutines at once. It must be safe for that, and must not block.
func (p *Replay) OnClockAdvance(f func(now time.Time)) {
	p.clock.mu.Lock()
	p.clock.hooks = append(p.clock.hooks, f)
	p.clock.mu.Unlock()
}

// OnProbe registers f, called with each `probe` line of the trace and its
// recorded time when the replay reaches it: on the goroutine of the
// reflector of the line's resource (the Lease's watch), after it handled
// the lines before (the event the probe timed), as for a recorded audit;
// on the goroutine reading the trace once that reflector has stopped. The
// line is not the reflector's to read: it moves no clock, and OnLine does
// not see it. Call it before Run; f must not block nor change the line.
func (p *Replay) OnProbe(f func(at time.Time, l *Line)) { p.onProbe = f }

// OnFlowControlNames registers f, called with the names of each
// `flowcontrol` line (uid → name) when the replay reaches it, as OnProbe's
// f is, on the goroutine of the first resource's reflector (the line names
// no resource). Call it before Run; f must not block.
func (p *Replay) OnFlowControlNames(f func(flowSchemas, priorityLevels map[string]string)) {
	p.onFlowControl = f
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

// RecordedDecisions is how many decisions (`note` lines) the trace held so far, for all resources.
func (p *Replay) RecordedDecisions() int {
	n := int(p.fed.Load())
	for _, rr := range p.resources {
		n += rr.RecordedDecisions()
	}
	return n
}

// ReadToEnd says whether the replay read the whole trace: false when it
// was stopped before (the user quit, or interrupted it).
func (p *Replay) ReadToEnd() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return errors.Is(p.eof, io.EOF)
}

// RecordingCut says, once the whole trace has been read, whether a
// resource's recording has decisions but not its run's stop, or an
// observed stream's has requests but not its stop: the run was killed or
// its file cut (EndedEarlyText). Safe to call while the replay
// runs; EndedEarly, after it, says whether that left a difference out.
func (p *Replay) RecordingCut() bool {
	if !p.ReadToEnd() {
		return false
	}
	p.mu.Lock()
	for _, stopped := range p.fedStopped {
		if !stopped {
			p.mu.Unlock()
			return true
		}
	}
	p.mu.Unlock()
	for _, rr := range p.resources {
		rr.mu.Lock()
		cut := rr.decisions.recordedCount > 0 && !rr.decisions.recordedStop
		rr.mu.Unlock()
		if cut {
			return true
		}
	}
	return false
}

// EndedEarlyText says that a trace ends before its run recorded its stop,
// and what may have cut it (EndedEarly).
const EndedEarlyText = "the recording ends early, before it recorded its stop (its run was killed, the file cut, or it is a segment of a rotating trace, closed before the run stopped)"

// DifferedText says that a replay decided differently from the recorded
// decisions in n places, and where to see them.
func DifferedText(n int) string {
	return fmt.Sprintf("the replayed reflector decided differently from the recorded one in %s (kubectl watchcache replay TRACE --speed 0 --no-tui shows where)", format.PluralUngrouped(n, "place"))
}

// DifferencesSoFar counts the places the replayed decisions differed from
// the recorded ones so far, for all resources, as they are compared (the
// decisions still waiting for their counterpart are counted by
// Differences, at the end). Safe to call while the replay runs.
func (p *Replay) DifferencesSoFar() int {
	n := 0
	for _, rr := range p.resources {
		rr.mu.Lock()
		if rr.decisions.recordedCount > 0 { // a trace without decisions has nothing to compare
			n += rr.decisions.total
		}
		rr.mu.Unlock()
	}
	return n
}

// EndedEarly says whether the recording of any resource ended before its
// run recorded its stop (a run killed, a file cut short): the replay stopped
// there, and that is no difference. Call it after Differences.
func (p *Replay) EndedEarly() bool {
	for _, rr := range p.resources {
		rr.mu.Lock()
		early := rr.decisions.endedEarly
		rr.mu.Unlock()
		if early {
			return true
		}
	}
	return false
}

// Differences describes where the replayed decisions differ from the
// recorded ones, for all resources (at most max of them, each naming its
// resource when there are several), and counts them all. Call it after the
// replay ended.
func (p *Replay) Differences(max int) (shown []string, total int) {
	for _, rr := range p.resources {
		s, n := rr.Differences(max - len(shown))
		total += n
		for _, d := range s {
			if len(p.resources) > 1 {
				d = rr.header.Resource.String() + ": " + d
			}
			shown = append(shown, d)
		}
	}
	return shown, total
}

// Feed makes the replay serve an observed trace (Header.Observed, recorded
// by the observing proxy): every line goes to f, in order, on the goroutine
// reading the trace, paced by the Player and clocked as a reflector's
// replay is; no reflector runs, and Run takes none. f's error ends the
// replay. Call it before Run.
func (p *Replay) Feed(f func(*Line) error) { p.feed, p.fedStopped = f, map[int]bool{} }

// Run runs the reflectors, one per resource in the header's order (each
// built from its ResourceReplay's ReflectorConfig, with SetForceRelist
// and SetAudit done), until the trace ends, then stops them; a replay with a Feed takes
// no reflector and serves its lines to the feed. It returns the divergence
// or read error that ended the replay, if any, and the reflectors' failures.
func (p *Replay) Run(ctx context.Context, reflectors ...*reflector.Reflector) error {
	if p.feed != nil && len(reflectors) > 0 {
		return errors.New("replaying an observed trace: it feeds no reflector")
	}
	if p.feed == nil && len(p.resources) == 0 {
		return errors.New("the trace's header lists no resources: there is nothing to replay")
	}
	if p.feed == nil && len(reflectors) != len(p.resources) {
		return fmt.Errorf("replaying a trace of %d resources with %d reflectors", len(p.resources), len(reflectors))
	}
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("the replay already ran")
	}
	p.started = true
	p.mu.Unlock()
	if p.feed != nil {
		return p.runFeed(ctx)
	}
	parent := ctx
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	// Set before the goroutines start, which read it (watchTimeout).
	p.runCtx = ctx
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		p.read(ctx)
	}()
	errs := make([]error, len(reflectors))
	var wg sync.WaitGroup
	for i, r := range reflectors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.resources[i].begin(ctx)
			errs[i] = r.Run(ctx)
			if errs[i] != nil && len(reflectors) > 1 {
				errs[i] = fmt.Errorf("%s: %w", p.resources[i].header.Resource, errs[i])
			}
			// A reflector that stopped (it failed as the recorded one did)
			// takes no more lines: they are dropped.
			p.resources[i].stopped()
		}()
	}
	select {
	case <-p.done:
	case <-parent.Done():
	}
	cancel()
	wg.Wait()
	<-readDone
	if err := p.Err(); err != nil {
		return err
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	default:
		return parent.Err()
	}
}

// runFeed serves an observed trace's lines to the feed until the end of
// the trace or ctx ends (which is no error).
func (p *Replay) runFeed(ctx context.Context) (err error) {
	defer func() { p.finish(err) }()
	for {
		if ctx.Err() != nil {
			return nil
		}
		l, err := p.readLine()
		if errors.Is(err, io.EOF) {
			p.mu.Lock()
			p.eof = err
			p.mu.Unlock()
			return nil
		}
		if err != nil {
			return err
		}
		if err := p.player.wait(ctx, time.Duration(l.At)); err != nil {
			return nil
		}
		p.clock.advanceTo(p.at(l))
		if l.K == KindNote {
			p.fed.Add(1)
		}
		if err := p.feed(l); err != nil {
			return err
		}
		if stop := l.K == KindNote && l.Reason == string(reflector.ReasonStopped); stop || l.K == KindRequest {
			p.mu.Lock()
			p.fedStopped[l.R] = stop
			p.mu.Unlock()
		}
		p.player.servedLine(time.Duration(l.At), l.K)
	}
}

// Now is the replay's clock: the trace's start plus the last line's at.
func (p *Replay) Now() time.Time { return p.clock.Now() }

// read hands the trace's lines to the resources, in order, then closes their channels.
func (p *Replay) read(ctx context.Context) {
	for {
		l, err := p.nextLine()
		if err != nil {
			// The resources read the end (or the error) when they ask for
			// their next line, so what they do with the lines before it (a
			// divergence, say) comes first; the one that reads it ends the
			// replay. Only when every resource's run has stopped does nobody
			// read: then the end is here.
			p.mu.Lock()
			p.eof = err
			p.mu.Unlock()
			for _, rr := range p.resources {
				close(rr.lines)
			}
			select {
			case <-p.done:
			case <-p.allStopped:
				p.finish(err)
			case <-ctx.Done():
			}
			return
		}
		if l.K == KindNote && l.Reason == string(reflector.ReasonBackoff) && l.Wait <= 0 {
			p.lookAhead(l)
		}
		if err := p.player.wait(ctx, time.Duration(l.At)); err != nil {
			return
		}
		// A flowcontrol line's r is unread (0 as written): the first resource takes it.
		i := l.R
		if l.K == KindFlowControl {
			i = 0
		}
		rr := p.resources[i]
		select {
		case rr.lines <- l:
		case <-rr.stop:
			// Nobody replays the resource any more; its decisions are still
			// the recording's, and the run's lines are handled here.
			if l.K == KindNote {
				rr.recorded(l)
			}
			p.runLine(l)
		case <-ctx.Done():
			return
		}
		p.player.servedLine(time.Duration(l.At), l.K)
	}
}

// runLine hands l to its listener when it is a line about the run rather
// than a reflector's (a probe's measure, names of flow control), and
// reports whether it was one.
func (p *Replay) runLine(l *Line) bool {
	switch l.K {
	case KindProbe:
		if p.onProbe != nil {
			p.onProbe(p.at(l), l)
		}
	case KindFlowControl:
		if p.onFlowControl != nil {
			p.onFlowControl(l.FlowSchemas, l.PriorityLevels)
		}
	default:
		return false
	}
	return true
}

// nextLine is the trace's next line, read ahead or not.
func (p *Replay) nextLine() (*Line, error) {
	if len(p.ahead) > 0 {
		l := p.ahead[0]
		p.ahead[0] = nil
		p.ahead = p.ahead[1:]
		return l, nil
	}
	if p.aheadErr != nil {
		return nil, p.aheadErr
	}
	return p.readLine()
}

func (p *Replay) readLine() (*Line, error) {
	l, err := p.rd.Next()
	if err != nil {
		return nil, err
	}
	l.num = p.rd.LineNumber()
	return l, nil
}

// lookAhead finds what the recorded run waited at a backoff note written
// before notes recorded their wait: the time to its resource's next
// request, which it reads ahead for (at most maxLookAhead lines: the other
// resources' lines in between). A run stopped during its backoff has no
// next request, and the wait stays unknown.
func (p *Replay) lookAhead(note *Line) {
	for i := 0; ; i++ {
		if i == len(p.ahead) {
			if p.aheadErr != nil || i >= maxLookAhead {
				return
			}
			l, err := p.readLine()
			if err != nil {
				p.aheadErr = err
				return
			}
			p.ahead = append(p.ahead, l)
		}
		l := p.ahead[i]
		if l.R != note.R {
			continue
		}
		switch {
		case l.K == KindRequest:
			if l.At > note.At {
				note.gap = roundWait(time.Duration(l.At - note.At))
			}
			return
		case l.K == KindNote && l.Reason == string(reflector.ReasonStopped):
			return
		}
	}
}

// finish ends the replay, with err when the trace is at fault; the end of
// the trace (io.EOF), and the cancellation that follows it, is no error.
func (p *Replay) finish(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		return
	default:
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		p.err = err
	}
	close(p.done)
}

// endErr is what a resource's next returns once the trace is read.
func (p *Replay) endErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.eof // set before the resources' channels are closed
}

// lineError is a *LineError at line n of the trace.
func (p *Replay) lineError(n int, err error) *LineError { return &LineError{p.rd.name, n, err} }

// Header is the resource's part of the trace header.
func (rr *ResourceReplay) Header() ResourceHeader { return rr.header }

// SetForceRelist gives the replay the reflector's ForceRelist, so a relist the
// user forced while recording is forced again at the same point.
func (rr *ResourceReplay) SetForceRelist(f func()) {
	rr.mu.Lock()
	rr.onForce = f
	rr.mu.Unlock()
}

// force forces the replayed reflector's relist where the recording's was
// forced: at the end of the request the relist canceled (atEnd), or, when
// it canceled none, at its forced-relist decision; once either way, so the
// decision that follows such an end forces nothing more.
func (rr *ResourceReplay) force(atEnd bool) {
	rr.mu.Lock()
	f, already := rr.onForce, rr.forced
	rr.forced = atEnd
	rr.mu.Unlock()
	if f != nil && (atEnd || !already) {
		f()
	}
}

// SetAudit gives the replay a way to note a recorded audit in the replayed
// reflector's run (Reflector.NoteAudit), so an audit the user made while
// recording is noted again at the same point, with what it found then.
func (rr *ResourceReplay) SetAudit(f func(*reflector.AuditReport)) {
	rr.mu.Lock()
	rr.onAudit = f
	rr.mu.Unlock()
}

// Note collects the replayed reflector's decisions for Differences; pass it as (part of) OnNote.
func (rr *ResourceReplay) Note(n reflector.Note) {
	if n.Kind != reflector.NoteDecision || n.Decision == nil || n.Decision.Reason == reflector.ReasonAlert {
		return // an alert is the rules' note, not a decision of the reflector's (see recorded)
	}
	rr.mu.Lock()
	rr.decisions.replayed(noteLine(n.Decision))
	rr.mu.Unlock()
}

// OnLine registers f, called with each of the resource's lines as the
// replay takes it off the trace (its decisions included, a line read ahead
// once): on the goroutine of the resource's reflector, after the clock moved
// to the line's time and before the reflector sees it, so in order with that
// reflector's notes. A caller that lays the notes out in time (the report)
// takes the recorded times from here: a note's At is the replay's clock, which
// stands at the last line taken (a request's start precedes its line) and is
// shared by the resources. Call it before Run; f must not block nor change
// the line.
func (rr *ResourceReplay) OnLine(f func(*Line)) {
	rr.mu.Lock()
	rr.onLine = f
	rr.mu.Unlock()
}

// RecordedDecisions is how many decisions (`note` lines) the trace held so far for the resource.
func (rr *ResourceReplay) RecordedDecisions() int {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return rr.decisions.recordedCount
}

// Differences describes where the replayed decisions differ from the
// recorded ones (at most max of them) and counts them all. Decisions are
// compared by state, reason and the structured fields the recorded note
// has (resourceVersion, objects, code, cursor, diff counts), never by their
// sentences. Call it after the replay ended.
func (rr *ResourceReplay) Differences(max int) (shown []string, total int) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return rr.decisions.finish(max)
}

// ReflectorConfig is the resource's recorded reflector configuration wired
// to this replay: its Source, the replay's clock, deterministic watch
// timeouts and jitter, and the decision comparison. Chain OnNote if the
// caller needs notes too.
func (rr *ResourceReplay) ReflectorConfig() reflector.Config {
	o := rr.header.Options
	return reflector.Config{
		Source:               &replaySource{rr: rr},
		Strategy:             o.Strategy,
		PageSize:             o.PageSize,
		ResourceVersion:      o.ResourceVersion,
		ResourceVersionMatch: o.ResourceVersionMatch,
		WatchTimeout:         time.Duration(o.WatchTimeout),
		IdleTimeout:          time.Duration(o.IdleTimeout),
		InitialEventsTimeout: time.Duration(o.InitialEventsTimeout),
		MaxPermanentRetries:  o.MaxPermanentRetries,
		GiveUpAfter:          time.Duration(o.GiveUpAfter),
		Once:                 o.Once,
		// Traces written before a 404 after the list was retried replay
		// as they were decided.
		NotFoundAfterListPermanent: !o.RetriesNotFound,
		Backoff:                    o.Backoff.Backoff(),
		ChooseWatchTimeout:         rr.watchTimeout,
		ChooseBackoff:              rr.backoffWait,
		Clock:                      &resourceClock{virtualClock: rr.p.clock, rr: rr},
		// Only backoff jitter is left to chance, and a backoff waits what the
		// recording waited when the trace says it.
		Rand:   func() float64 { return 0.5 },
		OnNote: rr.Note,
	}
}

// backoffWait is the replayed reflector's ChooseBackoff: the wait of the
// recorded backoff decision, which comes next among the resource's lines
// (its recorded wait, or in an older trace the time to the next request);
// computed when the trace says none: it has no decisions, or the recorded
// run did not back off there (a difference the comparison reports).
func (rr *ResourceReplay) backoffWait(computed time.Duration) time.Duration {
	rr.mu.Lock()
	decisions := rr.decisions.recordedCount > 0
	rr.mu.Unlock()
	if !decisions {
		// A trace without decisions: the next line is the request after the
		// wait, and taking it now would wait it out before backing off.
		return computed
	}
	for {
		l, err := rr.take(rr.p.runCtx, true)
		if err != nil {
			return computed
		}
		switch {
		case l.K == KindNote && l.Reason == string(reflector.ReasonBackoff):
			if w := l.recordedWait(); w > 0 {
				return w
			}
			return computed
		case l.K == KindNote:
		case l.K != KindRequest && l.ID == rr.curID:
			// The rest of the request the reflector left (the end after an
			// ERROR event), which nextRequest skips too.
		default:
			rr.unread(l)
			return computed
		}
	}
}

// resourceClock is a resource's reflector's clock in a replay: the time of
// the last line the resource took (not the replay's clock, which the other
// resources' lines move on their own goroutines: read from there, a
// resource's times would depend on the scheduling, and a replay would not
// repeat itself); and a backoff lasts until the resource's next line is due
// (its next request, at the recorded pace), so that while the recorded run
// waited the replayed one is in Backoff too.
type resourceClock struct {
	*virtualClock
	rr *ResourceReplay
}

// Now implements reflector.Clock: the time of the resource's last line.
func (c *resourceClock) Now() time.Time {
	c.rr.mu.Lock()
	defer c.rr.mu.Unlock()
	return c.rr.now
}

// After implements reflector.Clock: it returns once the resource's next
// line has come (it is read ahead, and moves the clock to its time), or the
// replay ends, with the time then. The reflector calls it for a backoff, on
// its own goroutine: what the lines taken do (OnLine, a recorded audit's
// note) is in order with the reflector's notes, as for any line it takes.
func (c *resourceClock) After(time.Duration) <-chan time.Time {
	rr := c.rr
	if l, err := rr.take(rr.p.runCtx, false); err == nil {
		rr.unread(l)
	}
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return ch
}

// watchTimeout is the replayed reflector's ChooseWatchTimeout: the timeout
// of the next recorded request when it is a watch, so the replayed requests
// show the options actually sent; base otherwise.
func (rr *ResourceReplay) watchTimeout(base time.Duration) time.Duration {
	// The replay's own context: a replay stopped while the reflector picks
	// its timeout must not leave it waiting for a line that never comes.
	l, err := rr.next(rr.p.runCtx)
	// The rest of the request the reflector left (the end after an ERROR
	// event it stopped at) stands before the request: nextRequest would skip
	// it, and so does the peek, or the watch is sent with base.
	for err == nil && l.K != KindRequest && l.ID == rr.curID {
		l, err = rr.next(rr.p.runCtx)
	}
	if err != nil {
		return base
	}
	rr.unread(l)
	if l.K != KindRequest || l.Opts == nil || l.Opts.TimeoutSeconds <= 0 {
		return base
	}
	return time.Duration(l.Opts.TimeoutSeconds) * time.Second
}

// stopped drops the resource's lines from now on: its run has stopped.
func (rr *ResourceReplay) stopped() {
	rr.once.Do(func() {
		close(rr.stop)
		if rr.p.running.Add(-1) == 0 {
			close(rr.p.allStopped)
		}
	})
}

// begin moves the resource's clock to the time of its first line before
// its reflector runs. The recorded reflector began its run there (its first
// line is its first decision, written as Run began), not at the trace's
// start: the header is written first, and with several resources each began
// on its own. So the replay's Stats.Started, and the time to sync counted
// from it, are the recorded run's. A first line that is a decision is
// recorded for the comparison as next would; any other line is put back.
func (rr *ResourceReplay) begin(ctx context.Context) {
	l, err := rr.take(ctx, true)
	if err == nil && l.K != KindNote {
		rr.unread(l)
	}
}

// next returns the resource's next line. Taking a line moves the clock to
// its time, so the replayed reflector sees each moment as the recorded one
// did; the decisions it passes are kept for the comparison.
func (rr *ResourceReplay) next(ctx context.Context) (*Line, error) { return rr.take(ctx, false) }

// take is next, returning the decisions it passes too when notes is set.
func (rr *ResourceReplay) take(ctx context.Context, notes bool) (*Line, error) {
	rr.mu.Lock()
	l, onLine, onAudit := rr.pending, rr.onLine, rr.onAudit
	rr.pending = nil
	if l != nil {
		// A line put back may have been taken without its time (StopsHere).
		if at := rr.p.at(l); at.After(rr.now) {
			rr.now = at
		}
		rr.mu.Unlock()
		return l, nil
	}
	rr.mu.Unlock()
	for {
		select {
		case l, ok := <-rr.lines:
			if !ok {
				return nil, rr.p.endErr()
			}
			if rr.p.runLine(l) {
				// The run's, handled in order with the reflector's lines
				// (a probe's sample after the event it timed), but neither
				// the reflector's nor its clock's.
				continue
			}
			at := rr.p.at(l)
			rr.mu.Lock()
			if at.After(rr.now) {
				rr.now = at
			}
			rr.mu.Unlock()
			rr.p.clock.advanceTo(at)
			if onLine != nil {
				onLine(l)
			}
			if l.K == KindAudit {
				// Not the reflector's to read: a note of its run, at its time.
				if onAudit != nil {
					onAudit(l.AuditReport())
				}
				continue
			}
			if l.K == KindNote {
				// A decision taken off the channel is the recording's even if
				// the replay is stopping: the end of the trace (read by another
				// resource) may cancel ctx between the receive and here.
				rr.recorded(l)
				if l.Reason == string(reflector.ReasonForcedRelist) {
					// Forced with no request open (a backoff cut short,
					// or between two requests): no end line forced it.
					rr.force(false)
				}
				if notes {
					return l, nil
				}
				continue
			}
			if err := ctx.Err(); err != nil {
				// Stopped, possibly by a clock hook at this very line: serve nothing more.
				return nil, err
			}
			return l, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// recorded keeps a recorded decision for the comparison.
func (rr *ResourceReplay) recorded(l *Line) {
	if l.Reason == string(reflector.ReasonAlert) {
		return // the rules' note, not a decision of the reflector's
	}
	rr.mu.Lock()
	rr.decisions.recorded(l)
	rr.mu.Unlock()
}

func (rr *ResourceReplay) unread(l *Line) {
	rr.mu.Lock()
	rr.pending = l
	rr.mu.Unlock()
}

// nextRequest finds the next request line, skipping the rest of the previous
// request (e.g. the end after an ERROR event the reflector stopped at).
func (rr *ResourceReplay) nextRequest(ctx context.Context, verb reflector.Verb) (*Line, error) {
	p := rr.p
	for {
		l, err := rr.next(ctx)
		if err != nil {
			p.finish(err)
			return nil, err
		}
		if l.K != KindRequest {
			if l.ID == rr.curID {
				continue
			}
			err := p.lineError(l.num, fmt.Errorf("%s line of request %d outside its request", l.K, l.ID))
			p.finish(err)
			return nil, err
		}
		rr.curID = l.ID
		rr.mu.Lock()
		rr.decisions.began() // the decisions before this request are in the recording
		rr.mu.Unlock()
		if reflector.Verb(l.Verb) != verb {
			err := &Divergence{Line: l.num, Expected: reflector.Verb(l.Verb), Got: verb}
			p.finish(err)
			return nil, err
		}
		return l, nil
	}
}

// drain takes the rest of a resource whose recorded run has stopped: only
// its decisions may follow.
func (rr *ResourceReplay) drain(ctx context.Context) error {
	for {
		l, err := rr.next(ctx)
		if err != nil {
			return err // io.EOF, the end of the trace, is no error to finish
		}
		if l.K == KindRequest {
			return rr.p.lineError(l.num, errors.New("a request after the recorded run stopped"))
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
func (rr *ResourceReplay) requestEnd(ctx context.Context, l *Line) error {
	switch reflector.EndReason(l.Reason) {
	case reflector.EndClosed:
		return &reflector.RequestEnd{Reason: reflector.EndClosed}
	case reflector.EndTimeout:
		return &reflector.RequestEnd{Reason: reflector.EndTimeout, Err: reflector.ErrIdleTimeout}
	case reflector.EndCanceled:
		switch l.Error {
		case reflector.ErrForcedRelist.Error():
			rr.force(true)
			return &reflector.RequestEnd{Reason: reflector.EndCanceled, Err: reflector.ErrForcedRelist}
		case reflector.ErrInitialEventsTimeout.Error():
			return &reflector.RequestEnd{Reason: reflector.EndCanceled, Err: reflector.ErrInitialEventsTimeout}
		}
		// A trace recorded before "stopped" existed says "canceled" where
		// its run was stopped.
		fallthrough
	case reflector.EndStopped:
		// The recorded run was stopped here: the resource's replay ends here,
		// after the decisions it recorded while stopping; the trace's end
		// ends the replay.
		rr.p.finish(rr.drain(ctx))
		return endOfTrace(ctx)
	}
	end := &reflector.RequestEnd{Reason: reflector.EndError}
	end.Status = l.Status.APIStatus()
	end.Throttle = l.Throttle.Reflector()
	if l.Error != "" {
		end.Err = errors.New(l.Error)
	}
	return end
}

type replaySource struct{ rr *ResourceReplay }

// StopsHere implements reflector.Stopper: the recorded run was stopped
// before its next request when its Stopped decision comes first (after the
// decisions and the rest of the last request that it passes). The replay
// then ends where the recording did. Otherwise the line read ahead is put
// back, and the resource's clock keeps the time it had, so that the next
// request starts when it would have. A recording that ends here without its
// stop (its run killed, its file cut) ends the replay here too: the
// reflector makes no request the recording does not have.
func (s *replaySource) StopsHere(ctx context.Context) bool {
	rr := s.rr
	rr.mu.Lock()
	now := rr.now
	rr.mu.Unlock()
	for {
		l, err := rr.take(ctx, true)
		if errors.Is(err, io.EOF) {
			rr.p.finish(nil)
			return true
		}
		if err != nil {
			return false
		}
		switch {
		case l.K == KindNote && l.Reason == string(reflector.ReasonStopped):
			rr.p.finish(rr.drain(ctx))
			return true
		case l.K == KindNote:
		case l.K != KindRequest && l.ID == rr.curID:
			// The rest of the request the reflector left, which nextRequest skips too.
		default:
			rr.unread(l)
			rr.mu.Lock()
			rr.now = now
			rr.mu.Unlock()
			return false
		}
	}
}

func (s *replaySource) keepBody() bool { return s.rr.header.Objects == ObjectsFull }

// List implements reflector.Source.
func (s *replaySource) List(ctx context.Context, _ reflector.RequestOptions) (*reflector.Page, error) {
	rr, p := s.rr, s.rr.p
	req, err := rr.nextRequest(ctx, reflector.VerbList)
	if err != nil {
		return nil, endOfTrace(ctx)
	}
	page := &reflector.Page{}
	for {
		l, err := rr.next(ctx)
		if err != nil {
			// The trace ended inside the request (a crash while recording): the replay ends here.
			p.finish(err)
			return nil, endOfTrace(ctx)
		}
		if l.ID != req.ID {
			p.finish(p.lineError(l.num, fmt.Errorf("%s line of request %d inside request %d", l.K, l.ID, req.ID)))
			return nil, endOfTrace(ctx)
		}
		switch l.K {
		case KindItem:
			obj, err := wire.DecodeObject(l.Object, s.keepBody())
			if err != nil {
				p.finish(p.lineError(l.num, err))
				return nil, endOfTrace(ctx)
			}
			page.Items = append(page.Items, reflector.Item{Object: obj, Raw: l.Object})
		case KindPage:
			page.ResourceVersion, page.Continue, page.RemainingItemCount, page.Bytes = l.ResourceVersion, l.Continue, l.RemainingItemCount, l.Bytes
		case KindEnd:
			if l.Reason == string(reflector.EndClosed) {
				return page, nil
			}
			return nil, rr.requestEnd(ctx, l)
		}
	}
}

// Watch implements reflector.Source.
func (s *replaySource) Watch(ctx context.Context, _ reflector.RequestOptions) (reflector.Stream, error) {
	rr := s.rr
	req, err := rr.nextRequest(ctx, reflector.VerbWatch)
	if err != nil {
		return &replayStream{ctx: ctx, s: s, over: true}, nil
	}
	// A watch that failed to open has its end right after the request, with a
	// Status or a transport error.
	l, err := rr.next(ctx)
	if err == nil && l.K == KindEnd && l.ID == req.ID && l.Reason == string(reflector.EndError) {
		return nil, rr.requestEnd(ctx, l)
	}
	if err == nil {
		rr.unread(l)
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
	rr, p := st.s.rr, st.s.rr.p
	if st.over {
		return reflector.WatchEvent{}, endOfTrace(st.ctx)
	}
	l, err := rr.next(st.ctx)
	if err != nil || l.ID != st.id {
		if err == nil {
			err = p.lineError(l.num, fmt.Errorf("%s line of request %d inside watch %d", l.K, l.ID, st.id))
		}
		st.over = true
		p.finish(err)
		return reflector.WatchEvent{}, endOfTrace(st.ctx)
	}
	switch l.K {
	case KindEvent:
		ev, err := wire.DecodeWatchEvent(l.Type, l.Object, st.s.keepBody())
		if err != nil {
			st.over = true
			p.finish(p.lineError(l.num, err))
			return reflector.WatchEvent{}, endOfTrace(st.ctx)
		}
		// The recorded estimate, not one from the recorded object (which
		// lost its managedFields): a trace without it has none.
		ev.Delivery = l.Delivery()
		ev.Changes = l.Changes
		ev.Bytes = l.Bytes
		return ev, nil
	case KindEnd:
		st.over = true
		return reflector.WatchEvent{}, rr.requestEnd(st.ctx, l)
	}
	st.over = true
	p.finish(p.lineError(l.num, fmt.Errorf("unexpected %s line inside watch %d", l.K, st.id)))
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

// newVirtualClock starts at t.
func newVirtualClock(t time.Time) *virtualClock { return &virtualClock{now: t} }

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
