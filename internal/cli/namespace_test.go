package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// rfc1123Label is the API server's reason for refusing a namespace named
// Bad_NS ("kubectl create namespace Bad_NS"), which the plugin quotes.
const rfc1123Label = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`

// A namespace no namespace can have is a usage error before any request:
// watched, it would only ever be "not found", as if not created yet.
func TestANamespaceNameNoNamespaceCanHaveIsAUsageError(t *testing.T) {
	long := strings.Repeat("a", 64)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"configmaps", "-n", "Bad_NS"}, `error: invalid namespace "Bad_NS": ` + rfc1123Label},
		{[]string{"configmaps", "--namespace", long}, `error: invalid namespace "` + long + `": must be no more than 63 characters`},
		{[]string{"monitor", "configmaps", "-n", "Bad_NS"}, `error: invalid namespace "Bad_NS": ` + rfc1123Label},
		{[]string{"cost", "configmaps", "-n", "Bad_NS"}, `error: invalid namespace "Bad_NS": ` + rfc1123Label},
		{[]string{"proxy", "-n", "Bad_NS"}, `error: invalid namespace "Bad_NS": ` + rfc1123Label},
		// --probe's namespace, in the same words.
		{[]string{"configmaps", "--probe", "BAD_NS!"}, `error: invalid --probe namespace "BAD_NS!": ` + rfc1123Label},
	} {
		code, _, stderr := run(t, append(tc.args, "--kubeconfig", "/nonexistent")...)
		if code != ExitUsage || strings.TrimSpace(stderr) != tc.want {
			t.Errorf("%v: got %d %q\nwant %d %q", tc.args, code, stderr, ExitUsage, tc.want)
		}
	}
	// A valid name is not refused (the run fails later, on the missing kubeconfig).
	if code, _, stderr := run(t, "configmaps", "-n", "kube-system", "--kubeconfig", "/nonexistent"); code == ExitUsage || strings.Contains(stderr, "invalid namespace") {
		t.Errorf("-n kube-system: got %d %q", code, stderr)
	}
}

// The namespace of the kubeconfig's context is checked too, once read.
func TestE2EAKubeconfigContextsNamespaceNoNamespaceCanHaveIsRefused(t *testing.T) {
	cfg, err := clientcmd.LoadFromFile(kubeconfig(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts[cfg.CurrentContext].Namespace = "Bad_NS"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "configmaps", "--kubeconfig", path, "--once", "--no-tui")
	if want := `error: the namespace of the kubeconfig (or the pod): invalid namespace "Bad_NS": ` + rfc1123Label; code != ExitFailure || strings.TrimSpace(stderr) != want {
		t.Errorf("got %d %q\nwant %d %q", code, stderr, ExitFailure, want)
	}
}
