package dashboard

import (
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
	return polledModel(t, w, h, func(o *program.Options) { o.Probe = probe }, func(s *reflector.Stats) { s.Lag.Counts = lag })
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
