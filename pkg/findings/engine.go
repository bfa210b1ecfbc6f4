package findings

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// Options tune an Engine. The zero value is the catalogue's defaults.
type Options struct {
	// Resource and Client name whose findings they are (Finding.Resource, Finding.Client).
	Resource string
	Client   string
	// StreamAsked says the user asked for the streaming list explicitly
	// (--initial-list=stream): its refusal is then a warning, not info.
	StreamAsked bool
	// StormRelists relists within StormWindow are a relist storm (0: the
	// catalogue's 3 in 10 minutes).
	StormRelists int
	StormWindow  time.Duration
	// Ignore are the ids the user silenced (--ignore-finding).
	Ignore []ID
}

// Source is what an engine reads of its reflector's running totals, besides
// the notes: slow-delivery's lag counts. A Reflector, a Ledger and an
// observed Stream have them.
type Source interface {
	Lag() reflector.LagStats
}

// Engine raises the findings of one reflector from its notes: it keeps the
// bookkeeping its rules share (track) and hands each note to every rule.
// Observe is called with each note in order (from the reflector's
// goroutine); the other methods may be called from any goroutine.
type Engine struct {
	src Source

	mu      sync.Mutex
	opts    Options
	ignore  map[ID]bool
	found   map[ID]*Finding
	order   []ID // raise order
	onRaise []func(Finding)
	pending []Finding // raised during the note being observed, handed to onRaise after mu

	track track
	rules []rule // in the order they read a note (see pass)
}

// New returns an engine with opts; src is the reflector's (a Reflector, an
// observed Stream), read where a note needs the totals (nil: none).
func New(opts Options, src Source) *Engine {
	e := &Engine{src: src, found: map[ID]*Finding{}, opts: opts, rules: newRules()}
	slices.SortStableFunc(e.rules, func(a, b rule) int { return cmp.Compare(pass(a), pass(b)) })
	e.Configure(opts)
	return e
}

// Configure sets the user's tuning (thresholds, Ignore); call it
// before the first note. The engine keeps the Resource, Client and
// StreamAsked it was made with.
func (e *Engine) Configure(opts Options) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	keep := e.opts
	e.opts = opts
	e.opts.Resource, e.opts.Client, e.opts.StreamAsked = keep.Resource, keep.Client, keep.StreamAsked
	tune(e.rules, opts)
	e.ignore = map[ID]bool{}
	for _, id := range opts.Ignore {
		e.ignore[id] = true
	}
	for id, f := range e.found {
		f.Ignored = e.ignore[id]
	}
}

// OnRaise adds a listener of new findings: it is called once per finding,
// when it is first raised, once the engine has read what raised it, on
// that caller's goroutine and outside the engine's lock (it may read the
// engine): a note (Observe; a Watched and an observed Stream hand the
// engine each note after their own note listeners) or a probe sample
// (Probe); and once more for throttled, with its evidence named, when
// NameFlowControl names the FlowSchema or PriorityLevel it gave by UID
// alone. It must not block.
func (e *Engine) OnRaise(f func(Finding)) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onRaise = append(e.onRaise, f)
}

// List returns the findings raised so far, in the order they were raised
// (none for a nil Engine).
func (e *Engine) List() []Finding {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.settle()
	out := make([]Finding, 0, len(e.order))
	for _, id := range e.order {
		out = append(out, e.found[id].clone())
	}
	return out
}

// Get returns the finding id, if raised.
func (e *Engine) Get(id ID) (Finding, bool) {
	if e == nil {
		return Finding{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.settle()
	f, ok := e.found[id]
	if !ok {
		return Finding{}, false
	}
	return f.clone(), true
}

func (f *Finding) clone() Finding {
	c := *f
	c.Evidence.Requests = slices.Clone(f.Evidence.Requests)
	c.Evidence.Objects = slices.Clone(f.Evidence.Objects)
	if f.Evidence.Window != nil {
		w := *f.Evidence.Window
		c.Evidence.Window = &w
	}
	c.Evidence.Facts = maps.Clone(f.Evidence.Facts)
	return c
}

// Observe reads one note. Notes must come in Seq order. A nil Engine
// observes nothing (a run measured without findings).
func (e *Engine) Observe(n reflector.Note) {
	if e == nil {
		return
	}
	e.mu.Lock()
	e.track.observe(n)
	for _, r := range e.rules {
		r.observe(e, n)
	}
	e.unlockAndTell()
}

// Probe reads the delivery probe's figures over the whole run, after each
// sample (samples of them, slow over SlowProbe); at is the sample's time on the
// session's clock. slow-delivery may follow.
func (e *Engine) Probe(at time.Time, samples, slow int, p50, p99, writeP50 time.Duration) {
	if e == nil {
		return
	}
	e.mu.Lock()
	if r, ok := ruleOf[*slowDelivery](e); ok {
		r.probe = probeFigures{samples: samples, slow: slow, p50: p50, p99: p99, writeP50: writeP50}
		r.check(e, at)
	}
	e.unlockAndTell()
}

// NameFlowControl gives the names of FlowSchemas and PriorityLevelConfigurations
// (uid → name) learned after the 429s that gave them by UID alone (the live
// Source's lookup, or a trace's `flowcontrol` line): throttled names them
// from then on, and, when they are the ones it gave by UID, says them at
// once and is told to the OnRaise listeners again.
func (e *Engine) NameFlowControl(flowSchemas, priorityLevels map[string]string) {
	if e == nil {
		return
	}
	e.mu.Lock()
	if r, ok := ruleOf[*throttled](e); ok {
		r.learn(e, flowSchemas, priorityLevels)
	}
	e.unlockAndTell()
}

// ruleOf is the engine's rule of type R.
func ruleOf[R rule](e *Engine) (R, bool) {
	for _, r := range e.rules {
		if x, ok := r.(R); ok {
			return x, true
		}
	}
	var zero R
	return zero, false
}

// unlockAndTell releases mu, then hands the findings raised meanwhile to
// the OnRaise listeners (outside the lock: they may read the engine).
func (e *Engine) unlockAndTell() {
	pending, listeners := e.pending, e.onRaise
	e.pending = nil
	e.mu.Unlock()
	for _, f := range pending {
		for _, l := range listeners {
			l(f)
		}
	}
}

// settle has the settlers bring their findings up to date; mu is held.
func (e *Engine) settle() {
	for _, r := range e.rules {
		if s, ok := r.(settler); ok {
			s.settle(e)
		}
	}
}

// raise creates or updates finding id; update fills it in.
func (e *Engine) raise(id ID, sev Severity, at time.Time, update func(f *Finding)) {
	f, ok := e.found[id]
	if !ok {
		f = &Finding{ID: id, Severity: sev, Resource: e.opts.Resource, Client: e.opts.Client, FirstAt: at, Ignored: e.ignore[id]}
		e.found[id] = f
		e.order = append(e.order, id)
	}
	f.LastAt = at
	update(f)
	if by := e.track.injected(id); by != "" {
		// The fault was asked for: say so first, as the cause it is (every
		// update writes Cause afresh, so the faults named are those so far).
		f.Cause = "caused by " + by + " (injected by the observing proxy). " + f.Cause
	}
	if !ok {
		e.pending = append(e.pending, f.clone())
	}
}

func appendLast(ids []int64, id int64) []int64 {
	if id == 0 || (len(ids) > 0 && ids[len(ids)-1] == id) {
		return ids
	}
	ids = append(ids, id)
	if len(ids) > keepRequests {
		ids = ids[len(ids)-keepRequests:]
	}
	return ids
}

const keepRequests = 20
const keepObjects = 50

// keepFirst appends o to objs while they are fewer than keepObjects: a
// finding names the first ones it found.
func keepFirst(objs []Object, o Object) []Object {
	if len(objs) < keepObjects {
		objs = append(objs, o)
	}
	return objs
}

func roundDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func mib(b int64) string {
	if b < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(b)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}
