package alert

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

func TestParseReadsCountsAndDurations(t *testing.T) {
	cases := []struct {
		in   string
		want Rule
	}{
		{"relists>0", Rule{Text: "relists>0", Measure: Relists, Op: Greater, Threshold: 0}},
		{" gone >= 3 ", Rule{Text: "gone >= 3", Measure: Gone, Op: GreaterOrEqual, Threshold: 3}},
		{"bookmark-age>3m", Rule{Text: "bookmark-age>3m", Measure: BookmarkAge, Op: Greater, Threshold: int64(3 * time.Minute)}},
		{"no-progress>1h30m", Rule{Text: "no-progress>1h30m", Measure: NoProgress, Op: Greater, Threshold: int64(90 * time.Minute)}},
	}
	for _, tc := range cases {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q): got %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	if r, _ := Parse("bookmark-age > 3m"); r.Canonical() != "bookmark-age>3m0s" || r.String() != "bookmark-age > 3m" {
		t.Errorf("canonical %q, string %q", r.Canonical(), r.String())
	}
}

func TestParseAllKeepsARuleOnceAndNamesTheBadOne(t *testing.T) {
	rules, err := ParseAll([]string{"relists>0", "relists > 0", "sync>30s"})
	if err != nil || len(rules) != 2 {
		t.Fatalf("got %v, %v; want 2 rules", rules, err)
	}
	_, err = ParseAll([]string{"relists>0", "sync>soon"})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Rule != "sync>soon" || !strings.HasSuffix(err.Error(), "; measures: "+MeasureList()) {
		t.Errorf("got %v", err)
	}
}

func TestParseKnowsTheMeasuresAndTheFindings(t *testing.T) {
	for in, want := range map[string]string{
		"relists>0":                    "",
		"finding:cache-drift>0":        "",
		"relist>0":                     `unknown measure "relist"`,
		"finding:no-such-finding>0":    `unknown finding "no-such-finding"`,
		"finding:large-initial-list>0": "",
	} {
		_, err := Parse(in)
		if got := fmt.Sprint(err); (want == "" && err != nil) || (want != "" && got != want) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
}

// fakeStats is a settable reflector snapshot.
type fakeStats struct{ st reflector.Stats }

func (f *fakeStats) get() reflector.Stats { return f.st }

func TestMonitorTripsEachRuleOncePerResourceWithTheValueThatBrokeIt(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rules, err := ParseAll([]string{"relists>0", "bookmark-age>3m", "missed-deletes>=2"})
	if err != nil {
		t.Fatal(err)
	}
	var trips []string
	m := NewMonitor(rules, func(tr Trip) { trips = append(trips, tr.String()) })
	a, b := m.Add("configmaps.v1 in namespace a"), m.Add("secrets.v1 in namespace b")
	sa, sb := &fakeStats{}, &fakeStats{}
	m.Evaluate(t0) // nothing attached: nothing evaluated
	a.Attach(sa.get)
	b.Attach(sb.get)
	sa.st = reflector.Stats{Started: t0, Synced: t0.Add(time.Second)}
	sb.st = reflector.Stats{Started: t0, Synced: t0.Add(time.Second), BookmarkAt: t0.Add(4 * time.Minute)}
	m.Evaluate(t0.Add(3 * time.Minute))
	if len(trips) != 0 {
		t.Fatalf("tripped early: %v", trips)
	}
	m.Evaluate(t0.Add(5 * time.Minute)) // a: no bookmark since it synced at 1s
	sa.st.Counters.Relists = 2
	sa.st.Totals.Missed.Deletes = 2 // a relist's diff found 2 deletes missed
	m.Evaluate(t0.Add(6 * time.Minute))
	m.Evaluate(t0.Add(9 * time.Minute)) // b's bookmark is now 5m old; a trips nothing again
	want := []string{
		"bookmark-age>3m tripped on configmaps.v1 in namespace a: bookmark-age is 4m59s",
		"relists>0 tripped on configmaps.v1 in namespace a: relists is 2",
		"missed-deletes>=2 tripped on configmaps.v1 in namespace a: missed-deletes is 2",
		"bookmark-age>3m tripped on secrets.v1 in namespace b: bookmark-age is 5m0s",
	}
	if strings.Join(trips, "\n") != strings.Join(want, "\n") {
		t.Errorf("trips:\n%s\nwant:\n%s", strings.Join(trips, "\n"), strings.Join(want, "\n"))
	}
	if got := len(m.Trips()); got != 4 {
		t.Errorf("Trips: %d, want 4", got)
	}
	st := m.Statuses()
	if len(st) != 6 || !st[0].Tripped || st[3].Tripped || st[3].Resource != "secrets.v1 in namespace b" {
		t.Errorf("statuses: %+v", st)
	}
	if f := st[4].Fraction(); f < 1.66 || f > 1.67 {
		t.Errorf("b's bookmark-age fraction: got %v, want 5m/3m", f)
	}
}

func TestClockAdvancedEvaluatesAtMostOncePerInterval(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rules, _ := ParseAll([]string{"no-progress>5s"})
	var trips []Trip
	m := NewMonitor(rules, func(tr Trip) { trips = append(trips, tr) })
	r := m.Add("x")
	s := &fakeStats{st: reflector.Stats{Started: t0, LastReceived: t0}}
	r.Attach(s.get)
	r.ClockAdvanced(t0.Add(5 * time.Second))
	// Less than Interval after the last evaluation: skipped, even though it would trip.
	r.ClockAdvanced(t0.Add(5*time.Second + 500*time.Millisecond))
	r.ClockAdvanced(t0.Add(5*time.Second + 900*time.Millisecond))
	if len(trips) != 0 {
		t.Fatalf("evaluated within the interval: %v", trips)
	}
	r.ClockAdvanced(t0.Add(6 * time.Second))
	if len(trips) != 1 || trips[0].Value != int64(6*time.Second) {
		t.Errorf("trips: %+v, want one at 6s (no progress since the start)", trips)
	}
}

// A replay's clock is advanced from several goroutines, so an evaluation
// at an earlier time can end after a later one: the last evaluation's time
// stays the later, and the next advance within an Interval of it evaluates
// nothing.
func TestAnEarlierEvaluationEndingLastDoesNotTakeTheClockBack(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rules, _ := ParseAll([]string{"relists>0"})
	m := NewMonitor(rules, nil)
	evaluations := 0
	m.SetProbe(func() time.Duration { evaluations++; return 0 })
	r := m.Add("x")
	s := &fakeStats{st: reflector.Stats{Started: t0}}
	s.st.Counters.Relists = 2
	r.Attach(s.get)
	r.ClockAdvanced(t0.Add(10 * time.Second))
	s.st.Counters.Relists = 1 // another goroutine's evaluation, begun before, read this
	r.Evaluate(t0.Add(5 * time.Second))
	if st := r.Statuses(); st[0].Value != 2 {
		t.Errorf("shown relists %d, want the latest evaluation's 2", st[0].Value)
	}
	evaluations = 0
	r.ClockAdvanced(t0.Add(10*time.Second + 500*time.Millisecond))
	if evaluations != 0 {
		t.Errorf("%d evaluations half an Interval after the latest, want none", evaluations)
	}
}

// Between two trace lines nothing changes but the clock: a replay's rule
// on an age trips at the first second past its threshold, with that value,
// as the live run's did, not at the next line with a larger one (6 s for
// a no-progress>2s the live run tripped at 3 s).
func TestClockAdvancedTripsAnAgeRuleAtTheSecondItBreaks(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rules, _ := ParseAll([]string{"no-progress>2s", "bookmark-age>4s", "relists>0"})
	var trips []Trip
	m := NewMonitor(rules, func(tr Trip) { trips = append(trips, tr) })
	r := m.Add("x")
	s := &fakeStats{st: reflector.Stats{Started: t0, LastReceived: t0, BookmarkAt: t0}}
	r.Attach(s.get)
	r.ClockAdvanced(t0)
	r.ClockAdvanced(t0.Add(7*time.Second + 500*time.Millisecond)) // the next line
	if len(trips) != 2 || trips[0].Value != int64(3*time.Second) || !trips[0].At.Equal(t0.Add(3*time.Second)) ||
		trips[1].Value != int64(5*time.Second) || !trips[1].At.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("trips: %+v, want no-progress at 3s and bookmark-age at 5s", trips)
	}
	// The banner's words: the rule, where, and the value, without repeating the measure.
	if got, want := trips[0].Short(), "no-progress>2s on x: 3s"; got != want {
		t.Errorf("Short: got %q, want %q", got, want)
	}
}

func TestLagP99IsTheUpperBoundOfItsBucketAndProbeP99TheRunsProbe(t *testing.T) {
	var st reflector.Stats
	if v := Values(st, time.Time{})[LagP99]; v != 0 {
		t.Errorf("no events: lag-p99 %v", time.Duration(v))
	}
	st.Lag.Counts = reflector.LagCounts{90, 5, 5, 0, 0}
	if v := Values(st, time.Time{})[LagP99]; v != int64(15*time.Second) {
		t.Errorf("p99 in 5-15s: lag-p99 %v, want 15s", time.Duration(v))
	}
	st.Lag.Counts = reflector.LagCounts{0, 0, 0, 0, 1}
	v := Values(st, time.Time{})[LagP99]
	if FormatValue(LagP99, v) != ">1m0s" {
		t.Errorf("p99 over a minute shows as %s", FormatValue(LagP99, v))
	}
	var trips []Trip
	m := NewMonitor([]Rule{MustParse(t, "lag-p99>15s"), MustParse(t, "probe-p99>100ms")}, func(tr Trip) { trips = append(trips, tr) })
	m.SetProbe(func() time.Duration { return 250 * time.Millisecond })
	s := m.Add("configmaps.v1")
	s.Attach(func() reflector.Stats { return st })
	s.Evaluate(time.Now())
	if len(trips) != 2 {
		t.Fatalf("trips %v, want both rules", trips)
	}
	if got := trips[1].String(); got != "probe-p99>100ms tripped on configmaps.v1: probe-p99 is 250ms" {
		t.Errorf("trip says %q", got)
	}
}

func MustParse(t *testing.T, s string) Rule {
	t.Helper()
	r, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A value is never rounded across the threshold: "bookmark-age is 2s" for
// a rule bookmark-age>2s read as if it had not tripped. A threshold reads
// as given.
func TestValuesAreNotRoundedAcrossTheThreshold(t *testing.T) {
	for _, c := range []struct {
		rule  string
		value time.Duration
		want  string
	}{
		{"bookmark-age>2s", 2040 * time.Millisecond, "2.04s"},
		{"bookmark-age>2s", 2600 * time.Millisecond, "3s"},
		{"bookmark-age>2s", 2000*time.Millisecond + time.Microsecond, "2.000001s"},
		{"sync>=3s", 2600 * time.Millisecond, "2.6s"}, // does not trip: not "3s"
		{"sync>=3s", 3400 * time.Millisecond, "3s"},
		{"no-progress>10m", 10*time.Minute + 20*time.Second, "10m20s"},
	} {
		r, err := Parse(c.rule)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.format(int64(c.value)); got != c.want {
			t.Errorf("%s: %v reads %q, want %q", c.rule, c.value, got, c.want)
		}
	}
	if r, _ := Parse("sync>2500ms"); r.Canonical() != "sync>2.5s" || (Status{Rule: r}).FormatThreshold() != "> 2.5s" {
		t.Errorf("a threshold of 2.5s reads %q and %q", r.Canonical(), Status{Rule: r}.FormatThreshold())
	}
}
