package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

const twoContexts = `apiVersion: v1
kind: Config
clusters:
- name: east
  cluster: {server: "https://127.0.0.1:1"}
- name: west
  cluster: {server: "https://127.0.0.1:2"}
users:
- name: alice
  user: {token: "x"}
contexts:
- name: prod
  context: {cluster: east, user: alice}
- name: staging
  context: {cluster: west, user: alice}
current-context: prod
`

// The connection flags complete as kubectl's do: --context, --cluster and
// --user from the kubeconfig, and -l and --field-selector with nothing
// (they offered file names), on every command that takes them.
func TestTheConnectionFlagsCompleteAsKubectlsDo(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kc, []byte(twoContexts), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"configmaps"}, {"cost", "configmaps"}, {"proxy"}, {"monitor", "configmaps"}} {
		for _, tc := range []struct {
			flag string
			want []string
		}{
			{"--context", []string{"prod", "staging"}},
			{"--cluster", []string{"east", "west"}},
			{"--user", []string{"alice"}},
			{"-l", nil},
			{"--field-selector", nil},
		} {
			if cmd[0] == "proxy" && (tc.flag == "-l" || tc.flag == "--field-selector") {
				continue
			}
			args := append([]string{"__complete"}, cmd...)
			args = append(args, "--kubeconfig", kc, tc.flag, "")
			_, out, _ := run(t, args...)
			if want := strings.Join(append(tc.want, ":4"), "\n"); !strings.HasPrefix(out, want+"\n") {
				t.Errorf("%s %s: got %q, want %q (no file names)", strings.Join(cmd, " "), tc.flag, out, want)
			}
		}
	}
}

// -n completes with the server's namespaces, as kubectl get -n does, and
// RESOURCE with the resources one may list and watch.
func TestE2ENamespaceCompletesWithTheServersNamespaces(t *testing.T) {
	if _, out, _ := run(t, "__complete", "--kubeconfig", kubeconfig(t), "config"); !strings.HasPrefix(out, "configmaps\n:4\n") {
		t.Errorf("RESOURCE: got %q, want configmaps", out)
	}
	// Several resources: a second argument, and after a comma.
	for _, command := range []string{"", "cost", "monitor"} {
		args := append(strings.Fields(command), "--kubeconfig", kubeconfig(t), "pods", "config")
		if _, out, _ := run(t, append([]string{"__complete"}, args...)...); !strings.HasPrefix(out, "configmaps\n:4\n") {
			t.Errorf("%v: got %q, want configmaps", args, out)
		}
	}
	if _, out, _ := run(t, "__complete", "--kubeconfig", kubeconfig(t), "pods,config"); !strings.HasPrefix(out, "pods,configmaps\n:4\n") {
		t.Errorf("pods,config: got %q, want pods,configmaps", out)
	}
	_, out, _ := run(t, "__complete", "configmaps", "--kubeconfig", kubeconfig(t), "-n", "kube-")
	if !strings.HasPrefix(out, "kube-node-lease\nkube-public\nkube-system\n:4\n") {
		t.Errorf("got %q, want the kube- namespaces", out)
	}
}

// No flag completes with file names but those whose value is a file or a
// directory (cobra's default offered the directory for --duration), and no
// argument of a command that takes none.
func TestOnlyPathFlagsCompleteWithFileNames(t *testing.T) {
	paths := map[string]bool{"kubeconfig": true, "cache-dir": true, "certificate-authority": true, "client-certificate": true, "client-key": true, "trace": true, "print-kubeconfig": true}
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	root := testCommand(streams)
	for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
		path := strings.Fields(strings.TrimPrefix(c.CommandPath(), root.CommandPath()))
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.NoOptDefVal != "" || paths[f.Name] || f.Name == "output" && c.Name() == "report" {
				return
			}
			_, out, _ := run(t, append(append([]string{"__complete"}, path...), "--"+f.Name, "")...)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			directive, err := strconv.Atoi(strings.TrimPrefix(lines[len(lines)-1], ":"))
			if err != nil || directive&int(cobra.ShellCompDirectiveNoFileComp) == 0 {
				t.Errorf("%s --%s completes with file names (directive %q)", c.CommandPath(), f.Name, lines[len(lines)-1])
			}
		})
	}
	if _, out, _ := run(t, "__complete", "proxy", ""); !strings.HasPrefix(out, ":4\n") {
		t.Errorf("proxy's argument: got %q, want nothing (it takes none)", out)
	}
}
