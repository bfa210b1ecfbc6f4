// Command bench measures kubectl-watchcache against what a user would
// otherwise run (client-go informers, kubectl, one raw GET), against the same
// real kube-apiserver, in one run, and writes the medians and ratios to
// docs/benchmarks.md:
//
//	go run ./hack/bench -n 10000,50000 -reps 3 -out docs/benchmarks.md
//
// With -check it runs only the sync guard (issue 33): the default sync
// against one protobuf GET of the whole list and client-go's typed informer,
// at 5,000 and 50,000 ConfigMaps, beside the figures the last check recorded
// in docs/benchmarks.md. It never fails on a ratio:
//
//	go run ./hack/bench -check
//
// With -diff it measures only what --diff costs (issue 36): the sync at
// 50,000 ConfigMaps by default, --wire json and --diff side by side (and the
// -baseline plugin's default sync), and a replay of 1M MODIFIED events of a
// whole-object trace with and without --diff:
//
//	go run ./hack/bench -diff -baseline 4712e31 -replay-reps 3
//
// It starts internal/testcluster, creates N ConfigMaps of about 1 KiB with
// server-side apply, and for each N measures initial sync (separate
// processes, so peak RSS is per process), steady memory and a forced relist
// (helper processes), and a steady watch's lag (in process); then the replay
// of a ≥ 1M-event trace against the plain decode floor, and recording
// overhead. Everything it starts is stopped on exit, ctrl+c included.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

// options are the command's flags.
type options struct {
	sizes        []int
	reps         int
	out          string
	watchFor     time.Duration
	writers      int
	replayEvents int
	skipReplay   bool
	hold         bool
	// big is how many big ConfigMaps the big-object comparison creates (0: none);
	// bigSize the bytes of text in each; bigOnly skips everything else.
	big     int
	bigSize int
	bigOnly bool
	// baseline is a git revision whose plugin is measured beside this one in
	// the big-object comparison ("" for none).
	baseline string
	// check runs only the guard of issue 33 (runCheck): the default sync
	// against the protobuf floor and the typed informer, at each N.
	check bool
	// diff runs only the cost of --diff (runDiff): the sync at the largest N
	// with and without it, and a replay of MODIFIED events with and without
	// it, replayReps times.
	diff       bool
	replayReps int
}

func main() {
	// client-go logs through klog; a watch ended by the bench is not news.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var o options
	sizes := fs.String("n", "10000,50000", "comma-separated numbers of ConfigMaps")
	fs.IntVar(&o.reps, "reps", 3, "repetitions of every measurement (medians are reported)")
	fs.StringVar(&o.out, "out", "docs/benchmarks.md", "markdown file to write (results go between the bench markers; text around them is kept)")
	fs.DurationVar(&o.watchFor, "watch-for", 10*time.Second, "length of each steady-watch window")
	fs.IntVar(&o.writers, "writers", 8, "parallel writers (object creation and steady watch)")
	fs.IntVar(&o.replayEvents, "replay-events", 1_000_000, "watch events in the replayed trace")
	fs.BoolVar(&o.skipReplay, "skip-replay", false, "skip the replay measurement")
	fs.BoolVar(&o.hold, "hold", false, "create the largest N ConfigMaps (with -big-only: the big ones), print a kubeconfig and wait for ctrl+c instead of measuring (for profiling by hand, e.g. hack/bench/syncer -cpuprofile)")
	fs.IntVar(&o.big, "big", 160, "big ConfigMaps for the big-object comparison, in a cluster of their own (0 skips it)")
	fs.IntVar(&o.bigSize, "big-size", 900_000, "bytes of YAML-like text in each big ConfigMap")
	fs.BoolVar(&o.bigOnly, "big-only", false, "run only the big-object comparison (and write only its part of -out)")
	fs.StringVar(&o.baseline, "baseline", "", "a git revision (e.g. main) whose plugin the big-object comparison and -diff also measure, as 'before'")
	fs.BoolVar(&o.check, "check", false, "only the sync guard: the default sync against one protobuf GET and the typed informer, at -n (default 5000,50000 here), printed beside the last check's figures in -out and recorded there")
	fs.BoolVar(&o.diff, "diff", false, "only the cost of --diff: at -n (default 50000 here) the default sync, --wire json and --diff side by side (with -baseline, the baseline's default sync too), -reps times (default 5 here); then a trace of whole objects grown to -replay-events MODIFIED events, replayed with and without --diff -replay-reps times (unless -skip-replay); written between the bench-diff markers of -out")
	fs.IntVar(&o.replayReps, "replay-reps", 0, "with -diff, repetitions of each replay (default: -reps)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.diff {
		if !isSet(fs, "n") {
			*sizes = "50000"
		}
		if !isSet(fs, "reps") {
			o.reps = 5
		}
		if o.replayReps == 0 {
			o.replayReps = o.reps
		}
		if o.check || o.hold || o.bigOnly || o.replayReps < 1 {
			return o, errors.New("-diff measures the cost of --diff only: it takes -n, -reps, -replay-events, -replay-reps, -skip-replay, -baseline, -writers and -out")
		}
		o.big = 0
	}
	if o.check {
		if !isSet(fs, "n") {
			*sizes = "5000,50000"
		}
		if o.hold || o.bigOnly || o.baseline != "" {
			return o, errors.New("-check measures the sync guard only: it takes -n, -reps, -writers and -out")
		}
		o.big, o.skipReplay = 0, true
	}
	if o.bigOnly && o.big < 1 {
		return o, errors.New("-big-only needs -big > 0")
	}
	if o.big > 0 && (o.bigSize < 1000 || o.bigSize > 1_000_000) {
		return o, errors.New("-big-size must be between 1000 and 1000000 (a ConfigMap holds at most 1 MiB)")
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("invalid -n %q: want positive numbers separated by commas", *sizes)
		}
		o.sizes = append(o.sizes, n)
	}
	slices.Sort(o.sizes)
	o.sizes = slices.Compact(o.sizes)
	if o.reps < 1 || o.writers < 1 || o.replayEvents < 1 || o.watchFor <= 0 {
		return o, errors.New("-reps, -writers, -replay-events and -watch-for must be positive")
	}
	return o, nil
}

// isSet reports whether the flag name was given.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// env is what every measurement needs: the cluster, the built helpers and a scratch directory.
type env struct {
	opts    options
	cluster *testcluster.Cluster
	tmp     string
	bins    binaries
	caFile  string
	kubectl string // "" when kubectl is not installed
	objects *objects
}

func run(ctx context.Context, o options) error {
	start := time.Now()
	root, err := testcluster.RepoRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "watchcache-bench-")
	if err != nil {
		return fmt.Errorf("creating a scratch directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	e := &env{opts: o, tmp: tmp}
	logf("building the plugin and the helpers")
	if e.bins, err = buildBinaries(ctx, root, tmp); err != nil {
		return err
	}
	if o.baseline != "" {
		logf("building the plugin at %s", o.baseline)
		if e.bins.baseline, e.bins.baselineCommit, err = buildBaseline(ctx, root, tmp, o.baseline); err != nil {
			return err
		}
	}
	if e.kubectl, err = findKubectl(); err != nil {
		logf("%v: the kubectl column is skipped", err)
	}
	out := o.out
	if !filepath.IsAbs(out) {
		out = filepath.Join(root, out)
	}
	if o.check {
		return runCheck(ctx, e, out)
	}
	if o.diff {
		return runDiff(ctx, e, out)
	}
	if !o.bigOnly {
		if err := runSizes(ctx, e, start, out); err != nil || o.hold {
			return err // -hold without -big-only holds the N-size cluster only
		}
	}
	if o.big > 0 {
		return runBig(ctx, e, out)
	}
	return nil
}

// startCluster starts a test cluster for e's measurements and writes its CA
// file. The caller stops it.
func startCluster(ctx context.Context, e *env) (*testcluster.Cluster, error) {
	logf("starting etcd and kube-apiserver %s", testcluster.Version)
	c, err := testcluster.Start(ctx, testcluster.Options{Log: os.Stderr})
	if err != nil {
		return nil, err
	}
	e.cluster = c
	e.caFile = filepath.Join(e.tmp, "ca.crt")
	if err := os.WriteFile(e.caFile, c.Config().CAData, 0o600); err != nil {
		c.Stop()
		return nil, fmt.Errorf("writing the CA file: %w", err)
	}
	if e.objects, err = newObjects(c.Config(), e.opts.writers); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// runSizes measures every N of -n in one cluster, then the replay, and writes their results.
func runSizes(ctx context.Context, e *env, start time.Time, out string) error {
	o := e.opts
	c, err := startCluster(ctx, e)
	if err != nil {
		return err
	}
	defer c.Stop()
	if o.hold {
		n := o.sizes[len(o.sizes)-1]
		if err := e.objects.ensure(ctx, n); err != nil {
			return err
		}
		fmt.Printf("%d ConfigMaps on kube-apiserver %s\nexport KUBECONFIG=%s\nhelpers in %s\n(ctrl+c stops it)\n", n, c.URL(), c.Kubeconfig(), e.tmp)
		<-ctx.Done()
		return nil
	}
	res := &results{Started: start, Reps: o.reps, Kubectl: e.kubectl != "", ServerVersion: testcluster.Version}
	if e.kubectl != "" {
		res.KubectlInfo = kubectlVersion(ctx, e.kubectl)
	}
	for _, n := range o.sizes {
		logf("N=%d: creating ConfigMaps", n)
		if err := e.objects.ensure(ctx, n); err != nil {
			return err
		}
		sr, err := measureSize(ctx, e, n)
		if err != nil {
			return fmt.Errorf("measuring N=%d: %w", n, err)
		}
		res.Sizes = append(res.Sizes, sr)
	}
	if !o.skipReplay {
		logf("replay: recording a live trace and growing it to %d events", o.replayEvents)
		rr, err := measureReplay(ctx, e, o.sizes[len(o.sizes)-1])
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		res.Replay = rr
	}
	res.Took = time.Since(start)
	md := res.markdown(o)
	if err := writeMarked(out, beginMarker, endMarker, md); err != nil {
		return err
	}
	fmt.Print(md)
	logf("wrote %s in %s", out, res.Took.Round(time.Second))
	return nil
}

// measureSize runs every per-N measurement.
func measureSize(ctx context.Context, e *env, n int) (sizeResult, error) {
	sr := sizeResult{N: n}
	var err error
	logf("N=%d: initial sync, %d repetitions of %d process kinds", n, e.opts.reps, len(syncVariants(e)))
	if sr.Sync, sr.ListBytes, err = measureSync(ctx, e, n, syncVariants(e)); err != nil {
		return sr, err
	}
	if runs := sr.Sync[vFloorPB]; len(runs) > 0 {
		sr.ListBytesPB = runs[0].Bytes
	}
	if n == e.opts.sizes[len(e.opts.sizes)-1] {
		// Where a timing target is missed at the largest N, say where the time goes.
		sr.Profiles = map[string]string{}
		for _, t := range sr.targets() {
			if t.profile == nil || t.got <= t.want {
				continue
			}
			logf("N=%d: missed %q: profiling", n, t.name)
			top, err := profileTop(ctx, e, t.profile)
			if err != nil {
				return sr, fmt.Errorf("profiling %q: %w", t.name, err)
			}
			sr.Profiles[t.name] = top
		}
	}
	logf("N=%d: steady watch, %d windows of %s per client", n, e.opts.reps, e.opts.watchFor)
	if sr.Watch, err = measureWatch(ctx, e, n); err != nil {
		return sr, err
	}
	return sr, nil
}

// profileTop runs the syncer helper with args and a CPU profile, and returns
// the profile's top entries (go tool pprof -top).
func profileTop(ctx context.Context, e *env, args []string) (string, error) {
	prof := filepath.Join(e.tmp, "cpu.pprof")
	defer os.Remove(prof)
	if _, err := syncerRun(false, append(args, "-cpuprofile", prof)...)(ctx, e, 0); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=15", e.bins.syncer, prof).Output()
	if err != nil {
		return "", fmt.Errorf("go tool pprof: %w", err)
	}
	// Keep the summary and the table, not pprof's header about the file.
	lines := strings.Split(string(out), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "Showing nodes") || strings.HasPrefix(l, "Duration:") {
			return strings.Join(lines[i:], "\n"), nil
		}
	}
	return string(out), nil
}

// kubectlVersion is kubectl's "Client Version: …" line.
func kubectlVersion(ctx context.Context, kubectl string) string {
	out, err := exec.CommandContext(ctx, kubectl, "version", "--client").Output()
	if err != nil {
		return "kubectl (version unknown)"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return "kubectl " + strings.TrimPrefix(strings.TrimSpace(line), "Client Version: ")
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
