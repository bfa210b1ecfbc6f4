package dashboard

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// lagModel is the demo dashboard at w x h whose last poll counted lags,
// with probe as the run's probe (nil: none).
func lagModel(t *testing.T, w, h int, probe func() program.ProbeView, lag reflector.LagCounts) Model {
	t.Helper()
	m := polledModel(t, w, h, func(o *program.Options) { o.Probe = probe }, func(s *reflector.Stats) { s.Lag.Counts = lag })
	return update(m, m.PollCmd(0)()) // the shown dashboard's poll reads the probe
}

func TestTheHealthSectionHasADeliveryLineWithTheProbeAndTheLagBuckets(t *testing.T) {
	probe := func() program.ProbeView {
		return program.ProbeView{On: true, Count: 12, MinuteP50: 4 * time.Millisecond, MinuteP99: 61 * time.Millisecond,
			Recent: []time.Duration{time.Millisecond, 3 * time.Millisecond, 60 * time.Millisecond}}
	}
	got := screen(lagModel(t, 140, 40, probe, reflector.LagCounts{12, 1, 0, 0, 0}))
	line := labelLine(t, got, labelDelivery, "delivery")
	tuitest.MustContain(t, line, "probe p50 4.0ms · p99 61ms", "lag <2s 12 2-5s 1 5-15s 0 15-60s 0 >60s 0 (±2s)")
}

func TestNoProbeAndNoLagNoDeliveryLine(t *testing.T) {
	tuitest.MustNotContain(t, screen(lagModel(t, 140, 40, nil, reflector.LagCounts{})), labelDelivery)
	// A probe without a sample yet says so.
	got := screen(lagModel(t, 140, 40, func() program.ProbeView { return program.ProbeView{On: true} }, reflector.LagCounts{}))
	tuitest.MustContain(t, got, "probe: no sample yet")
	tuitest.MustNotContain(t, got, "lag <2s")
}

// The probe is read by the poll of the dashboard shown, on the poll's
// goroutine, never by the screen's: reading it sorts up to 65,536 samples
// under its lock, and the screen lays itself out several times a message.
func TestTheProbeIsReadByTheShownDashboardsPollOnly(t *testing.T) {
	var calls atomic.Int32
	probe := func() program.ProbeView {
		calls.Add(1)
		return program.ProbeView{On: true, Count: 1, MinuteP50: time.Millisecond, MinuteP99: time.Millisecond}
	}
	m := lagModel(t, 140, 40, probe, reflector.LagCounts{})
	if n := calls.Load(); n != 1 {
		t.Fatalf("the poll read the probe %d times, want once", n)
	}
	m = update(m, tuitest.KeyPress("tab"))
	m = update(m, tuitest.DemoSnapshot(time.Minute, tuitest.DemoStats()))
	tuitest.MustContain(t, screen(m), "probe p50 1.0ms")
	if n := calls.Load(); n != 1 {
		t.Errorf("the screen read the probe %d times more, want none", n-1)
	}
	// A dashboard not shown (the overview's, or another resource's) does
	// not read it: nothing shows it.
	hidden := peek(m)
	hidden.Shown = -1
	hidden.PollCmd(0)()
	if n := calls.Load(); n != 1 {
		t.Errorf("a hidden dashboard's poll read the probe")
	}
}

// At 80 columns the delivery line keeps the late buckets, the ones that
// show a problem: the sparkline goes first (a reviewer read "<2s 20 2…").
func TestANarrowDeliveryLineKeepsEveryLagBucket(t *testing.T) {
	probe := func() program.ProbeView {
		return program.ProbeView{On: true, Count: 12, MinuteP50: 2500 * time.Microsecond, MinuteP99: 4300 * time.Microsecond,
			Recent: []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}}
	}
	got := screen(lagModel(t, 80, 24, probe, reflector.LagCounts{20, 2, 1, 3, 4}))
	tuitest.MustContain(t, got, "probe p99 4.3ms", "15-60s 3", ">60s 4")
}
