// Command record-traces regenerates the bundled traces in testdata/traces by
// running internal/scenarios against a real etcd + kube-apiserver:
//
//	go run ./hack/record-traces            # all scenarios
//	go run ./hack/record-traces demo steady
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/scenarios"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(names []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root, err := testcluster.RepoRoot()
	if err != nil {
		return err
	}
	var todo []scenarios.Scenario
	if len(names) == 0 {
		todo = scenarios.All()
	}
	for _, n := range names {
		s, err := scenarios.Find(n)
		if err != nil {
			return err
		}
		todo = append(todo, s)
	}
	clusters := map[bool]*testcluster.Cluster{}
	defer func() {
		for _, c := range clusters {
			c.Stop()
		}
	}()
	for _, s := range todo {
		c := clusters[s.NeedsNoWatchCache]
		if c == nil {
			if c, err = testcluster.Start(ctx, testcluster.Options{DisableWatchCache: s.NeedsNoWatchCache, Log: os.Stderr}); err != nil {
				return err
			}
			clusters[s.NeedsNoWatchCache] = c
		}
		path := filepath.Join(root, "testdata", "traces", s.Name+".jsonl")
		sums, err := s.Record(ctx, c, path, nil)
		if err != nil {
			return err
		}
		for _, sum := range sums {
			fmt.Printf("%s: %s: %d objects, %d lists, %d relists, %d gone, %d bookmarks -> %s\n", s.Name, sum.Resource, sum.Objects, sum.Counters.Lists, sum.Counters.Relists, sum.Counters.Gone, sum.Counters.Bookmarks, path)
		}
	}
	return nil
}
