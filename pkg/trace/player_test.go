package trace

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// wall is a wall clock the test moves by hand.
type wall struct{ t time.Time }

func (w *wall) now() time.Time { return w.t }

func newTestPlayer(speed float64) (*Player, *wall) {
	w := &wall{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	return newPlayer(speed, w.now), w
}

// serveAt asks the player about a line recorded at `at` at the wall's time
// and, when it may be served, serves it.
func serveAt(t *testing.T, pl *Player, w *wall, at time.Duration, k string) (bool, time.Duration) {
	t.Helper()
	pl.mu.Lock()
	serve, wait, _ := pl.decide(at, w.t)
	pl.mu.Unlock()
	if serve {
		pl.servedLine(at, k)
	}
	return serve, wait
}

func TestThePlayerPacesLinesAtTheSpeedFromAnAnchorThatMovesWithEveryChange(t *testing.T) {
	pl, w := newTestPlayer(2)
	if ok, _ := serveAt(t, pl, w, 10*time.Second, KindRequest); !ok {
		t.Fatal("the first line waits, want it served at once")
	}
	// At ×2, a line recorded 4s later is due 2s later.
	if ok, wait := serveAt(t, pl, w, 14*time.Second, KindEvent); ok || wait != 2*time.Second {
		t.Fatalf("a line 4s later at ×2: served %v, wait %v; want a wait of 2s", ok, wait)
	}
	w.t = w.t.Add(2 * time.Second)
	if ok, _ := serveAt(t, pl, w, 14*time.Second, KindEvent); !ok {
		t.Fatal("the line is due, want it served")
	}
	// A new speed counts from the position, now: ×4 makes the next 4s take 1s.
	pl.SetSpeed(4)
	if ok, wait := serveAt(t, pl, w, 18*time.Second, KindEvent); ok || wait != time.Second {
		t.Fatalf("after ×4: served %v, wait %v; want a wait of 1s", ok, wait)
	}
	// Paused, nothing is served however long it waits, and there is no timeout.
	pl.Pause()
	w.t = w.t.Add(time.Hour)
	if ok, wait := serveAt(t, pl, w, 18*time.Second, KindEvent); ok || wait != 0 {
		t.Fatalf("paused: served %v, wait %v; want held until a change", ok, wait)
	}
	// Resumed an hour later, the replay does not catch up: it goes on from the position.
	pl.Resume()
	if ok, wait := serveAt(t, pl, w, 18*time.Second, KindEvent); ok || wait != time.Second {
		t.Fatalf("resumed: served %v, wait %v; want the 1s the line is still ahead at ×4", ok, wait)
	}
	// Speed 0 serves at once.
	pl.SetSpeed(0)
	if ok, _ := serveAt(t, pl, w, 3600*time.Second, KindEvent); !ok {
		t.Fatal("at speed 0 a line an hour ahead waits, want it served")
	}
	if pos, n := pl.Position(); pos != 3600*time.Second || n != 3 {
		t.Errorf("position: got %v after %d lines, want 1h0m0s after 3", pos, n)
	}
}

func TestASeekServesEverythingBeforeItAtOnceThenPacesFromItsTarget(t *testing.T) {
	pl, w := newTestPlayer(1)
	serveAt(t, pl, w, 0, KindRequest)
	pl.Pause()
	if err := pl.Seek(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	if pl.Paused() {
		t.Error("a seek left the replay paused, want it resumed")
	}
	for _, at := range []time.Duration{time.Second, 30 * time.Second, 59 * time.Second} {
		if ok, _ := serveAt(t, pl, w, at, KindEvent); !ok {
			t.Fatalf("the line at %v, before the seek's target, waits; want it served at once", at)
		}
	}
	// The first line at or past the target is paced from the target at ×1.
	if ok, wait := serveAt(t, pl, w, 65*time.Second, KindEvent); ok || wait != 5*time.Second {
		t.Fatalf("the line at 65s after a seek to 60s: served %v, wait %v; want a wait of 5s", ok, wait)
	}
	err := pl.Seek(10 * time.Second)
	if !errors.Is(err, ErrSeekBackward) {
		t.Errorf("a seek behind the position: got %v, want ErrSeekBackward", err)
	}
	// Paused while it jumps: the jump goes on to its target and holds there.
	if err := pl.Seek(120 * time.Second); err != nil {
		t.Fatal(err)
	}
	pl.Pause()
	if ok, _ := serveAt(t, pl, w, 90*time.Second, KindEvent); !ok {
		t.Error("paused while jumping: the line at 90s, before the target, waits; want it served")
	}
	if ok, _ := serveAt(t, pl, w, 120*time.Second, KindEvent); ok {
		t.Error("paused while jumping: the line at the target was served; want it held")
	}
}

func TestAStepServesUpToTheNextRequestOrDecisionThenPauses(t *testing.T) {
	pl, w := newTestPlayer(1)
	serveAt(t, pl, w, 0, KindRequest)
	pl.Step()
	// Items and events of the request are served at once, however far apart.
	for _, k := range []string{KindItem, KindPage, KindEnd} {
		if ok, _ := serveAt(t, pl, w, time.Hour, k); !ok {
			t.Fatalf("stepping: the %s line waits, want it served", k)
		}
	}
	if ok, _ := serveAt(t, pl, w, time.Hour, KindNote); !ok {
		t.Fatal("stepping: the decision waits, want it served")
	}
	// The decision ended the step: the next line is held.
	if ok, wait := serveAt(t, pl, w, time.Hour, KindRequest); ok || wait != 0 || !pl.Paused() {
		t.Fatalf("after the step's decision: served %v, wait %v, paused %v; want held and paused", ok, wait, pl.Paused())
	}
	pl.Step()
	if ok, _ := serveAt(t, pl, w, time.Hour, KindRequest); !ok {
		t.Fatal("the second step does not serve the request")
	}
	if ok, _ := serveAt(t, pl, w, time.Hour, KindItem); ok {
		t.Fatal("the second step went past its request")
	}
}

func TestFasterAndSlowerDoubleAndHalveWithinTheirBounds(t *testing.T) {
	pl, _ := newTestPlayer(1)
	var got []float64
	for i := 0; i < 12; i++ {
		got = append(got, pl.Faster())
	}
	want := []float64{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 0, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Faster from 1: got %v, want %v", got, want)
		}
	}
	if s := pl.Slower(); s != MaxSpeed {
		t.Errorf("Slower from as fast as possible: got %v, want %v", s, float64(MaxSpeed))
	}
	for i := 0; i < 20; i++ {
		pl.Slower()
	}
	if s := pl.Speed(); s != MinSpeed {
		t.Errorf("Slower, many times: got %v, want %v", s, MinSpeed)
	}
}

// demoReplay replays the bundled demo trace at speed with one reflector; run
// starts it and returns its error channel.
func demoReplay(t *testing.T, speed float64) (*Replay, func() <-chan error) {
	t.Helper()
	rd, err := Open("../../testdata/traces/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rd.Close() })
	p := NewReplay(rd, speed)
	rr := p.Resources()[0]
	st, w := store.New()
	rf, err := reflector.New(rr.ReflectorConfig(), w, st)
	if err != nil {
		t.Fatal(err)
	}
	rr.SetForceRelist(rf.ForceRelist)
	return p, func() <-chan error {
		errc := make(chan error, 1)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		go func() { errc <- p.Run(ctx, rf) }()
		return errc
	}
}

// heldAfter waits until the reading goroutine is held by a pause with more
// than n lines served, and returns how many were.
func heldAfter(t *testing.T, pl *Player, n int64) int64 {
	t.Helper()
	for {
		pl.mu.Lock()
		waiting, served := pl.waiting, pl.served
		pl.mu.Unlock()
		if waiting && served > n {
			return served
		}
		runtime.Gosched()
	}
}

// kinds are the kinds of a trace's lines, in order.
func kinds(t *testing.T, path string) []string {
	t.Helper()
	rd, err := Open(path)
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

func TestSteppingAPausedReplayServesExactlyOneRequestOrDecisionEachTime(t *testing.T) {
	p, run := demoReplay(t, 1)
	pl := p.Player()
	pl.Pause()
	pl.Step() // the first line is a decision: the step ends there
	errc := run()
	lines := kinds(t, "../../testdata/traces/demo.jsonl")
	served := heldAfter(t, pl, 0)
	for step := 0; step < 12; step++ {
		last := lines[served-1]
		if last != KindRequest && last != KindNote {
			t.Fatalf("step %d ended after a %s line (line %d after the header), want a request or a decision", step, last, served)
		}
		before := served
		pl.Step()
		served = heldAfter(t, pl, before)
		marks := 0
		for _, k := range lines[before:served] {
			if k == KindRequest || k == KindNote {
				marks++
			}
		}
		if marks != 1 {
			t.Fatalf("step %d served lines %d to %d, %v: %d requests and decisions, want exactly 1", step+1, before+1, served, lines[before:served], marks)
		}
	}
	if !pl.Paused() {
		t.Error("after the steps the replay is not paused")
	}
	// Resumed as fast as possible, the replay ends with the recording's decisions.
	pl.SetSpeed(0)
	pl.Resume()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if shown, n := p.Differences(5); n != 0 {
		t.Errorf("the stepped replay decided differently: %v", shown)
	}
	if _, n := pl.Position(); n != int64(len(lines)) {
		t.Errorf("served %d lines, the trace has %d", n, len(lines))
	}
}

func TestASeekToTheEndOfARealTimeReplayNeverWaits(t *testing.T) {
	path := "../../testdata/traces/demo.jsonl"
	end, err := RecordedEnd(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if end != 13039981108 {
		t.Fatalf("RecordedEnd: got %v, want the last line's at, 13.039981108s", end)
	}
	p, run := demoReplay(t, 1)
	pl := p.Player()
	pl.SetEnd(end)
	if err := pl.Seek(end); err != nil {
		t.Fatal(err)
	}
	if err := <-run(); err != nil {
		t.Fatal(err)
	}
	pl.mu.Lock()
	timed := pl.timedWaits
	pl.mu.Unlock()
	if timed != 0 {
		t.Errorf("the replay waited for a line's time %d times, want none: the seek serves everything before the end at once", timed)
	}
	if pos, _ := pl.Position(); pos != end {
		t.Errorf("position: got %v, want the end %v", pos, end)
	}
}

func TestRecordedEndReadsTheTailOfAPlainTraceAndAllOfAGzipOne(t *testing.T) {
	dir := t.TempDir()
	// A last line cut short (a crash while recording) is not the end.
	src, err := os.ReadFile("../../testdata/traces/steady.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.jsonl")
	if err := os.WriteFile(cut, append(src, []byte(`{"k":"event","at":99999999999,"id":`)...), 0o600); err != nil {
		t.Fatal(err)
	}
	end, err := RecordedEnd(context.Background(), cut)
	if err != nil || end != 387267683 {
		t.Errorf("a trace with a cut last line: got %v, %v; want the last complete line's 387.267683ms", end, err)
	}
	gz := filepath.Join(dir, "steady.jsonl.gz")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(src); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gz, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if end, err := RecordedEnd(context.Background(), gz); err != nil || end != 387267683 {
		t.Errorf("gzip: got %v, %v; want 387.267683ms", end, err)
	}
	if _, err := RecordedEnd(context.Background(), filepath.Join(dir, "missing.jsonl")); err == nil {
		t.Error("a missing trace: got no error")
	}
}

// TestAVerySlowSpeedWaitsInsteadOfServingAtOnce: at a speed so slow that a
// second's gap is longer than a time.Duration holds, the next line waits
// (the longest wait a Duration can say), where the overflow served it at once.
func TestAVerySlowSpeedWaitsInsteadOfServingAtOnce(t *testing.T) {
	for _, speed := range []float64{1e-300, 1e-9, MinSpeed} {
		pl, w := newTestPlayer(speed)
		if ok, _ := serveAt(t, pl, w, 0, KindRequest); !ok {
			t.Fatalf("×%g: the first line waits, want it served at once", speed)
		}
		if ok, wait := serveAt(t, pl, w, time.Second, KindEvent); ok || wait < 64*time.Second {
			t.Errorf("×%g: a line 1s later: served %v, wait %v; want a wait of at least 64s", speed, ok, wait)
		}
	}
}

// Between two lines, the replay's time goes on at pace towards the next
// one, never past it, and stands still while paused or at speed 0: the
// dashboard's clock does not freeze on the last line's time.
func TestTheReplaysTimeGoesOnAtPaceBetweenLines(t *testing.T) {
	pl, w := newTestPlayer(2)
	serveAt(t, pl, w, 10*time.Second, KindRequest)
	if got := pl.Reached(); got != 10*time.Second {
		t.Fatalf("after the first line: reached %v, want 10s", got)
	}
	serveAt(t, pl, w, 20*time.Second, KindEvent) // due 5s later at ×2
	w.t = w.t.Add(time.Second)
	if got := pl.Reached(); got != 12*time.Second {
		t.Errorf("1s later at ×2: reached %v, want 12s", got)
	}
	w.t = w.t.Add(time.Hour) // the reading goroutine is late: never past the line
	if got := pl.Reached(); got != 20*time.Second {
		t.Errorf("an hour later: reached %v, want the next line's 20s", got)
	}
	serveAt(t, pl, w, 20*time.Second, KindEvent)
	pl.SetSpeed(1) // paces on from 20s, now
	if ok, wait := serveAt(t, pl, w, 30*time.Second, KindEvent); ok || wait != 10*time.Second {
		t.Fatalf("the line at 30s: served %v, wait %v; want a wait of 10s", ok, wait)
	}
	pl.Pause()
	w.t = w.t.Add(2 * time.Second)
	if got := pl.Reached(); got != 20*time.Second {
		t.Errorf("paused: reached %v, want the last line's 20s", got)
	}
	pl.Resume()
	pl.SetSpeed(0)
	if got := pl.Reached(); got != 20*time.Second {
		t.Errorf("at speed 0: reached %v, want the last line's 20s", got)
	}
	if pos, _ := pl.Position(); pos != 20*time.Second {
		t.Errorf("position %v, want the last line's 20s", pos)
	}
}

// A change of pace between two lines goes on from where the pace has come
// to, not from the last line served: + eight seconds into a 30 s gap went
// back to the last line (the header's time jumped back 11 s and stood
// still), and a pause went back there too, replaying what had been shown;
// so did a step.
func TestAChangeOfPaceBetweenLinesGoesOnFromWhereThePaceHasCome(t *testing.T) {
	pl, w := newTestPlayer(1)
	serveAt(t, pl, w, 10*time.Second, KindRequest)
	serveAt(t, pl, w, 40*time.Second, KindEvent) // due 30s later at ×1
	w.t = w.t.Add(8 * time.Second)
	pl.Faster()
	if got := pl.Reached(); got != 18*time.Second {
		t.Errorf("×2 eight seconds into the gap: reached %v, want 18s", got)
	}
	if _, wait := serveAt(t, pl, w, 40*time.Second, KindEvent); wait != 11*time.Second {
		t.Errorf("the line at 40s waits %v, want 11s ((40s - 18s) / 2)", wait)
	}
	w.t = w.t.Add(2 * time.Second)
	pl.Pause()
	w.t = w.t.Add(5 * time.Second)
	if got := pl.Reached(); got != 22*time.Second {
		t.Errorf("paused after 2s more at ×2: reached %v, want 22s", got)
	}
	pl.Resume()
	if got := pl.Reached(); got != 22*time.Second {
		t.Errorf("resumed: reached %v, want 22s", got)
	}
	if _, wait := serveAt(t, pl, w, 40*time.Second, KindEvent); wait != 9*time.Second {
		t.Errorf("after the pause, the line at 40s waits %v, want 9s ((40s - 22s) / 2)", wait)
	}
	// A step pauses a running replay where its pace has come to, as a
	// pause does: the clock does not go back to the last line.
	w.t = w.t.Add(4 * time.Second)
	pl.Step()
	if got := pl.Reached(); got != 30*time.Second {
		t.Errorf("stepped 4s more at ×2: reached %v, want 30s", got)
	}
}
