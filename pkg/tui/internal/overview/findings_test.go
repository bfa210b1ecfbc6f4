package overview

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// Without a findings engine the dashboard offers no f, counts nothing in
// its header, and f does nothing.
func TestNoFindingsEngineNoFindingsKey(t *testing.T) {
	m, _ := demoModel(t, 120, 40)
	s := screen(m)
	tuitest.MustNotContain(t, s, "f findings", "no findings")
	if m = update(m, tuitest.KeyPress("f")); m.State != program.StateDashboard {
		t.Errorf("f without an engine left state %v, want the dashboard", m.State)
	}
	tuitest.MustNotContain(t, screen(update(peek(m), tuitest.KeyPress("?"))), "f          findings", "what the notes mean")
	o := ovDemo(t, 160, 40, [numOvDemo]program.Feed{})
	tuitest.MustNotContain(t, ovScreen(o), "FINDINGS", "f findings")
}

// The overview: a findings column per resource and a total, the header's
// count across them, and f lists every resource's findings naming each
// one's resource; enter shows one's evidence, esc goes back.
func TestOverviewFindingsColumnAndPane(t *testing.T) {
	var feeds [numOvDemo]program.Feed
	cm, pods := &tuitest.FindingsFeed{}, &tuitest.FindingsFeed{}
	feeds[ovConfigMaps].Findings, feeds[ovPods].Findings = cm.List, pods.List
	feeds[ovDeployments].Findings = (&tuitest.FindingsFeed{}).List
	o := ovDemo(t, 160, 40, feeds)
	fs := tuitest.DemoFindings()
	podStorm := fs[2]
	podStorm.Resource, podStorm.FirstAt = "pods.v1", tuitest.At(108*time.Second)
	podStorm.Evidence.Text = "the pods relisted three times"
	o = ovUpdate(o, resourceMsg{i: ovConfigMaps, msg: program.SnapshotMsg{At: tuitest.At(110 * time.Second), HasFindings: true, Findings: fs[:2]}})
	o = ovUpdate(o, resourceMsg{i: ovPods, msg: program.SnapshotMsg{At: tuitest.At(110 * time.Second), HasFindings: true, Findings: []findings.Finding{podStorm}}})
	o = ovUpdate(o, resourceMsg{i: ovDeployments, msg: program.SnapshotMsg{At: tuitest.At(110 * time.Second), HasFindings: true}})
	s := ovScreen(o)
	tuitest.MustContain(t, s, "FINDINGS", "2 findings (error)", "+1 ignored", "f findings")
	// The findings column's cell of each row (no row has wide characters).
	col := -1
	cells := map[string]string{}
	for _, l := range tuitest.Lines(s) {
		r := []rune(l)
		if i := strings.Index(l, "FINDINGS"); i >= 0 && col < 0 {
			col = len([]rune(l[:i]))
			continue
		}
		if col < 0 || len(r) < col+9 {
			continue
		}
		if f := strings.Fields(string(r[:col])); len(f) > 0 {
			name := f[0]
			if name == "▸" && len(f) > 1 {
				name = f[1]
			}
			cells[name] = strings.TrimSpace(string(r[col : col+9]))
		}
	}
	for row, want := range map[string]string{"configmaps": "1 warning", "pods": "1 error", "deployments.apps": "0", "replicasets.apps": "-", "total": "2 error"} {
		if cells[row] != want {
			t.Errorf("row %s: findings %q, want %q (the replicasets have no engine):\n%s", row, cells[row], want, s)
		}
	}

	o = ovKeys(o, "f")
	s = ovScreen(o)
	tuitest.MustContain(t, s, "findings · 2 findings (+1 ignored) · newest first", "RESOURCE", findingspane.Hint)
	first := ""
	for _, l := range tuitest.Lines(s) {
		if strings.Contains(l, "relist-storm") {
			first = l
			break
		}
	}
	if !strings.Contains(first, "pods") {
		t.Errorf("the newest finding's row %q does not name the pods:\n%s", first, s)
	}
	o = ovKeys(o, "enter")
	s = ovScreen(o)
	tuitest.MustContain(t, s, "Finding relist-storm  error  pods.v1", "the pods relisted three times", "relists", "raise --watch-cache-sizes", findingspane.DetailHint)
	o = ovKeys(o, "esc")
	tuitest.MustContain(t, ovScreen(o), "newest first")
	o = ovKeys(o, "f")
	tuitest.MustContain(t, ovScreen(o), "RESOURCE", "FINDINGS", "total")
	tuitest.MustContain(t, ovScreen(ovKeys(ovPeek(o), "?")), "f          findings", "the column counts each resource's findings")
}
