package overview

import (
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/dashboard"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// The overview's tests see a resource's dashboard from outside its
// package, as the overview does: these are the dashboard's own test
// helpers, through its exported API.

func update(m dashboard.Model, msg tea.Msg) dashboard.Model {
	next, _ := m.Update(msg)
	return next.(dashboard.Model)
}
func resize(m dashboard.Model, w, h int) dashboard.Model {
	return update(m, tea.WindowSizeMsg{Width: w, Height: h})
}
func screen(m dashboard.Model) string { return tuitest.Plain(m.View()) }

// peek is m with a root of its own, so that what is given to it leaves m
// as it was.
func peek(m dashboard.Model) dashboard.Model { r := *m.Root; m.Root = &r; return m }

// newAlone is the dashboard of res alone, as Run shows a single resource.
func newAlone(opts program.Options, res program.Resource) dashboard.Model {
	return dashboard.New(context.Background(), program.NewRoot(opts.WithDefaults(), 0), res, 0)
}

var sizes = []struct{ w, h int }{{80, 24}, {160, 48}}

// refresh brings what the replay did to m: its notes so far, then a poll.
func refresh(m dashboard.Model) dashboard.Model {
	for {
		select {
		case n := <-m.Feed.Notes.C():
			m = update(m, program.NotesMsg{Notes: []reflector.Note{n}})
			continue
		default:
		}
		return update(m, m.PollCmd(0)())
	}
}

// demoModel is a dashboard fed the demo data at w x h.
func demoModel(t *testing.T, w, h int) (dashboard.Model, *tuitest.FakeClock) {
	t.Helper()
	clock := tuitest.NewFakeClock()
	m := newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{}))
	t.Cleanup(m.Close)
	m = resize(m, w, h)
	for _, s := range tuitest.DemoSnapshots() {
		clock.Time = s.At
		m = update(m, s)
	}
	m = update(m, program.NotesMsg{Notes: tuitest.DemoNotes()})
	m = update(m, tuitest.DemoChanges())
	return m, clock
}

// EndedMsgOf waits for the model's Init to report that Options.Ended closed.
func EndedMsgOf(t *testing.T, init tea.Cmd) tea.Msg {
	t.Helper()
	ch := make(chan tea.Msg, 16)
	go func() {
		for _, msg := range runCmdsUntil(init, func(m tea.Msg) bool { return isEnded(m) }) {
			ch <- msg
		}
		close(ch)
	}()
	select {
	case msg, ok := <-ch:
		if !ok {
			t.Fatal("Init never said the run ended")
		}
		return msg
	case <-time.After(5 * time.Second):
		t.Fatal("Init never said the run ended")
	}
	return nil
}

// runCmdsUntil runs the commands of init's batch, each on its own goroutine
// (a poller's waits), and returns the first message that matches.
func runCmdsUntil(init tea.Cmd, match func(tea.Msg) bool) []tea.Msg {
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
			for _, m := range tuitest.RunCmd(c) {
				if match(m) {
					found <- m
					return
				}
			}
		}()
	}
	return []tea.Msg{<-found}
}
