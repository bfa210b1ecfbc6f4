// Command soak runs the soak test for as long as asked, against a test
// cluster of its own (built and started like the tests'):
//
//	go run ./hack/soak -duration 1h
//
// Beside the soak's reflector it runs the plugin's monitor mode as a process
// (built here without -race), recording a trace that rotates at
// -trace-max-size; -monitor=false leaves it out.
//
// It prints a line a minute and the report at the end, and exits 1 when the
// report has a problem.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/soak"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

func main() {
	var opts soak.Options
	flag.DurationVar(&opts.Duration, "duration", time.Hour, "how long to churn")
	flag.Float64Var(&opts.Rate, "rate", 50, "writes a second")
	flag.DurationVar(&opts.RestartEvery, "restart-every", 45*time.Second, "restart kube-apiserver this often")
	flag.DurationVar(&opts.CompactEvery, "compact-every", 30*time.Second, "compact etcd this often")
	flag.DurationVar(&opts.Baseline, "baseline", time.Minute, "when to take the goroutine and heap baseline")
	monitor := flag.Bool("monitor", true, "run the plugin's monitor mode beside the reflector, with a rotating trace")
	mon := soak.Monitor{}
	flag.Int64Var(&mon.MaxSize, "trace-max-size", 1<<20, "the monitor's --trace-max-size, in bytes")
	flag.IntVar(&mon.Keep, "trace-keep", 3, "the monitor's --trace-keep")
	flag.DurationVar(&mon.WatchTimeout, "watch-timeout", 10*time.Second, "the monitor's --watch-timeout (a closed segment's overshoot past the cap is at most two of it of lines)")
	flag.Parse()
	if *monitor {
		opts.Monitor = &mon
	}
	opts.Log = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, opts soak.Options) error {
	c, err := testcluster.Start(ctx, testcluster.Options{Log: os.Stderr})
	if err != nil {
		return err
	}
	defer c.Stop()
	if opts.Monitor != nil {
		bin, err := testcluster.BuildPlugin()
		if err != nil {
			return err
		}
		defer os.RemoveAll(bin)
		opts.Monitor.Binary = filepath.Join(bin, "kubectl-watchcache")
		if opts.Monitor.Dir, err = os.MkdirTemp("", "soak-trace-"); err != nil {
			return fmt.Errorf("the monitor's trace directory: %w", err)
		}
		defer os.RemoveAll(opts.Monitor.Dir)
	}
	rep, err := soak.Run(ctx, c, opts)
	if err != nil {
		return err
	}
	fmt.Print(rep)
	if !rep.OK() {
		return fmt.Errorf("the soak found %d problems", len(rep.Problems))
	}
	return nil
}
