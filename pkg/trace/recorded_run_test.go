package trace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// refusingSource lists one object; its first refused watches fail with
// "connection refused", and every later watch streams nothing until its
// request is canceled.
type refusingSource struct {
	oneListSource
	mu      sync.Mutex
	refused int
}

func (s *refusingSource) Watch(ctx context.Context, _ reflector.RequestOptions) (reflector.Stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused > 0 {
		s.refused--
		return nil, errors.New("connection refused")
	}
	return quietStream{ctx}, nil
}

// quietStream delivers nothing until its request's context ends.
type quietStream struct{ ctx context.Context }

func (s quietStream) Next() (reflector.WatchEvent, error) {
	<-s.ctx.Done()
	return reflector.WatchEvent{}, s.ctx.Err()
}

func (quietStream) Close() {}

// liveRun is a reflector run recorded to a trace file.
type liveRun struct {
	t    *testing.T
	path string
	rec  *trace.Recorder
	r    *reflector.Reflector
	done chan error
	// stop ends the run, with a cause or without (nil).
	stop context.CancelCauseFunc
}

// recordRun starts a reflector on src with cfg, recording its run until
// stop is called.
func recordRun(t *testing.T, cfg reflector.Config, src reflector.Source) *liveRun {
	t.Helper()
	ctx, stop := context.WithCancelCause(context.Background())
	t.Cleanup(func() { stop(nil) })
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, err := trace.Create(path, oneResource)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Source, cfg.OnNote = rec.Source(0, src), rec.Notes(0)
	st, w := store.New()
	t.Cleanup(w.Close)
	r, err := reflector.New(cfg, w, st)
	if err != nil {
		t.Fatal(err)
	}
	run := &liveRun{t: t, path: path, rec: rec, r: r, done: make(chan error, 1), stop: stop}
	go func() { run.done <- r.Run(ctx) }()
	return run
}

// waitFor polls cond until it holds, for at most 10 seconds.
func (run *liveRun) waitFor(what string, cond func() bool) {
	run.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			run.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// replay waits for the run to return, closes its trace and replays it: it
// returns the trace and fails the test if the replay diverged or decided
// anything else than the recording did.
func (run *liveRun) replay() string {
	t := run.t
	t.Helper()
	if err := <-run.done; err != nil {
		t.Fatalf("the recorded run: %v", err)
	}
	if err := run.rec.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(run.path)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := trace.Open(run.path)
	if err != nil {
		t.Fatal(err)
	}
	br := newBackoffReplay(t, rd, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := br.rp.Run(ctx, br.r); err != nil {
		t.Errorf("replay: %v\ntrace:\n%s", err, b)
	}
	if shown, total := br.rp.Differences(10); total != 0 {
		t.Errorf("the replay decided otherwise (%d differences): %v\ntrace:\n%s", total, shown, b)
	}
	return string(b)
}

// A run stopped with a cause of the caller's own (the plugin's "stdout
// closed" when `| head` has read enough) stopped all the same: its open
// watch is recorded as stopped, not as a failed watch, and the replay stops
// there too instead of deciding a watch error and a backoff.
func TestARunStoppedWithACauseOfItsOwnReplaysAsStopped(t *testing.T) {
	run := recordRun(t, reflector.Config{}, &refusingSource{oneListSource: oneListSource{[]string{cm("a", "5")}}})
	run.waitFor("the watch", func() bool { return run.r.Counters().Watches == 1 })
	run.stop(errors.New("stdout closed"))
	tr := run.replay()
	if strings.Contains(tr, "stdout closed") || !strings.Contains(tr, `"id":2,"reason":"stopped"`) {
		t.Errorf("the watch should end as stopped:\n%s", tr)
	}
	if reqs := run.r.Stats().Requests; reqs[len(reqs)-1].End.Reason != reflector.EndStopped {
		t.Errorf("the watch's end: got %+v, want stopped", reqs[len(reqs)-1].End)
	}
}

// cm is a ConfigMap named name at resourceVersion rv.
func cm(name, rv string) string {
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns","name":"` + name + `","uid":"u-` + name + `","resourceVersion":"` + rv + `"}}`
}

// A relist forced during a backoff cuts the wait short and cancels no
// request: the trace has its forced-relist decision and then the LIST, with
// no end line saying "forced relist". The replay forces it at the decision,
// and relists where the recording did instead of diverging.
func TestARelistForcedDuringABackoffReplays(t *testing.T) {
	run := recordRun(t, reflector.Config{Backoff: reflector.Backoff{Initial: time.Hour, Max: time.Hour}},
		&refusingSource{oneListSource: oneListSource{[]string{cm("a", "5")}}, refused: 1})
	run.waitFor("the backoff", func() bool { return run.r.State() == reflector.StateBackoff })
	run.r.ForceRelist()
	run.waitFor("the watch after the forced relist", func() bool { return run.r.Counters().Watches == 2 })
	run.stop(nil)
	tr := run.replay()
	if !strings.Contains(tr, `"reason":"forced-relist"`) || strings.Contains(tr, `"error":"forced relist"`) {
		t.Errorf("the trace should have the forced relist and no request it canceled:\n%s", tr)
	}
}

// forcedTrace is a list and a watch; then, when duringBackoff, the watch
// fails 1 ms in and the user cuts its backoff short with a forced relist, or
// else the watch closes 5 s in and the user forces a relist before the next
// watch (between two requests); then the relist, 10 s in.
func forcedTrace(duringBackoff bool) string {
	middle := `{"k":"end","at":4000000,"id":2,"reason":"error","error":"connection refused"}
{"k":"note","at":4000000,"state":"Watching","reason":"watch-error","resourceVersion":"10"}
{"k":"note","at":4001000,"state":"Backoff","reason":"backoff","wait":"1h0m0s"}
`
	if !duringBackoff {
		middle = `{"k":"end","at":5000000000,"id":2,"reason":"closed"}
{"k":"note","at":5000000000,"state":"Watching","reason":"watch-closed","resourceVersion":"10"}
`
	}
	return `{"k":"header","v":1,"startedAt":"2026-01-01T00:00:00Z","resource":{"version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true},"namespace":"hand"}
{"k":"note","at":0,"state":"Listing","reason":"initial-list"}
{"k":"request","at":1000000,"id":1,"verb":"list","opts":{}}
{"k":"item","at":2000000,"id":1,"object":{"metadata":{"namespace":"hand","name":"a","uid":"uid-a","resourceVersion":"5"}}}
{"k":"page","at":2000000,"id":1,"resourceVersion":"10","items":1}
{"k":"end","at":2000000,"id":1,"reason":"closed"}
{"k":"note","at":2000000,"state":"Watching","reason":"list-complete","resourceVersion":"10","objectCount":1}
{"k":"request","at":3000000,"id":2,"verb":"watch","opts":{"resourceVersion":"10","allowWatchBookmarks":true,"timeoutSeconds":300}}
` + middle + `{"k":"note","at":10000000000,"state":"Relisting","reason":"forced-relist"}
{"k":"request","at":10000000000,"id":3,"verb":"list","opts":{}}
{"k":"item","at":10000500000,"id":3,"object":{"metadata":{"namespace":"hand","name":"a","uid":"uid-a","resourceVersion":"5"}}}
{"k":"page","at":10000500000,"id":3,"resourceVersion":"12","items":1}
{"k":"end","at":10000500000,"id":3,"reason":"closed"}
{"k":"note","at":10000500000,"state":"Watching","reason":"list-complete","resourceVersion":"12","objectCount":1}
{"k":"note","at":10000500000,"state":"Watching","reason":"relist-diff","resourceVersion":"12"}
{"k":"note","at":10000600000,"state":"Stopped","reason":"stopped"}
`
}

// A relist forced with no request open, during a backoff or between two
// requests, is forced again in the replay at its recorded decision, once.
func TestARelistForcedWithNoRequestOpenReplays(t *testing.T) {
	for _, duringBackoff := range []bool{true, false} {
		name := "between two requests"
		if duringBackoff {
			name = "during a backoff"
		}
		t.Run(name, func(t *testing.T) {
			b := newBackoffReplay(t, readerOf(t, forcedTrace(duringBackoff)), 0)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := b.rp.Run(ctx, b.r); err != nil {
				t.Errorf("replay: %v", err)
			}
			if shown, total := b.rp.Differences(10); total != 0 {
				t.Errorf("differences: %v", shown)
			}
			if c := b.r.Counters(); c.Lists != 2 || c.Relists != 1 {
				t.Errorf("counters %+v, want 2 lists, 1 relist", c)
			}
		})
	}
}
