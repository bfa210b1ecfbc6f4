// Package clusterbin builds the test cluster's programs (etcd,
// kube-apiserver, the matching kubectl and kube-controller-manager) from the Go modules that
// hack/tools pins, once, into a cache directory. It imports only the
// standard library, so that the command that builds them
// (hack/testcluster/build, the test suite's first step) compiles in seconds
// on an empty build cache instead of compiling client-go first.
package clusterbin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Version is the Kubernetes version the test apiserver is built as and reports.
const Version = "v1.37.2"

// versionLdflags makes kube-apiserver and kubectl report Version (they say
// v0.0.0 otherwise); etcd has no such variable and ignores them. -s -w leave
// out the symbol table and DWARF, which nobody reads in a test server and
// which take a good part of each link. The cache key hashes the whole
// string (toolsKey): a change to -s -w rebuilds the servers too.
const versionLdflags = "-s -w -X k8s.io/component-base/version.gitVersion=" + Version +
	" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37" +
	" -X k8s.io/component-base/version.gitTreeState=clean"

// Binaries are the paths of the test cluster's programs.
type Binaries struct {
	Etcd          string
	KubeAPIServer string
	// Kubectl is the matching kubectl, for tests that run the plugin the way users do.
	Kubectl string
	// KubeControllerManager is the matching kube-controller-manager, for
	// tests whose objects need their controllers (a Deployment's status).
	KubeControllerManager string
}

// EnvBinDir overrides where the built binaries are cached (default: <repo>/.cache/testcluster).
const EnvBinDir = "WATCHCACHE_TESTCLUSTER_BIN"

// Ensure returns the test cluster's programs, building them first when they
// are missing or when hack/tools' pins changed. The missing ones are built
// by one go build, so that the packages they share compile once and each
// link runs beside the other programs' compiles. A first build takes many
// minutes (docs/benchmarks.md, "The test suite's time"); concurrent callers
// (test packages run in parallel) wait on a file lock instead of building
// twice. Progress goes to log.
func Ensure(ctx context.Context, log io.Writer) (Binaries, error) {
	root, err := RepoRoot()
	if err != nil {
		return Binaries{}, err
	}
	toolsDir := filepath.Join(root, "hack", "tools")
	key, err := toolsKey(toolsDir)
	if err != nil {
		return Binaries{}, err
	}
	base := os.Getenv(EnvBinDir)
	if base == "" {
		base = filepath.Join(root, ".cache", "testcluster")
	}
	dir := filepath.Join(base, key)
	bins := Binaries{Etcd: filepath.Join(dir, "etcd"), KubeAPIServer: filepath.Join(dir, "kube-apiserver"), Kubectl: filepath.Join(dir, "kubectl"),
		KubeControllerManager: filepath.Join(dir, "kube-controller-manager")}
	if exists(bins.Etcd) && exists(bins.KubeAPIServer) && exists(bins.Kubectl) && exists(bins.KubeControllerManager) {
		return bins, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Binaries{}, fmt.Errorf("creating the test binary cache %s: %w", dir, err)
	}
	unlock, err := lockFile(ctx, filepath.Join(base, "build.lock"))
	if err != nil {
		return Binaries{}, err
	}
	defer unlock()
	// Another process may have built some while we waited for the lock.
	var pkgs, names []string
	for _, b := range []struct{ out, pkg string }{
		{bins.Etcd, "./cmd/etcd"},
		{bins.KubeAPIServer, "k8s.io/kubernetes/cmd/kube-apiserver"},
		{bins.Kubectl, "k8s.io/kubernetes/cmd/kubectl"},
		{bins.KubeControllerManager, "k8s.io/kubernetes/cmd/kube-controller-manager"},
	} {
		if !exists(b.out) {
			pkgs = append(pkgs, b.pkg)
			names = append(names, filepath.Base(b.out))
		}
	}
	if len(pkgs) == 0 {
		return bins, nil
	}
	fmt.Fprintf(log, "testcluster: building %s from hack/tools in one go build (minutes the first time)\n", strings.Join(names, ", "))
	start := time.Now()
	// go build writes each program into tmp under its package's last
	// element; they are moved into place once all are built.
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return Binaries{}, fmt.Errorf("creating a build directory in %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	// The version ldflags, and flags that shrink the build without changing
	// what the servers do: no DWARF from the compiler (the link drops it
	// anyway, -w), paths trimmed, no VCS stamp (hack/tools is not a
	// repository of its own).
	args := []string{"build", "-buildvcs=false", "-trimpath", "-gcflags=all=-dwarf=false", "-ldflags", versionLdflags, "-o", tmp + string(filepath.Separator)}
	cmd := exec.CommandContext(ctx, goTool(), append(args, pkgs...)...)
	cmd.Dir = toolsDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		return Binaries{}, fmt.Errorf("building %s in %s: %w\n%s", strings.Join(pkgs, " "), toolsDir, err, out)
	}
	for _, name := range names {
		if err := os.Rename(filepath.Join(tmp, name), filepath.Join(dir, name)); err != nil {
			return Binaries{}, fmt.Errorf("installing %s: %w", name, err)
		}
	}
	fmt.Fprintf(log, "testcluster: built %s in %s\n", strings.Join(names, ", "), time.Since(start).Round(time.Second))
	return bins, nil
}

// RepoRoot finds the module root of this repository by walking up from the
// working directory (go test runs in the package directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	for {
		if exists(filepath.Join(dir, "hack", "tools", "go.mod")) && exists(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding the repository root: no directory above the working directory has hack/tools/go.mod")
		}
		dir = parent
	}
}

// toolsKey hashes what decides what the servers are and do: the pinned
// modules, the etcd main, the ldflags (the version they report, and -s -w
// with it) and the Go version. The other build flags, which only shrink
// the build, are left out, so that changing them does not throw away a
// built cache.
func toolsKey(toolsDir string) (string, error) {
	h := sha256.New()
	for _, name := range []string{"go.mod", "go.sum", filepath.Join("cmd", "etcd", "main.go")} {
		b, err := os.ReadFile(filepath.Join(toolsDir, name))
		if err != nil {
			return "", fmt.Errorf("reading hack/tools: %w", err)
		}
		h.Write(b)
	}
	h.Write([]byte(versionLdflags))
	out, err := exec.Command(goTool(), "env", "GOVERSION", "GOOS", "GOARCH").Output()
	if err != nil {
		return "", fmt.Errorf("asking the go tool for its version: %w", err)
	}
	h.Write(out)
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func goTool() string {
	if p := filepath.Join(os.Getenv("GOROOT"), "bin", "go"); os.Getenv("GOROOT") != "" && exists(p) {
		return p
	}
	return "go"
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// lockFile takes an exclusive flock on path, polling so ctx can cancel the wait.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening build lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for another test process to build the cluster binaries: %w", ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
