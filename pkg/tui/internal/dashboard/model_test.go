package dashboard

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/history"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/logpane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/panes"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

var sizes = []struct{ w, h int }{{80, 24}, {160, 48}}

func TestViewFitsTheTerminalExactly(t *testing.T) {
	for _, sz := range tuitest.FitSizes() {
		t.Run(fmt.Sprintf("%dx%d", sz.W, sz.H), func(t *testing.T) {
			m, _ := demoModel(t, sz.W, sz.H)
			for _, state := range []string{"dashboard", "help", "detail"} {
				switch state {
				case "help":
					m = update(m, tuitest.KeyPress("?"))
				case "detail":
					m = update(m, tuitest.KeyPress("esc"))
					m = update(m, tuitest.KeyPress("enter"))
				}
				tuitest.MustFit(t, state, m.View().Content, sz)
			}
		})
	}
}

func TestDashboardShowsHeaderGaugesAndRates(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			m, _ := demoModel(t, sz.w, sz.h)
			s := screen(m)
			tuitest.MustContain(t, s,
				"kubectl watchcache", "ctx kind-watchcache", "https://127.0.0.1:6443", "up 1m50s",
				"configmaps.v1", "all namespaces", "-l app=web", "list, page 500", "metadata-only",
				"● Watching for 20s", "LIVE",
				"objects        618 · 1.0 MiB",
				"bookmark       10s ago · rv 1288",
				"last RV        1290",
				"410 Gone       1 · last 25s ago",
				"relists        1", "UID mismatch   1", "duplicates     2",
				"watch restarts 2", "backoffs       1",
				"apply latency  p50 14µs · p99 850µs",
				"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "12/min", "30/min",
			)
		})
	}
}

func TestWideScreenShowsAllPanesAndNarrowOneShowsTheFocusedOne(t *testing.T) {
	narrow, _ := demoModel(t, 80, 24)
	s := screen(narrow)
	tuitest.MustContain(t, s, " Log │ Requests │ Relist diff", "REPLACED default/web-config-5")
	tuitest.MustNotContain(t, s, "OPTIONS (as sent)", "missed delete default/")

	wide := resize(narrow, 160, 48)
	s = screen(wide)
	tuitest.MustContain(t, s, "OPTIONS (as sent)", "rv=211 bookmarks timeout=397s",
		"missed delete default/web-config-7", "REPLACED default/web-config-5")
	tuitest.MustNotContain(t, s, " Log │ Requests │ Relist diff")
}

func TestBookmarkAgeIsColoredAgainstTheOncePerMinuteCadence(t *testing.T) {
	tests := []struct {
		name       string
		bookmarkAt time.Time // zero: none yet
		now        time.Duration
		sev        common.Severity
		text       string
	}{
		{"fresh", tuitest.At(100 * time.Second), 130 * time.Second, common.SevGood, "30s ago"},
		{"late", tuitest.At(100 * time.Second), 200 * time.Second, common.SevWarn, "late 1m40s"},
		{"stale", tuitest.At(100 * time.Second), 400 * time.Second, common.SevBad, "stale 5m00s"},
		{"none yet, early", time.Time{}, 30 * time.Second, common.SevNone, "none yet"},
		{"none yet, late", time.Time{}, 120 * time.Second, common.SevWarn, "none yet after 2m00s"},
		{"none yet, stale", time.Time{}, 600 * time.Second, common.SevBad, "none yet after 10m00s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := tuitest.NewFakeClock()
			m := newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{}))
			t.Cleanup(m.Close)
			m = resize(m, 80, 24)
			s := tuitest.DemoStats()
			s.BookmarkAt = tt.bookmarkAt
			m = update(m, tuitest.DemoSnapshot(tt.now, s))
			want := m.St.Sev(tt.sev, tt.text)
			if tt.sev == common.SevNone {
				want = m.St.Faint.Render(tt.text)
			}
			if !strings.Contains(m.View().Content, want) {
				t.Errorf("screen lacks %q styled as %v:\n%s", tt.text, tt.sev, screen(m))
			}
			// At 120 columns (three gauges a row) an rv of seven digits
			// fits after it, uncut.
			if !tt.bookmarkAt.IsZero() {
				s.BookmarkRV = "1234567"
				m = update(resize(m, 120, 24), tuitest.DemoSnapshot(tt.now, s))
				tuitest.MustContain(t, screen(m), tt.text+" · rv 1234567")
			}
		})
	}
}

func TestStatsSnapshotsArePolledAgainAtTheRefreshInterval(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	_, cmd := m.Update(tuitest.DemoSnapshot(120*time.Second, tuitest.DemoStats()))
	if cmd == nil {
		t.Fatal("a snapshot must schedule the next poll")
	}
	if m.Opts.Refresh < 100*time.Millisecond {
		t.Errorf("Refresh = %v, want at least 100ms (at most ten polls a second)", m.Opts.Refresh)
	}
	if o := (program.Options{Refresh: time.Millisecond}).WithDefaults(); o.Refresh != program.DefaultRefresh {
		t.Errorf("Refresh 1ms became %v, want %v", o.Refresh, program.DefaultRefresh)
	}
}

func TestRequestTimelineShowsExactOptionsDurationCountsAndEnds(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	m = update(m, tuitest.KeyPress("tab"))
	if m.focus != panes.Requests {
		t.Fatalf("focus = %v, want Requests", m.focus)
	}
	s := screen(m)
	tuitest.MustContain(t, s,
		"#1 list    120ms     500 items closed    rv=\"\" limit=500",
		"continue=eyJ2IjoibW…",
		"#3 watch   1m23s     40 events error 410 rv=211 bookmarks timeout=397s",
		"#5 watch     20s      6 events running   rv=1250 bookmarks timeout=412s",
	)
	// Enter on watch #3 shows every option by its API name, and the full end.
	m = update(m, tuitest.KeyPress("up"))
	m = update(m, tuitest.KeyPress("up"))
	m = update(m, tuitest.KeyPress("enter"))
	if m.State != program.StateDetail {
		t.Fatalf("state = %v, want detail", m.State)
	}
	tuitest.MustContain(t, screen(m), "Request #3  watch", "resourceVersion=211", "allowWatchBookmarks=true",
		"timeoutSeconds=397", "took         1m23s", "received     40 events",
		"ended        error 410 Expired: too old resource version: 211 (214)")
}

func TestRelistDiffPaneNamesWhatTheWatchMissed(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	m = update(m, tuitest.KeyPress("shift+tab"))
	if m.focus != panes.Diff {
		t.Fatalf("focus = %v, want Relist diff", m.focus)
	}
	tuitest.MustContain(t, screen(m),
		"relist at rv 1250 (23s ago): 620 → 618 objects", // completed at 1m26.15s, the screen at 1m50s
		"missed 3 · 1 delete · 1 recreate · 1 update · 0 adds · 612 unchanged",
		"missed delete default/web-config-7  uid 5f0c9a1e  rv 180",
		"recreated     default/web-config-2  uid 1b2c3d4e → 9e8d7c6b  rv 150 → 1220",
		"missed update shop/cart-settings  rv 199 → 1230",
	)
	m = update(m, tuitest.KeyPress("down"))
	m = update(m, tuitest.KeyPress("enter"))
	tuitest.MustContain(t, screen(m), "Object default/web-config-2", "recreated (relist)     uid 9e8d7c6b  rv 1220")
	// A recreate the watch saw (one REPLACED event) reads as a new instance.
	tuitest.MustContain(t, strings.Join(m.objectDetail(store.Ref{Namespace: "default", Name: "web-config-5"}, 80), "\n"), "new instance: uid 3c4d5e6f → 77aa66bb")
}

func TestNoRelistYetSaysSo(t *testing.T) {
	clock := tuitest.NewFakeClock()
	m := newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{}))
	t.Cleanup(m.Close)
	s := tuitest.DemoStats()
	s.LastRelistDiff = nil
	m = update(resize(m, 80, 24), tuitest.DemoSnapshot(time.Second, s))
	m = update(m, tuitest.KeyPress("shift+tab"))
	tuitest.MustContain(t, screen(m), "no relist yet")
}

func TestPauseFreezesTheLogWhileEventsKeepArriving(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	m = update(m, tuitest.KeyPress("space"))
	if !m.Log.Paused {
		t.Fatal("space did not pause the log")
	}
	later := tuitest.Applied(tuitest.At(111*time.Second), []store.Result{{Outcome: store.Added, Object: tuitest.Obj("default", "late-arrival", "0000-late", "1300")}}...)
	m = update(m, later)
	s := screen(m)
	tuitest.MustContain(t, s, "PAUSED", "+1 new")
	tuitest.MustNotContain(t, s, "late-arrival")
	if got := m.Keys.Pause.Help().Desc; got != "resume log" { // what the footer offers
		t.Errorf("paused, space offers %q", got)
	}
	m = update(m, tuitest.KeyPress("space"))
	s = screen(m)
	tuitest.MustContain(t, s, "ADDED    default/late-arrival")
	tuitest.MustNotContain(t, s, "PAUSED")
	if got := m.Keys.Pause.Help().Desc; got != "pause log" {
		t.Errorf("resumed, space offers %q", got)
	}
}

func TestFilterByTextAsTyped(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	m = update(m, tuitest.KeyPress("/"))
	if m.State != program.StateFilter {
		t.Fatalf("state = %v, want filter", m.State)
	}
	m = typeText(m, "Config-3q") // q is text here, not quit
	m = update(m, tuitest.KeyPress("backspace"))
	s := screen(m)
	tuitest.MustContain(t, s, "/Config-3", `filter "config-3"`, "DELETED  default/web-config-3")
	tuitest.MustNotContain(t, s, "MODIFIED default/web-config-1", "REQUEST")
	m = update(m, tuitest.KeyPress("enter"))
	if m.State != program.StateDashboard || m.Log.Filter != "config-3" {
		t.Fatalf("after enter: state %v, filter %q; want dashboard with the filter kept", m.State, m.Log.Filter)
	}
	m = update(m, tuitest.KeyPress("esc"))
	tuitest.MustContain(t, screen(m), "MODIFIED default/web-config-1")
}

func TestFilterByTypeCycles(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	for range 4 { // all → ADDED → MODIFIED → REPLACED → DELETED
		m = update(m, tuitest.KeyPress("t"))
	}
	s := screen(m)
	tuitest.MustContain(t, s, "type DELETED", "DELETED  default/web-config-3")
	tuitest.MustNotContain(t, s, "ADDED    default", "REQUEST  ")
	for range logpane.NumTypeFilters - 4 {
		m = update(m, tuitest.KeyPress("t"))
	}
	if regexp.MustCompile(`type [A-Z]`).MatchString(screen(m)) {
		t.Errorf("after a full cycle the log is still filtered by type:\n%s", screen(m))
	}
}

func TestEnterOnALogEntryShowsTheObjectsVersionsAndWhatChanged(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	// Newest last: REPLACED, DELETED, MODIFIED web-config-1.
	m = update(m, tuitest.KeyPress("up"))
	m = update(m, tuitest.KeyPress("up"))
	m = update(m, tuitest.KeyPress("enter"))
	if m.State != program.StateDetail || m.Detail.Ref.Name != "web-config-1" {
		t.Fatalf("state %v on %v, want the detail of web-config-1", m.State, m.Detail.Ref)
	}
	tuitest.MustContain(t, screen(m), "Object default/web-config-1  (configmaps.v1)",
		"ADDED", "rv 101", "first version seen",
		"MODIFIED", "resourceVersion 101 → 140", "generation 0 → 2", "label +tier=frontend")
	m = update(m, tuitest.KeyPress("esc"))
	if m.State != program.StateDashboard {
		t.Errorf("esc: state %v, want dashboard", m.State)
	}
}

// withStore is a dashboard of the demo resource (as edit changes it) whose
// feed has a store of its own, listed empty at resourceVersion 1, and the
// apply of that store's writer.
func withStore(t *testing.T, edit func(*program.Resource)) (Model, func(store.Event) store.Result) {
	t.Helper()
	st, w := store.New()
	res := tuitest.DemoResource(program.Feed{Store: st})
	edit(&res)
	m := newAlone(tuitest.DemoOptions(tuitest.NewFakeClock()), res)
	t.Cleanup(m.Close)
	apply := func(ev store.Event) store.Result {
		r, err := w.ApplyEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	apply(store.Event{Type: store.Init})
	apply(store.Event{Type: store.InitDone, ResourceVersion: "1"})
	return m, apply
}

func TestObjectDetailSaysWhetherTheObjectIsInTheCacheNow(t *testing.T) {
	m, apply := withStore(t, func(*program.Resource) {})
	o := tuitest.Obj("default", "cm", "uid-1", "2")
	m = update(resize(m, 80, 24), tuitest.Applied(tuitest.At(time.Second), []store.Result{apply(store.Event{Type: store.Apply, Object: o})}...))
	m = update(m, tuitest.KeyPress("enter"))
	tuitest.MustContain(t, screen(m), "in cache now", "uid          uid-1", "labels       app=web")
	m = update(m, tuitest.KeyPress("esc"))
	m = update(m, tuitest.Applied(tuitest.At(2*time.Second), []store.Result{apply(store.Event{Type: store.Delete, Object: o})}...))
	m = update(m, tuitest.KeyPress("enter"))
	tuitest.MustContain(t, screen(m), "not in the cache now", "DELETED")
}

func TestHelpOverlayToggles(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	m = update(m, tuitest.KeyPress("?"))
	if m.State != program.StateHelp {
		t.Fatalf("state = %v, want help", m.State)
	}
	tuitest.MustContain(t, screen(m), "Keys", "force relist", "audit now", "pause log", "filter by type", "next pane",
		"q         quit", "one a minute")
	m = update(m, tuitest.KeyPress("?"))
	if m.State != program.StateDashboard {
		t.Errorf("? again: state %v, want dashboard", m.State)
	}
}

func TestQuitKeys(t *testing.T) {
	tests := []struct {
		name  string
		setup []string
		key   string
		quits bool
	}{
		{"q on the dashboard", nil, "q", true},
		{"ctrl+c on the dashboard", nil, "ctrl+c", true},
		{"q in the help", []string{"?"}, "q", true},
		{"q in a detail", []string{"enter"}, "q", true},
		{"q while filtering is text", []string{"/"}, "q", false},
		{"ctrl+c while filtering", []string{"/"}, "ctrl+c", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := demoModel(t, 80, 24)
			for _, k := range tt.setup {
				m = update(m, tuitest.KeyPress(k))
			}
			_, cmd := m.Update(tuitest.KeyPress(tt.key))
			quit := false
			if cmd != nil {
				_, quit = cmd().(tea.QuitMsg)
			}
			if quit != tt.quits {
				t.Errorf("quits = %v, want %v", quit, tt.quits)
			}
		})
	}
}

func TestTabCyclesThePanes(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	var got []string
	for i := range 4 {
		got = append(got, m.focus.String())
		if i < 3 {
			m = update(m, tuitest.KeyPress("tab"))
		}
	}
	if want := "Log,Requests,Relist diff,Log"; strings.Join(got, ",") != want {
		t.Errorf("tab order %v, want %s", got, want)
	}
	m = update(m, tuitest.KeyPress("shift+tab"))
	if m.focus != panes.Diff {
		t.Errorf("shift+tab from Log: %v, want Relist diff", m.focus)
	}
}

func TestScrollingStopsFollowingAndEndResumes(t *testing.T) {
	clock := tuitest.NewFakeClock()
	opts := tuitest.DemoOptions(clock)
	m := newAlone(opts, tuitest.DemoResource(program.Feed{}))
	t.Cleanup(m.Close)
	m = resize(m, 80, 24)
	var results []store.Result
	for i := range 30 {
		results = append(results, store.Result{Outcome: store.Added, Object: tuitest.Obj("ns", fmt.Sprintf("obj-%02d", i), "u", "1")})
	}
	m = update(m, tuitest.Applied(tuitest.At(time.Second), results...))
	tuitest.MustContain(t, screen(m), "ns/obj-29")
	m = update(m, tuitest.KeyPress("g"))
	s := screen(m)
	tuitest.MustContain(t, s, "ns/obj-00")
	tuitest.MustNotContain(t, s, "ns/obj-29")
	m = update(m, tuitest.Applied(tuitest.At(2*time.Second), []store.Result{{Outcome: store.Added, Object: tuitest.Obj("ns", "obj-30", "u", "1")}}...))
	tuitest.MustContain(t, screen(m), "ns/obj-00") // not following: the view stays put
	m = update(m, tuitest.KeyPress("G"))
	m = update(m, tuitest.Applied(tuitest.At(3*time.Second), []store.Result{{Outcome: store.Added, Object: tuitest.Obj("ns", "obj-31", "u", "1")}}...))
	tuitest.MustContain(t, screen(m), "ns/obj-31")
	if m.Log.Scroll.Cursor != 31 {
		t.Errorf("cursor = %d, want 31 (following the newest)", m.Log.Scroll.Cursor)
	}
}

func TestForceRelistCallsTheFeedOffTheScreensGoroutine(t *testing.T) {
	clock := tuitest.NewFakeClock()
	called := make(chan struct{})
	m := newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{ForceRelist: func() { close(called) }}))
	t.Cleanup(m.Close)
	m = resize(m, 80, 24)
	next, cmd := m.Update(tuitest.KeyPress("r"))
	m = next.(Model)
	select {
	case <-called:
		t.Fatal("ForceRelist ran inside Update; it must run in a command")
	default:
	}
	if cmd == nil {
		t.Fatal("r returned no command")
	}
	cmd()
	select {
	case <-called:
	default:
		t.Fatal("the command did not call ForceRelist")
	}
	tuitest.MustContain(t, screen(m), "forced relist requested")
}

// TestForceRelistOnAFailedResourceSaysWhyNot: a reflector that failed has
// returned, and a forced relist would ask it for nothing: r says so, where
// it said the relist was requested and nothing followed.
func TestForceRelistOnAFailedResourceSaysWhyNot(t *testing.T) {
	clock := tuitest.NewFakeClock()
	called := false
	m := newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{ForceRelist: func() { called = true }}))
	t.Cleanup(m.Close)
	m = resize(m, 120, 24)
	st := tuitest.DemoStats()
	st.State = reflector.StateFailed
	m = update(m, tuitest.DemoSnapshot(time.Second, st))
	next, cmd := m.Update(tuitest.KeyPress("r"))
	m = next.(Model)
	if cmd != nil {
		cmd()
	}
	if called {
		t.Error("r on a failed resource called ForceRelist")
	}
	tuitest.MustContain(t, screen(m), "force relist is not available: the reflector is Failed")
	tuitest.MustNotContain(t, screen(m), "forced relist requested")
}

func TestActionsThatNeedAClusterExplainThemselvesInAReplay(t *testing.T) {
	clock := tuitest.NewFakeClock()
	opts := tuitest.DemoOptions(clock)
	opts.Replay = true
	m := newAlone(opts, tuitest.DemoResource(program.Feed{}))
	t.Cleanup(m.Close)
	m = resize(m, 100, 24)
	for _, k := range []string{"r", "a"} {
		next, cmd := m.Update(tuitest.KeyPress(k))
		m = next.(Model)
		if cmd != nil {
			t.Errorf("%s returned a command in a replay without the function", k)
		}
		tuitest.MustContain(t, screen(m), "needs a live cluster: this is a replay")
		// The status leads the footer; the key help keeps the room left.
		if lines := tuitest.Lines(screen(m)); !strings.Contains(lines[len(lines)-1], "? help") {
			t.Errorf("the footer under the status lost the key help: %q", lines[len(lines)-1])
		}
	}
}

func TestAuditReportsDriftAndErrors(t *testing.T) {
	report := &reflector.AuditReport{ResourceVersion: "1300", Listed: 2, Cached: 1,
		Missing: []store.DiffEntry{{Ref: store.Ref{Namespace: "default", Name: "lost"}, NewUID: "u-lost", NewResourceVersion: "1299"}}}
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"drift", nil, []string{report.String()}},
		{"error", errors.New("audit needs a live cluster"), []string{"audit failed: audit needs a live cluster"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := tuitest.NewFakeClock()
			var gotCtx context.Context
			audit := func(ctx context.Context) (*reflector.AuditReport, error) {
				gotCtx = ctx
				if tt.err != nil {
					return nil, tt.err
				}
				return report, nil
			}
			m := newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{Audit: audit}))
			t.Cleanup(m.Close)
			m = resize(m, 160, 48)
			next, cmd := m.Update(tuitest.KeyPress("a"))
			m = next.(Model)
			tuitest.MustContain(t, screen(m), "audit running")
			if _, cmd2 := m.Update(tuitest.KeyPress("a")); cmd2 != nil {
				t.Error("a second a started another audit while one runs")
			}
			msg := cmd()
			if _, ok := gotCtx.Deadline(); !ok {
				t.Error("the audit's context has no deadline")
			}
			m = update(m, msg)
			tuitest.MustContain(t, screen(m), tt.want...)
			if m.Auditing {
				t.Error("still auditing after the result")
			}
		})
	}
	// The log has the audit from the reflector's note, in order with the rest.
	m, _ := demoModel(t, 160, 48)
	m = update(m, program.NotesMsg{Notes: []reflector.Note{{At: tuitest.At(111 * time.Second), Kind: reflector.NoteAudit, Audit: report}}})
	tuitest.MustContain(t, screen(m), "AUDIT    audit at resourceVersion 1300: drift")
}

func TestAReplaysHeaderSaysReplayAndTheTrace(t *testing.T) {
	clock := tuitest.NewFakeClock()
	opts := tuitest.DemoOptions(clock)
	opts.Replay, opts.Trace = true, "testdata/traces/demo.jsonl"
	m := newAlone(opts, tuitest.DemoResource(program.Feed{}))
	t.Cleanup(m.Close)
	m = resize(m, 100, 24)
	m = update(m, tuitest.DemoSnapshot(time.Second, tuitest.DemoStats()))
	tuitest.MustContain(t, screen(m), "REPLAY", "trace testdata/traces/demo.jsonl")
	tuitest.MustNotContain(t, screen(m), "LIVE")
}

func TestDroppedNotesAreCountedOnScreen(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	tuitest.MustNotContain(t, screen(m), "dropped")
	snap := tuitest.DemoSnapshot(111*time.Second, tuitest.DemoStats())
	snap.NotesLost = 1200
	m = update(m, snap)
	tuitest.MustContain(t, screen(m), "dropped 1,200 notes")
}

func TestResizeIsHonoured(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	for _, sz := range []struct{ w, h int }{{160, 48}, {80, 24}, {30, 8}} {
		m = resize(m, sz.w, sz.h)
		if got := len(tuitest.Lines(screen(m))); got != sz.h {
			t.Errorf("%dx%d: %d lines", sz.w, sz.h, got)
		}
	}
	tuitest.MustContain(t, screen(m), "terminal is 30x8")
}

func TestStateAndPaneNames(t *testing.T) {
	for s, want := range map[program.ViewState]string{program.StateDashboard: "dashboard", program.StateFilter: "filter", program.StateDetail: "detail", program.StateHelp: "help"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", s, s.String(), want)
		}
	}
	for p, want := range map[panes.Pane]string{panes.Log: "Log", panes.Requests: "Requests", panes.Diff: "Relist diff"} {
		if p.String() != want {
			t.Errorf("%d.String() = %q, want %q", p, p.String(), want)
		}
	}
}

func TestDetailScrollsWithinItsContent(t *testing.T) {
	clock := tuitest.NewFakeClock()
	m := newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{}))
	t.Cleanup(m.Close)
	m = resize(m, 80, 24)
	var results []store.Result
	for i := range history.VersionsPerObject {
		results = append(results, store.Result{Outcome: store.Modified, Object: tuitest.Obj("ns", "busy", "u", fmt.Sprint(100+i))})
	}
	m = update(m, tuitest.Applied(tuitest.At(time.Second), results...))
	m = update(m, tuitest.KeyPress("enter"))
	tuitest.MustContain(t, screen(m), "lines 1-19 of 33")
	m = update(m, tuitest.KeyPress("G"))
	s := screen(m)
	tuitest.MustContain(t, s, "resourceVersion 114 → 115")
	tuitest.MustNotContain(t, s, "lines 1-")
	bottom := m.Detail.Offset
	m = update(m, tuitest.KeyPress("down"))
	if m.Detail.Offset != bottom {
		t.Errorf("down at the bottom moved the offset from %d to %d", bottom, m.Detail.Offset)
	}
	m = update(m, tuitest.KeyPress("up"))
	if m.Detail.Offset != bottom-1 {
		t.Errorf("up from the bottom: offset %d, want %d", m.Detail.Offset, bottom-1)
	}
	m = update(m, tuitest.KeyPress("g"))
	tuitest.MustContain(t, screen(m), "lines 1-19 of 33")
}

func TestHeaderNamesTheWireFormat(t *testing.T) {
	for _, wire := range []reflector.Wire{reflector.WireProtobuf, reflector.WireJSON} {
		r := tuitest.DemoResource(program.Feed{})
		r.MetadataOnly, r.Wire = false, wire
		m := newAlone(tuitest.DemoOptions(tuitest.NewFakeClock()), r)
		t.Cleanup(m.Close)
		tuitest.MustContain(t, screen(resize(m, 160, 48)), "list, page 500 · full objects · "+string(wire))
	}
}

// The log's title says how many entries the filter matches, of how many.
func TestFilteredLogTitleCountsTheMatches(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	total := m.Log.Entries.Len()
	m = update(m, tuitest.KeyPress("/"))
	m = typeText(m, "config-3")
	n, _ := m.Log.Rows()
	if n == 0 || n == total {
		t.Fatalf("the filter matches %d of %d entries: the demo needs some, not all", n, total)
	}
	tuitest.MustContain(t, screen(m), fmt.Sprintf("%d of %d entries match", n, total))
	m = update(m, tuitest.KeyPress("esc"))
	s := screen(m)
	tuitest.MustContain(t, s, fmt.Sprintf("%d entries", total))
	tuitest.MustNotContain(t, s, "entries match")
}

// A warning from before the start (a namespace that does not exist) leads
// the footer at first, beside the key help, and goes as an action's
// status goes, to the help screen: without it a TUI user saw it only
// after quitting.
func TestAStartUpWarningLeadsTheFooterAtFirst(t *testing.T) {
	clock := tuitest.NewFakeClock()
	opts := tuitest.DemoOptions(clock)
	opts.Warning = `namespace "nope" not found: nothing is in it to watch until it is created`
	m := resize(newAlone(opts, tuitest.DemoResource(program.Feed{})), 160, 40)
	t.Cleanup(m.Close)
	footer := func(d time.Duration) string {
		s := tuitest.DemoSnapshot(d, tuitest.DemoStats())
		clock.Time = s.At
		m = update(m, s)
		lines := tuitest.Lines(screen(m))
		return lines[len(lines)-1]
	}
	if f := footer(time.Second); !strings.Contains(f, `warning: namespace "nope" not found`) || !strings.Contains(f, "? help") {
		t.Errorf("footer 1s after the start: got %q, want the warning and the key help", f)
	}
	if f := footer(time.Minute); strings.Contains(f, "warning") {
		t.Errorf("footer a minute after the start: got %q, want the warning gone", f)
	}
	// It stays on the help screen (a reviewer's short-name warning left
	// the screen after 10 s, for good).
	m = update(m, tuitest.KeyPress("?"))
	tuitest.MustContain(t, screen(m), `warning   namespace "nope" not found: nothing is in it to watch until it is created`)
}

// --keep-objects: the object detail shows the JSON the cache keeps,
// indented; a Secret's values are REDACTED, its names and metadata shown.
func TestObjectDetailShowsTheKeptJSONWithASecretsValuesRedacted(t *testing.T) {
	for _, secret := range []bool{false, true} {
		m, apply := withStore(t, secrets(secret))
		o := tuitest.Obj("default", "cm", "uid-1", "2")
		o.Body = []byte(`{"metadata":{"name":"cm","namespace":"default","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"password\":\"aHVudGVyMg==\"}}"}},"data":{"password":"aHVudGVyMg=="}}`)
		m = update(resize(m, 120, 40), tuitest.Applied(tuitest.At(time.Second), []store.Result{apply(store.Event{Type: store.Apply, Object: o})}...))
		m = update(m, tuitest.KeyPress("enter"))
		got := screen(m)
		tuitest.MustContain(t, got, "its JSON in the cache (--keep-objects)", `"name": "cm",`, `"password":`)
		if leaked := strings.Contains(got, "aHVudGVyMg=="); leaked == secret {
			t.Errorf("secret %v: the value shown %v:\n%s", secret, leaked, got)
		}
		if secret {
			tuitest.MustContain(t, got, `"password": "REDACTED"`, `"kubectl.kubernetes.io/last-applied-configuration": "REDACTED"`)
		}
	}
}

// The object detail's history lists what each version changed: a
// Secret's without its values (it showed the old and new password's
// base64, above the JSON that said REDACTED).
func TestObjectHistoryShowsNoSecretsValues(t *testing.T) {
	for _, secret := range []bool{false, true} {
		m, apply := withStore(t, secrets(secret))
		o := tuitest.Obj("default", "s1", "uid-1", "2")
		o.Body = []byte(`{"metadata":{"name":"s1","namespace":"default"},"data":{"password":"aHVudGVyMg=="}}`)
		o2 := tuitest.Obj("default", "s1", "uid-1", "3")
		o2.Body = []byte(`{"metadata":{"name":"s1","namespace":"default"},"data":{"password":"bmV3cGFzcw=="}}`)
		m = update(resize(m, 120, 40), tuitest.Applied(tuitest.At(time.Second), apply(store.Event{Type: store.Apply, Object: o})))
		m = update(m, tuitest.Applied(tuitest.At(2*time.Second), apply(store.Event{Type: store.Apply, Object: o2})))
		m = update(m, tuitest.KeyPress("enter"))
		got := screen(m)
		if secret {
			tuitest.MustContain(t, got, "data.password changed")
		} else {
			tuitest.MustContain(t, got, `data.password: "aHVudGVyMg==" → "bmV3cGFzcw=="`)
		}
		for _, v := range []string{"aHVudGVyMg==", "bmV3cGFzcw=="} {
			if leaked := strings.Contains(got, v); leaked == secret {
				t.Errorf("secret %v: %s shown %v:\n%s", secret, v, leaked, got)
			}
		}
	}
}

// secrets makes a store's resource Secrets when secret is true.
func secrets(secret bool) func(*program.Resource) {
	return func(res *program.Resource) {
		if secret {
			res.Target.Resource.GVR.Resource, res.Target.Resource.Kind = "secrets", "Secret"
		}
	}
}

// An update the watch missed and a relist found says what it changed, as
// the listed object has it (the one the cache holds), not just its
// resourceVersion.
func TestAMissedUpdateSaysWhatTheRelistFoundChanged(t *testing.T) {
	labelled := func(rv, tier string) *store.Object {
		o := tuitest.Obj("shop", "cart", "u-cart", rv)
		o.Labels = store.MakeLabels(map[string]string{"tier": tier})
		return o
	}
	st, w := store.New()
	for _, ev := range []store.Event{{Type: store.Init}, {Type: store.InitApply, Object: labelled("385", "2")}, {Type: store.InitDone, ResourceVersion: "385"}} {
		if _, err := w.ApplyEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	clock := tuitest.NewFakeClock()
	m := newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{Store: st}))
	t.Cleanup(m.Close)
	m = update(m, tuitest.Applied(tuitest.At(10*time.Second), store.Result{Outcome: store.Modified, Object: labelled("335", "1"), Previous: labelled("300", "1")}))
	diff := &store.RelistDiff{ResourceVersion: "385", Updated: []store.DiffEntry{{Ref: store.Ref{Namespace: "shop", Name: "cart"},
		OldUID: "u-cart", NewUID: "u-cart", OldResourceVersion: "335", NewResourceVersion: "385"}}}
	m = update(m, program.NotesMsg{Notes: []reflector.Note{{At: tuitest.At(20 * time.Second), Kind: reflector.NoteDecision,
		Decision: &reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonRelistDiff, ResourceVersion: "385", Diff: diff}}}})
	detail := ansi.Strip(strings.Join(m.objectDetail(store.Ref{Namespace: "shop", Name: "cart"}, 80), "\n"))
	tuitest.MustContain(t, detail, "missed update (relist) uid u-cart  rv 385", "resourceVersion 335 → 385", "label tier: 1 → 2")
}

// A stream the proxy forgot (its client left and stayed away) is polled no
// more, nor are its notes read after the one that says so: a proxy in front
// of a kubectl get in a loop keeps a model for each, and every poll redraws
// the screen. A stream whose client is there is polled on.
func TestAForgottenStreamIsPolledNoMore(t *testing.T) {
	clock := tuitest.NewFakeClock()
	notes := program.NewNoteBuffer(8)
	m := newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{Notes: notes}))
	t.Cleanup(m.Close)
	st := reflector.Stats{State: reflector.StateListed}
	if _, cmd := m.Update(program.SnapshotMsg{At: clock.Time, HasStats: true, Stats: st}); cmd == nil {
		t.Error("a stream whose client is there is not polled again")
	}
	st.ClientLeft, st.ClientLeftWas, st.Forgotten = tuitest.At(time.Second), "Listed", true
	if _, cmd := m.Update(program.SnapshotMsg{At: clock.Time, HasStats: true, Stats: st}); cmd != nil {
		t.Error("a forgotten stream is polled again")
	}
	gone := reflector.Note{Kind: reflector.NoteDecision, Decision: &reflector.Decision{State: reflector.StateListed, Reason: reflector.ReasonClientGone}}
	if _, cmd := m.Update(program.NotesMsg{Notes: []reflector.Note{gone}}); cmd != nil {
		t.Error("the notes of a forgotten stream are read on")
	}
	if _, cmd := m.Update(program.NotesMsg{Notes: []reflector.Note{{Kind: reflector.NoteDecision, Decision: &reflector.Decision{Reason: reflector.ReasonBackoff}}}}); cmd == nil {
		t.Error("the notes of a stream are not read on")
	}
}
