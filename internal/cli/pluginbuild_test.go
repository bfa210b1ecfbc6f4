package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

// pluginBuild is the plugin built once for the package's tests that run it as a
// child process (through kubectl, or to send it signals); TestMain removes it.
var pluginBuild struct {
	once sync.Once
	dir  string
	err  error
}

// builtPlugin is the directory of the plugin built for this package's tests.
func builtPlugin(t *testing.T) string {
	t.Helper()
	pluginBuild.once.Do(func() { pluginBuild.dir, pluginBuild.err = buildPlugin() })
	if pluginBuild.err != nil {
		t.Fatal(pluginBuild.err)
	}
	return pluginBuild.dir
}

// buildPlugin builds ./cmd/kubectl-watchcache as this test binary was built:
// with -race when it was, so that its packages are the ones go test has
// compiled already (only the link is left), and a data race in the child
// fails the test as one in this process does.
func buildPlugin() (string, error) {
	root, err := testcluster.RepoRoot()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "watchcache-plugin-")
	if err != nil {
		return "", fmt.Errorf("creating the plugin's directory: %w", err)
	}
	args := []string{"build", "-o", filepath.Join(dir, "kubectl-watchcache")}
	if raceEnabled {
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

// removeBuiltPlugin removes the plugin once every test is done.
func removeBuiltPlugin() {
	if pluginBuild.dir != "" {
		_ = os.RemoveAll(pluginBuild.dir)
	}
}
