package dashboard

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/churn"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// openChurn presses c and delivers what its command read.
func openChurn(t *testing.T, m Model) Model {
	t.Helper()
	next, cmd := m.Update(tuitest.KeyPress("c"))
	m = next.(Model)
	if m.State != program.StateChurn {
		t.Fatalf("c left state %v, want churn", m.State)
	}
	for _, msg := range tuitest.RunCmd(cmd) {
		m = update(m, msg)
	}
	return m
}

// The churn pane (c): the totals, the share of timestamp-only events, the
// events not diffed, the top paths with count, share and top writer, and
// the objects that take most events; esc or c close it; the help lists it.
func TestChurnPaneShowsTotalsPathsAndObjects(t *testing.T) {
	feed := &tuitest.ChurnFeed{}
	s := tuitest.DemoChurn()
	feed.Sum.Store(&s)
	clock := tuitest.NewFakeClock()
	m := newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{Churn: feed.Churn}))
	t.Cleanup(m.Close)
	m = resize(m, 120, 40)
	tuitest.MustNotContain(t, screen(m), "c churn") // in the footer once an event was diffed
	tuitest.MustContain(t, screen(update(peek(m), tuitest.KeyPress("?"))), "churn (--diff)")
	m = update(m, diffedChange())
	tuitest.MustContain(t, screen(m), "c churn")

	m = openChurn(t, m)
	sc := screen(m)
	tuitest.MustContain(t, sc, "churn · what the MODIFIED events changed", "42 MODIFIED events", "30 (71%) changed only times",
		"not diffed   3", `.metadata.annotations["example.com/at"]`, "30    71%  stamper", "12    29%  writer",
		"2     5%  kube-controller-manager/status", "default/web-config-1", "31    69%", churn.Hint)
	tuitest.MustNotContain(t, sc, "event rates") // the pane is over the dashboard
	if a, b := strings.Index(sc, "stamper"), strings.Index(sc, "writer"); a < 0 || b < a {
		t.Errorf("want the most changed path first:\n%s", sc)
	}

	for _, close := range []string{"esc", "c"} {
		m.State = program.StateChurn
		if m = update(m, tuitest.KeyPress(close)); m.State != program.StateDashboard {
			t.Errorf("%s on the churn pane left state %v, want the dashboard", close, m.State)
		}
	}
	help := update(peek(m), tuitest.KeyPress("?"))
	tuitest.MustContain(t, screen(help), "churn (--diff)")
	tuitest.MustContain(t, screen(update(help, tuitest.KeyPress("G"))), "c shows what the MODIFIED events changed") // the help's end
}

// The churn pane scrolls within its lines, as the detail does: G shows
// its end, down there stays, and the first up moves it (no dead press).
func TestChurnPaneScrollsWithinItsContent(t *testing.T) {
	feed := &tuitest.ChurnFeed{}
	s := tuitest.DemoChurn()
	feed.Sum.Store(&s)
	m := newAlone(tuitest.DemoOptions(tuitest.NewFakeClock()), tuitest.DemoResource(program.Feed{Churn: feed.Churn}))
	t.Cleanup(m.Close)
	m = openChurn(t, resize(update(m, diffedChange()), 120, 16))
	_, _, body := m.Chrome.Size()
	total := len(m.churn.Lines(m.St, m.Chrome.Width))
	if total <= body {
		t.Fatalf("the pane's %d lines fit its %d, want it to scroll", total, body)
	}
	m = update(m, tuitest.KeyPress("G"))
	if m.churn.Offset != total-body {
		t.Errorf("G: offset %d, want %d, the pane's end at its bottom line", m.churn.Offset, total-body)
	}
	end := screen(m)
	tuitest.MustContain(t, end, "default/web-config-2")
	m = update(m, tuitest.KeyPress("down"))
	if m.churn.Offset != total-body {
		t.Errorf("down at the bottom moved the offset from %d to %d", total-body, m.churn.Offset)
	}
	if m = update(m, tuitest.KeyPress("up")); screen(m) == end {
		t.Errorf("up from the bottom left the pane as it was:\n%s", end)
	}
	if m = update(m, tuitest.KeyPress("g")); m.churn.Offset != 0 {
		t.Errorf("g: offset %d, want 0", m.churn.Offset)
	}
}

// With nothing diffed the pane says why, for its run: --diff is off (live,
// the proxy, a replay each say what diffs), or it is on and nothing has
// changed yet; it counts the events it could not diff. At 80 columns its
// sentences wrap, uncut.
func TestChurnPaneSaysWhyNothingIsDiffed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    func(*program.Options)
		diffing bool
		want    string
	}{
		{"live without --diff", nil, false, "no MODIFIED event is diffed: --diff is off; run with --diff to see what each MODIFIED event changed"},
		{"live with --diff", nil, true, "no MODIFIED event diffed yet: none has come since the watch began"},
		{"replay", func(o *program.Options) { o.Replay = true }, false, "this replay does not diff; replay --diff diffs a trace of whole objects"},
		{"proxy", func(o *program.Options) { o.Kind = program.Observing("proxy 127.0.0.1:1") }, false, "the proxy diffs only with --diff, and only JSON streams of whole objects (not protobuf, tables or metadata-only)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			feed := &tuitest.ChurnFeed{}
			opts := tuitest.DemoOptions(tuitest.NewFakeClock())
			if tc.opts != nil {
				tc.opts(&opts)
			}
			m := newAlone(opts, tuitest.DemoResource(program.Feed{Churn: feed.Churn, Diffing: func() bool { return tc.diffing }}))
			t.Cleanup(m.Close)
			m = openChurn(t, resize(m, 80, 30))
			sc := screen(m)
			if got := strings.Join(strings.Fields(sc), " "); !strings.Contains(got, tc.want) {
				t.Errorf("pane lacks %q:\n%s", tc.want, sc)
			}
			tuitest.MustNotContain(t, sc, "PATH", "not diffed:")

			feed.Sum.Store(&diff.Summary{Skipped: 4})
			m = update(m, tuitest.KeyPress("c"))
			m = openChurn(t, m)
			tuitest.MustContain(t, screen(m), "4 MODIFIED events not diffed")
		})
	}
}

// Without a Churn in the feed (another program's reflector) there is no c.
func TestNoChurnFeedNoChurnKey(t *testing.T) {
	m, _ := demoModel(t, 120, 40)
	tuitest.MustNotContain(t, screen(m), "churn")
	if m = update(m, tuitest.KeyPress("c")); m.State != program.StateDashboard {
		t.Errorf("c without a Churn left state %v, want the dashboard", m.State)
	}
	tuitest.MustNotContain(t, screen(update(peek(m), tuitest.KeyPress("?"))), "churn")
}

// The churn is read by the poller only while the pane is open, and at
// most once a churn.Every: never per event, never while it is closed.
func TestChurnIsPolledOnlyWhileOpenAndAtMostOncePerSecond(t *testing.T) {
	feed := &tuitest.ChurnFeed{}
	clock := tuitest.NewFakeClock()
	m := newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{Churn: feed.Churn}))
	t.Cleanup(m.Close)
	m = resize(m, 120, 30)
	m = update(m, tuitest.DemoChanges()) // the model's clock at 110s
	clock.Time = tuitest.At(110 * time.Second)
	m = poll(t, m)
	if n := feed.Reads.Load(); n != 0 {
		t.Fatalf("the churn was read %d times with the pane closed, want 0", n)
	}
	m = openChurn(t, m)
	if n := feed.Reads.Load(); n != 1 {
		t.Fatalf("opening the pane read the churn %d times, want 1", n)
	}
	m = poll(t, m) // at the same time: not due
	if n := feed.Reads.Load(); n != 1 {
		t.Fatalf("a poll right after the open read the churn again (%d reads)", n)
	}
	s := tuitest.DemoChurn()
	feed.Sum.Store(&s)
	clock.Time = tuitest.At(111 * time.Second)
	m = poll(t, m) // takes the time
	m = poll(t, m) // due: reads
	if n := feed.Reads.Load(); n != 2 {
		t.Fatalf("%d reads a second later, want 2", n)
	}
	tuitest.MustContain(t, screen(m), "42 MODIFIED events")
	m = update(m, tuitest.KeyPress("esc"))
	clock.Time = tuitest.At(115 * time.Second)
	poll(t, poll(t, m))
	if n := feed.Reads.Load(); n != 2 {
		t.Errorf("the churn was read after the pane closed (%d reads)", n)
	}
}

// diffedChange is web-config-1's MODIFIED event diffed: its data and an
// annotation, each with its writer, and the meta paths.
func diffedChange() program.NotesMsg {
	prev := tuitest.Obj("default", "web-config-1", "0a1b2c3d-0001", "140")
	cur := tuitest.Obj("default", "web-config-1", "0a1b2c3d-0001", "160")
	msg := tuitest.Applied(tuitest.At(110*time.Second), store.Result{Outcome: store.Modified, Object: cur, Previous: prev})
	msg.Notes[0].Changes = &diff.Changes{Paths: []diff.Change{
		{Path: ".data.k", Op: diff.Changed, Old: json.RawMessage(`"x1"`), New: json.RawMessage(`"x2"`), Manager: "writer", Operation: "Update"},
		{Path: ".data.new", Op: diff.Added, New: json.RawMessage(`"v"`), Manager: "other", Operation: "Apply"},
		{Path: ".metadata.managedFields", Op: diff.Changed, Meta: true},
		{Path: ".metadata.resourceVersion", Op: diff.Changed, Old: json.RawMessage(`"140"`), New: json.RawMessage(`"160"`), Meta: true},
		{Path: ".status.phase", Op: diff.Removed, Old: json.RawMessage(`"Ready"`), Manager: "kubelet", Subresource: "status"},
	}}
	return msg
}

// The object detail lists each diffed version's changed paths, old → new
// by writer, the meta paths hidden until m (which the footer names); a
// version not diffed says why, then what the dashboard compared itself.
func TestObjectDetailShowsEachVersionsDiff(t *testing.T) {
	m, _ := demoModel(t, 120, 40)
	m = update(m, diffedChange())
	skipped := tuitest.Applied(tuitest.At(111*time.Second), store.Result{Outcome: store.Modified,
		Object: tuitest.Obj("default", "web-config-1", "0a1b2c3d-0001", "170"), Previous: tuitest.Obj("default", "web-config-1", "0a1b2c3d-0001", "160")})
	skipped.Notes[0].Changes = diff.Skip(diff.SkipCap)
	m = update(m, skipped)
	m.Detail, m.State = program.DetailView{Kind: program.DetailObject, Ref: store.Ref{Namespace: "default", Name: "web-config-1"}}, program.StateDetail
	sc := screen(m)
	tuitest.MustContain(t, sc, `.data.k: "x1" → "x2"  by writer`, `.data.new: (none) → "v"  by other`,
		`.status.phase: "Ready" → (removed)  last set by kubelet/status`, "+2 meta paths (resourceVersion, managedFields): m shows them",
		"not diffed: "+diff.SkipCap, "resourceVersion 160 → 170", "m show meta paths")
	tuitest.MustNotContain(t, sc, ".metadata.resourceVersion", ".metadata.managedFields")
	// The version before the diffed ones is compared as before.
	tuitest.MustContain(t, sc, "label +tier=frontend")

	m = update(m, tuitest.KeyPress("m"))
	if m.State != program.StateDetail || !m.Detail.Meta {
		t.Fatalf("m left state %v, meta %v; want the detail with meta paths", m.State, m.Detail.Meta)
	}
	sc = screen(m)
	tuitest.MustContain(t, sc, `.metadata.resourceVersion: "140" → "160"`, ".metadata.managedFields changed", "m hide meta paths")
	tuitest.MustNotContain(t, sc, "m shows them")
	if m = update(m, tuitest.KeyPress("m")); m.Detail.Meta {
		t.Error("a second m did not hide the meta paths")
	}
	// A new detail starts with them hidden.
	m = update(m, tuitest.KeyPress("esc"))
	m = update(m, tuitest.KeyPress("enter"))
	if m.Detail.Meta {
		t.Error("a new detail shows the meta paths")
	}
}

// A version's long value wraps under its path, not at the screen's edge.
func TestObjectDetailWrapsALongChangeUnderItself(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	msg := diffedChange()
	msg.Notes[0].Changes.Paths[0].New = json.RawMessage(`"` + strings.Repeat("y", 60) + `"`)
	m = update(m, msg)
	m.Detail, m.State = program.DetailView{Kind: program.DetailObject, Ref: store.Ref{Namespace: "default", Name: "web-config-1"}}, program.StateDetail
	_, text := m.DetailContent(80)
	for i, l := range text {
		if strings.Contains(ansi.Strip(l), ".data.k:") {
			if i+1 >= len(text) || !strings.HasPrefix(text[i+1], strings.Repeat(" ", 13)) {
				t.Errorf("the continuation of %q is not indented under it:\n%s", l, strings.Join(text, "\n"))
			}
			return
		}
	}
	t.Errorf("no .data.k change in the detail:\n%s", strings.Join(text, "\n"))
}

func TestGoldenChurn80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenScreenOf(t, 80, 24, program.Feed{Churn: func(int) diff.Summary { return tuitest.DemoChurn() }}, nil,
		tuitest.KeyPress("c"), churn.Msg{Sum: tuitest.DemoChurn()}))
}

func TestGoldenObjectDiff80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenScreenOf(t, 80, 24, program.Feed{}, nil, diffedChange(), tuitest.KeyPress("enter")))
}

// Whether a stream is diffed is read as the pane is drawn, not once: a
// proxy's stream learns its wire (protobuf: not diffed) from its first
// answer, after its dashboard row was made (a reviewer found the reason
// never given).
func TestChurnPaneReadsWhetherItDiffsAsItIsDrawn(t *testing.T) {
	feed := &tuitest.ChurnFeed{}
	var diffs atomic.Bool
	diffs.Store(true)
	opts := tuitest.DemoOptions(tuitest.NewFakeClock())
	opts.Kind = program.Observing("proxy 127.0.0.1:1")
	m := newAlone(opts, tuitest.DemoResource(program.Feed{Churn: feed.Churn, Diffing: diffs.Load}))
	t.Cleanup(m.Close)
	m = openChurn(t, resize(m, 120, 30))
	tuitest.MustContain(t, screen(m), "none has come since the watch began")
	diffs.Store(false)
	m = update(m, program.SnapshotMsg{At: m.Now, HasChurn: true, Churn: diff.Summary{Skipped: 2}})
	tuitest.MustContain(t, screen(m), "the proxy diffs only with --diff, and only JSON streams", "2 MODIFIED events not diffed")
}
