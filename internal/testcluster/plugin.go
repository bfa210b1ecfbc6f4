package testcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
)

// BuildPlugin builds ./cmd/kubectl-watchcache into a new temporary directory
// and returns that directory (the caller removes it). It is built with -race
// when the running program was: a test binary built with -race then finds
// the plugin's packages compiled already (only the link is left), and a data
// race in the child fails the test as one in the test's own process does.
func BuildPlugin() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "watchcache-plugin-")
	if err != nil {
		return "", fmt.Errorf("creating the plugin's directory: %w", err)
	}
	args := []string{"build", "-o", filepath.Join(dir, "kubectl-watchcache")}
	if bi, ok := debug.ReadBuildInfo(); ok && slices.Contains(bi.Settings, debug.BuildSetting{Key: "-race", Value: "true"}) {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "./cmd/kubectl-watchcache")...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("building the plugin: %w\n%s", err, out)
	}
	return dir, nil
}
