// Command testcluster builds the test cluster binaries ("build") or runs a
// local etcd + kube-apiserver until interrupted ("up"), printing a kubeconfig
// path, for trying the plugin by hand and for recording traces.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 1 || (args[0] != "build" && args[0] != "up") {
		return fmt.Errorf("usage: go run ./hack/testcluster build|up")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if args[0] == "build" {
		bins, err := testcluster.EnsureBinaries(ctx, os.Stderr)
		if err != nil {
			return err
		}
		fmt.Printf("%s\n%s\n%s\n%s\n", bins.Etcd, bins.KubeAPIServer, bins.Kubectl, bins.KubeControllerManager)
		return nil
	}
	c, err := testcluster.Start(ctx, testcluster.Options{Log: os.Stderr})
	if err != nil {
		return err
	}
	defer c.Stop()
	fmt.Printf("kube-apiserver %s at %s\nexport KUBECONFIG=%s\n(ctrl+c stops it)\n", testcluster.Version, c.URL(), c.Kubeconfig())
	<-ctx.Done()
	return nil
}
