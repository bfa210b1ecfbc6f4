package overview

import (
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// On the overview, an opened resource's c shows its own churn: the read
// comes back to it (a resourceMsg), and esc closes the pane before it
// leaves the resource.
func TestOverviewResourceChurnPane(t *testing.T) {
	var feeds [numOvDemo]program.Feed
	feeds[ovPods].Churn = func(int) diff.Summary { return tuitest.DemoChurn() }
	o := ovDemo(t, 120, 40, feeds)
	o = ovKeys(o, "down", "enter")
	next, cmd := o.Update(tuitest.KeyPress("c"))
	o = next.(Overview)
	for _, msg := range tuitest.RunCmd(cmd) {
		if _, ok := msg.(resourceMsg); !ok {
			t.Fatalf("the churn read came back as %T, want a resourceMsg", msg)
		}
		o = ovUpdate(o, msg)
	}
	tuitest.MustContain(t, ovScreen(o), "churn · what the MODIFIED events changed", "42 MODIFIED events", "stamper")
	o = ovKeys(o, "esc")
	if o.Shown != ovPods || o.State != program.StateDashboard {
		t.Errorf("esc on the churn pane: row %d shown, state %v; want the resource's dashboard", o.Shown, o.State)
	}
	// The configmaps have no Churn: no c there.
	o = ovKeys(o, "esc", "up", "enter", "c")
	tuitest.MustNotContain(t, ovScreen(o), "churn")
}
