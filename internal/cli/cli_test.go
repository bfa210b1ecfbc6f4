package cli

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testdeps"
)

// The package's cluster starts on the first test that needs one.
var shared = testcluster.NewLazy(testcluster.Options{Users: []string{"nobody"}, AuditLog: true})

// TestMain fails the package at once when Prometheus is missing (the
// monitor's alert test runs it), and otherwise runs the tests on the package's cluster.
func TestMain(m *testing.M) {
	if code := testdeps.Main(testdeps.Prometheus()); code != 0 {
		os.Exit(code)
	}
	code := testcluster.Main(m, shared)
	removeBuiltPlugin()
	os.Exit(code)
}

func cluster(t testing.TB) *testcluster.Cluster { return shared.Get(t) }

// run executes the plugin with args and returns its exit code and output.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	cmd := testCommand(streams)
	cmd.SetArgs(args)
	code := Execute(cmd, streams)
	return code, out.String(), errOut.String()
}

// klogSetup serializes the commands' set-up of klog, which is the
// process's: a process runs one command, a test may run several at once.
var klogSetup sync.Mutex

// testCommand is NewCommand for a test, safe to run beside another.
func testCommand(streams genericiooptions.IOStreams) *cobra.Command {
	klogSetup.Lock()
	cmd := NewCommand(streams, "test") // it reads klog's flags
	klogSetup.Unlock()
	if pre := cmd.PersistentPreRun; pre != nil {
		cmd.PersistentPreRun = func(c *cobra.Command, args []string) {
			klogSetup.Lock()
			defer klogSetup.Unlock()
			pre(c, args)
		}
	}
	return cmd
}

func kubeconfig(t *testing.T) string { return cluster(t).Kubeconfig() }

func TestBadInputGetsAClearErrorAndTheRightExitCode(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "corrupt.jsonl")
	if err := os.WriteFile(corrupt, []byte("this is not a trace\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	future := filepath.Join(dir, "future.jsonl")
	if err := os.WriteFile(future, []byte(`{"k":"header","v":3}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	unreachable := filepath.Join(dir, "unreachable.yaml")
	if err := os.WriteFile(unreachable, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: x\n  context:\n    cluster: x\n    user: x\ncurrent-context: x\nusers:\n- name: x\n  user:\n    token: abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	noContext := filepath.Join(dir, "nocontext.yaml")
	if err := os.WriteFile(noContext, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster:\n    server: https://127.0.0.1:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no resource", []string{}, ExitUsage, `error: you must specify the type of resource to watch, e.g. "kubectl watchcache pods" or "kubectl watchcache pods,deployments.apps"`},
		{"empty resource name", []string{"pods,,secrets"}, ExitUsage, `error: "pods,,secrets" has an empty resource name: write resources as kubectl does, e.g. pods,deployments.apps`},
		{"TYPE/NAME", []string{"pods,configmaps/cm-1"}, ExitUsage, `error: "configmaps/cm-1" is TYPE/NAME: watch a resource type, and narrow it to one object with a field selector, e.g. "kubectl watchcache configmaps --field-selector metadata.name=cm-1"`},
		{"completion of a shell cobra does not know", []string{"completion", "tcsh"}, ExitUsage, `error: unsupported shell type "tcsh": one of bash, zsh, fish, powershell`},
		{"completion without a shell", []string{"completion"}, ExitUsage, `error: shell not specified: one of bash, zsh, fish, powershell`},
		{"completion with an argument too many", []string{"completion", "bash", "extra"}, ExitUsage, `error: unknown command "extra" for "kubectl watchcache completion bash"`},
		{"help on no such command", []string{"help", "nosuch"}, ExitUsage, `error: unknown help topic "nosuch": run "kubectl watchcache --help" for the commands`},
		{"zero max resources", []string{"pods", "--max-resources", "0"}, ExitUsage, "error: invalid --max-resources 0: must be at least 1"},
		{"zero concurrent lists", []string{"pods", "--max-concurrent-lists", "0"}, ExitUsage, "error: invalid --max-concurrent-lists 0: must be at least 1"},
		{"negative page size", []string{"pods", "--page-size", "-1"}, ExitUsage, "error: invalid --page-size -1: must be 0 (no pagination) or more"},
		{"match without rv", []string{"pods", "--resource-version-match", "Exact"}, ExitUsage, "error: --resource-version-match requires --resource-version"},
		{"bad match", []string{"pods", "--resource-version", "5", "--resource-version-match", "Newest"}, ExitUsage, `error: invalid --resource-version-match "Newest": want Exact or NotOlderThan`},
		{"rv not a number", []string{"pods", "--resource-version", "abc"}, ExitUsage, `error: invalid --resource-version "abc": want "" (a consistent read), "0" (any) or a number`},
		{"negative rv", []string{"pods", "--resource-version", "-5"}, ExitUsage, `error: invalid --resource-version "-5": want "" (a consistent read), "0" (any) or a number`},
		{"exact read by a streaming list", []string{"pods", "--resource-version", "5", "--resource-version-match", "Exact", "--initial-list", "stream"}, ExitUsage, "error: --resource-version-match Exact needs a LIST (--initial-list list or auto): a streaming list reads NotOlderThan only"},
		{"unknown strategy", []string{"pods", "--initial-list", "fast"}, ExitUsage, `error: invalid --initial-list "fast": want auto, list or stream`},
		{"bad output", []string{"pods", "-o", "yaml"}, ExitUsage, `error: invalid output format "yaml": want text or json`},
		{"bad trace objects", []string{"pods", "--trace", filepath.Join(dir, "t.jsonl"), "--trace-objects", "some"}, ExitUsage, `error: invalid --trace-objects "some": want none, metadata or full`},
		{"trace is a directory", []string{"pods", "--trace", dir}, ExitUsage, "error: --trace " + dir + ": is a directory"},
		{"trace over the kubeconfig", []string{"pods", "--kubeconfig", unreachable, "--trace", unreachable}, ExitUsage, "error: --trace " + unreachable + ": refusing to overwrite " + unreachable + ", a kubeconfig this run reads"},
		{"proxy's kubeconfig over the kubeconfig", []string{"proxy", "--kubeconfig", unreachable, "--print-kubeconfig", unreachable}, ExitUsage, "error: --print-kubeconfig " + unreachable + ": refusing to overwrite " + unreachable + ", a kubeconfig this run reads"},
		{"monitor's trace over the kubeconfig", []string{"monitor", "pods", "--kubeconfig", unreachable, "--trace", unreachable}, ExitUsage, "error: --trace " + unreachable + ": refusing to overwrite " + unreachable + ", a kubeconfig this run reads"},
		{"trace directory missing", []string{"pods", "--trace", "/nonexistent/dir/t.jsonl"}, ExitUsage, "error: --trace /nonexistent/dir/t.jsonl: directory /nonexistent/dir does not exist"},
		{"bad wire", []string{"pods", "--wire", "xml"}, ExitUsage, `error: invalid --wire "xml": want auto, protobuf or json`},
		{"protobuf with full objects", []string{"pods", "--wire", "protobuf", "--keep-objects"}, ExitUsage, "error: --wire protobuf cannot keep, diff or record full objects (--keep-objects, --diff, --trace-objects full): they are asked for in JSON"},
		{"protobuf with --diff", []string{"pods", "--wire", "protobuf", "--diff"}, ExitUsage, "error: --wire protobuf cannot keep, diff or record full objects (--keep-objects, --diff, --trace-objects full): they are asked for in JSON"},
		{"--diff without whole objects", []string{"pods", "--metadata-only", "--diff"}, ExitUsage, "error: --diff needs whole objects: it cannot be used with --metadata-only"},
		{"--diff-max-objects without --diff", []string{"pods", "--diff-max-objects", "5"}, ExitUsage, "error: --diff-max-objects needs --diff"},
		{"--diff-max-objects 0", []string{"pods", "--diff", "--diff-max-objects", "0"}, ExitUsage, "error: invalid --diff-max-objects 0: must be at least 1"},
		{"monitor without --listen", []string{"monitor", "pods", "--listen", ""}, ExitUsage, "error: monitor needs --listen ADDRESS: its metrics and probes are served there"},
		{"monitor with --metrics-address", []string{"monitor", "pods", "--metrics-address", "127.0.0.1:0"}, ExitUsage, "error: monitor serves its metrics at --listen 127.0.0.1:8080: use --listen, not --metrics-address"},
		{"monitor --once", []string{"monitor", "pods", "--once"}, ExitUsage, "error: monitor runs until stopped: --once is for kubectl watchcache RESOURCE"},
		{"monitor --listen not an address", []string{"monitor", "pods", "--listen", "bogus"}, ExitUsage, `error: invalid --listen "bogus": want HOST:PORT, e.g. 127.0.0.1:9090`},
		{"monitor -o yaml", []string{"monitor", "pods", "-o", "yaml"}, ExitUsage, `error: invalid output format "yaml": monitor logs JSON lines`},
		{"monitor -o text", []string{"monitor", "pods", "-o", "text"}, ExitUsage, `error: invalid output format "text": monitor logs JSON lines`},
		{"monitor port out of range", []string{"monitor", "pods", "--listen", "127.0.0.1:99999"}, ExitUsage, `error: invalid --listen "127.0.0.1:99999": want HOST:PORT, e.g. 127.0.0.1:9090`},
		{"protobuf with a full trace", []string{"pods", "--wire", "protobuf", "--trace", filepath.Join(dir, "t.jsonl"), "--trace-objects", "full"}, ExitUsage, "error: --wire protobuf cannot keep, diff or record full objects (--keep-objects, --diff, --trace-objects full): they are asked for in JSON"},
		{"unsafe secrets without trace", []string{"secrets", "--trace-unsafe-secrets"}, ExitUsage, "error: --trace-unsafe-secrets needs --trace"},
		{"--trace-objects without --trace", []string{"pods", "--trace-objects", "full"}, ExitUsage, "error: --trace-objects needs --trace"},
		{"proxy --trace-objects without --trace", []string{"proxy", "--trace-objects", "none"}, ExitUsage, "error: --trace-objects needs --trace"},
		{"cost -o yaml", []string{"cost", "pods", "-o", "yaml"}, ExitUsage, `error: invalid output format "yaml": want text or json`},
		{"cost --exact with --sample", []string{"cost", "pods", "--exact", "--sample", "10"}, ExitUsage, "error: --sample and --exact cannot be used together: --exact measures every object"},
		{"--trace-max-size without --trace", []string{"pods", "--trace-max-size", "1Mi"}, ExitUsage, "error: --trace-max-size needs --trace"},
		{"--trace-max-size not a size", []string{"pods", "--trace", filepath.Join(dir, "t.jsonl"), "--trace-max-size", "big"}, ExitUsage, `error: invalid --trace-max-size "big": want a size such as 100Mi or 1G, or 0`},
		{"--trace-max-size too small", []string{"pods", "--trace", filepath.Join(dir, "t.jsonl"), "--trace-max-size", "1k"}, ExitUsage, "error: invalid --trace-max-size 1k: must be at least 64Ki, or 0 (no bound)"},
		{"--trace-max-size negative", []string{"pods", "--trace", filepath.Join(dir, "t.jsonl"), "--trace-max-size=-1Mi"}, ExitUsage, "error: invalid --trace-max-size -1Mi: must not be negative"},
		{"--trace-keep without a size", []string{"pods", "--trace", filepath.Join(dir, "t.jsonl"), "--trace-keep", "5"}, ExitUsage, "error: --trace-keep needs --trace-max-size"},
		{"monitor's bounded trace to a FIFO", []string{"monitor", "pods", "--trace", fifo}, ExitUsage, "error: --trace " + fifo + " is not a regular file, and a bounded trace is renamed as it rotates: pass --trace-max-size 0"},
		{"--trace-keep 0", []string{"monitor", "pods", "--trace", filepath.Join(dir, "t.jsonl"), "--trace-keep", "0"}, ExitUsage, "error: invalid --trace-keep 0: must be at least 1"},
		{"unknown flag", []string{"pods", "--bogus"}, ExitUsage, "error: unknown flag: --bogus"},
		{"unreachable", []string{"pods", "--kubeconfig", unreachable}, ExitFailure, "error: the connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?"},
		{"no current context", []string{"pods", "--kubeconfig", noContext}, ExitFailure, `error: the kubeconfig has no current context: set one with "kubectl config use-context NAME", or pass --context`},
		{"replay missing", []string{"replay", filepath.Join(dir, "missing.jsonl")}, ExitFailure, "error: cannot read " + filepath.Join(dir, "missing.jsonl") + ": no such file or directory"},
		{"replay a directory", []string{"replay", dir}, ExitFailure, "error: cannot read " + dir + ": is a directory"},
		{"explain a directory", []string{"explain", dir}, ExitFailure, "error: cannot read " + dir + ": is a directory"},
		{"replay empty", []string{"replay", empty}, ExitFailure, "error: " + empty + ": the trace is empty"},
		{"replay corrupt", []string{"replay", corrupt}, ExitFailure, "error: " + corrupt + ":1: not a watchcache trace (the first line is not JSON): invalid character 'h' in literal true (expecting 'r')"},
		{"replay future version", []string{"replay", future}, ExitFailure, "error: " + future + ":1: unsupported trace version 3 (this build reads versions 1 and 2)"},
		{"replay negative speed", []string{"replay", empty, "--speed", "-1"}, ExitUsage, "error: invalid --speed -1: must be 0 (as fast as possible) or a positive number"},
		{"replay speed NaN", []string{"replay", empty, "--speed", "NaN"}, ExitUsage, "error: invalid --speed NaN: must be 0 (as fast as possible) or a positive number"},
		{"replay speed Inf", []string{"replay", empty, "--speed", "Inf"}, ExitUsage, "error: invalid --speed +Inf: must be 0 (as fast as possible) or a positive number"},
		{"version with an argument", []string{"version", "extra"}, ExitUsage, `error: version takes no arguments, got ["extra"]`},
		{"replay without file", []string{"replay"}, ExitUsage, "error: replay takes one trace file, got 0 arguments"},
		{"replay --diff of metadata", []string{"replay", "../../testdata/traces/demo.jsonl", "--diff", "--no-tui"}, ExitUsage, "error: --diff needs whole objects, and the trace keeps none: record it with --trace-objects full (a trace recorded with --diff shows its changes without --diff)"},
		{"replay --diff of a proxy's trace", []string{"replay", "../../testdata/traces/proxy.jsonl", "--diff", "--no-tui"}, ExitUsage, "error: --diff does not apply to a proxy's trace: it replays as recorded, with the changes proxy --diff recorded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit code: got %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if got := strings.TrimSpace(stderr); got != tc.want {
				t.Errorf("stderr:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestE2EResourceNamesTheServerDoesNotServeAreRefused(t *testing.T) {
	kc := kubeconfig(t)
	for _, tc := range []struct{ name, arg, want string }{
		{"unknown resource", "flurbs", `error: the server doesn't have a resource type "flurbs"`},
		{"not listable", "tokenreviews", `error: the server does not support list or watch on resource type "tokenreviews" (its verbs: create)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.arg, "--kubeconfig", kc)
			if code != ExitFailure || strings.TrimSpace(stderr) != tc.want {
				t.Errorf("got %d %q, want %d %q", code, strings.TrimSpace(stderr), ExitFailure, tc.want)
			}
		})
	}
}

// "configmaps c1" is how kubectl get names one object: after a first
// argument that resolves, a second that names no resource type gets the
// hint TYPE/NAME gets, not "the server doesn't have a resource type". Two
// resources as two arguments are both watched, as README says.
func TestE2ETypeThenNameIsAUsageErrorWithTheFieldSelectorHint(t *testing.T) {
	kc := kubeconfig(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"configmaps", "c1"}, ExitUsage, `error: the server doesn't have a resource type "c1"; if "configmaps c1" is TYPE NAME, watch a resource type, and narrow it to one object with a field selector, e.g. "kubectl watchcache configmaps --field-selector metadata.name=c1"`},
		{[]string{"cm", "c1", "c2"}, ExitUsage, `error: the server doesn't have a resource type "c1"; if "cm c1" is TYPE NAME, watch a resource type, and narrow it to one object with a field selector, e.g. "kubectl watchcache cm --field-selector metadata.name=c1"`},
		{[]string{"cost", "configmaps", "c1"}, ExitUsage, `error: the server doesn't have a resource type "c1"; if "configmaps c1" is TYPE NAME, measure a resource type, and narrow it to one object with a field selector, e.g. "kubectl watchcache cost configmaps --field-selector metadata.name=c1"`},
		// Not TYPE NAME: the first argument does not resolve, or the name
		// is in a list of resources, or comes third.
		{[]string{"flurbs", "c1"}, ExitFailure, `error: the server doesn't have a resource type "flurbs"`},
		{[]string{"configmaps", "secrets,c1"}, ExitFailure, `error: the server doesn't have a resource type "c1"`},
		{[]string{"configmaps", "secrets", "c1"}, ExitFailure, `error: the server doesn't have a resource type "c1"`},
	} {
		args := append(tc.args, "--kubeconfig", kc)
		if tc.args[0] != "cost" {
			args = append(args, "--once", "--no-tui")
		}
		code, _, stderr := run(t, args...)
		if code != tc.code || strings.TrimSpace(stderr) != tc.want {
			t.Errorf("%v: got %d %q\nwant %d %q", tc.args, code, strings.TrimSpace(stderr), tc.code, tc.want)
		}
	}
	code, out, stderr := run(t, "pods", "deployments", "--kubeconfig", kc, "-n", "default", "--once", "--no-tui", "--summary", "-o", "json")
	sums := allSummaries(t, out)
	if code != ExitOK || len(sums) != 2 || sums[0].Resource != "pods.v1" || sums[1].Resource != "deployments.v1.apps" {
		t.Errorf("pods deployments: exit %d, %d summaries, want 0 and pods.v1 then deployments.v1.apps:\n%s", code, len(sums), stderr)
	}
}

// The names the tool prints for resources (configmaps.v1,
// deployments.v1.apps) are accepted as input and name the same resource:
// configmaps.v1 was refused, taken for resource configmaps of group v1.
func TestE2EAResourceAsTheToolNamesItIsAccepted(t *testing.T) {
	kc := kubeconfig(t)
	for _, arg := range []string{"configmaps.v1", "cm.v1", "configmaps.v1.", "deployments.v1.apps", "deployments.apps"} {
		code, out, stderr := run(t, arg, "--kubeconfig", kc, "-n", "default", "--once", "--no-tui", "--summary", "-o", "json")
		sums := allSummaries(t, out)
		want := "configmaps.v1"
		if strings.HasPrefix(arg, "deployments") {
			want = "deployments.v1.apps"
		}
		if code != ExitOK || len(sums) != 1 || sums[0].Resource != want {
			t.Errorf("%s: exit %d, %d summaries, want %d and one of %s:\n%s", arg, code, len(sums), ExitOK, want, stderr)
		}
	}
	code, _, stderr := run(t, "configmaps.v2", "--kubeconfig", kc, "--once", "--no-tui")
	if want := `error: the server doesn't have a resource type "configmaps.v2"`; code != ExitFailure || strings.TrimSpace(stderr) != want {
		t.Errorf("configmaps.v2: got %d %q, want %d %q", code, strings.TrimSpace(stderr), ExitFailure, want)
	}
}

func TestNoKubeconfigAtAllIsRefusedBeforeTryingLocalhost(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("HOME", t.TempDir())
	code, _, stderr := run(t, "pods")
	want := "error: no kubeconfig found (looked at --kubeconfig, $KUBECONFIG and ~/.kube/config): pass --kubeconfig or --server"
	if code != ExitFailure || strings.TrimSpace(stderr) != want {
		t.Errorf("got %d %q, want %d %q", code, stderr, ExitFailure, want)
	}
}

func TestE2EForbiddenNamesTheVerbResourceAndNamespace(t *testing.T) {
	cfg, err := cluster(t).UserConfig("nobody")
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "nobody.yaml")
	if err := testcluster.WriteKubeconfig(kc, cfg); err != nil {
		t.Fatal(err)
	}
	// The default strategy starts with a streaming list, which is a watch.
	for _, verb := range []string{"watch", "list"} {
		code, _, stderr := run(t, "configmaps", "--kubeconfig", kc, "-n", "kube-system", "--no-tui", "--initial-list", map[string]string{"watch": "auto", "list": "list"}[verb])
		want := `error: failed to perform initial object list` + map[string]string{"watch": " (a streaming list, which is a watch)", "list": ""}[verb] + `: 403 Forbidden: configmaps is forbidden: User "nobody" cannot ` + verb + ` resource "configmaps" in API group "" in the namespace "kube-system" (gave up after 2 attempts)`
		if code != ExitFailure || strings.TrimSpace(stderr) != want {
			t.Errorf("got %d\n%q\nwant %d\n%q", code, stderr, ExitFailure, want)
		}
	}
}

// TestE2EABadSelectorExitsOneAtOnceWithTheServersMessage: a mistyped field
// selector (400) or label selector (422 on a real apiserver) is the
// request's fault, as kubectl get says: exit 1 with the server's message
// after one request, whatever the list method, never a streaming-list
// refusal, and no retries until --give-up-after.
func TestE2EABadSelectorExitsOneAtOnceWithTheServersMessage(t *testing.T) {
	kc := kubeconfig(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--field-selector", "foo=bar"}, `"foo" is not a known field selector`},
		{[]string{"--field-selector", "foo=bar", "--initial-list", "list"}, `"foo" is not a known field selector`},
		{[]string{"--field-selector", "foo=bar", "--initial-list", "stream"}, `"foo" is not a known field selector`},
		{[]string{"-l", "app in (a"}, `unable to parse requirement`},
	} {
		args := append([]string{"configmaps", "-A", "--kubeconfig", kc, "--no-tui", "--give-up-after", "2m"}, tc.args...)
		code, out, stderr := run(t, args...)
		if code != ExitFailure || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "the same request would be refused again") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and the server's %q", tc.args, code, stderr, tc.want)
		}
		if strings.Contains(out, "refused the streaming list") || strings.Contains(out, "falling back to LIST") {
			t.Errorf("%v: a bad selector was taken for a streaming-list refusal:\n%s", tc.args, out)
		}
		if n := strings.Count(out, ": started"); n != 1 {
			t.Errorf("%v: %d requests started, want the one refused:\n%s", tc.args, n, out)
		}
	}
}

// TestE2EARunTheUserEndsEndsItsRequestAsStopped: --duration and --once end
// the open request as "stopped", never "timeout" (nor "canceled"), and the
// trace, its replay and its report say the same.
func TestE2EARunTheUserEndsEndsItsRequestAsStopped(t *testing.T) {
	createConfigMaps(t, "stopped", 3)
	dir := t.TempDir()
	tracePath := filepath.Join(dir, "stopped.jsonl")
	for _, args := range [][]string{
		{"--duration", "3s", "--trace", tracePath},
		{"--once"},
	} {
		code, out, stderr := run(t, append([]string{"configmaps", "-n", "stopped", "--kubeconfig", kubeconfig(t), "--no-tui", "-o", "json"}, args...)...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		if !strings.Contains(out, `"reason":"stopped"`) || strings.Contains(out, `"reason":"timeout"`) || strings.Contains(out, `"reason":"canceled"`) {
			t.Errorf("%v: want the open request to end stopped, and nothing timed out or canceled:\n%s", args, out)
		}
	}
	traced, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(traced), `"reason":"stopped"`) || strings.Contains(string(traced), `"reason":"timeout"`) {
		t.Errorf("the trace does not record the stop as stopped:\n%s", traced)
	}
	code, out, stderr := run(t, "replay", tracePath, "--speed", "0", "--no-tui", "-o", "json", "--strict")
	if code != ExitOK || !strings.Contains(out, `"reason":"stopped"`) || strings.Contains(out, `"reason":"timeout"`) {
		t.Errorf("the replay: exit %d, want the request stopped\n%s\n%s", code, out, stderr)
	}
	page := filepath.Join(dir, "stopped.html")
	if code, _, stderr := run(t, "report", tracePath, "-o", page); code != ExitOK {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`<a href="#r0-\d+" class="req [^"]*c-stopped">`).Match(html) || !strings.Contains(string(html), `class="c-stopped"><td`) {
		t.Errorf("the report draws and lists no request as stopped")
	}
}

func createConfigMaps(t *testing.T, ns string, n int) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cluster(t).Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-" + string(rune('a'+i))}, Data: map[string]string{"k": "v"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestE2EOnceWithJSONSummaryListsTheNamespaceAndRecordsATraceThatReplaysToTheSameSummary(t *testing.T) {
	createConfigMaps(t, "once", 5)
	tracePath := filepath.Join(t.TempDir(), "once.jsonl.gz")
	resources := []string{"configmaps", "cm"}
	for _, res := range resources {
		code, out, stderr := run(t, res, "--kubeconfig", kubeconfig(t), "-n", "once", "--once", "--summary", "-o", "json", "--initial-list", "list", "--page-size", "2", "--trace", tracePath)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", res, code, stderr)
		}
		sum := lastJSONObject(t, out)
		if sum.Objects != 5 || sum.Resource != "configmaps.v1" || sum.Counters.ListPages != 3 || len(sum.Store) != 5 || sum.Store[0].Name != "cm-a" {
			t.Fatalf("%s: summary: got %+v", res, sum)
		}
		if !strings.Contains(stderr, "trace written to "+tracePath) {
			t.Errorf("stderr: got %q, want it to name the trace", stderr)
		}
	}
	code, out, stderr := run(t, "replay", tracePath, "--speed", "0", "--summary", "-o", "json")
	if code != ExitOK {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	if sum := lastJSONObject(t, out); sum.Objects != 5 || sum.Counters.ListPages != 3 {
		t.Errorf("replayed summary: got %+v", sum)
	}
}

// lastJSONObject decodes the summary printed after the JSON lines.
func lastJSONObject(t *testing.T, out string) summary.Summary {
	t.Helper()
	sums, err := summary.Decode([]byte(out))
	if err != nil || len(sums) != 1 {
		t.Fatalf("want one summary as the last line: %v (%d summaries)\n%s", err, len(sums), out[max(0, len(out)-2000):])
	}
	return sums[0]
}

func TestReplayOfTheBundledDemoPrintsTheRelistAndItsDiff(t *testing.T) {
	code, out, stderr := run(t, "replay", "../../testdata/traces/demo.jsonl", "--speed", "0", "--no-tui")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"Relisting     gone: 410 Gone at resourceVersion",
		"relist-diff: relist diff: 3 missed deletes, 1 missed recreate, 2 missed updates, 0 missed adds, 119 unchanged",
		"request #1 LIST resourceVersion=\"\" limit=50: closed after",
		"Stopped       stopped: stopped",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestReplayWarnsWhereDecisionsDifferAndStrictMakesItAnError(t *testing.T) {
	const trace = "../../pkg/trace/testdata/handwritten/other-fields.jsonl"
	code, _, stderr := run(t, "replay", trace, "--speed", "0", "--no-tui")
	if code != ExitOK {
		t.Errorf("exit code: got %d, want %d: differences are warnings", code, ExitOK)
	}
	for _, want := range []string{
		"warning: difference: decision 2 (line 8): recorded list-complete → Watching (resourceVersion 10, 3 objects), replayed list-complete → Watching (resourceVersion 10, 2 objects)",
		"warning: the replayed reflector decided differently from the recorded one in 2 places; --strict makes this an error",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	code, _, stderr = run(t, "replay", trace, "--speed", "0", "--no-tui", "--strict")
	if want := "error: the replayed reflector decided differently from the recorded one in 2 places (--strict)"; code != ExitFailure || !strings.Contains(stderr, want) {
		t.Errorf("--strict: got exit %d, want %d and %q:\n%s", code, ExitFailure, want, stderr)
	}
}

func TestReplayOfATraceWithoutDecisionsSaysThereIsNothingToCompare(t *testing.T) {
	code, _, stderr := run(t, "replay", "../../pkg/trace/testdata/handwritten/no-notes.jsonl", "--speed", "0", "--no-tui", "--strict")
	if want := "replay: the trace has no recorded decisions to compare\n"; code != ExitOK || stderr != want {
		t.Errorf("got exit %d and %q, want %d and %q", code, stderr, ExitOK, want)
	}
}

// TestTheMonitorNamesItsOwnFlagWhenItsAddressIsTaken: the monitor's address
// is --listen, and its errors and warnings say so (they said
// --metrics-address, a flag the monitor refuses).
func TestTheMonitorNamesItsOwnFlagWhenItsAddressIsTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	code, _, stderr := run(t, "monitor", "configmaps", "--kubeconfig", kubeconfig(t), "--listen", addr)
	if want := "error: --listen " + addr + ": "; code != ExitFailure || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "address already in use") {
		t.Errorf("monitor --listen %s (taken): exit %d, stderr %q; want exit %d and %q…address already in use", addr, code, stderr, ExitFailure, want)
	}
}

// replay --diff diffs the resources whose trace kept whole objects and says
// which it cannot: here configmaps' header says full, the others metadata.
func TestReplayDiffWarnsOfTheResourcesItCannotDiff(t *testing.T) {
	b, err := os.ReadFile("../../testdata/traces/several.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mixed.jsonl")
	if err := os.WriteFile(path, bytes.Replace(b, []byte(`"objects":"metadata"`), []byte(`"objects":"full"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "replay", path, "--speed", "0", "--no-tui", "--diff")
	want := "warning: --diff: the trace keeps no whole objects of deployments, widgets (recorded without --trace-objects full): they are not diffed (the changes a trace recorded with --diff still show)\n"
	if code != ExitOK || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr %q; want exit 0 and %q", code, stderr, want)
	}
}

// A Secret's values are REDACTED in a trace recorded without
// --trace-unsafe-secrets: a diff of two versions would see no change of
// data, and call a changed password "nothing changed but resourceVersion
// and managedFields". replay --diff does not diff them, and says why.
func TestReplayDiffDoesNotDiffSecretsWhoseValuesTheTraceRedacted(t *testing.T) {
	b, err := os.ReadFile("../../testdata/traces/several.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := bytes.Cut(b, []byte("\n"))
	header = bytes.ReplaceAll(header, []byte(`"objects":"metadata"`), []byte(`"objects":"full"`))
	header = bytes.Replace(header, []byte(`"resource":"configmaps","kind":"ConfigMap"`), []byte(`"resource":"secrets","kind":"Secret"`), 1)
	path := filepath.Join(t.TempDir(), "secrets.jsonl")
	if err := os.WriteFile(path, slices.Concat(header, []byte("\n"), rest), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "replay", path, "--speed", "0", "--no-tui", "--diff")
	want := "warning: --diff: the trace keeps the values of secrets REDACTED (recorded without --trace-unsafe-secrets), so a diff would see no change of their data: they are not diffed (the changes a trace recorded with --diff still show)\n"
	if code != ExitOK || stderr != want {
		t.Fatalf("exit %d, stderr %q; want exit 0 and %q", code, stderr, want)
	}
	// Recorded with their values, they are diffed.
	unsafe := bytes.Replace(header, []byte(`"objects":"full","options":{`), []byte(`"objects":"full","options":{"unsafeSecrets":true,`), 1)
	if err := os.WriteFile(path, slices.Concat(unsafe, []byte("\n"), rest), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "replay", path, "--speed", "0", "--no-tui", "--diff"); code != ExitOK || stderr != "" {
		t.Errorf("with unsafeSecrets: exit %d, stderr %q; want exit 0 and no warning", code, stderr)
	}
}

// Two watches of one resource (the probe's Lease beside the user's leases)
// have lines that tell them apart: the second is name#2, and stderr says
// which watch that is (both were "leases.v1.coordination.k8s.io").
func TestTwoWatchesOfOneResourceHaveLinesThatTellThemApart(t *testing.T) {
	b, err := os.ReadFile("../../testdata/traces/several.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := bytes.Cut(b, []byte("\n"))
	header = bytes.Replace(header, []byte(`"group":"apps","version":"v1","resource":"deployments","kind":"Deployment","namespaced":true},"namespace":"several-768133","labelSelector":""`),
		[]byte(`"group":"","version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true},"namespace":"several-768133","labelSelector":"app=x"`), 1)
	path := filepath.Join(t.TempDir(), "twice.jsonl")
	if err := os.WriteFile(path, slices.Concat(header, []byte("\n"), rest), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "replay", path, "--speed", "0", "--no-tui")
	if want := "lines of configmaps.v1#2 are the watch of configmaps.v1 in namespace several-768133 -l app=x\n"; code != ExitOK || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr %q; want exit 0 and %q", code, stderr, want)
	}
	var first, second int
	for _, l := range strings.Split(out, "\n") {
		switch f := strings.Fields(l); {
		case len(f) < 2:
		case f[1] == "configmaps.v1":
			first++
		case f[1] == "configmaps.v1#2":
			second++
		}
	}
	if first == 0 || second == 0 {
		t.Errorf("%d lines of configmaps.v1, %d of configmaps.v1#2; want both:\n%s", first, second, out)
	}
}

// A replay the user stops (SIGINT, SIGTERM: its context ends) says so; it
// does not call a whole recording cut short.
func TestAnInterruptedReplaySaysSoNotThatTheRecordingIsCut(t *testing.T) {
	streams, _, _, errOut := genericiooptions.NewTestIOStreams()
	cmd := testCommand(streams)
	cmd.SetArgs([]string{"replay", "../../testdata/traces/demo.jsonl", "--no-tui", "--speed", "1"})
	ctx, cancel := context.WithCancel(context.Background())
	defer time.AfterFunc(time.Second, cancel).Stop() // the demo lasts 13 s; a signal cancels the same way
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatal(err)
	}
	if got := errOut.String(); !strings.Contains(got, "replay: stopped at 03:43:0") || strings.Contains(got, "ends early") {
		t.Errorf("stderr %q: want it to say the replay was interrupted, and not that the recording ends early", got)
	}
}

// -v on the dashboard is refused only when client-go's log would be written
// across it: stderr the terminal. Redirected (2> FILE), or without the
// dashboard, it runs.
func TestVerboseIsRefusedOnlyAcrossTheDashboard(t *testing.T) {
	for _, c := range []struct{ tui, verbose, stderrTerminal, refused bool }{
		{true, true, true, true},
		{true, true, false, false},
		{false, true, true, false},
		{true, false, true, false},
	} {
		err := logAcrossDashboard(c.tui, c.verbose, c.stderrTerminal)
		if got := err != nil; got != c.refused {
			t.Errorf("dashboard %v, -v %v, stderr a terminal %v: refused %v, want %v", c.tui, c.verbose, c.stderrTerminal, got, c.refused)
		}
		var ue usageError
		if err != nil && (!errors.As(err, &ue) || !strings.Contains(err.Error(), "2> client-go.log")) {
			t.Errorf("refused with %v, want a usage error saying how to redirect it", err)
		}
	}
}

// -v and --vmodule each make client-go log on stderr, which the dashboard
// must know; --vmodule alone was discarded (and not refused).
func TestVerboseOrVModuleMakeClientGoLog(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"-v", "3"}, true},
		{[]string{"--vmodule", "reflector=4"}, true},
	} {
		streams, _, _, _ := genericiooptions.NewTestIOStreams()
		cmd := testCommand(streams)
		version, _, err := cmd.Find([]string{"version"})
		if err != nil {
			t.Fatal(err)
		}
		var got bool
		version.RunE = func(c *cobra.Command, _ []string) error { got = logging(c.Context()); return nil }
		cmd.SetArgs(append([]string{"version"}, c.args...))
		if err := cmd.ExecuteContext(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%v: client-go logs %v, want %v", c.args, got, c.want)
		}
	}
	// Back to the default, for the tests after.
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	cmd := testCommand(streams)
	cmd.SetArgs([]string{"version", "-v", "0", "--vmodule", ""})
	_ = cmd.ExecuteContext(context.Background())
}
