package tui

import (
	"context"
	"errors"
	"fmt"
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
)

var sizes = []struct{ w, h int }{{80, 24}, {160, 48}}

func TestViewFitsTheTerminalExactly(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {160, 48}, {120, 40}, {100, 30}, {60, 16}, {45, 11}, {30, 8}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			m, _ := demoModel(t, sz.w, sz.h)
			for _, state := range []string{"dashboard", "help", "detail"} {
				switch state {
				case "help":
					m = update(m, keyPress("?"))
				case "detail":
					m = update(m, keyPress("esc"))
					m = update(m, keyPress("enter"))
				}
				got := lines(m.View().Content)
				if len(got) != sz.h {
					t.Errorf("%s: %d lines, want %d", state, len(got), sz.h)
				}
				for i, l := range got {
					if w := ansi.StringWidth(l); w > sz.w {
						t.Errorf("%s: line %d is %d cells wide, want at most %d: %q", state, i, w, sz.w, ansi.Strip(l))
					}
				}
			}
		})
	}
}

func TestDashboardShowsHeaderGaugesAndRates(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			m, _ := demoModel(t, sz.w, sz.h)
			s := screen(m)
			mustContain(t, s,
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
	mustContain(t, s, " Log │ Requests │ Relist diff", "REPLACED default/web-config-5")
	mustNotContain(t, s, "OPTIONS (as sent)", "missed delete default/")

	wide := resize(narrow, 160, 48)
	s = screen(wide)
	mustContain(t, s, "OPTIONS (as sent)", "rv=211 bookmarks timeout=397s",
		"missed delete default/web-config-7", "REPLACED default/web-config-5")
	mustNotContain(t, s, " Log │ Requests │ Relist diff")
}

func TestBookmarkAgeIsColoredAgainstTheOncePerMinuteCadence(t *testing.T) {
	tests := []struct {
		name       string
		bookmarkAt time.Time // zero: none yet
		now        time.Duration
		sev        common.Severity
		text       string
	}{
		{"fresh", at(100 * time.Second), 130 * time.Second, common.SevGood, "30s ago"},
		{"late", at(100 * time.Second), 200 * time.Second, common.SevWarn, "1m40s ago, late"},
		{"stale", at(100 * time.Second), 400 * time.Second, common.SevBad, "5m00s ago, stale"},
		{"none yet, early", time.Time{}, 30 * time.Second, common.SevNone, "none yet"},
		{"none yet, late", time.Time{}, 120 * time.Second, common.SevWarn, "none yet after 2m00s"},
		{"none yet, stale", time.Time{}, 600 * time.Second, common.SevBad, "none yet after 10m00s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			m := New(demoOptions(clock), demoResource(program.Feed{}))
			t.Cleanup(m.Close)
			m = resize(m, 80, 24)
			s := demoStats()
			s.BookmarkAt = tt.bookmarkAt
			m = update(m, demoSnapshot(tt.now, s))
			want := m.St.Sev(tt.sev, tt.text)
			if tt.sev == common.SevNone {
				want = m.St.Faint.Render(tt.text)
			}
			if !strings.Contains(m.View().Content, want) {
				t.Errorf("screen lacks %q styled as %v:\n%s", tt.text, tt.sev, screen(m))
			}
		})
	}
}

func TestStatsSnapshotsArePolledAgainAtTheRefreshInterval(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	_, cmd := m.Update(demoSnapshot(120*time.Second, demoStats()))
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
	m = update(m, keyPress("tab"))
	if m.focus != panes.Requests {
		t.Fatalf("focus = %v, want Requests", m.focus)
	}
	s := screen(m)
	mustContain(t, s,
		"#1 list    120ms     500 items closed    rv=\"\" limit=500",
		"continue=eyJ2IjoibW…",
		"#3 watch   1m23s     40 events error 410 rv=211 bookmarks timeout=397s",
		"#5 watch     20s      6 events running   rv=1250 bookmarks timeout=412s",
	)
	// Enter on watch #3 shows every option by its API name, and the full end.
	m = update(m, keyPress("up"))
	m = update(m, keyPress("up"))
	m = update(m, keyPress("enter"))
	if m.State != program.StateDetail {
		t.Fatalf("state = %v, want detail", m.State)
	}
	mustContain(t, screen(m), "Request #3  watch", "resourceVersion=211", "allowWatchBookmarks=true",
		"timeoutSeconds=397", "took         1m23s", "received     40 events",
		"ended        error 410 Expired: too old resource version: 211 (214)")
}

func TestRelistDiffPaneNamesWhatTheWatchMissed(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	m = update(m, keyPress("shift+tab"))
	if m.focus != panes.Diff {
		t.Fatalf("focus = %v, want Relist diff", m.focus)
	}
	mustContain(t, screen(m),
		"relist at rv 1250 (1m00s ago): 620 → 618 objects",
		"missed 3 · 1 delete · 1 recreate · 1 update · 0 adds · 612 unchanged",
		"missed delete default/web-config-7  uid 5f0c9a1e  rv 180",
		"recreated     default/web-config-2  uid 1b2c3d4e → 9e8d7c6b  rv 150 → 1220",
		"missed update shop/cart-settings  rv 199 → 1230",
	)
	m = update(m, keyPress("down"))
	m = update(m, keyPress("enter"))
	mustContain(t, screen(m), "Object default/web-config-2", "recreated (relist)     uid 9e8d7c6b  rv 1220")
	// A recreate the watch saw (one REPLACED event) reads as a new instance.
	mustContain(t, strings.Join(m.objectDetail(store.Ref{Namespace: "default", Name: "web-config-5"}, 80), "\n"), "new instance: uid 3c4d5e6f → 77aa66bb")
}

func TestNoRelistYetSaysSo(t *testing.T) {
	clock := newFakeClock()
	m := New(demoOptions(clock), demoResource(program.Feed{}))
	t.Cleanup(m.Close)
	s := demoStats()
	s.LastRelistDiff = nil
	m = update(resize(m, 80, 24), demoSnapshot(time.Second, s))
	m = update(m, keyPress("shift+tab"))
	mustContain(t, screen(m), "no relist yet")
}

func TestPauseFreezesTheLogWhileEventsKeepArriving(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	m = update(m, keyPress("space"))
	if !m.log.Paused {
		t.Fatal("space did not pause the log")
	}
	later := applied(at(111*time.Second), []store.Result{{Outcome: store.Added, Object: obj("default", "late-arrival", "0000-late", "1300")}}...)
	m = update(m, later)
	s := screen(m)
	mustContain(t, s, "PAUSED", "+1 new")
	mustNotContain(t, s, "late-arrival")
	m = update(m, keyPress("space"))
	s = screen(m)
	mustContain(t, s, "ADDED    default/late-arrival")
	mustNotContain(t, s, "PAUSED")
}

func TestFilterByTextAsTyped(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	m = update(m, keyPress("/"))
	if m.State != program.StateFilter {
		t.Fatalf("state = %v, want filter", m.State)
	}
	m = typeText(m, "Config-3q") // q is text here, not quit
	m = update(m, keyPress("backspace"))
	s := screen(m)
	mustContain(t, s, "/Config-3", `filter "config-3"`, "DELETED  default/web-config-3")
	mustNotContain(t, s, "MODIFIED default/web-config-1", "REQUEST")
	m = update(m, keyPress("enter"))
	if m.State != program.StateDashboard || m.log.Filter != "config-3" {
		t.Fatalf("after enter: state %v, filter %q; want dashboard with the filter kept", m.State, m.log.Filter)
	}
	m = update(m, keyPress("esc"))
	mustContain(t, screen(m), "MODIFIED default/web-config-1")
}

func TestFilterByTypeCycles(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	for range 4 { // all → ADDED → MODIFIED → REPLACED → DELETED
		m = update(m, keyPress("t"))
	}
	s := screen(m)
	mustContain(t, s, "type DELETED", "DELETED  default/web-config-3")
	mustNotContain(t, s, "ADDED    default", "REQUEST  ")
	for range logpane.NumTypeFilters - 4 {
		m = update(m, keyPress("t"))
	}
	mustNotContain(t, screen(m), "type ")
}

func TestEnterOnALogEntryShowsTheObjectsVersionsAndWhatChanged(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	// Newest last: REPLACED, DELETED, MODIFIED web-config-1.
	m = update(m, keyPress("up"))
	m = update(m, keyPress("up"))
	m = update(m, keyPress("enter"))
	if m.State != program.StateDetail || m.Detail.Ref.Name != "web-config-1" {
		t.Fatalf("state %v on %v, want the detail of web-config-1", m.State, m.Detail.Ref)
	}
	mustContain(t, screen(m), "Object default/web-config-1  (configmaps.v1)",
		"ADDED", "rv 101", "first version seen",
		"MODIFIED", "resourceVersion 101 → 140", "generation 0 → 2", "label +tier=frontend")
	m = update(m, keyPress("esc"))
	if m.State != program.StateDashboard {
		t.Errorf("esc: state %v, want dashboard", m.State)
	}
}

func TestObjectDetailSaysWhetherTheObjectIsInTheCacheNow(t *testing.T) {
	clock := newFakeClock()
	st, w := store.New()
	m := New(demoOptions(clock), demoResource(program.Feed{Store: st}))
	t.Cleanup(m.Close)
	apply := func(ev store.Event) store.Result {
		res, err := w.ApplyEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	apply(store.Event{Type: store.Init})
	apply(store.Event{Type: store.InitDone, ResourceVersion: "1"})
	o := obj("default", "cm", "uid-1", "2")
	m = update(resize(m, 80, 24), applied(at(time.Second), []store.Result{apply(store.Event{Type: store.Apply, Object: o})}...))
	m = update(m, keyPress("enter"))
	mustContain(t, screen(m), "in cache now", "uid          uid-1", "labels       app=web")
	m = update(m, keyPress("esc"))
	m = update(m, applied(at(2*time.Second), []store.Result{apply(store.Event{Type: store.Delete, Object: o})}...))
	m = update(m, keyPress("enter"))
	mustContain(t, screen(m), "not in the cache now", "DELETED")
}

func TestHelpOverlayToggles(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	m = update(m, keyPress("?"))
	if m.State != program.StateHelp {
		t.Fatalf("state = %v, want help", m.State)
	}
	mustContain(t, screen(m), "Keys", "force relist", "audit now", "pause log", "filter by type", "next pane",
		"q          quit", "one a minute")
	m = update(m, keyPress("?"))
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
				m = update(m, keyPress(k))
			}
			_, cmd := m.Update(keyPress(tt.key))
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
			m = update(m, keyPress("tab"))
		}
	}
	if want := "Log,Requests,Relist diff,Log"; strings.Join(got, ",") != want {
		t.Errorf("tab order %v, want %s", got, want)
	}
	m = update(m, keyPress("shift+tab"))
	if m.focus != panes.Diff {
		t.Errorf("shift+tab from Log: %v, want Relist diff", m.focus)
	}
}

func TestScrollingStopsFollowingAndEndResumes(t *testing.T) {
	clock := newFakeClock()
	opts := demoOptions(clock)
	m := New(opts, demoResource(program.Feed{}))
	t.Cleanup(m.Close)
	m = resize(m, 80, 24)
	var results []store.Result
	for i := range 30 {
		results = append(results, store.Result{Outcome: store.Added, Object: obj("ns", fmt.Sprintf("obj-%02d", i), "u", "1")})
	}
	m = update(m, applied(at(time.Second), results...))
	mustContain(t, screen(m), "ns/obj-29")
	m = update(m, keyPress("g"))
	s := screen(m)
	mustContain(t, s, "ns/obj-00")
	mustNotContain(t, s, "ns/obj-29")
	m = update(m, applied(at(2*time.Second), []store.Result{{Outcome: store.Added, Object: obj("ns", "obj-30", "u", "1")}}...))
	mustContain(t, screen(m), "ns/obj-00") // not following: the view stays put
	m = update(m, keyPress("G"))
	m = update(m, applied(at(3*time.Second), []store.Result{{Outcome: store.Added, Object: obj("ns", "obj-31", "u", "1")}}...))
	mustContain(t, screen(m), "ns/obj-31")
	if m.log.Scroll.Cursor != 31 {
		t.Errorf("cursor = %d, want 31 (following the newest)", m.log.Scroll.Cursor)
	}
}

func TestForceRelistCallsTheFeedOffTheScreensGoroutine(t *testing.T) {
	clock := newFakeClock()
	called := make(chan struct{})
	m := New(demoOptions(clock), demoResource(program.Feed{ForceRelist: func() { close(called) }}))
	t.Cleanup(m.Close)
	m = resize(m, 80, 24)
	next, cmd := m.Update(keyPress("r"))
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
	mustContain(t, screen(m), "forced relist requested")
}

// TestForceRelistOnAFailedResourceSaysWhyNot: a reflector that failed has
// returned, and a forced relist would ask it for nothing: r says so, where
// it said the relist was requested and nothing followed.
func TestForceRelistOnAFailedResourceSaysWhyNot(t *testing.T) {
	clock := newFakeClock()
	called := false
	m := New(demoOptions(clock), demoResource(program.Feed{ForceRelist: func() { called = true }}))
	t.Cleanup(m.Close)
	m = resize(m, 120, 24)
	st := demoStats()
	st.State = reflector.StateFailed
	m = update(m, demoSnapshot(time.Second, st))
	next, cmd := m.Update(keyPress("r"))
	m = next.(Model)
	if cmd != nil {
		cmd()
	}
	if called {
		t.Error("r on a failed resource called ForceRelist")
	}
	mustContain(t, screen(m), "force relist is not available: the reflector is Failed")
	mustNotContain(t, screen(m), "forced relist requested")
}

func TestActionsThatNeedAClusterExplainThemselvesInAReplay(t *testing.T) {
	clock := newFakeClock()
	opts := demoOptions(clock)
	opts.Replay = true
	m := New(opts, demoResource(program.Feed{}))
	t.Cleanup(m.Close)
	m = resize(m, 100, 24)
	for _, k := range []string{"r", "a"} {
		next, cmd := m.Update(keyPress(k))
		m = next.(Model)
		if cmd != nil {
			t.Errorf("%s returned a command in a replay without the function", k)
		}
		mustContain(t, screen(m), "needs a live cluster: this is a replay")
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
			clock := newFakeClock()
			var gotCtx context.Context
			audit := func(ctx context.Context) (*reflector.AuditReport, error) {
				gotCtx = ctx
				if tt.err != nil {
					return nil, tt.err
				}
				return report, nil
			}
			m := New(demoOptions(clock), demoResource(program.Feed{Audit: audit}))
			t.Cleanup(m.Close)
			m = resize(m, 160, 48)
			next, cmd := m.Update(keyPress("a"))
			m = next.(Model)
			mustContain(t, screen(m), "audit running")
			if _, cmd2 := m.Update(keyPress("a")); cmd2 != nil {
				t.Error("a second a started another audit while one runs")
			}
			msg := cmd()
			if _, ok := gotCtx.Deadline(); !ok {
				t.Error("the audit's context has no deadline")
			}
			m = update(m, msg)
			mustContain(t, screen(m), tt.want...)
			if m.auditing {
				t.Error("still auditing after the result")
			}
		})
	}
	// The log has the audit from the reflector's note, in order with the rest.
	m, _ := demoModel(t, 160, 48)
	m = update(m, program.NotesMsg{Notes: []reflector.Note{{At: at(111 * time.Second), Kind: reflector.NoteAudit, Audit: report}}})
	mustContain(t, screen(m), "AUDIT    audit at resourceVersion 1300: drift")
}

func TestReplayHeaderShowsPosition(t *testing.T) {
	clock := newFakeClock()
	opts := demoOptions(clock)
	opts.Replay, opts.Trace = true, "testdata/traces/demo.jsonl"
	m := New(opts, demoResource(program.Feed{}))
	t.Cleanup(m.Close)
	m = resize(m, 100, 24)
	snap := demoSnapshot(time.Second, demoStats())
	snap.HasProgress, snap.Done, snap.Total = true, 450, 1000
	m = update(m, snap)
	mustContain(t, screen(m), "REPLAY", "45% 450/1,000", "trace testdata/traces/demo.jsonl")
	mustNotContain(t, screen(m), "LIVE")
}

func TestDroppedNotesAreCountedOnScreen(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	mustNotContain(t, screen(m), "dropped")
	snap := demoSnapshot(111*time.Second, demoStats())
	snap.NotesLost = 1200
	m = update(m, snap)
	mustContain(t, screen(m), "dropped 1,200 notes")
}

func TestResizeIsHonoured(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	for _, sz := range []struct{ w, h int }{{160, 48}, {80, 24}, {30, 8}} {
		m = resize(m, sz.w, sz.h)
		if got := len(lines(screen(m))); got != sz.h {
			t.Errorf("%dx%d: %d lines", sz.w, sz.h, got)
		}
	}
	mustContain(t, screen(m), "terminal is 30x8")
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
	clock := newFakeClock()
	m := New(demoOptions(clock), demoResource(program.Feed{}))
	t.Cleanup(m.Close)
	m = resize(m, 80, 24)
	var results []store.Result
	for i := range history.VersionsPerObject {
		results = append(results, store.Result{Outcome: store.Modified, Object: obj("ns", "busy", "u", fmt.Sprint(100+i))})
	}
	m = update(m, applied(at(time.Second), results...))
	m = update(m, keyPress("enter"))
	mustContain(t, screen(m), "lines 1-19 of 33")
	m = update(m, keyPress("G"))
	s := screen(m)
	mustContain(t, s, "resourceVersion 114 → 115")
	mustNotContain(t, s, "lines 1-")
	bottom := m.Detail.Offset
	m = update(m, keyPress("down"))
	if m.Detail.Offset != bottom {
		t.Errorf("down at the bottom moved the offset from %d to %d", bottom, m.Detail.Offset)
	}
	m = update(m, keyPress("up"))
	if m.Detail.Offset != bottom-1 {
		t.Errorf("up from the bottom: offset %d, want %d", m.Detail.Offset, bottom-1)
	}
	m = update(m, keyPress("g"))
	mustContain(t, screen(m), "lines 1-19 of 33")
}

func TestHeaderNamesTheWireFormat(t *testing.T) {
	for _, wire := range []reflector.Wire{reflector.WireProtobuf, reflector.WireJSON} {
		r := demoResource(program.Feed{})
		r.MetadataOnly, r.Wire = false, wire
		m := New(demoOptions(newFakeClock()), r)
		t.Cleanup(m.Close)
		mustContain(t, screen(resize(m, 160, 48)), "list, page 500 · full objects · "+string(wire))
	}
}

// The log's title says how many entries the filter matches, of how many.
func TestFilteredLogTitleCountsTheMatches(t *testing.T) {
	m, _ := demoModel(t, 80, 24)
	total := m.log.Entries.Len()
	m = update(m, keyPress("/"))
	m = typeText(m, "config-3")
	n, _ := m.log.Rows()
	if n == 0 || n == total {
		t.Fatalf("the filter matches %d of %d entries: the demo needs some, not all", n, total)
	}
	mustContain(t, screen(m), fmt.Sprintf("%d of %d entries match", n, total))
	m = update(m, keyPress("esc"))
	s := screen(m)
	mustContain(t, s, fmt.Sprintf("%d entries", total))
	mustNotContain(t, s, "entries match")
}
