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
}

// recordRun starts a reflector on src with cfg, recording its run, until
// ctx ends.
func recordRun(ctx context.Context, t *testing.T, cfg reflector.Config, src reflector.Source) *liveRun {
	t.Helper()
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
	run := &liveRun{t: t, path: path, rec: rec, r: r, done: make(chan error, 1)}
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
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	run := recordRun(ctx, t, reflector.Config{}, &refusingSource{oneListSource: oneListSource{[]string{cm("a", "5")}}})
	run.waitFor("the watch", func() bool { return run.r.Counters().Watches == 1 })
	stop(errors.New("stdout closed"))
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
