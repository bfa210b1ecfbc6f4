package tuitest

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// T0 is the fake clock's start: every screen in these tests is computed
// against it, so screens are the same on every run.
func T0() time.Time { return time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC) }

// FakeClock is a settable time source for Options.Now.
type FakeClock struct {
	// Time is what Now returns: a test sets it.
	Time time.Time
}

// Now is the clock's Time.
func (c *FakeClock) Now() time.Time { return c.Time }

// NewFakeClock is a clock at T0.
func NewFakeClock() *FakeClock { return &FakeClock{Time: T0()} }

// At is d after T0.
func At(d time.Duration) time.Time { return T0().Add(d) }

// Plain is v's content without its styles.
func Plain(v tea.View) string { return ansi.Strip(v.Content) }

// Lines are s's lines.
func Lines(s string) []string { return strings.Split(s, "\n") }

// KeyPress builds the key message a terminal would send for s.
func KeyPress(s string) tea.KeyPressMsg {
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

// DemoOptions are the demo run's options (context, server, start) on clock.
func DemoOptions(clock *FakeClock) program.Options {
	return program.Options{
		Context: "kind-watchcache",
		Server:  "https://127.0.0.1:6443",
		Now:     clock.Now,
		Start:   T0(),
	}
}

// DemoResource is the demo's resource (configmaps, -l app=web, all
// namespaces, paged lists of metadata) with feed.
func DemoResource(feed program.Feed) program.Resource {
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

// Obj is an object of the demo (app=web) as the store holds it.
func Obj(ns, name, uid, rv string) *store.Object {
	return &store.Object{Namespace: ns, Name: name, UID: uid, ResourceVersion: rv, Labels: store.MakeLabels(map[string]string{"app": "web"})}
}

// DemoStats is a reflector that listed, watched, lost its history (410),
// relisted and is watching again.
func DemoStats() reflector.Stats {
	gone := &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 211 (214)"}
	return reflector.Stats{
		State:           reflector.StateWatching,
		StateSince:      At(90 * time.Second),
		ResourceVersion: "1290",
		BookmarkRV:      "1288",
		BookmarkAt:      At(100 * time.Second),
		LastGone:        At(85 * time.Second),
		Counters: reflector.Counters{
			Lists: 2, Relists: 1, ListPages: 3, Watches: 3, Gone: 1, Bookmarks: 2,
			Added: 12, Modified: 30, Deleted: 4, UIDMismatches: 1, Duplicates: 2, Backoffs: 1,
		},
		Requests: []reflector.RequestInfo{
			{ID: 1, Verb: reflector.VerbList, Opts: reflector.RequestOptions{Limit: 500}, Started: At(0), Duration: 120 * time.Millisecond, Items: 500, End: &reflector.RequestEnd{Reason: reflector.EndClosed}},
			{ID: 2, Verb: reflector.VerbList, Opts: reflector.RequestOptions{Limit: 500, Continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjExfQ"}, Started: At(time.Second), Duration: 80 * time.Millisecond, Items: 120, End: &reflector.RequestEnd{Reason: reflector.EndClosed}},
			{ID: 3, Verb: reflector.VerbWatch, Opts: reflector.RequestOptions{ResourceVersion: "211", AllowWatchBookmarks: true, TimeoutSeconds: 397}, Started: At(2 * time.Second), Duration: 83 * time.Second, Events: 40, End: &reflector.RequestEnd{Reason: reflector.EndError, Status: gone}},
			{ID: 4, Verb: reflector.VerbList, Opts: reflector.RequestOptions{Limit: 500}, Started: At(86 * time.Second), Duration: 150 * time.Millisecond, Items: 498, End: &reflector.RequestEnd{Reason: reflector.EndClosed}},
		},
		Current:      &reflector.RequestInfo{ID: 5, Verb: reflector.VerbWatch, Opts: reflector.RequestOptions{ResourceVersion: "1250", AllowWatchBookmarks: true, TimeoutSeconds: 412}, Started: At(90 * time.Second), Events: 6},
		LastRelistAt: At(86*time.Second + 150*time.Millisecond), // request #4 ended
		LastRelistDiff: &store.RelistDiff{
			ResourceVersion: "1250", Before: 620, After: 618, Unchanged: 612,
			Deleted:   []store.DiffEntry{{Ref: store.Ref{Namespace: "default", Name: "web-config-7"}, OldUID: "5f0c9a1e-aaaa", OldResourceVersion: "180"}},
			Recreated: []store.DiffEntry{{Ref: store.Ref{Namespace: "default", Name: "web-config-2"}, OldUID: "1b2c3d4e-bbbb", NewUID: "9e8d7c6b-cccc", OldResourceVersion: "150", NewResourceVersion: "1220"}},
			Updated:   []store.DiffEntry{{Ref: store.Ref{Namespace: "shop", Name: "cart-settings"}, OldUID: "77aa88bb-dddd", NewUID: "77aa88bb-dddd", OldResourceVersion: "199", NewResourceVersion: "1230"}},
		},
		ApplyLatency: reflector.Latency{Samples: 46, P50: 14 * time.Microsecond, P99: 850 * time.Microsecond, Max: 2 * time.Millisecond},
	}
}

// DemoSnapshot is one poll at d after t0.
func DemoSnapshot(d time.Duration, s reflector.Stats) program.SnapshotMsg {
	return program.SnapshotMsg{
		At: At(d), HasStats: true, Stats: s,
		HasStore: true, StoreReady: true, Counters: store.Counters{Objects: 618, BytesHeld: 1 << 20},
	}
}

// DemoSnapshots are a minute of polls, one a second, from 50s to 110s
// after t0, whose watch-event counters grow to demoStats' so the
// sparklines have something to draw.
func DemoSnapshots() []program.SnapshotMsg {
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
	final := DemoStats()
	for i := 0; i <= 60; i++ {
		s := final // the reflector hands out the same diff until the next relist
		s.Counters.Added = upTo(added, i)
		s.Counters.Deleted = upTo(deleted, i)
		s.Counters.Bookmarks = upTo(bookmarks, i)
		s.Counters.Modified = int64(i / 2)
		out = append(out, DemoSnapshot(time.Duration(50+i)*time.Second, s))
	}
	return out
}

// DemoNotes are the demo reflector's notes: its requests and decisions.
func DemoNotes() []reflector.Note {
	s := DemoStats()
	return []reflector.Note{
		{At: At(0), Kind: reflector.NoteDecision, State: reflector.StateListing, Decision: &reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialList, List: &reflector.ListMethod{PageSize: 500}}},
		{At: At(0), Kind: reflector.NoteRequestStarted, State: reflector.StateListing, Request: &reflector.RequestInfo{ID: 1, Verb: reflector.VerbList, Opts: s.Requests[0].Opts}},
		{At: At(85 * time.Second), Kind: reflector.NoteRequestEnded, State: reflector.StateWatching, Request: &s.Requests[2]},
		{At: At(85 * time.Second), Kind: reflector.NoteDecision, State: reflector.StateRelisting, Decision: &reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonGone, ResourceVersion: "211", Code: 410, List: &reflector.ListMethod{PageSize: 500}}},
		{At: At(86 * time.Second), Kind: reflector.NoteDecision, State: reflector.StateRelisting, Decision: &reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonRelistDiff, ResourceVersion: "1250", Diff: s.LastRelistDiff}},
	}
}

// DemoChanges are store changes: adds, an update, a delete and a recreate.
func DemoChanges() program.NotesMsg {
	a1 := Obj("default", "web-config-1", "0a1b2c3d-0001", "101")
	a1b := Obj("default", "web-config-1", "0a1b2c3d-0001", "140")
	a1b.Labels = store.MakeLabels(map[string]string{"app": "web", "tier": "frontend"})
	a1b.Generation = 2
	d1 := Obj("default", "web-config-3", "0a1b2c3d-0003", "141")
	r1 := Obj("default", "web-config-5", "77aa66bb-dddd", "1290")
	return Applied(At(110*time.Second),
		store.Result{Outcome: store.Added, Object: a1},
		store.Result{Outcome: store.Modified, Object: a1b, Previous: a1},
		store.Result{Outcome: store.Deleted, Object: d1, Previous: d1},
		store.Result{Outcome: store.Replaced, Object: r1, Previous: Obj("default", "web-config-5", "3c4d5e6f-aaaa", "1260")},
	)
}

// MustContain fails when s lacks any of want.
func MustContain(t *testing.T, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("screen lacks %q:\n%s", w, s)
		}
	}
}

// MustNotContain fails when s has any of bad.
func MustNotContain(t *testing.T, s string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(s, b) {
			t.Errorf("screen has %q, want it gone:\n%s", b, s)
		}
	}
}

// Applied is the notes of store changes applied at one time, as the
// reflector hands them over (unnumbered).
func Applied(at time.Time, results ...store.Result) program.NotesMsg {
	msg := program.NotesMsg{}
	for _, res := range results {
		res := res
		msg.Notes = append(msg.Notes, reflector.Note{At: at, Kind: reflector.NoteApplied, Applied: &res})
	}
	return msg
}

// DemoChurn is what a resource's diffed MODIFIED events changed: mostly a
// stamper's annotation, a writer's data, some not diffed.
func DemoChurn() diff.Summary {
	return diff.Summary{Events: 42, TimestampOnly: 30, Skipped: 3,
		Paths: []diff.PathChurn{
			{Path: `.metadata.annotations["example.com/at"]`, Count: 30, Share: 30.0 / 42, Manager: "stamper"},
			{Path: ".data.k", Count: 12, Share: 12.0 / 42, Manager: "writer"},
			{Path: ".status.conditions[type=Ready].status", Count: 2, Share: 2.0 / 42, Manager: "kube-controller-manager/status"},
		},
		Objects: []diff.ObjectChurn{{Name: "default/web-config-1", Count: 31}, {Name: "default/web-config-2", Count: 11}},
	}
}

// ChurnFeed counts its reads.
type ChurnFeed struct {
	// Sum is what Churn returns; Reads counts its calls.
	Sum   atomic.Pointer[diff.Summary]
	Reads atomic.Int64
}

// Churn is Feed.Churn: the summary set, counting the reads.
func (f *ChurnFeed) Churn(top int) diff.Summary {
	f.Reads.Add(1)
	if s := f.Sum.Load(); s != nil {
		return *s
	}
	return diff.Summary{}
}

// FindingsFeed is a findings engine's List for a test: set changes what it returns.
type FindingsFeed struct {
	mu sync.Mutex
	fs []findings.Finding
}

// List is Feed.Findings: the findings set.
func (f *FindingsFeed) List() []findings.Finding {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]findings.Finding(nil), f.fs...)
}

// Set sets what List returns.
func (f *FindingsFeed) Set(fs ...findings.Finding) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fs = fs
}

// DemoFindings are three findings in the order an engine raised them: a
// missed-deletes warning at 86s, an ignored info at 90s and a relist storm
// (error) at 100s.
func DemoFindings() []findings.Finding {
	return []findings.Finding{
		{ID: findings.MissedDeletes, Severity: findings.Warning, Resource: "configmaps.v1", Title: "2 deletes never reached the watch",
			Evidence: findings.Evidence{Text: "the relist at resourceVersion 1250 found 1 object deleted and 1 recreated", Requests: []int64{3, 4},
				Objects: []findings.Object{{Namespace: "default", Name: "web-config-7", What: "deleted", OldUID: "5f0c9a1e-aaaa"},
					{Namespace: "default", Name: "web-config-2", What: "recreated", OldUID: "1b2c3d4e-bbbb", NewUID: "9e8d7c6b-cccc"}},
				ObjectsTotal: 2, Window: &findings.Window{From: At(2 * time.Second), To: At(86 * time.Second), Seconds: 84}},
			Cause: "the watch was down past the server's history", Action: "handle DeletedFinalStateUnknown in delete handlers",
			Docs: "https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes", FirstAt: At(86 * time.Second), LastAt: At(86 * time.Second), Count: 2},
		{ID: findings.WatchListUnsupported, Severity: findings.Info, Resource: "configmaps.v1", Title: "the streaming list was refused",
			Evidence: findings.Evidence{Text: "the server answered 422"}, Cause: "WatchList is off", Action: "nothing", Ignored: true,
			FirstAt: At(90 * time.Second), LastAt: At(90 * time.Second), Count: 1},
		{ID: findings.RelistStorm, Severity: findings.Error, Resource: "configmaps.v1", Title: "3 relists within 10m",
			Evidence: findings.Evidence{Text: "relists after 410s", Requests: []int64{4}, Facts: map[string]string{"relists": "3"}},
			Cause:    "410 right after reconnect", Action: "raise --watch-cache-sizes", FirstAt: At(100 * time.Second), LastAt: At(105 * time.Second), Count: 3},
	}
}

// LiveFeed is a real store and note buffer, as the CLI wires them.
func LiveFeed(t *testing.T) (program.Feed, *store.Writer) {
	t.Helper()
	st, w := store.New()
	return program.Feed{
		Stats: DemoStats,
		Store: st,
		Notes: program.NewNoteBuffer(8),
	}, w
}

// Quits says whether cmd ends the program.
func Quits(cmd tea.Cmd) bool {
	for _, msg := range RunCmd(cmd) {
		if _, ok := msg.(tea.QuitMsg); ok {
			return true
		}
	}
	return false
}

// WaitUntil waits for cond, which the replay's goroutines make true; the
// test's deadline bounds it.
func WaitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if t.Context().Err() != nil {
			t.Fatalf("still waiting for %s", what)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// RunCmd runs a command and every command of the batches it returns, and
// returns the messages they gave, in order.
func RunCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, RunCmd(c)...)
		}
		return out
	}
	if msg == nil {
		return nil
	}
	return []tea.Msg{msg}
}

// EndedMsgOf waits for a model's Init to report that Options.Ended closed:
// it runs the commands of init's batch, each on its own goroutine (a
// poller's waits), and is the first message that isEnded says is the end.
func EndedMsgOf(t *testing.T, init tea.Cmd, isEnded func(tea.Msg) bool) tea.Msg {
	t.Helper()
	ch := make(chan tea.Msg, 1)
	go func() { ch <- runCmdsUntil(init, isEnded) }()
	select {
	case msg := <-ch:
		return msg
	case <-time.After(5 * time.Second):
		t.Fatal("Init never said the run ended")
	}
	return nil
}

// runCmdsUntil runs the commands of init's batch, each on its own goroutine
// (a poller's waits), and returns the first message that matches.
func runCmdsUntil(init tea.Cmd, match func(tea.Msg) bool) tea.Msg {
	msg := init()
	b, ok := msg.(tea.BatchMsg)
	if !ok {
		b = tea.BatchMsg{func() tea.Msg { return msg }}
	}
	found := make(chan tea.Msg, len(b))
	for _, c := range b {
		if c == nil {
			continue
		}
		go func() {
			for _, m := range RunCmd(c) {
				if match(m) {
					found <- m
					return
				}
			}
		}()
	}
	return <-found
}

// Size is a terminal's size in cells.
type Size struct{ W, H int }

// FitSizes are the terminal sizes a screen must fit exactly, from roomy to
// cramped.
func FitSizes() []Size {
	return []Size{{80, 24}, {160, 48}, {120, 40}, {100, 30}, {60, 16}, {45, 11}, {30, 8}}
}

// MustFit fails when content, the screen in state, is not exactly sz.H
// lines of at most sz.W cells.
func MustFit(t *testing.T, state, content string, sz Size) {
	t.Helper()
	got := Lines(content)
	if len(got) != sz.H {
		t.Errorf("%s: %d lines, want %d", state, len(got), sz.H)
	}
	for i, l := range got {
		if w := ansi.StringWidth(l); w > sz.W {
			t.Errorf("%s: line %d is %d cells wide, want at most %d: %q", state, i, w, sz.W, ansi.Strip(l))
		}
	}
}

// FeedDemo is m after update gave it the demo's polls, each at its time
// on clock, then the demo's notes and store changes.
func FeedDemo[M any](m M, clock *FakeClock, update func(M, tea.Msg) M) M {
	for _, s := range DemoSnapshots() {
		clock.Time = s.At
		m = update(m, s)
	}
	m = update(m, program.NotesMsg{Notes: DemoNotes()})
	return update(m, DemoChanges())
}
