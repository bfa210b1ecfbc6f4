package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// t0 is the fake clock's start: every screen in these tests is computed
// against it, so screens are the same on every run.
var t0 = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// fakeClock is a settable time source for Options.Now.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time     { return c.now }
func newFakeClock() *fakeClock          { return &fakeClock{now: t0} }
func at(d time.Duration) time.Time      { return t0.Add(d) }
func plain(v tea.View) string           { return ansi.Strip(v.Content) }
func update(m Model, msg tea.Msg) Model { next, _ := m.Update(msg); return next.(Model) }
func resize(m Model, w, h int) Model    { return update(m, tea.WindowSizeMsg{Width: w, Height: h}) }
func screen(m Model) string             { return plain(m.View()) }
func lines(s string) []string           { return strings.Split(s, "\n") }

// peek is m with a root of its own, so that what is given to it leaves m
// as it was: a model shares its root with its copies, as bubbletea keeps
// only the latest.
func peek(m Model) Model { r := *m.Root; m.Root = &r; return m }

// keyPress builds the key message a terminal would send for s.
func keyPress(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(s)
	return tea.KeyPressMsg{Code: r[0], Text: s}
}

// typeText sends each rune of s as a key press.
func typeText(m Model, s string) Model {
	for _, r := range s {
		m = update(m, keyPress(string(r)))
	}
	return m
}

func demoOptions(clock *fakeClock) program.Options {
	return program.Options{
		Context: "kind-watchcache",
		Server:  "https://127.0.0.1:6443",
		Now:     clock.Now,
		Start:   t0,
	}
}

// demoResource is the demo's resource (configmaps, -l app=web, all
// namespaces, paged lists of metadata) with feed.
func demoResource(feed program.Feed) program.Resource {
	return program.Resource{
		Target: reflector.Target{
			Resource:      reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true},
			LabelSelector: "app=web",
		},
		Strategy:     reflector.StrategyList,
		PageSize:     500,
		MetadataOnly: true,
		Feed:         feed,
	}
}

func obj(ns, name, uid, rv string) *store.Object {
	return &store.Object{Namespace: ns, Name: name, UID: uid, ResourceVersion: rv, Labels: store.MakeLabels(map[string]string{"app": "web"})}
}

// demoStats is a reflector that listed, watched, lost its history (410),
// relisted and is watching again.
func demoStats() reflector.Stats {
	gone := &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 211 (214)"}
	return reflector.Stats{
		State:           reflector.StateWatching,
		StateSince:      at(90 * time.Second),
		ResourceVersion: "1290",
		BookmarkRV:      "1288",
		BookmarkAt:      at(100 * time.Second),
		LastGone:        at(85 * time.Second),
		Counters: reflector.Counters{
			Lists: 2, Relists: 1, ListPages: 3, Watches: 3, Gone: 1, Bookmarks: 2,
			Added: 12, Modified: 30, Deleted: 4, UIDMismatches: 1, Duplicates: 2, Backoffs: 1,
		},
		Requests: []reflector.RequestInfo{
			{ID: 1, Verb: reflector.VerbList, Opts: reflector.RequestOptions{Limit: 500}, Started: at(0), Duration: 120 * time.Millisecond, Items: 500, End: &reflector.RequestEnd{Reason: reflector.EndClosed}},
			{ID: 2, Verb: reflector.VerbList, Opts: reflector.RequestOptions{Limit: 500, Continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjExfQ"}, Started: at(time.Second), Duration: 80 * time.Millisecond, Items: 120, End: &reflector.RequestEnd{Reason: reflector.EndClosed}},
			{ID: 3, Verb: reflector.VerbWatch, Opts: reflector.RequestOptions{ResourceVersion: "211", AllowWatchBookmarks: true, TimeoutSeconds: 397}, Started: at(2 * time.Second), Duration: 83 * time.Second, Events: 40, End: &reflector.RequestEnd{Reason: reflector.EndError, Status: gone}},
			{ID: 4, Verb: reflector.VerbList, Opts: reflector.RequestOptions{Limit: 500}, Started: at(86 * time.Second), Duration: 150 * time.Millisecond, Items: 498, End: &reflector.RequestEnd{Reason: reflector.EndClosed}},
		},
		Current: &reflector.RequestInfo{ID: 5, Verb: reflector.VerbWatch, Opts: reflector.RequestOptions{ResourceVersion: "1250", AllowWatchBookmarks: true, TimeoutSeconds: 412}, Started: at(90 * time.Second), Events: 6},
		LastRelistDiff: &store.RelistDiff{
			ResourceVersion: "1250", Before: 620, After: 618, Unchanged: 612,
			Deleted:   []store.DiffEntry{{Ref: store.Ref{Namespace: "default", Name: "web-config-7"}, OldUID: "5f0c9a1e-aaaa", OldResourceVersion: "180"}},
			Recreated: []store.DiffEntry{{Ref: store.Ref{Namespace: "default", Name: "web-config-2"}, OldUID: "1b2c3d4e-bbbb", NewUID: "9e8d7c6b-cccc", OldResourceVersion: "150", NewResourceVersion: "1220"}},
			Updated:   []store.DiffEntry{{Ref: store.Ref{Namespace: "shop", Name: "cart-settings"}, OldUID: "77aa88bb-dddd", NewUID: "77aa88bb-dddd", OldResourceVersion: "199", NewResourceVersion: "1230"}},
		},
		ApplyLatency: reflector.Latency{Samples: 46, P50: 14 * time.Microsecond, P99: 850 * time.Microsecond, Max: 2 * time.Millisecond},
	}
}

// demoSnapshot is one poll at d after t0.
func demoSnapshot(d time.Duration, s reflector.Stats) program.SnapshotMsg {
	return program.SnapshotMsg{
		At: at(d), HasStats: true, Stats: s,
		HasStore: true, StoreReady: true, Counters: store.Counters{Objects: 618, BytesHeld: 1 << 20},
	}
}

// demoSnapshots are a minute of polls, one a second, from 50s to 110s
// after t0, whose watch-event counters grow to demoStats' so the
// sparklines have something to draw.
func demoSnapshots() []program.SnapshotMsg {
	events := func(secs ...int) []int { return secs }
	added := events(5, 6, 6, 7, 20, 21, 33, 40, 41, 41, 55, 58)
	deleted := events(10, 25, 44, 57)
	bookmarks := events(0, 50)
	upTo := func(list []int, i int) (n int64) {
		for _, s := range list {
			if s <= i {
				n++
			}
		}
		return n
	}
	var out []program.SnapshotMsg
	final := demoStats()
	for i := 0; i <= 60; i++ {
		s := final // the reflector hands out the same diff until the next relist
		s.Counters.Added = upTo(added, i)
		s.Counters.Deleted = upTo(deleted, i)
		s.Counters.Bookmarks = upTo(bookmarks, i)
		s.Counters.Modified = int64(i / 2)
		out = append(out, demoSnapshot(time.Duration(50+i)*time.Second, s))
	}
	return out
}

func demoNotes() []reflector.Note {
	s := demoStats()
	return []reflector.Note{
		{At: at(0), Kind: reflector.NoteDecision, State: reflector.StateListing, Decision: &reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialList, List: &reflector.ListMethod{PageSize: 500}}},
		{At: at(0), Kind: reflector.NoteRequestStarted, State: reflector.StateListing, Request: &reflector.RequestInfo{ID: 1, Verb: reflector.VerbList, Opts: s.Requests[0].Opts}},
		{At: at(85 * time.Second), Kind: reflector.NoteRequestEnded, State: reflector.StateWatching, Request: &s.Requests[2]},
		{At: at(85 * time.Second), Kind: reflector.NoteDecision, State: reflector.StateRelisting, Decision: &reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonGone, ResourceVersion: "211", Code: 410, List: &reflector.ListMethod{PageSize: 500}}},
		{At: at(86 * time.Second), Kind: reflector.NoteDecision, State: reflector.StateRelisting, Decision: &reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonRelistDiff, ResourceVersion: "1250", Diff: s.LastRelistDiff}},
	}
}

// demoChanges are store changes: adds, an update, a delete and a recreate.
func demoChanges() program.NotesMsg {
	a1 := obj("default", "web-config-1", "0a1b2c3d-0001", "101")
	a1b := obj("default", "web-config-1", "0a1b2c3d-0001", "140")
	a1b.Labels = store.MakeLabels(map[string]string{"app": "web", "tier": "frontend"})
	a1b.Generation = 2
	d1 := obj("default", "web-config-3", "0a1b2c3d-0003", "141")
	r1 := obj("default", "web-config-5", "77aa66bb-dddd", "1290")
	return applied(at(110*time.Second),
		store.Result{Outcome: store.Added, Object: a1},
		store.Result{Outcome: store.Modified, Object: a1b, Previous: a1},
		store.Result{Outcome: store.Deleted, Object: d1, Previous: d1},
		store.Result{Outcome: store.Replaced, Object: r1, Previous: obj("default", "web-config-5", "3c4d5e6f-aaaa", "1260")},
	)
}

// demoModel is a dashboard fed the demo data at w x h.
func demoModel(t *testing.T, w, h int) (Model, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	m := New(demoOptions(clock), demoResource(program.Feed{}))
	t.Cleanup(m.Close)
	m = resize(m, w, h)
	for _, s := range demoSnapshots() {
		clock.now = s.At
		m = update(m, s)
	}
	m = update(m, program.NotesMsg{Notes: demoNotes()})
	m = update(m, demoChanges())
	return m, clock
}

// mustContain fails when s lacks any of want.
func mustContain(t *testing.T, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("screen lacks %q:\n%s", w, s)
		}
	}
}

func mustNotContain(t *testing.T, s string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(s, b) {
			t.Errorf("screen has %q, want it gone:\n%s", b, s)
		}
	}
}

// applied is the notes of store changes applied at one time, as the
// reflector hands them over (unnumbered).
func applied(at time.Time, results ...store.Result) program.NotesMsg {
	msg := program.NotesMsg{}
	for _, res := range results {
		res := res
		msg.Notes = append(msg.Notes, reflector.Note{At: at, Kind: reflector.NoteApplied, Applied: &res})
	}
	return msg
}
