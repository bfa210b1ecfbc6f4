// Command kubectl-watchcache is the kubectl plugin "kubectl watchcache": it runs a
// real reflector against a cluster (or replays a recorded trace) and shows how
// the watch behaves. Everything but wiring lives in internal/cli.
package main

import (
	"os"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/cli"
)

// version is set by goreleaser: -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	os.Exit(cli.Main(version))
}
