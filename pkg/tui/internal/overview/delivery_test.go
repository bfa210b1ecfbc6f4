package overview

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

func TestTheOverviewHasALagColumnOnceARowCountedOne(t *testing.T) {
	o := ovDemo(t, 160, 30, [numOvDemo]program.Feed{})
	tuitest.MustNotContain(t, ovScreen(o), "LAG P99")
	s := ovDemoStats(ovConfigMaps)
	s.Lag.Counts = reflector.LagCounts{50, 0, 0, 1, 0}
	o = ovUpdate(o, resourceMsg{i: ovConfigMaps, msg: program.SnapshotMsg{At: tuitest.T0().Add(2 * time.Minute), HasStats: true, Stats: s}})
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 160, Height: 30})
	got := ovScreen(o)
	tuitest.MustContain(t, got, "LAG P99", "15-60s")
}
