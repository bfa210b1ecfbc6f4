package tui

import (
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
)

// The overview and every resource's dashboard share the run's one root:
// one chrome, one state, one findings pane, one detail. A resource's
// action's status is named on the table and shows in its own dashboard,
// not in another's; the churn pane open on one resource makes that
// resource's polls read its churn, and no other's.
func TestOneRootSharedByTheOverviewAndItsDashboards(t *testing.T) {
	var calls callLog
	feeds := recordingFeeds(&calls)
	pods, deployments := &churnFeed{}, &churnFeed{}
	feeds[ovPods].Churn, feeds[ovDeployments].Churn = pods.Churn, deployments.Churn
	o := ovDemo(t, 160, 48, feeds)
	for i := range o.subs {
		if o.subs[i].root != o.root {
			t.Fatalf("resource %d has a root of its own", i)
		}
	}

	next, _ := ovKeys(o, "j").Update(keyPress("r"))
	o = next.(Overview)
	mustContain(t, ovScreen(o), "pods: forced relist requested")
	o.fpane.Key(keyPress("j"), 3, 3) // the table's findings pane, moved
	o = ovKeys(o, "enter")
	if o.fpane != (findingspane.Pane{}) {
		t.Error("the pods' findings pane starts where the table's was")
	}
	mustContain(t, ovScreen(o), "forced relist requested")
	mustNotContain(t, ovScreen(o), "pods: forced relist")
	o = ovKeys(o, "esc", "j", "enter")
	if o.shown != ovDeployments {
		t.Fatalf("row %d shown, want the deployments'", o.shown)
	}
	mustNotContain(t, ovScreen(o), "forced relist requested")

	next, _ = o.Update(keyPress("c"))
	o = next.(Overview)
	if o.state != stateChurn {
		t.Fatalf("c on the deployments: state %v, want churn", o.state)
	}
	for i := range o.subs {
		o.subs[i].pollCmd(0)()
	}
	if got := pods.reads.Load(); got != 0 {
		t.Errorf("the pods' polls read their churn %d times while the deployments' pane was open", got)
	}
	if got := deployments.reads.Load(); got != 1 {
		t.Errorf("the deployments' poll read their churn %d times, want 1", got)
	}
}
