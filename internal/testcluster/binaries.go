package testcluster

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
	"syscall"
	"time"
)

// Version is the Kubernetes version the test apiserver is built as and reports.
const Version = "v1.37.2"

// binaryLdflags makes kube-apiserver report Version (it says v0.0.0 otherwise);
// -s -w leave out the symbol table and DWARF, which nobody reads in a test
// server and which take a good part of the link.
const binaryLdflags = "-s -w -X k8s.io/component-base/version.gitVersion=" + Version +
	" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37" +
	" -X k8s.io/component-base/version.gitTreeState=clean"

// Binaries are the paths of the test cluster's server binaries.
type Binaries struct {
	Etcd          string
	KubeAPIServer string
	// Kubectl is the matching kubectl, for tests that run the plugin the way users do.
	Kubectl string
}

// EnvBinDir overrides where the built binaries are cached (default: <repo>/.cache/testcluster).
const EnvBinDir = "WATCHCACHE_TESTCLUSTER_BIN"

// EnsureBinaries returns etcd and kube-apiserver built from hack/tools, building
// them first when they are missing or when hack/tools' pinned versions changed.
// The first build takes minutes; concurrent callers (test packages run in
// parallel) wait on a file lock instead of building twice. Progress goes to log.
func EnsureBinaries(ctx context.Context, log io.Writer) (Binaries, error) {
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
	bins := Binaries{Etcd: filepath.Join(dir, "etcd"), KubeAPIServer: filepath.Join(dir, "kube-apiserver"), Kubectl: filepath.Join(dir, "kubectl")}
	if exists(bins.Etcd) && exists(bins.KubeAPIServer) && exists(bins.Kubectl) {
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
	// Another process may have built them while we waited for the lock.
	for _, b := range []struct{ out, pkg, ldflags string }{
		{bins.Etcd, "./cmd/etcd", ""},
		{bins.KubeAPIServer, "k8s.io/kubernetes/cmd/kube-apiserver", binaryLdflags},
		{bins.Kubectl, "k8s.io/kubernetes/cmd/kubectl", binaryLdflags},
	} {
		if exists(b.out) {
			continue
		}
		fmt.Fprintf(log, "testcluster: building %s from hack/tools (the first build takes about five minutes on two cores)\n", filepath.Base(b.out))
		start := time.Now()
		tmp := b.out + ".tmp"
		args := []string{"build", "-buildvcs=false", "-trimpath", "-o", tmp}
		if b.ldflags != "" {
			args = append(args, "-ldflags", b.ldflags)
		}
		args = append(args, b.pkg)
		cmd := exec.CommandContext(ctx, goTool(), args...)
		cmd.Dir = toolsDir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=readonly")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return Binaries{}, fmt.Errorf("building %s in %s: %w\n%s", b.pkg, toolsDir, err, out)
		}
		if err := os.Rename(tmp, b.out); err != nil {
			return Binaries{}, fmt.Errorf("installing %s: %w", b.out, err)
		}
		fmt.Fprintf(log, "testcluster: built %s in %s\n", filepath.Base(b.out), time.Since(start).Round(time.Second))
	}
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

// toolsKey hashes what decides the binaries' content: the pinned modules, the
// etcd main, the ldflags and the Go version.
func toolsKey(toolsDir string) (string, error) {
	h := sha256.New()
	for _, name := range []string{"go.mod", "go.sum", filepath.Join("cmd", "etcd", "main.go")} {
		b, err := os.ReadFile(filepath.Join(toolsDir, name))
		if err != nil {
			return "", fmt.Errorf("reading hack/tools: %w", err)
		}
		h.Write(b)
	}
	h.Write([]byte(binaryLdflags))
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
