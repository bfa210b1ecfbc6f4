// Command tui-bench measures what the dashboard costs the reflector: it
// writes a trace of N watch events (default 1,000,000), replays it as fast as
// possible without and with the dashboard attached (rendering to a discarded
// output, as on a terminal nobody reads), alternating, and prints the medians,
// the throughput ratio and the extra CPU the dashboard used.
//
//	go run ./hack/tui-bench -events 1000000 -reps 3
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/tracegen"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui"
)

func main() {
	events := flag.Int("events", 1_000_000, "watch events in the generated trace")
	objects := flag.Int("objects", 1000, "objects the events cycle over")
	reps := flag.Int("reps", 3, "repetitions of each variant")
	write := flag.String("write", "", "only write the trace to this file and exit: for timing two builds' `replay FILE --speed 0` side by side")
	flag.Parse()
	if *write != "" {
		size, err := writeTrace(*write, *events, *objects)
		if err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("%s: %d events over %d objects, %.1f MB\n", *write, *events, *objects, float64(size)/1e6)
		return
	}
	if err := run(*events, *objects, *reps); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(events, objects, reps int) error {
	dir, err := os.MkdirTemp("", "tui-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "events.jsonl")
	size, err := writeTrace(path, events, objects)
	if err != nil {
		return err
	}
	fmt.Printf("trace: %d events over %d objects, %.1f MB\n", events, objects, float64(size)/1e6)
	var plain, withTUI []result
	for i := 0; i < reps; i++ {
		r, err := replay(path, false)
		if err != nil {
			return err
		}
		plain = append(plain, r)
		r, err = replay(path, true)
		if err != nil {
			return err
		}
		withTUI = append(withTUI, r)
		fmt.Printf("rep %d: without %.2fs (cpu %.2fs), with dashboard %.2fs (cpu %.2fs)\n", i+1,
			plain[i].wall.Seconds(), plain[i].cpu.Seconds(), withTUI[i].wall.Seconds(), withTUI[i].cpu.Seconds())
	}
	pw, tw := medianWall(plain), medianWall(withTUI)
	pc, tc := medianCPU(plain), medianCPU(withTUI)
	fmt.Printf("median events/s: without %.0f, with dashboard %.0f: ratio %.2f (target >= 0.9)\n",
		float64(events)/pw.Seconds(), float64(events)/tw.Seconds(), pw.Seconds()/tw.Seconds())
	fmt.Printf("dashboard CPU: %.2fs extra over %.2fs = %.0f%% of one core (target < 25%%)\n",
		(tc - pc).Seconds(), tw.Seconds(), 100*(tc-pc).Seconds()/tw.Seconds())
	return nil
}

type result struct{ wall, cpu time.Duration }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// replay runs the trace through a fresh session, with or without the dashboard.
func replay(path string, withTUI bool) (result, error) {
	var notes *tui.NoteBuffer
	var listeners []func(reflector.Note)
	if withTUI {
		notes = tui.NewNoteBuffer(8192)
		listeners = append(listeners, notes.Push)
	}
	sess, err := session.NewReplay(path, 0)
	if err != nil {
		return result{}, err
	}
	res := sess.Resources[0]
	for _, f := range listeners {
		res.OnNote(f)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	uiDone := make(chan error, 1)
	if withTUI {
		in, inW := io.Pipe()
		defer inW.Close()
		go func() {
			uiDone <- tui.Run(ctx, tui.Options{Replay: true, Trace: path, Now: sess.Now, Player: sess.Replay.Player()},
				[]tui.Resource{{Target: res.Target(), Feed: tui.Feed{Stats: res.Reflector.Stats, Store: res.Store(), Notes: notes}}}, in, io.Discard)
		}()
	}
	cpu0, start := cpuTime(), time.Now()
	err = sess.Run(ctx)
	wall, cpu := time.Since(start), cpuTime()-cpu0
	cancel()
	if withTUI {
		<-uiDone
	}
	if err != nil {
		return result{}, err
	}
	if n := res.Reflector.Stats().Counters.Modified; n == 0 {
		return result{}, fmt.Errorf("the replay applied no events")
	}
	return result{wall: wall, cpu: cpu}, nil
}

func medianWall(rs []result) time.Duration {
	ds := make([]time.Duration, len(rs))
	for i, r := range rs {
		ds[i] = r.wall
	}
	return median(ds)
}

func medianCPU(rs []result) time.Duration {
	ds := make([]time.Duration, len(rs))
	for i, r := range rs {
		ds[i] = r.cpu
	}
	return median(ds)
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

// writeTrace writes tracegen's steady-churn trace: a list of the objects,
// then one watch with events MODIFIED events cycling over them, a line every µs.
func writeTrace(path string, events, objects int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := tracegen.WriteModified(f, tracegen.Modified{Tool: "tui-bench", Start: 2000, Step: 1000, Objects: objects, Events: events}); err != nil {
		return 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
