package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/causal"
	"k8s.io/client-go/kubernetes"
)

// TestE2EProxyBindsOnlyLoopbackUnlessToldAndRefusesBadFlags: a bind beyond
// loopback needs an explicit --address (and then warns); bad flags are
// usage errors.
func TestE2EProxyBindsOnlyLoopbackUnlessToldAndRefusesBadFlags(t *testing.T) {
	kc, dir := kubeconfig(t), t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--port", "70000"}, "error: invalid --port 70000"},
		{[]string{"proxy", "--forget-after", "0s"}, "error: invalid --forget-after 0s: must be positive"},
		{[]string{"proxy", "--address", ""}, `error: invalid --address "": want an IP address (0.0.0.0 serves on every interface)`},
		{[]string{"proxy", "--metrics-address", "foo"}, `error: invalid --metrics-address "foo": want HOST:PORT, e.g. 127.0.0.1:9090`},
		{[]string{"proxy", "--forget-after", "soon"}, `error: invalid argument "soon" for "--forget-after" flag`},
		{[]string{"proxy", "--accept-hosts", "("}, `error: invalid --accept-hosts "("`},
		{[]string{"proxy", "--trace-objects", "all"}, `error: invalid --trace-objects "all"`},
		{[]string{"proxy", "--trace-unsafe-secrets"}, "error: --trace-unsafe-secrets needs --trace"},
		{[]string{"proxy", "extra"}, `error: proxy takes no arguments, got ["extra"]`},
		{[]string{"proxy", "--print-kubeconfig", dir}, "error: --print-kubeconfig " + dir + ": is a directory"},
		{[]string{"proxy", "--print-kubeconfig", "/nonexistent/dir/kc"}, "error: --print-kubeconfig /nonexistent/dir/kc: directory /nonexistent/dir does not exist"},
	} {
		code, _, errOut := run(t, append(tc.args, "--kubeconfig", kc)...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, ExitUsage, tc.want)
		}
	}

	// Without --address the proxy never binds beyond loopback.
	o := NewProxyOptions(genericiooptions.NewTestIOStreamsDiscard())
	o.Address, o.Port = "0.0.0.0", 0
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "refusing to serve on 0.0.0.0:0, which is not a loopback address, without an explicit --address") {
		t.Errorf("a non-loopback bind without --address: %v", err)
	}
	// With it, the proxy serves and warns; the kubeconfig it prints points at loopback,
	// which --accept-hosts lets in.
	code, _, errOut := run(t, "proxy", "--kubeconfig", kc, "--address", "0.0.0.0", "--port", "0", "--no-tui", "--duration", "1s")
	// The warning names the port the proxy listens on, not the 0 asked for,
	// and both lines name the address as asked for (not the listener's [::]).
	served := regexp.MustCompile(`Starting to serve on 0\.0\.0\.0:([1-9][0-9]*)\n`).FindStringSubmatch(errOut)
	if code != ExitOK || served == nil || !strings.Contains(errOut, "warning: serving on 0.0.0.0:"+served[1]+", which is not a loopback address: anyone who can reach it acts on") ||
		!strings.Contains(errOut, "server: http://127.0.0.1:") {
		t.Errorf("--address 0.0.0.0: exit %d, stderr:\n%s", code, errOut)
	}
}

// TestE2EProxyKubectlGetWatchGetsEveryEventAndNoSecretLeaks runs kubectl get
// pods -w through the proxy (started as a user starts it, with -v=8 and a
// trace) while pods are created and deleted: kubectl prints every event.
// No bearer token appears in the proxy's output, its logs or its trace, and
// a Secret's value is REDACTED in the trace. The trace replays as recorded.
//
// -v=8 logs every request's URL and headers (Authorization among them) and
// the responses' headers. Not -v=9: its detailed timings use an httptrace
// whose dial callback (client-go's round_trippers.go, ConnectDone) may
// write after RoundTrip returned and read them, when the transport hands the
// request another connection before its own dial ends: a data race in
// client-go that fails a plugin built with -race (exit 66), not a leak.
func TestE2EProxyKubectlGetWatchGetsEveryEventAndNoSecretLeaks(t *testing.T) {
	c := cluster(t)
	dir := pluginPath(t)
	work := t.TempDir()
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()
	ns := uniqueNamespace(t, cs, "proxy-kubectl")
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const secretValue = "hunter2-the-secret-value"
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"password": secretValue}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	tracePath := filepath.Join(work, "proxy.jsonl")
	proxyKC := filepath.Join(work, "proxy.kubeconfig")
	metricsAddr := freeAddress(t)
	p := startPlugin(t, dir, c.Kubeconfig(), "proxy", "--port", "0", "--no-tui", "--trace", tracePath, "--trace-objects", "full", "--print-kubeconfig", proxyKC, "-v=8",
		"--metrics-address", metricsAddr, "--user-agent", proxyUserAgent)
	waitForProxyKubeconfig(t, proxyKC)
	if fi, err := os.Stat(proxyKC); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the printed kubeconfig: %v, mode %v", err, fi.Mode())
	}

	// A Secret read through the proxy, in JSON (full objects are traced).
	get := exec.Command(filepath.Join(dir, "kubectl"), "--kubeconfig", proxyKC, "get", "secrets", "-n", ns, "-o", "json")
	if out, err := get.CombinedOutput(); err != nil || !strings.Contains(string(out), "aHVudGVyMi") {
		t.Fatalf("kubectl get secrets through the proxy: %v\n%s", err, out)
	}

	// The same kubectl get -w, through the proxy and directly.
	through := startWatch(t, dir, proxyKC, ns)
	direct := startWatch(t, dir, c.Kubeconfig(), ns)
	p.waitForLine(t, "WATCH") // kubectl's watch reached the server through the proxy
	direct.waitStarted(t)

	const n = 10
	for i := range n {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i)}, Spec: corev1.PodSpec{AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{Name: "c", Image: "example.invalid/c:1"}}}}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if err := cs.CoreV1().Pods(ns).Delete(ctx, fmt.Sprintf("p-%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got, want := through.until(t, "DELETED p-9"), direct.until(t, "DELETED p-9")
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("kubectl get -w through the proxy printed\n%q\ndirectly\n%q", got, want)
	}
	if len(got) < 2*n {
		t.Fatalf("kubectl get -w printed %d events, want at least %d: %q", len(got), 2*n, got)
	}
	// The proxy saw kubectl's watch and rebuilt its cache: every pod came and went.
	p.waitForLine(t, "DELETED  "+ns+"/p-9")
	// Its metrics, one set per stream, name the client.
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	scraped, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf(`namespace=%q,resource="pods.v1",type="DELETED"} %d`, ns, n); !strings.Contains(string(scraped), want) || !strings.Contains(string(scraped), `client="kubectl/`) {
		t.Errorf("the metrics lack kubectl's stream (%s):\n%s", want, grepLines(string(scraped), "events_total"))
	}
	stdoutText, stderrText := p.interrupt(t)

	// At the server: the proxy forwarded kubectl's own User-Agent, and named
	// its own requests (the server version for the trace) with --user-agent.
	events, err := c.AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	watches, own := 0, 0
	for _, ev := range events {
		if ev.UserAgent == proxyUserAgent {
			own++
		}
		if (ev.Verb == "watch" || ev.Verb == "list") && strings.Contains(ev.RequestURI, "/namespaces/"+ns+"/pods") {
			if !strings.HasPrefix(ev.UserAgent, "kubectl/") {
				t.Errorf("%s %s reached the server as %q, not as kubectl", ev.Verb, ev.RequestURI, ev.UserAgent)
			}
			if ev.Verb == "watch" {
				watches++
			}
		}
	}
	if watches < 2 || own == 0 {
		t.Errorf("the audit log has %d watches of pods in %s (want 2: through the proxy and direct) and %d requests of the proxy's own (want some)", watches, ns, own)
	}

	// The line output is in causal order, stream by stream, as the watch command's is.
	if ls, err := causal.FromText([]byte(stdoutText)); err != nil {
		t.Errorf("reading the line output: %v", err)
	} else if err := causal.Check(ls); err != nil {
		t.Errorf("the line output: %v", err)
	} else if len(ls) < 4*n {
		t.Errorf("the line output has %d lines, want at least %d", len(ls), 4*n)
	}

	traced, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	token := c.Token("admin")
	for what, text := range map[string]string{"stdout": stdoutText, "stderr (-v=8)": stderrText, "the trace": string(traced)} {
		if strings.Contains(text, token) {
			t.Errorf("the bearer token appears in %s", what)
		}
		if strings.Contains(text, secretValue) || strings.Contains(text, "aHVudGVyMi") {
			t.Errorf("the Secret's value appears in %s", what)
		}
	}
	if !strings.Contains(stderrText, "https://127.0.0.1") || !strings.Contains(stderrText, "Authorization") {
		t.Errorf("-v=8 logged no request with its headers: the check above saw no logs\n%s", stderrText[:min(len(stderrText), 2000)])
	}
	if !strings.Contains(string(traced), `"secrets"`) || !strings.Contains(string(traced), `"REDACTED"`) {
		t.Errorf("the trace has no redacted Secret")
	}

	// The trace replays as recorded: the same streams, kubectl's pods all deleted.
	code, out, errOut := run(t, "replay", tracePath, "--speed", "0", "--no-tui", "--summary", "-o", "json")
	if code != ExitOK || !strings.Contains(errOut, "shown as recorded") {
		t.Fatalf("replaying the proxy's trace: exit %d\n%s", code, errOut)
	}
	sums := allSummaries(t, out)
	var pods, secrets int
	for _, s := range sums {
		switch s.Resource {
		case "pods.v1":
			pods++
			if s.Stream == nil || !strings.HasPrefix(s.Stream.UserAgent, "kubectl/") || s.Stream.Namespace != ns {
				t.Errorf("the replayed pods stream is not kubectl's in %s: %+v", ns, s.Stream)
			}
			if s.Objects != 0 || s.Counters.Added != n || s.Counters.Deleted != n || s.Counters.Watches != 1 || s.Counters.Lists != 1 {
				t.Errorf("the replayed pods stream: %d objects, %d added, %d deleted, %d lists, %d watches; want 0, %d, %d, 1, 1", s.Objects, s.Counters.Added, s.Counters.Deleted, s.Counters.Lists, s.Counters.Watches, n, n)
			}
		case "secrets.v1":
			secrets++
			if s.Objects != 1 {
				t.Errorf("the replayed secrets stream holds %d objects, want 1", s.Objects)
			}
		}
	}
	if pods != 1 || secrets != 1 {
		t.Errorf("the replay has %d pods and %d secrets streams, want one each:\n%s", pods, secrets, out)
	}
}

// proxyUserAgent is what the proxy under test calls itself.
const proxyUserAgent = "watchcache-proxy-under-test/1"

// kubectlWatch is a running kubectl get -w --output-watch-events.
type kubectlWatch struct {
	cmd     *exec.Cmd
	lines   chan string
	started chan struct{}
}

// startWatch runs kubectl get pods -w in ns with kubeconfig.
func startWatch(t *testing.T, dir, kubeconfig, ns string) *kubectlWatch {
	t.Helper()
	cmd := exec.Command(filepath.Join(dir, "kubectl"), "--kubeconfig", kubeconfig, "get", "pods", "-n", ns, "-w", "--output-watch-events", "--no-headers", "-v=6")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	w := &kubectlWatch{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
	}()
	started := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "watch=true") {
				once = true
				close(started)
			}
		}
	}()
	w.started = started
	return w
}

// waitStarted waits until kubectl has sent its watch (its -v=6 log says so).
func (w *kubectlWatch) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-w.started:
	case <-time.After(time.Minute):
		t.Fatal("kubectl sent no watch within a minute")
	}
}

// until returns the events kubectl printed ("ADDED p-0") up to the one given.
func (w *kubectlWatch) until(t *testing.T, last string) []string {
	t.Helper()
	var got []string
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				t.Fatalf("kubectl get -w ended after %d events: %q", len(got), got)
			}
			f := strings.Fields(l)
			if len(f) < 2 {
				continue
			}
			got = append(got, f[0]+" "+f[1])
			if f[0]+" "+f[1] == last {
				return got
			}
		case <-timeout:
			t.Fatalf("kubectl get -w printed no %q within a minute, only %q", last, got)
		}
	}
}

// freeAddress is a loopback address with a port free a moment ago.
func freeAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// grepLines are the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
