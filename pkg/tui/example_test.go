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

// The dashboard of a replayed trace, fed by the reflector's notes, its stats
// and its store. Here its keys come from a string (q quits at once) and its
// screen goes nowhere; tui.Run(ctx, opts, feed, nil, nil) uses the terminal.
func Example() {
	rd, err := trace.Open("../../testdata/traces/demo.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	replay := trace.NewReplay(rd, 0)
	notes := tui.NewNoteBuffer(tui.DefaultNoteBuffer)
	cfg := replay.ReflectorConfig()
	record := cfg.OnNote
	cfg.OnNote = func(n reflector.Note) { record(n); notes.Push(n) }
	st, w := store.New()
	r, err := reflector.New(cfg, w, st)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := replay.Run(ctx, r); err != nil {
		fmt.Println(err)
		return
	}
	h := rd.Header()
	opts := tui.Options{Server: h.Server, Target: reflector.Target{Resource: h.Resource, Namespace: h.Namespace},
		Replay: true, Now: replay.Clock().Now, NoColor: true}
	feed := tui.Feed{Stats: r.Stats, Store: st, Notes: notes}
	err = tui.Run(ctx, opts, feed, strings.NewReader("q"), io.Discard)
	fmt.Println("dashboard closed:", err, "·", st.Len(), "objects")
	// Output:
	// dashboard closed: <nil> · 122 objects
}
