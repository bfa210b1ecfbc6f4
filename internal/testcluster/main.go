package testcluster

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// StartTimeout bounds building the binaries (minutes the first time) and starting the servers.
const StartTimeout = 20 * time.Minute

// RunMain is a TestMain body: it starts one cluster for the package, hands it
// to set, runs the tests and always stops the cluster, printing both servers'
// log tails when a test failed. It returns the exit code for os.Exit.
func RunMain(m *testing.M, opts Options, set func(*Cluster)) int {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	start := time.Now()
	c, err := Start(ctx, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcluster: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "testcluster: kube-apiserver %s at %s and etcd at %s ready in %s\n",
		Version, c.URL(), c.EtcdEndpoint(), time.Since(start).Round(time.Millisecond))
	// SIGINT/SIGTERM (e.g. ctrl+c on go test) still clean up.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-sigs; ok {
			c.Stop()
			os.Exit(1)
		}
	}()
	defer func() {
		signal.Stop(sigs)
		close(sigs)
		c.Stop()
	}()
	set(c)
	code := m.Run()
	if code != 0 {
		fmt.Fprintln(os.Stderr, c.LogTail(40))
	}
	return code
}
