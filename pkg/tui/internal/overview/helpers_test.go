package overview

import (
	"context"
	"testing"

	tea "charm.land/bubbletea/v2"

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
		if notes := m.Feed.Notes.Take(1); len(notes) > 0 {
			m = update(m, program.NotesMsg{Notes: notes})
			continue
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
	return tuitest.FeedDemo(resize(m, w, h), clock, update), clock
}
