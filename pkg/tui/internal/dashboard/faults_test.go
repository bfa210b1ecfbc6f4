package dashboard

import (
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// faultsModel is the demo dashboard at w x h whose last poll carried faults.
func faultsModel(t *testing.T, w, h int, faults []reflector.FaultCount) Model {
	t.Helper()
	return polledModel(t, w, h, nil, func(s *reflector.Stats) { s.Faults = faults })
}

func TestAStreamWithFaultsInjectedHasAFaultsLine(t *testing.T) {
	got := screen(faultsModel(t, 140, 40, []reflector.FaultCount{
		{Fault: "gone@every=20s", First: tuitest.At(20 * time.Second), Count: 2},
		{Fault: "drop-deletes@p=0.5", First: tuitest.At(30 * time.Second), Count: 17},
		{Fault: "cut@every=1h", First: tuitest.At(50 * time.Second)},
	}))
	line := labelLine(t, got, labelFaults, "faults")
	tuitest.MustContain(t, line, "faults         gone@every=20s ×2 since 40s ago · drop-deletes@p=0.5 ×17 since 30s ago · cut@every=1h armed since 10s ago")
	// The panes keep their rows: the line takes one from them, the screen keeps its height.
	if n := len(tuitest.Lines(got)); n != 40 {
		t.Errorf("%d lines, want 40", n)
	}
}

func TestNoFaultNoFaultsLine(t *testing.T) {
	tuitest.MustNotContain(t, screen(faultsModel(t, 140, 40, nil)), labelFaults)
}
