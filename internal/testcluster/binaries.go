package testcluster

import (
	"context"
	"io"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/clusterbin"
)

// Version is the Kubernetes version the test apiserver is built as and reports.
const Version = clusterbin.Version

// Binaries are the paths of the test cluster's server binaries.
type Binaries = clusterbin.Binaries

// EnsureBinaries returns etcd, kube-apiserver, kubectl and kube-controller-manager built from
// hack/tools, building them first when they are missing or when hack/tools'
// pinned versions changed (clusterbin.Ensure). Progress goes to log.
func EnsureBinaries(ctx context.Context, log io.Writer) (Binaries, error) {
	return clusterbin.Ensure(ctx, log)
}

// RepoRoot finds the module root of this repository by walking up from the
// working directory (go test runs in the package directory).
func RepoRoot() (string, error) { return clusterbin.RepoRoot() }
