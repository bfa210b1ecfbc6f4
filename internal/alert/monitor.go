package alert

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// Interval is how often a Monitor evaluates its rules on the session's clock.
const Interval = time.Second

// Trip is a rule that tripped on a resource.
type Trip struct {
	Rule Rule
	// Resource describes the resource the rule tripped on, as Monitor.Add was given it.
	Resource string
	// Value is the measure's value that broke the rule; At is when, on the session's clock.
	Value int64
	At    time.Time
}

// String says which rule tripped, where and with what value:
// "relists>0 tripped on configmaps.v1 in namespace demo: relists is 1".
func (t Trip) String() string {
	return fmt.Sprintf("%s tripped on %s: %s is %s", t.Rule, t.Resource, t.Rule.Measure, t.Rule.format(t.Value))
}

// Short is the trip in few words, for a banner that says ALERT already:
// "no-progress>2s on configmaps.v1 in namespace app: 3s".
func (t Trip) Short() string {
	return fmt.Sprintf("%s on %s: %s", t.Rule, t.Resource, t.Rule.format(t.Value))
}

// Status is one rule on one resource, for a display: its current value and
// how close it is to tripping.
type Status struct {
	Rule     Rule
	Resource string
	// Value is the measure at the last evaluation (zero before the first).
	Value int64
	// Tripped says the rule has tripped on this resource (it stays tripped).
	Tripped bool
}

// Fraction is how close the value is to the threshold: value/threshold
// (over 1 trips with >, 1 or more with >=), or for a zero threshold 0
// until it trips.
func (s Status) Fraction() float64 {
	if s.Rule.Threshold == 0 {
		if s.Rule.Trips(s.Value) {
			return 1
		}
		return 0
	}
	return float64(s.Value) / float64(s.Rule.Threshold)
}

// FormatValue renders the current value; FormatThreshold the threshold.
func (s Status) FormatValue() string { return s.Rule.format(s.Value) }

// FormatThreshold renders the rule's comparison and threshold: "> 3m0s".
func (s Status) FormatThreshold() string {
	return string(s.Rule.Op) + " " + s.Rule.formatThreshold()
}

// Monitor evaluates rules on every resource added to it. Its methods are
// safe for concurrent use.
type Monitor struct {
	rules  []Rule
	onTrip func(Trip)

	mu        sync.Mutex
	resources []*Subject
	trips     []Trip
	probeP99  func() time.Duration
}

// SetProbe gives the monitor the run's delivery probe: p99 is its write to
// event 99th percentile so far (the measure probe-p99 of every resource).
func (m *Monitor) SetProbe(p99 func() time.Duration) {
	m.mu.Lock()
	m.probeP99 = p99
	m.mu.Unlock()
}

// probe is probe-p99 now, 0 without a probe.
func (m *Monitor) probe() int64 {
	m.mu.Lock()
	f := m.probeP99
	m.mu.Unlock()
	if f == nil {
		return 0
	}
	return int64(f())
}

// NewMonitor evaluates rules; onTrip is called once for each rule that trips
// on each resource, from the goroutine that evaluated (a ticker, or a
// replay's reader, the reflector's goroutine): it must not block.
func NewMonitor(rules []Rule, onTrip func(Trip)) *Monitor {
	if onTrip == nil {
		onTrip = func(Trip) {}
	}
	return &Monitor{rules: rules, onTrip: onTrip}
}

// Add registers a resource: name describes it in trips ("configmaps.v1 in
// namespace demo"); its Subject reads its reflector once attached (Attach).
func (m *Monitor) Add(name string) *Subject {
	r := &Subject{m: m, name: name, values: make([]int64, len(m.rules)), tripped: make([]bool, len(m.rules))}
	m.mu.Lock()
	m.resources = append(m.resources, r)
	m.mu.Unlock()
	return r
}

// Trips are the trips so far, in the order they happened.
func (m *Monitor) Trips() []Trip {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Trip(nil), m.trips...)
}

// Statuses are every rule on every resource, resources in the order they
// were added, rules in the order given.
func (m *Monitor) Statuses() []Status {
	m.mu.Lock()
	rs := append([]*Subject(nil), m.resources...)
	m.mu.Unlock()
	var out []Status
	for _, r := range rs {
		out = append(out, r.Statuses()...)
	}
	return out
}

// Evaluate evaluates every resource's rules at now.
func (m *Monitor) Evaluate(now time.Time) {
	m.mu.Lock()
	rs := append([]*Subject(nil), m.resources...)
	m.mu.Unlock()
	for _, r := range rs {
		r.Evaluate(now)
	}
}

// Run evaluates every Interval of the wall clock, reading the time from
// now, until ctx ends. It is for live runs; a replay evaluates on its virtual
// clock instead (Subject.ClockAdvanced).
func (m *Monitor) Run(ctx context.Context, now func() time.Time) {
	t := time.NewTicker(Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.Evaluate(now())
		}
	}
}

func (m *Monitor) tripped(t Trip) {
	m.mu.Lock()
	m.trips = append(m.trips, t)
	m.mu.Unlock()
	m.onTrip(t)
}

// Subject is what a Monitor evaluates the rules on: one watched resource
// (its reflector's Stats and its findings).
type Subject struct {
	m    *Monitor
	name string

	mu       sync.Mutex
	stats    func() reflector.Stats
	findings func() []findings.Finding
	onTrip   func(Trip) // the resource's own (OnTrip), before the monitor's
	lastEval time.Time
	values   []int64
	tripped  []bool
}

// Attach gives the resource its reflector's Stats (e.g.
// (*reflector.Reflector).Stats); evaluations before it see nothing.
func (r *Subject) Attach(stats func() reflector.Stats) {
	r.mu.Lock()
	r.stats = stats
	r.mu.Unlock()
}

// AttachFindings gives the resource its findings (Engine.List), for the
// measures findings and finding:ID.
func (r *Subject) AttachFindings(list func() []findings.Finding) {
	r.mu.Lock()
	r.findings = list
	r.mu.Unlock()
}

// maxSteps bounds the evaluations ClockAdvanced makes for one advance: a
// day of seconds. Past it, the rest of a longer gap is evaluated once, at
// its end.
const maxSteps = 24 * 60 * 60

// ClockAdvanced evaluates on a virtual clock: pass it as the replay clock's
// advance hook. It runs before the trace line that moved the clock is
// served, so it sees the run as it stood just before now. Nothing but the
// clock changed since the last evaluation, so it evaluates every Interval
// up to now, as a live run does: a rule on an age (no-progress,
// bookmark-age) trips where the live run's did, to the second.
func (r *Subject) ClockAdvanced(now time.Time) {
	r.mu.Lock()
	last := r.lastEval
	r.mu.Unlock()
	if !last.IsZero() && now.Sub(last) < Interval {
		return
	}
	st, fs, ok := r.read()
	if !ok {
		return
	}
	if last.IsZero() {
		r.evaluate(st, fs, now)
		return
	}
	t := last.Add(Interval)
	for n := 0; !t.After(now) && n < maxSteps && !r.allTripped(); n++ {
		r.evaluate(st, fs, t)
		t = t.Add(Interval)
	}
	if !t.After(now) && !r.allTripped() {
		r.evaluate(st, fs, now)
	}
}

// allTripped says every rule has tripped: evaluating again changes nothing.
func (r *Subject) allTripped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !slices.Contains(r.tripped, false)
}

// read is the resource's Stats and findings now (ok false before Attach).
func (r *Subject) read() (reflector.Stats, []findings.Finding, bool) {
	r.mu.Lock()
	stats, list := r.stats, r.findings
	r.mu.Unlock()
	if stats == nil {
		return reflector.Stats{}, nil, false
	}
	st := stats()
	var fs []findings.Finding
	if list != nil {
		fs = list()
	}
	return st, fs, true
}

// Evaluate computes the measures at now and trips the rules they break.
func (r *Subject) Evaluate(now time.Time) {
	if st, fs, ok := r.read(); ok {
		r.evaluate(st, fs, now)
	}
}

// evaluate is Evaluate of st and fs, read before.
func (r *Subject) evaluate(st reflector.Stats, fs []findings.Finding, now time.Time) {
	v := Values(st, now)
	v[Findings] = int64(findings.CountAtLeast(fs, findings.Warning))
	for _, f := range fs {
		if !f.Ignored {
			v[FindingMeasure(f.ID)] = f.Count
		}
	}
	v[ProbeP99] = r.m.probe()
	var trips []Trip
	r.mu.Lock()
	// Several goroutines advance a replay's clock: an evaluation at an
	// earlier time may end last, and must take neither lastEval back (the
	// next ClockAdvanced would evaluate those seconds again) nor the values
	// shown (they are the last evaluation's); its trips still count.
	latest := !now.Before(r.lastEval)
	if latest {
		r.lastEval = now
	}
	for i, rule := range r.m.rules {
		val := v[rule.Measure]
		if latest {
			r.values[i] = val
		}
		if !r.tripped[i] && rule.Trips(val) {
			r.tripped[i] = true
			trips = append(trips, Trip{Rule: rule, Resource: r.name, Value: val, At: now})
		}
	}
	onTrip := r.onTrip
	r.mu.Unlock()
	for _, t := range trips {
		if onTrip != nil {
			onTrip(t)
		}
		r.m.tripped(t)
	}
}

// OnTrip gives the resource a callback of its own for each rule that
// trips on it, called before the monitor's: its run notes the trip there.
func (r *Subject) OnTrip(f func(Trip)) {
	r.mu.Lock()
	r.onTrip = f
	r.mu.Unlock()
}

// Statuses are the resource's rules as of the last evaluation.
func (r *Subject) Statuses() []Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Status, len(r.m.rules))
	for i, rule := range r.m.rules {
		out[i] = Status{Rule: rule, Resource: r.name, Value: r.values[i], Tripped: r.tripped[i]}
	}
	return out
}

// Values are the measures of one resource that st gives at now: counts from
// its counters and totals (what relist diffs found missed), ages from its
// times, lag-p99 from its delivery lag. The findings' measures and
// probe-p99 are not st's: an evaluation adds them.
func Values(st reflector.Stats, now time.Time) map[Measure]int64 {
	c := st.Counters
	return map[Measure]int64{
		Relists:       c.Relists,
		Gone:          c.Gone,
		TooLarge:      c.TooLargeResourceVersion,
		UIDMismatches: c.UIDMismatches,
		Duplicates:    c.Duplicates,
		RVBackwards:   c.ResourceVersionBackwards,
		Backoffs:      c.Backoffs,
		WatchErrors:   c.WatchErrors,
		Missed:        st.Totals.Missed.Total(),
		MissedDeletes: st.Totals.Missed.Deletes,
		BookmarkAge:   int64(st.BookmarkAge(now)),
		NoProgress:    int64(st.NoProgress(now)),
		Sync:          int64(st.TimeToSync(now)),
		LagP99:        lagP99(st.Lag.Counts),
	}
}

// lagP99 is LagP99 of c.
func lagP99(c reflector.LagCounts) int64 {
	upper := c.P99Seconds()
	if math.IsInf(upper, 1) {
		return LagOverAMinute
	}
	return int64(upper * float64(time.Second))
}
