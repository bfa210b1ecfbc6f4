package overview

import (
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
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

// playerRig is a replay of a bundled trace, one reflector per resource,
// with its player, not started yet.
type playerRig struct {
	t         *testing.T
	replay    *trace.Replay
	player    *trace.Player
	opts      program.Options
	resources []program.Resource
	run       func() <-chan error
	kinds     []string // the trace's line kinds, in order
}

// served is how many lines the replay has served.
func (r *playerRig) served() int64 {
	_, n := r.player.Position()
	return n
}

// held waits until a pause holds the replay with more than n lines served.
func (r *playerRig) held(n int64) int64 {
	r.t.Helper()
	tuitest.WaitUntil(r.t, "the replay to be held by its pause", func() bool { return r.player.Held() && r.served() > n })
	return r.served()
}

// newPlayerRig is a replay of the trace at path at speed, with its player, not started yet.
func newPlayerRig(t *testing.T, path string, speed float64) *playerRig {
	t.Helper()
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rd.Close() })
	rp := trace.NewReplay(rd, speed)
	r := &playerRig{t: t, replay: rp, player: rp.Player(), kinds: lineKinds(t, path)}
	var reflectors []*reflector.Reflector
	for _, rr := range rp.Resources() {
		notes := program.NewNoteBuffer(program.DefaultNoteBuffer)
		cfg := rr.ReflectorConfig()
		record := cfg.OnNote
		cfg.OnNote = func(n reflector.Note) { record(n); notes.Push(n) }
		st, w := store.New()
		rf, err := reflector.New(cfg, w, st)
		if err != nil {
			t.Fatal(err)
		}
		rr.SetForceRelist(rf.ForceRelist)
		reflectors = append(reflectors, rf)
		rh := rr.Header()
		r.resources = append(r.resources, program.Resource{Target: rh.Target(), Strategy: rh.Options.Strategy, PageSize: rh.Options.PageSize,
			Feed: program.Feed{Stats: rf.Stats, Store: st, Notes: notes}})
	}
	end, err := trace.RecordedEnd(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	r.player.SetEnd(end)
	h := rd.Header()
	r.opts = program.Options{Server: h.Server, Replay: true, Trace: "demo.jsonl", Player: r.player, Now: rp.Clock().Now, Start: h.StartedAt}
	r.run = func() <-chan error {
		errc := make(chan error, 1)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		go func() { errc <- rp.Run(ctx, reflectors...) }()
		return errc
	}
	return r
}

// lineKinds are the kinds of the trace's lines at path, in order.
func lineKinds(t *testing.T, path string) []string {
	t.Helper()
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out []string
	for {
		l, err := rd.Next()
		if err != nil {
			return out
		}
		out = append(out, l.K)
	}
}

// marks counts the requests and decisions among kinds.
func marks(kinds []string) int {
	n := 0
	for _, k := range kinds {
		if k == trace.KindRequest || k == trace.KindNote {
			n++
		}
	}
	return n
}
