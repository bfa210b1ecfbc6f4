package clusterbin

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRepo makes a repository root with hack/tools, and a go tool (through
// GOROOT) that logs its arguments and, for a build, writes each package's
// program into the -o directory. It returns the log's path.
func fakeRepo(t *testing.T) (root, log string) {
	t.Helper()
	root = t.TempDir()
	for name, body := range map[string]string{
		"go.mod":                       "module example.com/repo\n",
		"hack/tools/go.mod":            "module example.com/tools\n",
		"hack/tools/go.sum":            "",
		"hack/tools/cmd/etcd/main.go":  "package main\n",
		"goroot/bin/go":                fakeGo,
		"hack/tools/cmd/etcd/.keep":    "",
		"hack/tools/.unrelated-change": "",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	log = filepath.Join(root, "go.log")
	t.Setenv("GOROOT", filepath.Join(root, "goroot"))
	t.Setenv("FAKE_GO_LOG", log)
	t.Setenv(EnvBinDir, filepath.Join(root, "bin"))
	t.Chdir(root)
	return root, log
}

// fakeGo answers go env, and go build -o DIR/ PKG...
const fakeGo = `#!/bin/sh
echo "$@" >>"$FAKE_GO_LOG"
if [ "$1" = env ]; then echo go1.26.0; echo linux; echo amd64; exit 0; fi
out=""; prev=""
for a in "$@"; do
  if [ "$prev" = "-o" ]; then out=$a; fi
  prev=$a
done
for a in "$@"; do
  case "$a" in ./cmd/*|k8s.io/*) : >"$out/$(basename "$a")" ;; esac
done
`

func builds(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(l, "build ") {
			out = append(out, l)
		}
	}
	return out
}

func TestEnsureBuildsTheMissingProgramsInOneGoBuild(t *testing.T) {
	_, log := fakeRepo(t)
	bins, err := Ensure(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{bins.Etcd, bins.KubeAPIServer, bins.Kubectl} {
		if !exists(p) {
			t.Errorf("%s was not installed", p)
		}
	}
	got := builds(t, log)
	if len(got) != 1 {
		t.Fatalf("go build ran %d times, want once for the three programs: %q", len(got), got)
	}
	for _, want := range []string{"-trimpath", "-gcflags=all=-dwarf=false", "-X k8s.io/component-base/version.gitVersion=" + Version,
		"./cmd/etcd k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("go build %q lacks %q", got[0], want)
		}
	}

	// All there: nothing is built. One missing: only it.
	if _, err := Ensure(context.Background(), io.Discard); err != nil {
		t.Fatal(err)
	}
	if n := len(builds(t, log)); n != 1 {
		t.Errorf("go build ran again with every program there (%d builds)", n)
	}
	if err := os.Remove(bins.Kubectl); err != nil {
		t.Fatal(err)
	}
	if _, err := Ensure(context.Background(), io.Discard); err != nil {
		t.Fatal(err)
	}
	got = builds(t, log)
	if len(got) != 2 || !strings.HasSuffix(got[1], " k8s.io/kubernetes/cmd/kubectl") || strings.Contains(got[1], "kube-apiserver") {
		t.Errorf("with kubectl missing: %q, want one build of kubectl alone", got[1:])
	}
	if !exists(bins.Kubectl) {
		t.Error("kubectl was not installed again")
	}
	entries, err := os.ReadDir(filepath.Dir(bins.Etcd))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 {
		t.Errorf("the cache directory holds %d entries, want the 4 programs (no build directory left)", len(entries))
	}
}

func TestTheCacheKeyFollowsThePins(t *testing.T) {
	root, _ := fakeRepo(t)
	tools := filepath.Join(root, "hack", "tools")
	key := func() string {
		t.Helper()
		k, err := toolsKey(tools)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	before := key()
	if err := os.WriteFile(filepath.Join(tools, ".unrelated-change"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if key() != before {
		t.Error("the key changed with a file that decides nothing")
	}
	if err := os.WriteFile(filepath.Join(tools, "go.sum"), []byte("k8s.io/kubernetes v1.37.3 h1:x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if key() == before {
		t.Error("the key did not change with the pins")
	}
}
