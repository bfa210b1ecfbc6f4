package tui_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui"
)

// replayed replays a bundled trace through a reflector and returns the
// dashboard's Resource for it, with the trace's header and its clock.
func replayed(ctx context.Context, path string) (tui.Resource, trace.Header, func() time.Time, error) {
	rd, err := trace.Open(path)
	if err != nil {
		return tui.Resource{}, trace.Header{}, nil, err
	}
	defer rd.Close()
	replay := trace.NewReplay(rd, 0)
	notes := tui.NewNoteBuffer(tui.DefaultNoteBuffer)
	rr := replay.Resources()[0]
	cfg := rr.ReflectorConfig()
	record := cfg.OnNote
	cfg.OnNote = func(n reflector.Note) { record(n); notes.Push(n) }
	st, w := store.New()
	r, err := reflector.New(cfg, w, st)
	if err != nil {
		return tui.Resource{}, trace.Header{}, nil, err
	}
	if err := replay.Run(ctx, r); err != nil {
		return tui.Resource{}, trace.Header{}, nil, err
	}
	h := rd.Header()
	return tui.Resource{
		Target: rr.Header().Target(),
		Feed:   tui.Feed{Stats: r.Stats, Store: st, Notes: notes},
	}, h, replay.Clock().Now, nil
}

// The dashboard of a replayed trace, fed by the reflector's notes, its stats
// and its store. Here its keys come from a string (q quits at once) and its
// screen goes nowhere; tui.Run(ctx, opts, resources, nil, nil) uses the terminal.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, h, now, err := replayed(ctx, "../../testdata/traces/demo.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	opts := tui.Options{Server: h.Server, Replay: true, Now: now, NoColor: true}
	err = tui.Run(ctx, opts, []tui.Resource{res}, strings.NewReader("q"), io.Discard)
	fmt.Println("dashboard closed:", err, "·", res.Feed.Store.Len(), "objects")
	// Output:
	// dashboard closed: <nil> · 122 objects
}

// Several resources open on their overview, one row each: here the keys
// select the second row (j), open its dashboard (enter) and quit (q); esc
// would have come back to the overview.
func Example_severalResources() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var resources []tui.Resource
	var opts tui.Options
	for _, path := range []string{"../../testdata/traces/demo.jsonl", "../../testdata/traces/steady.jsonl"} {
		res, h, now, err := replayed(ctx, path)
		if err != nil {
			fmt.Println(err)
			return
		}
		resources = append(resources, res)
		opts = tui.Options{Server: h.Server, Replay: true, Now: now, NoColor: true}
	}
	err := tui.Run(ctx, opts, resources, strings.NewReader("j\rq"), io.Discard)
	fmt.Println("overview closed:", err)
	// Output:
	// overview closed: <nil>
}
