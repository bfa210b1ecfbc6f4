package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/tracegen"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// deliveryConfig is a generated trace of two resources whose events carry
// the passive lag estimate, in every lag bucket and changing over the run,
// and whose first resource carries the probe's samples.
func deliveryConfig(events int) tracegen.Config {
	return tracegen.Config{Resources: 2, Objects: 30, PageSize: 10, Events: events, EventsPerWatch: 200, BookmarkEvery: 40, GoneEvery: 3, Missed: 2,
		Step: 20 * time.Millisecond,
		// Mostly under 2 s; the second half of the run gets later, and
		// every 97th event is over a minute late.
		Lag: func(k int) time.Duration {
			switch {
			case k%97 == 0:
				return 75 * time.Second
			case k > events/2:
				return time.Duration(k%5)*4*time.Second + 500*time.Millisecond
			}
			return time.Duration(k%3) * 500 * time.Millisecond
		},
		ProbeEvery: 25,
		Probe: func(n int) (time.Duration, time.Duration) {
			return 4 * time.Millisecond, time.Duration(30+(n*37)%200) * time.Millisecond
		},
	}
}

// plotPaths are the paths of class class in the chart of class chart of
// resource i's timeline, and the chart.
func plotPaths(doc *html.Node, i int, chart, class string) ([]*html.Node, *html.Node) {
	var plot *html.Node
	for _, sec := range elements(doc, func(n *html.Node) bool { return n.Data == "section" && attr(n, "id") == resourceAnchor(i) }) {
		for _, p := range elements(sec, func(n *html.Node) bool { return n.Data == "svg" && hasClass(n, "plot") && hasClass(n, chart) }) {
			plot = p
		}
	}
	if plot == nil {
		return nil, nil
	}
	return elements(plot, func(n *html.Node) bool { return n.Data == "path" && hasClass(n, class) }), plot
}

// cellBuckets counts the time buckets the lag chart's cells of paths cover
// (each cell "Mx0 yHx1v…": a run of buckets of width ms).
func cellBuckets(t *testing.T, paths []*html.Node, width time.Duration) int {
	t.Helper()
	n := 0
	for _, p := range paths {
		for _, c := range strings.Split(attr(p, "d"), "M")[1:] {
			var x0, x1, y float64
			var h int
			if _, err := fmt.Sscanf(c, "%f %fH%fv%dH", &x0, &y, &x1, &h); err != nil {
				t.Fatalf("cell %q: %v", c, err)
			}
			n += int((x1-x0)/(float64(width)/float64(time.Millisecond)) + 0.5)
		}
	}
	return n
}

// segments counts the subpaths (M commands) of paths.
func segments(paths []*html.Node) int {
	n := 0
	for _, p := range paths {
		n += strings.Count(attr(p, "d"), "M")
	}
	return n
}

func TestTheLatencyPlotShowsTheReplaysLagAndProbeInItsBuckets(t *testing.T) {
	cfg := deliveryConfig(4000)
	path := generate(t, cfg)
	var want reflector.LagCounts
	for k := range cfg.Events {
		want[reflector.LagBucketOf(cfg.Lag(k))]++
	}
	sums := replaySummaries(t, path)
	for _, maxBuckets := range []int{16, 1024} {
		t.Run(fmt.Sprintf("%d buckets", maxBuckets), func(t *testing.T) {
			rep := analyzeFile(t, path, Options{MaxBuckets: maxBuckets})
			for i, res := range rep.Resources {
				var sum reflector.LagCounts
				probes, top := 0, time.Duration(0)
				for _, b := range res.Buckets {
					for k, v := range b.Lag {
						sum[k] += v
					}
					probes += b.ProbeN
					if b.ProbeN > 0 {
						top = max(top, b.ProbeMax)
					}
				}
				if res.Lag != want || sum != want || sums[i].Delivery.Lag.Counts() != want {
					t.Errorf("%s: lag %v, its buckets add up to %v, the replay's summary says %v; want %v", res.Name, res.Lag, sum, sums[i].Delivery.Lag.Counts(), want)
				}
				if i != 0 {
					if res.Probe != nil || probes != 0 {
						t.Errorf("%s: probe %+v and %d samples, want none: the probe's lines name resource 0", res.Name, res.Probe, probes)
					}
					continue
				}
				p, sp := res.Probe, sums[i].Delivery.Probe
				if p == nil || sp == nil {
					t.Fatalf("%s: probe %+v, summary's %+v; want the probe's figures", res.Name, p, sp)
				}
				if p.Count != sp.Count || p.P50.Seconds() != sp.P50 || p.P99.Seconds() != sp.P99 || p.Max.Seconds() != sp.Max || probes != p.Count || top != p.Max {
					t.Errorf("probe figures %+v with %d samples in the buckets (slowest %s), want the replay's summary %+v", *p, probes, top, *sp)
				}
			}
			_, doc := render(t, path, Options{MaxBuckets: maxBuckets})
			for i, res := range rep.Resources {
				// One cell per time bucket and lag bucket with events.
				for k := range reflector.LagBucketCount {
					cells := 0
					for _, b := range res.Buckets {
						if b.Lag[k] > 0 {
							cells++
						}
					}
					paths, plot := plotPaths(doc, i, "c-lag", fmt.Sprintf("lag-%d", k))
					if got := cellBuckets(t, paths, res.BucketWidth); plot == nil || got != cells || cells == 0 {
						t.Errorf("%s: lag bucket %s has cells over %d time buckets, want %d (those with such events)", res.Name, reflector.LagBucketName(k), got, cells)
					}
				}
				if p99, _ := plotPaths(doc, i, "c-lag", "lag-p99"); len(p99) != 1 {
					t.Errorf("%s: %d p99 lines in the lag chart, want 1", res.Name, len(p99))
				}
				dots, plot := plotPaths(doc, i, "c-probe", "p-dots")
				if i != 0 {
					if plot != nil {
						t.Errorf("%s: a probe chart on a resource the probe does not watch", res.Name)
					}
					continue
				}
				points := 0
				for _, b := range res.Buckets {
					if b.ProbeN > 0 {
						points++
					}
				}
				if segments(dots) != points || points == 0 || points > maxBuckets {
					t.Errorf("%s: %d probe points drawn, want %d: one per bucket with samples, at most %d", res.Name, segments(dots), points, maxBuckets)
				}
				for _, class := range []string{"p-p50", "p-p99"} {
					if ps, _ := plotPaths(doc, i, "c-probe", class); len(ps) != 1 {
						t.Errorf("%s: %d %s lines, want 1", res.Name, len(ps), class)
					}
				}
			}
			body := text(doc)
			p := rep.Resources[0].Probe
			for _, s := range []string{"±2 s", "event lag", fmt.Sprintf("p50 %s, p99 %s", format.Duration(p.P50), format.Duration(p.P99)), "(p99 in >60s)"} {
				if !strings.Contains(body, s) {
					t.Errorf("the page does not say %q", s)
				}
			}
		})
	}
}

func TestOnlyAResourceWithDeliveryDataHasALatencyPlot(t *testing.T) {
	without := 0
	for _, path := range bundledTraces(t) {
		raw, doc := render(t, path, Options{})
		any := false
		for i, res := range analyzeFile(t, path, Options{}).Resources {
			lag, probe := res.Lag.Total() > 0, res.Probe != nil
			any = any || lag || probe
			if _, plot := plotPaths(doc, i, "c-lag", "lag"); (plot != nil) != lag {
				t.Errorf("%s: resource %d: lag chart %v, its events' lag buckets %v", filepath.Base(path), i, plot != nil, res.Lag)
			}
			if _, plot := plotPaths(doc, i, "c-probe", "p-dots"); (plot != nil) != probe {
				t.Errorf("%s: resource %d: probe chart %v, probe %+v", filepath.Base(path), i, plot != nil, res.Probe)
			}
		}
		if !any {
			without++
			if strings.Contains(string(raw), `"probeN"`) || strings.Contains(string(raw), `"lag"`) {
				t.Errorf("%s: the page's data has delivery series without delivery data", filepath.Base(path))
			}
		}
	}
	if without == 0 {
		t.Error("every bundled trace has delivery data: none checks a report without")
	}
}

func TestTheLatencyPlotStaysBoundedWithManyEventsAndSamples(t *testing.T) {
	// 10,000 events and 400 probe samples in 64 buckets: the lag chart has
	// at most one cell per time bucket and lag bucket in at most 21 paths,
	// the probe chart one point per bucket, and the page grows by a bounded
	// amount over the same trace without delivery data.
	opts := Options{MaxBuckets: 64}
	cfg := deliveryConfig(10000)
	path := generate(t, cfg)
	raw, doc := render(t, path, opts)
	for i := range 2 {
		var lag []*html.Node
		for k := range reflector.LagBucketCount {
			ps, _ := plotPaths(doc, i, "c-lag", fmt.Sprintf("lag-%d", k))
			lag = append(lag, ps...)
		}
		if len(lag) > 20 || segments(lag) > 5*64 || segments(lag) == 0 {
			t.Errorf("resource %d: the lag chart has %d paths of %d cells, want at most 20 of 320", i, len(lag), segments(lag))
		}
		t.Logf("resource %d: %d lag cells", i, segments(lag))
	}
	if dots, _ := plotPaths(doc, 0, "c-probe", "p-dots"); segments(dots) > 64 || segments(dots) == 0 {
		t.Errorf("%d probe points drawn for 400 samples in 64 buckets, want at most 64", segments(dots))
	}
	cfg.Lag, cfg.ProbeEvery = nil, 0
	plain, _ := render(t, generate(t, cfg), opts)
	extra := len(raw) - len(plain)
	t.Logf("the delivery charts add %d bytes", extra)
	if extra > 24<<10 || extra <= 0 {
		t.Errorf("the delivery charts of 10,000 events and 400 samples in 64 buckets add %d bytes, want at most 24 KiB", extra)
	}
}

// TestTheProbeLinesOfAnotherResourceGoToIt checks a probe whose lines name
// the second resource (its Lease's watch) is drawn there: the report takes
// the resource from the trace's probe lines.
func TestTheProbeLinesOfAnotherResourceGoToIt(t *testing.T) {
	path := generate(t, deliveryConfig(600))
	moved := filepath.Join(t.TempDir(), "moved.jsonl")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	from, to := `{"k":"`+trace.KindProbe+`","r":0,`, `{"k":"`+trace.KindProbe+`","r":1,`
	if strings.Count(string(raw), from) != 24 {
		t.Fatalf("the generated trace has %d probe lines of resource 0, want 24", strings.Count(string(raw), from))
	}
	if err := os.WriteFile(moved, []byte(strings.ReplaceAll(string(raw), from, to)), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := analyzeFile(t, moved, Options{})
	if rep.Resources[0].Probe != nil || rep.Resources[1].Probe == nil || rep.Resources[1].Probe.Count != 24 {
		t.Errorf("probe of resource 0 %+v, of resource 1 %+v; want the 24 samples on resource 1", rep.Resources[0].Probe, rep.Resources[1].Probe)
	}
}

// TestAReplayCountsTheProbesLostRenewals turns two of a generated trace's
// probe lines into lost renewals (a resourceVersion and a detail, no
// write or event): the replay's summary counts them lost and keeps them
// out of the samples.
func TestAReplayCountsTheProbesLostRenewals(t *testing.T) {
	path := generate(t, deliveryConfig(600))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	lost := 0
	for i, l := range lines {
		if lost == 2 || !strings.HasPrefix(l, `{"k":"`+trace.KindProbe+`",`) {
			continue
		}
		var line trace.Line
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatal(err)
		}
		line.Write, line.Event, line.Detail = nil, nil, "renewal lost: no watch event within 1m0s"
		b, err := json.Marshal(&line)
		if err != nil {
			t.Fatal(err)
		}
		lines[i] = string(b)
		lost++
	}
	if lost != 2 {
		t.Fatalf("%d probe lines in the generated trace, want at least 2", lost)
	}
	edited := filepath.Join(t.TempDir(), "lost.jsonl")
	if err := os.WriteFile(edited, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, s := range replaySummaries(t, edited) {
		if p := s.Delivery.Probe; p == nil || p.Lost != 2 || p.Count != 22 {
			t.Errorf("%s: probe %+v, want 22 samples and 2 lost", s.Resource, p)
		}
	}
}
