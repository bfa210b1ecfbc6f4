package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
)

// The proxy's empty dashboard says where it serves and the kubeconfig to
// use: the file --print-kubeconfig wrote, or the one to write, inline.
func TestConnectLinesSayWhereAndWithWhichKubeconfig(t *testing.T) {
	const server = "http://127.0.0.1:34567"
	kc := proxyKubeconfig(server, "")
	withFile := strings.Join(connectLines(server, "proxy.kubeconfig", kc), "\n")
	for _, want := range []string{server, "KUBECONFIG=proxy.kubeconfig ./my-controller"} {
		if !strings.Contains(withFile, want) {
			t.Errorf("with --print-kubeconfig the lines lack %q:\n%s", want, withFile)
		}
	}
	lines := connectLines(server, "", kc)
	if len(lines) > 17 {
		t.Errorf("%d lines: the empty table of an 80x24 screen has 17", len(lines))
	}
	inline := strings.Join(lines, "\n")
	for _, want := range []string{server, "KUBECONFIG=FILE ./my-controller", "--print-kubeconfig FILE", "server: " + server, "current-context: watchcache-proxy"} {
		if !strings.Contains(inline, want) {
			t.Errorf("without --print-kubeconfig the lines lack %q:\n%s", want, inline)
		}
	}
}

// --print-kubeconfig replaces the file whole, with mode 0600, and leaves
// nothing beside it: a controller that starts as soon as the file appears
// never reads half of it.
func TestThePrintedKubeconfigIsWrittenWholeWithMode0600(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "proxy.kubeconfig")
	if err := os.WriteFile(path, []byte("old and world-readable"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeKubeconfig(path, proxyKubeconfig("http://127.0.0.1:8001", "")); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil || cfg.Clusters["watchcache-proxy"] == nil || cfg.Clusters["watchcache-proxy"].Server != "http://127.0.0.1:8001" {
		t.Fatalf("written: %+v, %v", cfg, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode: %v, %v", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left beside it: %v", entries)
	}
	if err := writeKubeconfig(filepath.Join(dir, "no-such-dir", "k"), proxyKubeconfig("http://127.0.0.1:8001", "")); err == nil || !strings.Contains(err.Error(), "--print-kubeconfig") {
		t.Errorf("an unwritable path: %v", err)
	}
}

// silentServer is a kubeconfig of a server that takes each connection and
// never answers.
func silentServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() }) // held open, unanswered, until the test ends
		}
	}()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster:\n    server: http://"+ln.Addr().String()+"\ncontexts:\n- name: x\n  context:\n    cluster: x\ncurrent-context: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}

// within fails the test if f has not returned after a minute.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s still waiting on a server that never answers after a minute", what)
	}
}

// A server that takes the connection and never answers does not hold the
// start: discovery, whose clients the flags build apart from the REST
// config, is bound by connect's timeout too; and a Tab's completion of
// RESOURCE waits 5 s for each request, not for ever.
func TestDiscoveryOfAServerThatNeverAnswersIsBound(t *testing.T) {
	kc := silentServer(t)
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &kc
	cacheDir := t.TempDir()
	flags.CacheDir = &cacheDir
	within(t, "connect, with a 500ms bound,", func() {
		_, err := connect(flags, resourceList{args: []string{"configmaps"}}, 1, false, 500*time.Millisecond)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "timeout") {
			t.Errorf("connect: got %v, want a timeout", err)
		}
	})
	for _, cmd := range []string{"", "cost"} {
		within(t, "completing "+cmd+" RESOURCE", func() {
			args := []string{"__complete"}
			if cmd != "" {
				args = append(args, cmd)
			}
			if _, out, _ := run(t, append(args, "--kubeconfig", kc, "--cache-dir", cacheDir, "config")...); out != ":4\n" {
				t.Errorf("completing %v: got %q, want nothing", args, out)
			}
		})
	}
}

// The proxy's kubeconfig keeps the namespace of the user's context, or -n:
// a program run with it lists where it would with the user's own.
func TestTheProxysKubeconfigKeepsTheContextsNamespace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: a\n  context:\n    cluster: x\n    namespace: team-a\n- name: b\n  context:\n    cluster: x\ncurrent-context: a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ context, namespace, want string }{
		{"a", "", "team-a"},
		{"a", "team-b", "team-b"},
		{"b", "", ""},
	} {
		flags := genericclioptions.NewConfigFlags(false)
		flags.KubeConfig, flags.Context, flags.Namespace = &path, &c.context, &c.namespace
		ns := contextNamespace(flags)
		if ns != c.want {
			t.Errorf("context %s, -n %q: namespace %q, want %q", c.context, c.namespace, ns, c.want)
		}
		b, err := clientcmd.Write(*proxyKubeconfig("http://127.0.0.1:8001", ns))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := clientcmd.Load(b); err != nil || got.Contexts[got.CurrentContext].Namespace != c.want {
			t.Errorf("context %s, -n %q: the kubeconfig's namespace is not %q:\n%s", c.context, c.namespace, c.want, b)
		}
	}
}
