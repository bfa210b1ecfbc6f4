package cli

import (
	"os"
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
	pluginBuild.once.Do(func() { pluginBuild.dir, pluginBuild.err = testcluster.BuildPlugin() })
	if pluginBuild.err != nil {
		t.Fatal(pluginBuild.err)
	}
	return pluginBuild.dir
}

// removeBuiltPlugin removes the plugin once every test is done.
func removeBuiltPlugin() {
	if pluginBuild.dir != "" {
		_ = os.RemoveAll(pluginBuild.dir)
	}
}
