package overview

import (
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// The overview and every resource's dashboard share the run's one root:
// one chrome, one state, one findings pane, one detail. A resource's
// action's status is its own: named on the table, shown in its own
// dashboard, not in another's, and another's result does not replace it.
// The findings pane starts afresh on each list it shows. The churn pane
// open on one resource makes that resource's polls read its churn, and no
// other's.
func TestOneRootSharedByTheOverviewAndItsDashboards(t *testing.T) {
	var calls callLog
	feeds := recordingFeeds(&calls)
	pods, deployments := &tuitest.ChurnFeed{}, &tuitest.ChurnFeed{}
	feeds[ovPods].Churn, feeds[ovDeployments].Churn = pods.Churn, deployments.Churn
	o := ovDemo(t, 160, 48, feeds)
	for i := range o.subs {
		if o.subs[i].Root != o.Root {
			t.Fatalf("resource %d has a root of its own", i)
		}
	}

	// The pods' relist, asked on the table: named there, shown in the
	// pods' dashboard, not in the deployments'.
	next, _ := ovKeys(o, "j").Update(tuitest.KeyPress("r"))
	o = next.(Overview)
	tuitest.MustContain(t, ovScreen(o), "pods: forced relist requested")
	o.FindingsPane.Key(tuitest.KeyPress("j"), 3, 3) // the table's findings pane, moved
	o = ovKeys(o, "enter")
	if o.FindingsPane != (findingspane.Pane{}) {
		t.Error("the pods' findings pane starts where the table's was")
	}
	tuitest.MustContain(t, ovScreen(o), "forced relist requested")
	tuitest.MustNotContain(t, ovScreen(o), "pods: forced relist")
	o.FindingsPane.Key(tuitest.KeyPress("j"), 3, 3)
	o = ovKeys(o, "esc")
	if o.FindingsPane != (findingspane.Pane{}) {
		t.Error("the table's findings pane starts where the pods' was")
	}
	o = ovKeys(o, "j", "enter")
	if o.Shown != ovDeployments {
		t.Fatalf("row %d shown, want the deployments'", o.Shown)
	}
	tuitest.MustNotContain(t, ovScreen(o), "forced relist requested")

	// The deployments' own action stays in their footer when the pods'
	// audit ends behind them; esc there clears their status, not the pods'.
	// (Their reflector failed: r says why it does nothing.)
	next, _ = o.Update(tuitest.KeyPress("r"))
	o = next.(Overview)
	o = ovUpdate(o, resourceMsg{i: ovPods, msg: program.AuditMsg{Report: &reflector.AuditReport{ResourceVersion: "77", Listed: 1, Cached: 1}}})
	tuitest.MustContain(t, ovScreen(o), "force relist is not available: the reflector is Failed")
	tuitest.MustNotContain(t, ovScreen(o), "audit at resourceVersion 77")
	o = ovKeys(o, "esc")
	tuitest.MustNotContain(t, ovScreen(o), "force relist is not available")
	o = ovKeys(o, "esc")
	tuitest.MustContain(t, ovScreen(o), "pods: audit at resourceVersion 77")
	// Not over the table's help.
	tuitest.MustNotContain(t, ovScreen(ovKeys(ovPeek(o), "?")), "pods: audit")
	o = ovKeys(o, "enter")

	next, _ = o.Update(tuitest.KeyPress("c"))
	o = next.(Overview)
	if o.State != program.StateChurn {
		t.Fatalf("c on the deployments: state %v, want churn", o.State)
	}
	for i := range o.subs {
		o.subs[i].PollCmd(0)()
	}
	if got := pods.Reads.Load(); got != 0 {
		t.Errorf("the pods' polls read their churn %d times while the deployments' pane was open", got)
	}
	if got := deployments.Reads.Load(); got != 1 {
		t.Errorf("the deployments' poll read their churn %d times, want 1", got)
	}
}
