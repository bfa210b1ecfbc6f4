// Command metrics-bench measures what the findings engine, --metrics-address
// and --fail-on cost the reflector: it writes a trace of N watch events
// (default 1,000,000), replays it as fast as possible four ways, alternating,
// in one process: plain, without the findings engine; with it (as every run
// has it); with it and the metrics endpoint attached and scraped over HTTP
// every second by a goroutine; and with those plus alert rules evaluated on
// the replay's clock. It prints, per variant, the median wall time and CPU
// time (the process's, so the scraper and the HTTP server count too) and the
// median of each repetition's ratio to the plain replay next to it: events/s
// (wall) and events per CPU second. Target: at least 0.95 with metrics. On a
// shared machine the CPU ratio is the steadier of the two.
//
//	go run ./hack/metrics-bench -events 1000000 -reps 5
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"syscall"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/alert"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/tracegen"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

func main() {
	events := flag.Int("events", 1_000_000, "watch events in the generated trace")
	objects := flag.Int("objects", 1000, "objects the events cycle over")
	reps := flag.Int("reps", 5, "repetitions of each variant")
	flag.Parse()
	if err := run(*events, *objects, *reps); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

// variant is one way of replaying.
type variant struct {
	name                     string
	findings, metrics, rules bool
}

func run(events, objects, reps int) error {
	dir, err := os.MkdirTemp("", "metrics-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "events.jsonl")
	size, err := writeTrace(path, events, objects)
	if err != nil {
		return err
	}
	fmt.Printf("trace: %d events over %d objects, %.1f MB; %d CPUs\n", events, objects, float64(size)/1e6, runtime.NumCPU())
	variants := []variant{{"plain, no findings", false, false, false}, {"findings", true, false, false},
		{"findings, metrics scraped every second", true, true, false}, {"findings, metrics and 3 rules", true, true, true}}
	walls := make([][]time.Duration, len(variants))
	cpus := make([][]time.Duration, len(variants))
	wallRatios := make([][]float64, len(variants))
	cpuRatios := make([][]float64, len(variants))
	for i := 0; i < reps; i++ {
		line := fmt.Sprintf("rep %d:", i+1)
		for v, va := range variants {
			runtime.GC()
			r, err := replay(path, va)
			if err != nil {
				return err
			}
			walls[v], cpus[v] = append(walls[v], r.wall), append(cpus[v], r.cpu)
			wallRatios[v] = append(wallRatios[v], walls[0][i].Seconds()/r.wall.Seconds())
			cpuRatios[v] = append(cpuRatios[v], cpus[0][i].Seconds()/r.cpu.Seconds())
			line += fmt.Sprintf(" %s %.2fs cpu %.2fs (%d scrapes);", va.name, r.wall.Seconds(), r.cpu.Seconds(), r.scrapes)
		}
		fmt.Println(line)
	}
	for v, va := range variants {
		w, c := median(walls[v]), median(cpus[v])
		fmt.Printf("%-40s wall %6.2fs %8.0f events/s ratio %.3f | cpu %6.2fs %8.0f events/cpu-s ratio %.3f\n", va.name+":",
			w.Seconds(), float64(events)/w.Seconds(), medianFloat(wallRatios[v]), c.Seconds(), float64(events)/c.Seconds(), medianFloat(cpuRatios[v]))
	}
	return nil
}

func medianFloat(fs []float64) float64 {
	s := append([]float64(nil), fs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// cpuTime is the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type result struct {
	wall, cpu time.Duration
	scrapes   int
}

// replay runs the trace through a fresh session, as the CLI wires it.
func replay(path string, va variant) (result, error) {
	var mres *metrics.Set
	var ares *alert.Subject // evaluated on the replay's clock, as the CLI does
	var listeners []func(reflector.Note)
	if va.metrics {
		listeners = append(listeners, func(n reflector.Note) { mres.Note(n) })
	}
	sess, err := session.NewReplay(path, 0)
	if err != nil {
		return result{}, err
	}
	res := sess.Resources[0]
	if !va.findings {
		res.DropFindings() // a nil engine observes nothing
	}
	for _, f := range listeners {
		res.OnNote(f)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scraped := make(chan int, 1)
	if va.metrics {
		m := metrics.New(false)
		if mres, err = m.Add(metrics.Labels{Resource: "configmaps.v1", Namespace: "bench"}); err != nil {
			return result{}, err
		}
		mres.Attach(metrics.Source{Stats: res.Reflector.Stats, Store: res.Store().Counters, Now: sess.Now})
		srv, err := metrics.Serve("127.0.0.1:0", m)
		if err != nil {
			return result{}, err
		}
		defer srv.Close()
		go func() { scraped <- scrapeEverySecond(ctx, srv.URL()) }()
	} else {
		scraped <- 0
	}
	if va.rules {
		rules, err := alert.ParseAll([]string{"relists>0", "bookmark-age>1h", "no-progress>1h"})
		if err != nil {
			return result{}, err
		}
		mon := alert.NewMonitor(rules, nil)
		ares = mon.Add("configmaps.v1 in namespace bench")
		ares.Attach(res.Reflector.Stats)
		sess.Replay.OnClockAdvance(ares.ClockAdvanced)
	}
	cpu0, start := cpuTime(), time.Now()
	err = sess.Run(ctx)
	wall := time.Since(start)
	cancel()
	n := <-scraped
	cpu := cpuTime() - cpu0
	if err != nil {
		return result{}, err
	}
	if got := res.Reflector.Stats().Counters.Modified; got == 0 {
		return result{}, fmt.Errorf("the replay applied no events")
	}
	return result{wall: wall, cpu: cpu, scrapes: n}, nil
}

// scrapeEverySecond GETs url every second until ctx ends, as Prometheus
// would, and returns how many scrapes it made.
func scrapeEverySecond(ctx context.Context, url string) int {
	n := 0
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return n
		case <-t.C:
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			n++
		}
	}
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// writeTrace writes tracegen's steady-churn trace (as hack/tui-bench does):
// a list of the objects, then one watch whose MODIFIED events cycle over
// them, one line every 10µs of recorded time, so that a million events span
// 10s of the replay's clock and the rules are evaluated ten times.
func writeTrace(path string, events, objects int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := tracegen.WriteModified(f, tracegen.Modified{Tool: "metrics-bench", Namespace: "bench", Start: 10_000, Step: 10_000, Objects: objects, Events: events}); err != nil {
		return 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
