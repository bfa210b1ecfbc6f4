package overview

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

func TestOverviewShowsOneRowPerResourceAndTheirTotals(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			o := ovDemo(t, sz.w, sz.h, [numOvDemo]program.Feed{})
			s := ovScreen(o)
			tuitest.MustContain(t, s,
				"kubectl watchcache", "ctx kind-watchcache", "https://127.0.0.1:6443", "up 1m50s", "LIVE",
				"4 resources · namespace prod · list, page 500 · metadata-only",
				"● 1 Watching  ● 1 Relisting  ● 1 Backoff  ● 1 Failed",
				"RESOURCE", "STATE", "OBJECTS", "MEMORY", "410s", "RELISTS", "EVENTS/MIN",
				"▸ configmaps       ● Watching", "  pods             ● Relisting",
				"  deployments.apps ● Failed", "  replicasets.apps ● Backoff",
				"── recent · configmaps", "REPLACED default/web-config-5",
			)
			if sz.w >= common.WideWidth {
				tuitest.MustContain(t, s, "LAST RV", "BOOKMARK", "LAST ERROR", "FOR",
					"1290       10s ago", "48213      1m30s ago",
					"410 Expired: too old resource version", "dial tcp 10.96.0.1:443: connect")
			} else {
				tuitest.MustNotContain(t, s, "LAST RV", "LAST ERROR")
			}
		})
	}
}

func TestOverviewTotalsSumTheResources(t *testing.T) {
	o := ovDemo(t, 160, 48, [numOvDemo]program.Feed{})
	var objects, bytes int64
	inFlight := 0
	for i := range numOvDemo {
		c, ready := ovDemoCounters(i)
		if ready {
			objects, bytes = objects+int64(c.Objects), bytes+c.BytesHeld
		}
		if ovDemoStats(i).Current != nil {
			inFlight++
		}
	}
	if objects != 13050 || inFlight != 2 {
		t.Fatalf("the demo changed: %d objects, %d in flight", objects, inFlight)
	}
	// The events: 46 configmaps' (the dashboard demo's), 2,880 pods', 12 replicasets'.
	want := fmt.Sprintf("  total            %d in flight           %s  %s                         4       4 ", inFlight, format.Count(objects), format.Bytes(bytes))
	tuitest.MustContain(t, ovScreen(o), want, "2,938", "  pods ", "2,880")
	for _, l := range tuitest.Lines(ovScreen(o)) {
		if strings.HasPrefix(l, "  total ") && !strings.HasSuffix(l, " 2,938") {
			t.Errorf("the totals row does not end with the 2,938 events of the minute: %q", l)
		}
	}
}

func TestAFailedResourceShowsItsReasonUnderItsRow(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {160, 48}, {60, 16}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			o := ovDemo(t, sz.w, sz.h, [numOvDemo]program.Feed{})
			got := tuitest.Lines(ovScreen(o))
			for i, l := range got {
				if strings.Contains(l, "deployments") && strings.Contains(l, "● Failed") {
					if i+1 >= len(got) || !strings.HasPrefix(got[i+1], "    └ 403 Forbidden: deployments.apps is forbidden") {
						t.Fatalf("the line under the failed row is not its reason:\n%s", strings.Join(got, "\n"))
					}
					if want := o.St.Bad.Render("    └ 403 Forbidden:"); !strings.Contains(o.View().Content, want[:len(want)-4]) {
						t.Errorf("the reason is not red and bold")
					}
					return
				}
			}
			t.Fatalf("no failed row:\n%s", strings.Join(got, "\n"))
		})
	}
	// A resource in backoff says why under its row only where the table has no last-error column.
	tuitest.MustContain(t, ovScreen(ovDemo(t, 80, 24, [numOvDemo]program.Feed{})), "    └ retry in 3.2s: dial tcp 10.96.0.1:443: connect: connection refused")
	tuitest.MustNotContain(t, ovScreen(ovDemo(t, 160, 48, [numOvDemo]program.Feed{})), "└ retry in")
}

func TestOverviewFitsTheTerminalExactly(t *testing.T) {
	for _, sz := range tuitest.FitSizes() {
		t.Run(fmt.Sprintf("%dx%d", sz.W, sz.H), func(t *testing.T) {
			o := ovDemo(t, sz.W, sz.H, [numOvDemo]program.Feed{})
			for _, state := range []string{"table", "help", "table again", "resource"} {
				switch state {
				case "help":
					o = ovKeys(o, "?")
				case "table again":
					o = ovKeys(o, "esc")
				case "resource":
					o = ovKeys(o, "down", "enter")
				}
				tuitest.MustFit(t, state, o.View().Content, sz)
			}
		})
	}
}

func TestSelectingAndOpeningAResource(t *testing.T) {
	o := ovDemo(t, 80, 24, [numOvDemo]program.Feed{})
	o = ovKeys(o, "k") // already on the first row
	if o.tbl.Selected() != 0 {
		t.Fatalf("k on the first row: row %d", o.tbl.Selected())
	}
	o = ovKeys(o, "j", "down", "up")
	if o.tbl.Selected() != 1 {
		t.Fatalf("j, down, up: row %d, want 1", o.tbl.Selected())
	}
	s := ovScreen(o)
	tuitest.MustContain(t, s, "▸ pods", "── recent · pods", "no events yet")
	o = ovKeys(o, "G")
	if o.tbl.Selected() != numOvDemo-1 {
		t.Fatalf("G: row %d, want the last", o.tbl.Selected())
	}
	o = ovKeys(o, "down")
	if o.tbl.Selected() != numOvDemo-1 {
		t.Fatalf("down on the last row: row %d", o.tbl.Selected())
	}
	o = ovKeys(o, "g", "j", "enter")
	if o.Shown != 1 || o.tbl.Selected() != 1 {
		t.Fatalf("enter: row %d shown, on row %d, want the pods' dashboard", o.Shown, o.tbl.Selected())
	}
	s = ovScreen(o)
	tuitest.MustContain(t, s, "pods.v1 · namespace prod", "● Relisting for 3.0s", "list #12 running",
		"objects        12,345 · 48.0 MiB", "410 Gone       3")
	tuitest.MustNotContain(t, s, "EVENTS/MIN")
	o = ovKeys(o, "esc")
	if o.State != overviewTable || o.tbl.Selected() != 1 {
		t.Fatalf("esc: state %v on row %d, want the overview on the pods", o.State, o.tbl.Selected())
	}
	tuitest.MustContain(t, ovScreen(o), "EVENTS/MIN", "▸ pods")
}

func TestEscInsideAResourceClosesItsOwnViewsFirst(t *testing.T) {
	o := ovKeys(ovDemo(t, 80, 24, [numOvDemo]program.Feed{}), "enter")
	for _, tt := range []struct {
		name  string
		setup []string
		state program.ViewState
	}{
		{"a detail", []string{"enter"}, program.StateDetail},
		{"the help", []string{"?"}, program.StateHelp},
		{"the filter prompt", []string{"/"}, program.StateFilter},
		{"a kept filter", []string{"/", "w", "e", "b", "enter"}, program.StateDashboard},
		{"a type filter", []string{"t"}, program.StateDashboard},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := ovKeys(ovPeek(o), tt.setup...)
			if got := in.subs[0].State; got != tt.state {
				t.Fatalf("state %v, want %v", got, tt.state)
			}
			in = ovKeys(in, "esc")
			if in.Shown != 0 || !in.subs[0].AtTopLevel() {
				t.Fatalf("esc in %s: row %d shown, state %v, filtering %v; want the dashboard, cleared",
					tt.name, in.Shown, in.State, in.subs[0].Log.Filtering())
			}
			in = ovKeys(in, "esc")
			if in.State != overviewTable {
				t.Fatalf("a second esc: state %v, want the overview", in.State)
			}
		})
	}
}

func TestRelistAndAuditActOnTheSelectedResource(t *testing.T) {
	var calls callLog
	o := ovDemo(t, 160, 48, recordingFeeds(&calls))

	// From the overview: pods is selected.
	o = ovKeys(o, "j")
	next, cmd := o.Update(tuitest.KeyPress("r"))
	o = next.(Overview)
	if got := calls.String(); got != "[]" {
		t.Fatalf("r called %s inside Update; it must run in a command", got)
	}
	msgs := tuitest.RunCmd(cmd)
	if got := calls.String(); got != "[relist 1]" {
		t.Fatalf("r on the pods: calls %s, want [relist 1]", got)
	}
	if len(msgs) != 1 || msgs[0].(resourceMsg).i != ovPods {
		t.Fatalf("the relist's message %#v is not routed back to the pods", msgs)
	}
	tuitest.MustContain(t, ovScreen(o), "pods: forced relist requested")

	next, cmd = o.Update(tuitest.KeyPress("a"))
	o = next.(Overview)
	tuitest.MustContain(t, ovScreen(o), "pods: audit running")
	msgs = tuitest.RunCmd(cmd)
	if got := calls.String(); got != "[relist 1 audit 1]" {
		t.Fatalf("a on the pods: calls %s", got)
	}
	for _, msg := range msgs {
		o = ovUpdate(o, msg)
	}
	tuitest.MustContain(t, ovScreen(o), "pods: audit at resourceVersion 901")
	if o.subs[ovPods].Auditing || o.subs[ovConfigMaps].Status.Text != "" {
		t.Errorf("the audit's result did not reach the pods alone")
	}

	// From inside a resource: the deployments, whose reflector failed (a
	// 403): r says it does nothing there, a audits.
	o = ovKeys(o, "j", "enter")
	next, cmd = o.Update(tuitest.KeyPress("r"))
	o = next.(Overview)
	tuitest.RunCmd(cmd)
	tuitest.MustContain(t, ovScreen(o), "force relist is not available: the reflector is Failed")
	_, cmd = o.Update(tuitest.KeyPress("a"))
	tuitest.RunCmd(cmd)
	if got := calls.String(); got != "[relist 1 audit 1 audit 2]" {
		t.Fatalf("r and a inside the deployments: calls %s", got)
	}
}

func TestActionsExplainThemselvesOnTheOverview(t *testing.T) {
	clock := tuitest.NewFakeClock()
	opts := tuitest.DemoOptions(clock)
	opts.Replay = true
	o := newOverview(opts, ovDemoResources([numOvDemo]program.Feed{}))
	t.Cleanup(o.Close)
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 120, Height: 30})
	for _, k := range []string{"r", "a"} {
		next, cmd := o.Update(tuitest.KeyPress(k))
		o = next.(Overview)
		if cmd != nil {
			t.Errorf("%s returned a command in a replay without the function", k)
		}
		tuitest.MustContain(t, ovScreen(o), "configmaps: ", "needs a live cluster: this is a replay")
	}
}

func TestOneResourceOpensStraightIntoItsDashboard(t *testing.T) {
	clock := tuitest.NewFakeClock()
	o := newOverview(tuitest.DemoOptions(clock), []program.Resource{tuitest.DemoResource(program.Feed{})})
	t.Cleanup(o.Close)
	single, _ := demoModel(t, 80, 24)
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 80, Height: 24})
	for _, s := range tuitest.DemoSnapshots() {
		clock.Time = s.At
		o = ovUpdate(o, resourceMsg{i: 0, msg: s})
	}
	o = ovUpdate(o, resourceMsg{i: 0, msg: program.NotesMsg{Notes: tuitest.DemoNotes()}})
	o = ovUpdate(o, resourceMsg{i: 0, msg: tuitest.DemoChanges()})
	if got, want := ovScreen(o), screen(single); got != want {
		t.Fatalf("one resource's overview:\n%s\nwant its dashboard:\n%s", got, want)
	}
	// esc keeps the dashboard's meaning: it clears a filter, and never leaves.
	o = ovKeys(o, "t", "esc", "esc")
	if o.Shown != 0 || o.State != program.StateDashboard || o.subs[0].Log.Filtering() {
		t.Fatalf("esc on a single resource: row %d shown, state %v, filtering %v", o.Shown, o.State, o.subs[0].Log.Filtering())
	}
	tuitest.MustNotContain(t, ovScreen(o), "EVENTS/MIN", "overview")
	o = ovKeys(o, "?")
	tuitest.MustNotContain(t, ovScreen(o), "overview")
}

func TestInsideOneOfSeveralTheHelpAndFooterNameTheOverview(t *testing.T) {
	o := ovKeys(ovDemo(t, 160, 48, [numOvDemo]program.Feed{}), "enter")
	tuitest.MustContain(t, ovScreen(o), "esc overview")
	tuitest.MustContain(t, ovScreen(ovKeys(ovPeek(o), "?")), "back, unfilter, overview", "esc goes back to the overview")
}

func TestOverviewHelpListsItsKeys(t *testing.T) {
	o := ovKeys(ovDemo(t, 80, 24, [numOvDemo]program.Feed{}), "?")
	if o.State != overviewHelp {
		t.Fatalf("state %v, want help", o.State)
	}
	tuitest.MustContain(t, ovScreen(o), "Overview keys", "↑/k", "↓/j", "enter      open resource", "esc        overview",
		"r          force relist", "a          audit now", "q          quit", "a failure's reason shows under its row")
	// The legend names every column; its end is below the screen, G shows it.
	tuitest.MustContain(t, ovScreen(ovKeys(ovPeek(o), "G")), "for       how long", "last RV", "410s", "lag p99", "last error", "r and a act on the selected resource")
	for _, k := range []string{"?", "esc"} {
		if back := ovKeys(o, k); back.State != overviewTable {
			t.Errorf("%s in the help: state %v, want the overview", k, back.State)
		}
	}
}

func TestOverviewQuitKeys(t *testing.T) {
	tests := []struct {
		name  string
		setup []string
		key   string
		quits bool
	}{
		{"q on the overview", nil, "q", true},
		{"ctrl+c on the overview", nil, "ctrl+c", true},
		{"q in its help", []string{"?"}, "q", true},
		{"esc on the overview", nil, "esc", false},
		{"q in a resource", []string{"enter"}, "q", true},
		{"ctrl+c in a resource", []string{"enter"}, "ctrl+c", true},
		{"q in a resource's filter is text", []string{"enter", "/"}, "q", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := ovKeys(ovDemo(t, 80, 24, [numOvDemo]program.Feed{}), tt.setup...)
			_, cmd := o.Update(tuitest.KeyPress(tt.key))
			quit := false
			for _, msg := range tuitest.RunCmd(cmd) {
				if _, ok := msg.(tea.QuitMsg); ok {
					quit = true
				}
			}
			if quit != tt.quits {
				t.Errorf("quits = %v, want %v", quit, tt.quits)
			}
		})
	}
}

// manyResources are n configmaps, one a namespace, the one at failed Failed.
func manyResources(t *testing.T, n, failed, w, h int) Overview {
	t.Helper()
	var resources []program.Resource
	for i := range n {
		r := ovResource("", "configmaps", "ConfigMap", program.Feed{})
		r.Target.Namespace = fmt.Sprintf("ns-%02d", i)
		resources = append(resources, r)
	}
	o := newOverview(tuitest.DemoOptions(tuitest.NewFakeClock()), resources)
	t.Cleanup(o.Close)
	o = ovUpdate(o, tea.WindowSizeMsg{Width: w, Height: h})
	for i := range n {
		s := tuitest.DemoStats()
		if i == failed {
			s = ovDemoStats(ovDeployments)
		}
		o = ovUpdate(o, resourceMsg{i: i, msg: tuitest.DemoSnapshot(time.Second, s)})
	}
	return o
}

func TestTheTableScrollsAndTheSelectedRowStaysVisible(t *testing.T) {
	const n = 30
	o := manyResources(t, n, n-1, 80, 24)
	s := ovScreen(o)
	// At 80 columns the names are cut before the namespace that tells them apart.
	tuitest.MustContain(t, s, "▸ configma… -n ns-00", "resources · 1-", "of 30", "30 resources · several namespaces")
	tuitest.MustNotContain(t, s, "-n ns-29")
	o = ovKeys(o, "G")
	s = ovScreen(o)
	tuitest.MustContain(t, s, "▸ configma… -n ns-29", "    └ 403 Forbidden", "-30 of 30")
	tuitest.MustNotContain(t, s, "-n ns-00 ")
	for i := n - 1; i >= 0; i-- {
		o = ovKeys(o, "up")
		if !strings.Contains(ovScreen(o), fmt.Sprintf("▸ configma… -n ns-%02d", max(i-1, 0))) {
			t.Fatalf("row %d selected but not shown:\n%s", max(i-1, 0), ovScreen(o))
		}
	}
	o = ovKeys(o, "pgdown")
	if o.tbl.Selected() == 0 || !strings.Contains(ovScreen(o), fmt.Sprintf("▸ configma… -n ns-%02d", o.tbl.Selected())) {
		t.Fatalf("pgdown: row %d, not shown:\n%s", o.tbl.Selected(), ovScreen(o))
	}
	// Every row fits at 160x48 and the log glimpse takes the rest.
	tuitest.MustNotContain(t, ovScreen(manyResources(t, 8, 7, 160, 48)), " of 8")
}

// The table does not follow the screen while a dashboard covers it: back
// from one, it shows the selected row, its reason line, and a full window.
func TestTheTableComesBackWithTheSelectedRowInView(t *testing.T) {
	const n = 30
	o := ovKeys(manyResources(t, n, n-1, 80, 24), "G", "enter")
	for _, h := range []int{14, 40, 20} {
		o = ovUpdate(o, tea.WindowSizeMsg{Width: 80, Height: h})
		o = ovKeys(o, "esc")
		s := ovScreen(o)
		tuitest.MustContain(t, s, "▸ configma… -n ns-29", "    └ 403 Forbidden")
		if h == 40 { // every row fits
			tuitest.MustNotContain(t, s, " of 30")
		} else { // the window ends on the last row: full
			tuitest.MustContain(t, s, "-30 of 30")
		}
		o = ovKeys(o, "enter")
	}
	o = ovKeys(o, "esc", "g", "enter")
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 80, Height: 12})
	o = ovKeys(o, "esc")
	tuitest.MustContain(t, ovScreen(o), "▸ configma… -n ns-00", "resources · 1-")
}

func TestEachResourceGetsItsOwnMessages(t *testing.T) {
	o := ovDemo(t, 80, 24, [numOvDemo]program.Feed{})
	before := o.subs[ovConfigMaps].Log.Entries.Len()
	late := tuitest.Applied(tuitest.At(111*time.Second), store.Result{Outcome: store.Added, Object: tuitest.Obj("prod", "late-pod", "u-late", "48300")})
	next, cmd := o.Update(resourceMsg{i: ovPods, msg: late})
	o = next.(Overview)
	if got := o.subs[ovPods].Log.Entries.Len(); got != 1 {
		t.Errorf("the pods' log has %d entries, want the 1 sent to it", got)
	}
	if got := o.subs[ovConfigMaps].Log.Entries.Len(); got != before {
		t.Errorf("the configmaps' log went from %d to %d entries on the pods' notes", before, got)
	}
	if cmd != nil {
		t.Error("a feed without notes re-armed a notes reader")
	}
	// A hidden resource keeps its log: opening it shows what came while it was hidden.
	tuitest.MustContain(t, ovScreen(ovKeys(ovPeek(o), "j")), "── recent · pods", "ADDED    prod/late-pod")
	tuitest.MustContain(t, ovScreen(ovKeys(ovPeek(o), "j", "enter")), "ADDED    prod/late-pod")
	// A message for no resource is dropped.
	if _, cmd := o.Update(resourceMsg{i: numOvDemo, msg: late}); cmd != nil {
		t.Error("a message for no resource returned a command")
	}
}

func TestEveryResourcesCommandsComeBackToIt(t *testing.T) {
	feeds := [numOvDemo]program.Feed{}
	for i := range feeds {
		st, _ := store.New()
		feeds[i] = program.Feed{Stats: func() reflector.Stats { return ovDemoStats(i) }, Store: st}
	}
	o := newOverview(tuitest.DemoOptions(tuitest.NewFakeClock()), ovDemoResources(feeds))
	t.Cleanup(o.Close)
	got := map[int]bool{}
	for _, msg := range tuitest.RunCmd(o.Init()) {
		rm, ok := msg.(resourceMsg)
		if !ok {
			t.Fatalf("Init gave %T, want resourceMsg", msg)
		}
		s, ok := rm.msg.(program.SnapshotMsg)
		if !ok || s.Stats.State != ovDemoStats(rm.i).State {
			t.Fatalf("resource %d got %#v, want its own snapshot", rm.i, rm.msg)
		}
		got[rm.i] = true
		// The snapshot re-arms that resource's poller, still routed to it.
		next, cmd := o.Update(rm)
		o = next.(Overview)
		again := tuitest.RunCmd(cmd)
		if len(again) != 1 || again[0].(resourceMsg).i != rm.i {
			t.Fatalf("resource %d's next poll came back as %#v", rm.i, again)
		}
	}
	if len(got) != numOvDemo {
		t.Errorf("Init polled resources %v, want all %d", got, numOvDemo)
	}
	if msg := wrapMsg(3, tea.QuitMsg{}); msg != (tea.QuitMsg{}) {
		t.Errorf("a resource's quit became %#v, want it to reach the program", msg)
	}
}

func TestTheWindowSizeReachesEveryResource(t *testing.T) {
	o := ovDemo(t, 80, 24, [numOvDemo]program.Feed{})
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 132, Height: 41})
	for i, m := range o.subs {
		if m.Chrome.Width != 132 || m.Chrome.Height != 41 {
			t.Errorf("resource %d is %dx%d, want 132x41", i, m.Chrome.Width, m.Chrome.Height)
		}
	}
}

func TestOverviewShowsReplayPositionAndAlerts(t *testing.T) {
	clock := tuitest.NewFakeClock()
	opts := tuitest.DemoOptions(clock)
	opts.Replay, opts.Trace = true, "testdata/traces/several.jsonl"
	o := newOverview(opts, ovDemoResources([numOvDemo]program.Feed{}))
	t.Cleanup(o.Close)
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 100, Height: 24})
	for i := range numOvDemo {
		snap := tuitest.DemoSnapshot(time.Second, ovDemoStats(i))
		if i == ovPods {
			snap.Alerts = &program.Alerts{Banner: "relists>2 tripped on pods", Fatal: true}
		}
		o = ovUpdate(o, resourceMsg{i: i, msg: snap})
	}
	tuitest.MustContain(t, ovScreen(o), "REPLAY", "trace testdata/traces/several.jsonl",
		"ALERT  relists>2 tripped on pods")
	tuitest.MustNotContain(t, ovScreen(o), "LIVE")
}

// newOverview is New without a context of its own, as the tests build it.
func newOverview(opts program.Options, resources []program.Resource) Overview {
	return New(context.Background(), opts, resources)
}

// A cluster-scoped resource has no namespace: the header names the
// namespace the namespaced ones share, and says cluster-scoped when none is
// namespaced (kubectl watchcache ns,crd -n x watches no namespace).
func TestTheHeaderNamesTheNamespaceOfTheNamespacedResourcesOnly(t *testing.T) {
	clusterScoped := func(resource, kind, ns string) program.Resource {
		r := ovResource("", resource, kind, program.Feed{})
		r.Target.Resource.Namespaced = false
		r.Target.Namespace = ns
		return r
	}
	namespaced := func(resource, kind, ns string) program.Resource {
		r := ovResource("", resource, kind, program.Feed{})
		r.Target.Namespace = ns
		return r
	}
	for _, c := range []struct {
		name      string
		resources []program.Resource
		want      string
		rows      []string
	}{
		{"cluster-scoped only, -n given", []program.Resource{clusterScoped("namespaces", "Namespace", "h60a"), clusterScoped("nodes", "Node", "h60a")}, "2 resources · cluster-scoped", nil},
		{"both, one namespace", []program.Resource{namespaced("configmaps", "ConfigMap", "h60a"), clusterScoped("nodes", "Node", "")}, "2 resources · namespace h60a (1 cluster-scoped)", nil},
		{"both, all namespaces", []program.Resource{namespaced("configmaps", "ConfigMap", ""), clusterScoped("nodes", "Node", "")}, "2 resources · all namespaces (1 cluster-scoped)", nil},
		{"two namespaces", []program.Resource{namespaced("configmaps", "ConfigMap", "a"), namespaced("secrets", "Secret", "b"), clusterScoped("nodes", "Node", "")},
			"3 resources · several namespaces (1 cluster-scoped)", []string{"configmaps -n a", "secrets -n b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := newOverview(tuitest.DemoOptions(tuitest.NewFakeClock()), c.resources)
			t.Cleanup(o.Close)
			o = ovUpdate(o, tea.WindowSizeMsg{Width: 120, Height: 30})
			s := ovScreen(o)
			tuitest.MustContain(t, s, append([]string{c.want}, c.rows...)...)
			tuitest.MustNotContain(t, s, "nodes -n")
			if c.rows == nil {
				tuitest.MustNotContain(t, s, " -n ")
			}
		})
	}
}

// After a rewind the overview opens the resource the one before had open,
// with its log's filters (Options.Reopen), also when that resource comes
// later (a proxy's trace brings its streams as the replay reaches them);
// the overview's own table is where a rewind from it comes back to, with
// the row it had selected.
func TestARewoundOverviewOpensWhereTheOneBeforeWas(t *testing.T) {
	opts := tuitest.DemoOptions(tuitest.NewFakeClock())
	res := []program.Resource{ovResource("", "configmaps", "ConfigMap", program.Feed{}), ovResource("", "secrets", "Secret", program.Feed{})}
	opts.Reopen = &program.View{Row: 1, Filter: "Web", TypeIdx: 2}
	o := newOverview(opts, res)
	t.Cleanup(o.Close)
	if o.Shown != 1 || o.subs[1].Log.Filter != "web" || o.subs[1].Log.TypeIdx != 2 || o.subs[0].Log.Filter != "" {
		t.Errorf("shown %d, filters %q/%d; want secrets open, filtered by web and type 2", o.Shown, o.subs[1].Log.Filter, o.subs[1].Log.TypeIdx)
	}
	added := make(chan program.Resource, 1)
	opts.Added, opts.Reopen = added, &program.View{Row: 0, Filter: "x"}
	later := newOverview(opts, nil)
	t.Cleanup(later.Close)
	if later.Shown != -1 {
		t.Fatalf("shown %d before the resource came", later.Shown)
	}
	later.add(res[0])
	if later.Shown != 0 || later.subs[0].Log.Filter != "x" {
		t.Errorf("shown %d, filter %q once it came; want it open, filtered by x", later.Shown, later.subs[0].Log.Filter)
	}
	opts.Added, opts.Reopen = nil, &program.View{Row: -1}
	if table := newOverview(opts, res); table.Shown != -1 {
		t.Errorf("shown %d, want the table", table.Shown)
	}
	opts.Added, opts.Reopen = make(chan program.Resource), &program.View{Row: -1, Selected: 1}
	selecting := newOverview(opts, nil)
	t.Cleanup(selecting.Close)
	selecting.add(res[0])
	selecting.add(res[1])
	if selecting.Shown != -1 || selecting.selected() != 1 {
		t.Errorf("shown %d, selected %d once both came; want the table, the second row selected", selecting.Shown, selecting.selected())
	}
}

// The probe's row says so where its Lease's field selector would be cut
// unreadable ("lea… --field-sel…robe-c74dcmrw" at 120 columns).
func TestTheProbesRowSaysProbe(t *testing.T) {
	cms := ovResource("", "configmaps", "ConfigMap", program.Feed{})
	lease := ovResource("coordination.k8s.io", "leases", "Lease", program.Feed{})
	lease.Target.FieldSelector, lease.Probe = "metadata.name=kubectl-watchcache-probe-c74dcmrw", true
	o := newOverview(tuitest.DemoOptions(tuitest.NewFakeClock()), []program.Resource{cms, lease})
	t.Cleanup(o.Close)
	s := ovScreen(ovUpdate(o, tea.WindowSizeMsg{Width: 120, Height: 30}))
	tuitest.MustContain(t, s, "leases.coor… (probe)")
	tuitest.MustNotContain(t, s, "--field-selector")
}
