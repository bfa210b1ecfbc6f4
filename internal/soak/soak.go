// Package soak runs the reflector for a long time against a real
// kube-apiserver under continuous churn, with apiserver restarts and etcd
// compactions, and reports whether it stayed correct and did not leak: the
// cache equals a LIST at the end, every 410 was followed by a relist, and
// goroutines and live heap came back to where they were after the first
// minute. The test in this package runs it for about three minutes in CI;
// hack/soak runs it for as long as asked.
package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// Options shape a soak run; zero values get the defaults in parentheses.
type Options struct {
	// Duration of the churn (3m).
	Duration time.Duration
	// Rate of writes a second (50).
	Rate float64
	// RestartEvery restarts kube-apiserver this often (45s).
	RestartEvery time.Duration
	// CompactEvery compacts etcd this often (30s).
	CompactEvery time.Duration
	// Baseline is when goroutines and live heap are first sampled (1m).
	Baseline time.Duration
	// Log receives progress lines (nil: none).
	Log io.Writer
	// Monitor, when set, runs the plugin's monitor mode beside the
	// reflector, recording a rotating trace (see Monitor).
	Monitor *Monitor
}

func (o Options) withDefaults() Options {
	if o.Duration == 0 {
		o.Duration = 3 * time.Minute
	}
	if o.Rate == 0 {
		o.Rate = 50
	}
	if o.RestartEvery == 0 {
		o.RestartEvery = 45 * time.Second
	}
	if o.CompactEvery == 0 {
		o.CompactEvery = 30 * time.Second
	}
	if o.Baseline == 0 {
		o.Baseline = time.Minute
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// Sample is the process's goroutines and live heap (after a GC) at one moment.
type Sample struct {
	At         time.Duration
	Goroutines int
	HeapBytes  uint64
}

// Report is what a soak run found.
type Report struct {
	Duration   time.Duration
	Churn      testcluster.ChurnStats
	Restarts   int
	Compacts   int
	Counters   reflector.Counters
	Objects    int
	Baseline   Sample
	End        Sample
	Audit      *reflector.AuditReport
	Problems   []string
	ReflectErr error
	// Monitor is what the monitor process did (nil without Options.Monitor).
	Monitor *MonitorReport
}

// OK reports whether the run found no problem.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// String is the report in a few lines, for logs and hack/soak.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "soak of %s: churn %s; %d apiserver restarts, %d etcd compactions\n", r.Duration.Round(time.Second), r.Churn, r.Restarts, r.Compacts)
	c := r.Counters
	fmt.Fprintf(&b, "reflector: %d objects; %d lists (%d relists), %d watches, %d 410s, %d backoffs, %d watch errors; events %d added, %d modified, %d deleted; %d bookmarks\n",
		r.Objects, c.Lists, c.Relists, c.Watches, c.Gone, c.Backoffs, c.WatchErrors, c.Added, c.Modified, c.Deleted, c.Bookmarks)
	if r.Audit != nil {
		fmt.Fprintf(&b, "audit: %s\n", r.Audit)
	}
	fmt.Fprintf(&b, "goroutines: %d at %s, %d at the end (%+d)\n", r.Baseline.Goroutines, r.Baseline.At.Round(time.Second), r.End.Goroutines, r.End.Goroutines-r.Baseline.Goroutines)
	fmt.Fprintf(&b, "live heap after GC: %.1f MiB at %s, %.1f MiB at the end (%.2fx)\n", format.MiB(r.Baseline.HeapBytes), r.Baseline.At.Round(time.Second), format.MiB(r.End.HeapBytes), r.HeapRatio())
	if r.Monitor != nil {
		b.WriteString(r.Monitor.String())
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "PROBLEM: %s\n", p)
	}
	return b.String()
}

// HeapRatio is the live heap at the end over the baseline's.
func (r *Report) HeapRatio() float64 {
	return ratio(float64(r.End.HeapBytes), float64(r.Baseline.HeapBytes))
}

// sample takes a Sample after a GC.
func sample(start time.Time) Sample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return Sample{At: time.Since(start), Goroutines: runtime.NumGoroutine(), HeapBytes: ms.HeapAlloc}
}

// goneFollowedByRelist checks the decision order: every 410 is followed by
// a completed list before the end. Another 410 may come first (a relist's
// next page can get one too): one completed list answers all before it.
type goneFollowedByRelist struct {
	mu      sync.Mutex
	pending int // 410s not yet followed by a complete list
}

func (g *goneFollowedByRelist) note(n reflector.Note) {
	if n.Decision == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch n.Decision.Reason {
	case reflector.ReasonGone, reflector.ReasonContinueGone:
		g.pending++
	case reflector.ReasonListComplete:
		g.pending = 0
	}
}

// lastBackoffs keeps the reflector's last few backoff waits, for a report
// whose audit drifted: what the reflector was waiting for at the end.
type lastBackoffs struct {
	mu    sync.Mutex
	start time.Time
	waits []string
}

// keptBackoffs is how many backoff waits a report names.
const keptBackoffs = 4

func (b *lastBackoffs) note(n reflector.Note) {
	d := n.Decision
	if d == nil || d.Reason != reflector.ReasonBackoff {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	w := fmt.Sprintf("at %s: %s", n.At.Sub(b.start).Round(time.Millisecond), d)
	if len(b.waits) == keptBackoffs {
		b.waits = b.waits[1:]
	}
	b.waits = append(b.waits, w)
}

// String names the waits kept, oldest first.
func (b *lastBackoffs) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waits) == 0 {
		return "no backoff"
	}
	return "the last backoffs: " + strings.Join(b.waits, "; ")
}

// giveUpAfter is the reflector's: a restart under churn on a loaded machine
// can leave no progress for over 30 s, the CLI's default without a
// dashboard, and the soak is about correctness through it.
const giveUpAfter = 2 * time.Minute

var configMaps = reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}

// Run soaks the reflector on c (kube-apiserver is restarted and etcd
// compacted: give it a cluster of its own).
func Run(ctx context.Context, c *testcluster.Cluster, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		return nil, fmt.Errorf("clientset: %w", err)
	}
	ns := fmt.Sprintf("soak-%d", time.Now().UnixNano()%1e6)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating namespace: %w", err)
	}
	target := reflector.Target{Resource: configMaps, Namespace: ns}
	src, err := live.NewSource(c.Config(), target, live.Options{})
	if err != nil {
		return nil, err
	}
	order := &goneFollowedByRelist{}
	start := time.Now()
	backoffs := &lastBackoffs{start: start}
	onNote := func(n reflector.Note) {
		order.note(n)
		backoffs.note(n)
	}
	st, w := store.New()
	r, err := reflector.New(reflector.Config{Source: src, Strategy: reflector.StrategyAuto, PageSize: 50, GiveUpAfter: giveUpAfter, OnNote: onNote}, w, st)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	runCtx, stopReflector := context.WithCancel(ctx)
	defer stopReflector()
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	if err := st.WaitUntilReady(ctx); err != nil {
		return nil, fmt.Errorf("waiting for the first list: %w", err)
	}
	var mon *monitorRun
	if opts.Monitor != nil {
		if mon, err = startMonitor(ctx, c, *opts.Monitor, ns); err != nil {
			return nil, err
		}
		defer mon.abort() // a no-op once it stopped
		rep.Monitor = &MonitorReport{}
	}
	sampleMonitor := func(at time.Duration) *MonitorSample {
		if mon == nil {
			return nil
		}
		s, err := mon.sample(ctx, at)
		if err != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("sampling the monitor at %s: %v", at.Round(time.Second), err))
			return nil
		}
		return &s
	}
	churn, err := testcluster.StartChurn(c.Config(), testcluster.ChurnOptions{Namespace: ns, Names: 200, Rate: opts.Rate})
	if err != nil {
		return nil, err
	}
	defer churn.Stop() // a no-op once stopped
	restart := time.NewTicker(opts.RestartEvery)
	defer restart.Stop()
	// Compactions run on their own schedule: a restart that takes a while
	// (the apiserver's start under churn can take 20 s on a busy machine)
	// would otherwise swallow the compaction ticks due while it runs.
	compacting, stopCompacting := context.WithCancel(ctx)
	compactions := compactEvery(compacting, c, opts.CompactEvery)
	defer func() {
		stopCompacting()
		for range compactions {
		}
	}()
	minute := time.NewTicker(time.Minute)
	defer minute.Stop()
	baseline := time.After(opts.Baseline)
	end := time.After(opts.Duration)
	fmt.Fprintf(opts.Log, "soak: %s of churn at %.0f writes/s in %s, a restart every %s, a compaction every %s\n", opts.Duration, opts.Rate, ns, opts.RestartEvery, opts.CompactEvery)
loop:
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case err := <-done:
			rep.ReflectErr = fmt.Errorf("the reflector stopped: %w", err)
			if err == nil {
				rep.ReflectErr = errors.New("the reflector stopped by itself")
			}
			rep.Problems = append(rep.Problems, rep.ReflectErr.Error())
			break loop
		case <-restart.C:
			// Every other restart has etcd compacted past the watch's
			// resourceVersion in the gap: the watch must get 410 and relist.
			withCompaction := rep.Restarts%2 == 1
			if err := restartAPIServer(ctx, c, withCompaction); err != nil {
				return nil, err
			}
			rep.Restarts++
			fmt.Fprintf(opts.Log, "soak %s: apiserver restarted (etcd compacted in the gap: %t); %s\n", time.Since(start).Round(time.Second), withCompaction, r.Stats().State)
		case err := <-compactions:
			if err != nil {
				return nil, err
			}
			rep.Compacts++
		case <-baseline:
			rep.Baseline = sample(start)
			if m := sampleMonitor(rep.Baseline.At); m != nil {
				rep.Monitor.Baseline = *m
			}
		case <-minute.C:
			s := sample(start)
			fmt.Fprintf(opts.Log, "soak %s: %d goroutines, %.1f MiB live heap, %d objects, %s\n", s.At.Round(time.Second), s.Goroutines, format.MiB(s.HeapBytes), st.Len(), r.Stats().State)
			if m := sampleMonitor(s.At); m != nil {
				fmt.Fprintf(opts.Log, "soak %s: the monitor: %.0f goroutines, %.1f MiB resident, %.1f MiB heap in use, GC goal %.1f MiB, %s of trace on disk\n", m.At.Round(time.Second), m.Goroutines, m.RSSBytes/(1<<20), m.HeapBytes/(1<<20), m.HeapGoal/(1<<20), format.Bytes(m.DiskBytes))
			}
		case <-end:
			break loop
		}
	}
	// The end sample is taken as the baseline was: churn still running.
	rep.End = sample(start)
	if m := sampleMonitor(rep.End.At); m != nil {
		rep.Monitor.End = *m
	}
	rep.Churn = churn.Stop()
	rep.Duration = time.Since(start)
	if rep.ReflectErr == nil {
		audit, err := r.Audit(ctx, 30*time.Second)
		if err != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("audit: %v", err))
		} else {
			rep.Audit = audit
			if audit.Drift() {
				// What the reflector was doing then says whether it was
				// still on its way back (a restart just before the end)
				// or stuck.
				stats := r.Stats()
				rep.Problems = append(rep.Problems, fmt.Sprintf("the cache differs from a LIST: %s; at %s the reflector was %s since %s at resourceVersion %s; %s",
					audit, time.Since(start).Round(time.Millisecond), stats.State, stats.StateSince.Sub(start).Round(time.Millisecond), stats.ResourceVersion, backoffs))
			}
		}
	}
	if mon != nil {
		want, err := mon.settle(ctx, cs, ns)
		if err != nil {
			rep.Problems = append(rep.Problems, err.Error())
		}
		mon.stop(ctx, rep.Monitor, want)
		rep.Problems = append(rep.Problems, rep.Monitor.problems()...)
	}
	stopReflector()
	if rep.ReflectErr == nil {
		if err := <-done; err != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("the reflector failed: %v", err))
		}
	}
	stats := r.Stats()
	rep.Counters, rep.Objects = stats.Counters, st.Len()
	order.mu.Lock()
	if order.pending > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%d 410s were not followed by a relist", order.pending))
	}
	order.mu.Unlock()
	if rep.Counters.Relists < rep.Counters.Gone {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%d 410s but only %d relists", rep.Counters.Gone, rep.Counters.Relists))
	}
	if rep.Restarts > 0 && rep.Counters.Watches <= 1 {
		rep.Problems = append(rep.Problems, "the watch never restarted although the apiserver did")
	}
	if rep.Baseline.Goroutines > 0 {
		if d := rep.End.Goroutines - rep.Baseline.Goroutines; d > 5 || d < -5 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("goroutines went from %d to %d", rep.Baseline.Goroutines, rep.End.Goroutines))
		}
		if rep.HeapRatio() > 1.2 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("live heap grew %.2fx (%.1f → %.1f MiB)", rep.HeapRatio(), format.MiB(rep.Baseline.HeapBytes), format.MiB(rep.End.HeapBytes)))
		}
	}
	return rep, nil
}

// compactEvery compacts etcd every d until ctx ends, and sends on the
// returned channel a nil for each compaction done, or the error that stopped
// it. The channel is closed when it stops.
func compactEvery(ctx context.Context, c *testcluster.Cluster, d time.Duration) <-chan error {
	out := make(chan error)
	go func() {
		defer close(out)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			_, err := c.Compact(ctx)
			if ctx.Err() != nil {
				return
			}
			select {
			case out <- err:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return out
}

// restartAPIServer restarts kube-apiserver, compacting etcd while it is down when asked.
func restartAPIServer(ctx context.Context, c *testcluster.Cluster, withCompaction bool) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if !withCompaction {
		return c.RestartAPIServer(ctx)
	}
	return c.RestartCompacted(ctx, nil)
}
