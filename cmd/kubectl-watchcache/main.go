// Command kubectl-watchcache is the kubectl plugin "kubectl watchcache": it runs a
// real reflector against a cluster (or replays a recorded trace) and shows how
// the watch behaves. Everything but wiring lives in internal/cli.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/cli"
)

// version is set by goreleaser: -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(cli.Execute(cli.NewCommand(streams, version), streams))
}
