// Command build builds the test cluster's programs (etcd, kube-apiserver and
// kubectl) from hack/tools into the cache the tests read, and prints their
// paths. It is `go run ./hack/testcluster build` without the rest of the
// test cluster: it imports only internal/clusterbin (the standard library),
// so on an empty build cache it compiles in seconds and the servers' build
// starts at once (hack/test.sh's first step).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/clusterbin"
)

func main() {
	if len(os.Args) != 1 {
		fmt.Fprintln(os.Stderr, "error: usage: go run ./hack/testcluster/build")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bins, err := clusterbin.Ensure(ctx, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%s\n%s\n%s\n%s\n", bins.Etcd, bins.KubeAPIServer, bins.Kubectl, bins.KubeControllerManager)
}
