package tuitest

import (
	"context"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// PlayerRig is a replay of a bundled trace, one reflector per resource,
// with its player, not started yet.
type PlayerRig struct {
	t *testing.T
	// Replay is the replay of the trace; Player is its player.
	Replay *trace.Replay
	Player *trace.Player
	// Opts are the options of a dashboard of the replay; Resources are its
	// resources, one per resource of the trace, each fed by its reflector.
	Opts      program.Options
	Resources []program.Resource
	// Run starts the replay; the channel gives what it returned.
	Run func() <-chan error
	// Kinds are the trace's line kinds, in order.
	Kinds []string
}

// NewPlayerRig is a replay of the trace at path at speed, with its player,
// not started yet.
func NewPlayerRig(t *testing.T, path string, speed float64) *PlayerRig {
	t.Helper()
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rd.Close() })
	rp := trace.NewReplay(rd, speed)
	r := &PlayerRig{t: t, Replay: rp, Player: rp.Player(), Kinds: LineKinds(t, path)}
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
		r.Resources = append(r.Resources, program.Resource{Target: rh.Target(), Strategy: rh.Options.Strategy, PageSize: rh.Options.PageSize,
			Feed: program.Feed{Stats: rf.Stats, Store: st, Notes: notes}})
	}
	end, err := trace.RecordedEnd(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	r.Player.SetEnd(end)
	h := rd.Header()
	r.Opts = program.Options{Server: h.Server, Replay: true, Trace: "demo.jsonl", Player: r.Player, Now: rp.Clock().Now, Start: h.StartedAt}
	r.Run = func() <-chan error {
		errc := make(chan error, 1)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		go func() { errc <- rp.Run(ctx, reflectors...) }()
		return errc
	}
	return r
}

// Served is how many lines the replay has served.
func (r *PlayerRig) Served() int64 {
	_, n := r.Player.Position()
	return n
}

// Held waits until a pause holds the replay with more than n lines served,
// and is how many are.
func (r *PlayerRig) Held(n int64) int64 {
	r.t.Helper()
	WaitUntil(r.t, "the replay to be held by its pause", func() bool { return r.Player.Held() && r.Served() > n })
	return r.Served()
}

// LineKinds are the kinds of the trace's lines at path, in order.
func LineKinds(t *testing.T, path string) []string {
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

// Marks counts the requests and decisions among kinds.
func Marks(kinds []string) int {
	n := 0
	for _, k := range kinds {
		if k == trace.KindRequest || k == trace.KindNote {
			n++
		}
	}
	return n
}
