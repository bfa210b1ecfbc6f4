package dashboard

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

func update(m Model, msg tea.Msg) Model { next, _ := m.Update(msg); return next.(Model) }
func resize(m Model, w, h int) Model    { return update(m, tea.WindowSizeMsg{Width: w, Height: h}) }
func screen(m Model) string             { return tuitest.Plain(m.View()) }

// peek is m with a root of its own, so that what is given to it leaves m
// as it was: a model shares its root with its copies, as bubbletea keeps
// only the latest.
func peek(m Model) Model { r := *m.Root; m.Root = &r; return m }

// typeText sends each rune of s as a key press.
func typeText(m Model, s string) Model {
	for _, r := range s {
		m = update(m, tuitest.KeyPress(string(r)))
	}
	return m
}

// demoModel is a dashboard fed the demo data at w x h.
func demoModel(t *testing.T, w, h int) (Model, *tuitest.FakeClock) {
	t.Helper()
	clock := tuitest.NewFakeClock()
	m := newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{}))
	t.Cleanup(m.Close)
	return tuitest.FeedDemo(resize(m, w, h), clock, update), clock
}

// polledModel is the demo dashboard at w x h, its options changed by opts
// (nil: none), after one poll a minute in whose stats, the demo's, stats
// changed.
func polledModel(t *testing.T, w, h int, opts func(*program.Options), stats func(*reflector.Stats)) Model {
	t.Helper()
	clock := tuitest.NewFakeClock()
	o := tuitest.DemoOptions(clock)
	if opts != nil {
		opts(&o)
	}
	m := newAlone(o, tuitest.DemoResource(program.Feed{}))
	t.Cleanup(m.Close)
	m = resize(m, w, h)
	s := tuitest.DemoStats()
	stats(&s)
	clock.Time = tuitest.At(time.Minute)
	return update(m, tuitest.DemoSnapshot(time.Minute, s))
}

// labelLine is the last line of screen s that starts (but for spaces)
// with label; without one, the test fails, saying it has no what line.
func labelLine(t *testing.T, s, label, what string) string {
	t.Helper()
	var line string
	for _, l := range tuitest.Lines(s) {
		if strings.HasPrefix(strings.TrimSpace(l), label) {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no %s line:\n%s", what, s)
	}
	return line
}
