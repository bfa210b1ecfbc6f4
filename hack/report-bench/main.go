// Command report-bench measures `kubectl watchcache report` against
// `kubectl watchcache replay --speed 0` on the same generated trace, side by
// side in one run: it writes a trace of N watch events (default 1,000,000:
// an initial list, watches the server closes, bookmarks, 410s with relists
// that find missed changes), then alternates a replay (session.NewReplay at
// speed 0, the replay command without its output) and a report (read,
// replay and lay out, write the HTML to a file), and prints the medians, the
// speed ratio (the report is the replay plus its layout and page: target at
// least 0.9x the replay's speed, a report taking at most 1.1x as long), the report's
// size (target: under 5 MB) and whether both counted the same, resource by
// resource. -resources N spreads the events over N resources of one trace
// (format version 2, their lines interleaved).
//
//	go run ./hack/report-bench -events 1000000 -reps 3
//	go run ./hack/report-bench -events 1000000 -resources 3 -reps 1
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/report"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/tracegen"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

func main() {
	events := flag.Int("events", 1_000_000, "watch events in the generated trace")
	objects := flag.Int("objects", 1000, "objects listed at the start")
	reps := flag.Int("reps", 3, "repetitions of each variant")
	keep := flag.String("keep", "", "keep the report of the last repetition at this path")
	resources := flag.Int("resources", 1, "resources in the trace, the events spread over them")
	flag.Parse()
	if err := run(*events, *objects, *resources, *reps, *keep); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(events, objects, resources, reps int, keep string) error {
	dir, err := os.MkdirTemp("", "report-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "events.jsonl")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	resources = max(resources, 1)
	perResource := max(events/resources, 1)
	st, err := tracegen.Write(f, tracegen.Config{Resources: resources, Objects: objects, PageSize: 500, Events: perResource, EventsPerWatch: max(perResource/20, 1),
		BookmarkEvery: 1000, GoneEvery: 5, Missed: 20})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	fmt.Printf("trace: %d resources, %d events, %d requests, %d relists, %d lines, %.1f MB\n", resources, st.Events, st.Requests, st.Relists, st.Lines, float64(fi.Size())/1e6)
	out := filepath.Join(dir, "report.html")
	var replays, reports []time.Duration
	var size int64
	for i := 0; i < reps; i++ {
		runtime.GC()
		d, want, err := replay(path)
		if err != nil {
			return err
		}
		replays = append(replays, d)
		runtime.GC()
		r, got, err := writeReport(path, out)
		if err != nil {
			return err
		}
		reports = append(reports, r)
		if len(got) != len(want) {
			return fmt.Errorf("the report has %d resources, the replay %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				return fmt.Errorf("resource %d: the report counted %+v, the replay %+v", i, got[i], want[i])
			}
		}
		fi, err := os.Stat(out)
		if err != nil {
			return err
		}
		size = fi.Size()
		fmt.Printf("rep %d: replay %.2fs, report %.2fs\n", i+1, d.Seconds(), r.Seconds())
	}
	rp, rr := median(replays), median(reports)
	ratio := rp.Seconds() / rr.Seconds()
	fmt.Printf("median: replay --speed 0 %.2fs (%.0f events/s), report %.2fs (%.0f events/s)\n",
		rp.Seconds(), float64(st.Events)/rp.Seconds(), rr.Seconds(), float64(st.Events)/rr.Seconds())
	fmt.Printf("report speed / replay speed: %.2f (target >= 0.9): %s\n", ratio, verdict(ratio >= 0.9))
	fmt.Printf("report size: %.2f MB (target < 5 MB): %s\n", float64(size)/1e6, verdict(size < 5e6))
	fmt.Println("counters: the report's equal the replay's")
	if keep != "" {
		if err := os.Rename(out, keep); err != nil {
			return fmt.Errorf("keeping the report: %w", err)
		}
	}
	if ratio < 0.9 || size >= 5e6 {
		return errors.New("a target was missed")
	}
	return nil
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// replay is `replay --speed 0` without its output: the session the command
// runs. It returns each resource's counters.
func replay(path string) (time.Duration, []reflector.Counters, error) {
	start := time.Now()
	sess, err := session.NewReplay(path, 0)
	if err != nil {
		return 0, nil, err
	}
	if err := sess.Run(context.Background()); err != nil {
		return 0, nil, err
	}
	d := time.Since(start)
	var out []reflector.Counters
	for _, s := range sess.Summaries() {
		out = append(out, s.Counters)
	}
	return d, out, nil
}

// writeReport is `report -o out`: replay and lay out, write. It returns each resource's counters.
func writeReport(path, out string) (time.Duration, []reflector.Counters, error) {
	start := time.Now()
	rd, err := trace.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer rd.Close()
	rep, err := report.Analyze(context.Background(), rd, report.Options{Name: filepath.Base(path)})
	if err != nil {
		return 0, nil, err
	}
	f, err := os.Create(out)
	if err != nil {
		return 0, nil, err
	}
	if err := rep.WriteHTML(f); err != nil {
		_ = f.Close()
		return 0, nil, err
	}
	if err := f.Close(); err != nil {
		return 0, nil, err
	}
	d := time.Since(start)
	var counters []reflector.Counters
	for _, r := range rep.Resources {
		counters = append(counters, r.Counters)
	}
	return d, counters, nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
