package testcluster

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StartTimeout bounds building the binaries (minutes the first time) and starting the servers.
const StartTimeout = 20 * time.Minute

// Lazy is a cluster that starts on the first test that asks for it, so a
// package's unit tests run without etcd and kube-apiserver. Main stops it.
type Lazy struct {
	opts Options
	once sync.Once
	mu   sync.Mutex
	c    *Cluster
	err  error
}

// NewLazy returns a cluster with opts that starts on first use.
func NewLazy(opts Options) *Lazy { return &Lazy{opts: opts} }

// Get starts the cluster on the first call (failing t if it cannot start)
// and returns it.
func (l *Lazy) Get(t testing.TB) *Cluster {
	t.Helper()
	l.once.Do(func() {
		c, err := startForTests(l.opts)
		l.mu.Lock()
		l.c, l.err = c, err
		l.mu.Unlock()
	})
	if l.err != nil {
		t.Fatalf("starting a test cluster: %v", l.err)
	}
	return l.c
}

// started is the cluster if it was started.
func (l *Lazy) started() *Cluster {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c
}

// ParallelWaits is how many parallel tests (t.Parallel) Main lets a
// package run at once when go test is given no -parallel: the parallel
// end-to-end tests are waits on servers, timers and restarts, each on a
// cluster of its own, not work for the cores, and go test's default
// (GOMAXPROCS, 2 on two cores) would queue them one after another.
const ParallelWaits = 8

// Main is a TestMain body: it runs the tests, ParallelWaits parallel ones
// at once unless -parallel says otherwise, then stops every cluster of
// clusters that a test started, printing their log tails when a test failed
// (SIGINT and SIGTERM stop them too). It returns the exit code for os.Exit.
func Main(m *testing.M, clusters ...*Lazy) int {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(max(ParallelWaits, runtime.GOMAXPROCS(0)))); err != nil {
			fmt.Fprintf(os.Stderr, "testcluster: setting -test.parallel: %v\n", err)
			return 2
		}
	}
	stopAll := func() {
		for _, l := range clusters {
			if c := l.started(); c != nil {
				c.Stop()
			}
		}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-sigs; ok {
			stopAll()
			os.Exit(1)
		}
	}()
	code := m.Run()
	signal.Stop(sigs)
	close(sigs)
	if code != 0 {
		for _, l := range clusters {
			if c := l.started(); c != nil {
				fmt.Fprintln(os.Stderr, c.LogTail(40))
			}
		}
	}
	stopAll()
	return code
}

// ForTest starts a cluster of t's own, for a test that restarts or compacts
// it while other tests run in parallel on theirs. It is stopped when t ends,
// after printing its log tail if t failed.
func ForTest(t testing.TB, opts Options) *Cluster {
	t.Helper()
	c, err := startForTests(opts)
	if err != nil {
		t.Fatalf("starting a test cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(c.LogTail(40))
		}
		c.Stop()
	})
	return c
}

// startForTests starts a cluster for a test package, its progress on stderr,
// and says when it is ready.
func startForTests(opts Options) (*Cluster, error) {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	start := time.Now()
	c, err := Start(ctx, opts)
	if err == nil {
		fmt.Fprintf(os.Stderr, "testcluster: kube-apiserver %s at %s and etcd at %s ready in %s\n",
			Version, c.URL(), c.EtcdEndpoint(), time.Since(start).Round(time.Millisecond))
	}
	return c, err
}
