package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// lagModel is the demo dashboard at w x h whose last poll counted lags,
// with probe as the run's probe (nil: none).
func lagModel(t *testing.T, w, h int, probe func() program.ProbeView, lag reflector.LagCounts) Model {
	t.Helper()
	clock := newFakeClock()
	opts := demoOptions(clock)
	opts.Probe = probe
	m := New(opts, demoResource(program.Feed{}))
	t.Cleanup(m.Close)
	m = resize(m, w, h)
	s := demoStats()
	s.Lag.Counts = lag
	clock.now = at(time.Minute)
	return update(m, demoSnapshot(time.Minute, s))
}

func TestTheHealthSectionHasADeliveryLineWithTheProbeAndTheLagBuckets(t *testing.T) {
	probe := func() program.ProbeView {
		return program.ProbeView{On: true, Count: 12, MinuteP50: 4 * time.Millisecond, MinuteP99: 61 * time.Millisecond,
			Recent: []time.Duration{time.Millisecond, 3 * time.Millisecond, 60 * time.Millisecond}}
	}
	got := screen(lagModel(t, 140, 40, probe, reflector.LagCounts{12, 1, 0, 0, 0}))
	var line string
	for _, l := range lines(got) {
		if strings.HasPrefix(strings.TrimSpace(l), labelDelivery) {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no delivery line:\n%s", got)
	}
	mustContain(t, line, "probe p50 4.0ms · p99 61ms", "lag <2s 12 2-5s 1 5-15s 0 15-60s 0 >60s 0 (±2s)")
}

func TestNoProbeAndNoLagNoDeliveryLine(t *testing.T) {
	mustNotContain(t, screen(lagModel(t, 140, 40, nil, reflector.LagCounts{})), labelDelivery)
	// A probe without a sample yet says so.
	got := screen(lagModel(t, 140, 40, func() program.ProbeView { return program.ProbeView{On: true} }, reflector.LagCounts{}))
	mustContain(t, got, "probe: no sample yet")
	mustNotContain(t, got, "lag <2s")
}

func TestTheOverviewHasALagColumnOnceARowCountedOne(t *testing.T) {
	o := ovDemo(t, 160, 30, [numOvDemo]program.Feed{})
	mustNotContain(t, ovScreen(o), "LAG P99")
	s := ovDemoStats(ovConfigMaps)
	s.Lag.Counts = reflector.LagCounts{50, 0, 0, 1, 0}
	o = ovUpdate(o, resourceMsg{i: ovConfigMaps, msg: program.SnapshotMsg{At: t0.Add(2 * time.Minute), HasStats: true, Stats: s}})
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 160, Height: 30})
	got := ovScreen(o)
	mustContain(t, got, "LAG P99", "15-60s")
}
