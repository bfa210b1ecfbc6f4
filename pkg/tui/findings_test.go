package tui

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// findingsFeed is a findings engine's List for a test: set changes what it returns.
type findingsFeed struct {
	mu sync.Mutex
	fs []findings.Finding
}

func (f *findingsFeed) List() []findings.Finding {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]findings.Finding(nil), f.fs...)
}

func (f *findingsFeed) set(fs ...findings.Finding) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fs = fs
}

// demoFindings are three findings in the order an engine raised them: a
// missed-deletes warning at 86s, an ignored info at 90s and a relist storm
// (error) at 100s.
func demoFindings() []findings.Finding {
	return []findings.Finding{
		{ID: findings.MissedDeletes, Severity: findings.Warning, Resource: "configmaps.v1", Title: "2 delete(s) never reached the watch",
			Evidence: findings.Evidence{Text: "the relist at resourceVersion 1250 found 1 object deleted and 1 recreated", Requests: []int64{3, 4},
				Objects: []findings.Object{{Namespace: "default", Name: "web-config-7", What: "deleted", OldUID: "5f0c9a1e-aaaa"},
					{Namespace: "default", Name: "web-config-2", What: "recreated", OldUID: "1b2c3d4e-bbbb", NewUID: "9e8d7c6b-cccc"}},
				ObjectsTotal: 2, Window: &findings.Window{From: at(2 * time.Second), To: at(86 * time.Second), Seconds: 84}},
			Cause: "the watch was down past the server's history", Action: "handle DeletedFinalStateUnknown in delete handlers",
			Docs: "https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes", FirstAt: at(86 * time.Second), LastAt: at(86 * time.Second), Count: 2},
		{ID: findings.WatchListUnsupported, Severity: findings.Info, Resource: "configmaps.v1", Title: "the streaming list was refused",
			Evidence: findings.Evidence{Text: "the server answered 422"}, Cause: "WatchList is off", Action: "nothing", Ignored: true,
			FirstAt: at(90 * time.Second), LastAt: at(90 * time.Second), Count: 1},
		{ID: findings.RelistStorm, Severity: findings.Error, Resource: "configmaps.v1", Title: "3 relists within 10m",
			Evidence: findings.Evidence{Text: "relists after 410s", Requests: []int64{4}, Facts: map[string]string{"relists": "3"}},
			Cause:    "410 right after reconnect", Action: "raise --watch-cache-sizes", FirstAt: at(100 * time.Second), LastAt: at(105 * time.Second), Count: 3},
	}
}

// poll takes one snapshot of m's feed, as its poller does.
func poll(t *testing.T, m Model) Model {
	t.Helper()
	msgs := runCmd(m.pollCmd(0))
	if len(msgs) != 1 {
		t.Fatalf("a poll gave %d messages, want 1", len(msgs))
	}
	return update(m, msgs[0])
}

// The findings pane: the header counts the findings that are not ignored,
// colored by the worst; f lists them newest first, the ignored one marked;
// enter shows the selected one's evidence as the engine updates it; esc
// goes back to the pane, esc or f closes it.
func TestFindingsPaneListsNewestFirstAndShowsEvidence(t *testing.T) {
	feed := &findingsFeed{}
	clock := newFakeClock()
	m := New(demoOptions(clock), demoResource(program.Feed{Findings: feed.List}))
	t.Cleanup(m.Close)
	m = resize(m, 120, 40)
	clock.now = at(110 * time.Second)
	m = poll(t, m)
	s := screen(m)
	mustContain(t, s, "no findings", "f findings")

	feed.set(demoFindings()...)
	m = poll(t, m)
	s = screen(m)
	mustContain(t, s, "2 findings (error)", "+1 ignored")

	m = update(m, keyPress("f"))
	if m.State != program.StateFindings {
		t.Fatalf("f left the dashboard in state %v, want findings", m.State)
	}
	s = screen(m)
	mustContain(t, s, "findings · 2 findings (+1 ignored) · newest first", "(ignored) the streaming list was refused", findingspane.Hint)
	storm, ignored, missed := strings.Index(s, "relist-storm"), strings.Index(s, "watch-list-unsupported"), strings.Index(s, "missed-deletes")
	if storm < 0 || ignored < 0 || missed < 0 || storm >= ignored || ignored >= missed {
		t.Errorf("want relist-storm, watch-list-unsupported, missed-deletes, newest first:\n%s", s)
	}
	mustNotContain(t, s, "objects ", "event rates") // the pane is over the dashboard

	m = update(update(update(m, keyPress("down")), keyPress("down")), keyPress("enter"))
	if m.State != program.StateDetail {
		t.Fatalf("enter on a finding left state %v, want detail", m.State)
	}
	s = screen(m)
	mustContain(t, s, "Finding missed-deletes  warning  configmaps.v1", "the relist at resourceVersion 1250",
		"#3 #4", "default/web-config-2", "1b2c3d4e → 9e8d7c6b", "(1m24s)", "the watch was down past the server's history",
		"handle DeletedFinalStateUnknown", "https://kubernetes.io/docs/reference/using-api/api-concepts/", findingspane.DetailHint)

	// The evidence grows while it is shown.
	grown := demoFindings()
	grown[0].Evidence.Text = "the relist at resourceVersion 1400 found 5 objects deleted"
	feed.set(grown...)
	m = poll(t, m)
	mustContain(t, screen(m), "the relist at resourceVersion 1400 found 5 objects deleted")

	m = update(m, keyPress("esc"))
	if m.State != program.StateFindings {
		t.Fatalf("esc from a finding's evidence left state %v, want the findings pane", m.State)
	}
	for _, close := range []string{"esc", "f"} {
		m.State = program.StateFindings
		if m = update(m, keyPress(close)); m.State != program.StateDashboard {
			t.Errorf("%s on the findings pane left state %v, want the dashboard", close, m.State)
		}
	}
	mustContain(t, screen(update(peek(m), keyPress("?"))), "findings", "f ", "what the notes mean")
}

// Without a findings engine the dashboard offers no f, counts nothing in
// its header, and f does nothing.
func TestNoFindingsEngineNoFindingsKey(t *testing.T) {
	m, _ := demoModel(t, 120, 40)
	s := screen(m)
	mustNotContain(t, s, "f findings", "no findings")
	if m = update(m, keyPress("f")); m.State != program.StateDashboard {
		t.Errorf("f without an engine left state %v, want the dashboard", m.State)
	}
	mustNotContain(t, screen(update(peek(m), keyPress("?"))), "f          findings", "what the notes mean")
	o := ovDemo(t, 160, 40, [numOvDemo]program.Feed{})
	mustNotContain(t, ovScreen(o), "FINDINGS", "f findings")
}

// The overview: a findings column per resource and a total, the header's
// count across them, and f lists every resource's findings naming each
// one's resource; enter shows one's evidence, esc goes back.
func TestOverviewFindingsColumnAndPane(t *testing.T) {
	var feeds [numOvDemo]program.Feed
	cm, pods := &findingsFeed{}, &findingsFeed{}
	feeds[ovConfigMaps].Findings, feeds[ovPods].Findings = cm.List, pods.List
	feeds[ovDeployments].Findings = (&findingsFeed{}).List
	o := ovDemo(t, 160, 40, feeds)
	fs := demoFindings()
	podStorm := fs[2]
	podStorm.Resource, podStorm.FirstAt = "pods.v1", at(108*time.Second)
	podStorm.Evidence.Text = "the pods relisted three times"
	o = ovUpdate(o, resourceMsg{i: ovConfigMaps, msg: program.SnapshotMsg{At: at(110 * time.Second), HasFindings: true, Findings: fs[:2]}})
	o = ovUpdate(o, resourceMsg{i: ovPods, msg: program.SnapshotMsg{At: at(110 * time.Second), HasFindings: true, Findings: []findings.Finding{podStorm}}})
	o = ovUpdate(o, resourceMsg{i: ovDeployments, msg: program.SnapshotMsg{At: at(110 * time.Second), HasFindings: true}})
	s := ovScreen(o)
	mustContain(t, s, "FINDINGS", "2 findings (error)", "+1 ignored", "f findings")
	// The findings column's cell of each row (no row has wide characters).
	col := -1
	cells := map[string]string{}
	for _, l := range lines(s) {
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
	mustContain(t, s, "findings · 2 findings (+1 ignored) · newest first", "RESOURCE", findingspane.Hint)
	first := ""
	for _, l := range lines(s) {
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
	mustContain(t, s, "Finding relist-storm  error  pods.v1", "the pods relisted three times", "relists", "raise --watch-cache-sizes", findingspane.DetailHint)
	o = ovKeys(o, "esc")
	mustContain(t, ovScreen(o), "newest first")
	o = ovKeys(o, "f")
	mustContain(t, ovScreen(o), "RESOURCE", "FINDINGS", "total")
	mustContain(t, ovScreen(ovKeys(ovPeek(o), "?")), "f          findings", "the column counts each resource's findings")
}
