package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
)

// TestE2EProxyTellsKubectlProcessesApartAndSaysWhenOneLeft runs the real
// kubectl through kubectl watchcache proxy, as a user does: kubectl get cm
// -A twice, one after the other, is two clients (two streams, no relist),
// told apart by their connections though their User-Agent is one; a
// kubectl get pods -w that is killed leaves its stream saying its client
// left, in the line output and the summary, which no longer counts it
// Watching. Once a client has been gone for --forget-after, the proxy
// forgets what it held: its stream keeps its counts, holds no object, and
// says how many it forgot. The trace replays to the same streams, the
// client's leaving and its forgetting included.
func TestE2EProxyTellsKubectlProcessesApartAndSaysWhenOneLeft(t *testing.T) {
	c := cluster(t)
	dir := pluginPath(t)
	work := t.TempDir()
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ns := fmt.Sprintf("proxy-clients-%d", time.Now().UnixNano()%1_000_000)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-of-" + ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tracePath, proxyKC := filepath.Join(work, "proxy.jsonl"), filepath.Join(work, "proxy.kubeconfig")
	p := startPlugin(t, dir, c.Kubeconfig(), "proxy", "--port", "0", "--no-tui", "-o", "json", "--summary", "--trace", tracePath, "--print-kubeconfig", proxyKC,
		"--forget-after", "2s")
	waitForProxyKubeconfig(t, proxyKC)

	for range 2 {
		get := exec.Command(filepath.Join(dir, "kubectl"), "--kubeconfig", proxyKC, "get", "cm", "-A")
		get.Env = []string{"HOME=" + t.TempDir()}
		if out, err := get.CombinedOutput(); err != nil || !strings.Contains(string(out), "cm-of-"+ns) {
			t.Fatalf("kubectl get cm -A through the proxy: %v\n%s", err, out)
		}
	}
	w := startWatch(t, dir, proxyKC, ns)
	w.waitStarted(t)
	p.waitForLine(t, `"resource":"pods.v1@`+ns) // the proxy has seen kubectl's watch
	time.Sleep(time.Second)                     // kubectl's watch is open
	killed := time.Now()
	if err := w.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Each of the three streams says its client left: the pods' last; the
	// two kubectl gets' are forgotten 2 s after they left, before.
	for left, gone := 0, 0; left < 3 || gone < 2; {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatal("the proxy exited")
			}
			switch {
			case strings.Contains(l, `"reason":"client-left"`):
				left++
			case strings.Contains(l, `"reason":"client-gone"`):
				gone++
				if left < 3 && !strings.Contains(l, "configmaps") {
					t.Errorf("a stream forgotten before the killed watch left is not a kubectl get's: %s", l)
				}
			}
		case <-time.After(time.Minute):
			t.Fatalf("%d streams said their client left within a minute (want 3), %d were forgotten (want 2)", left, gone)
		}
	}
	noted := time.Since(killed)
	stdout, _ := p.interrupt(t)

	if strings.Contains(stdout, `"reason":"relist-diff"`) || strings.Contains(stdout, "Relisting") {
		t.Errorf("the proxy saw a relist:\n%s", grepLines(stdout, "elist"))
	}
	check := func(what string, sums []summary.Summary) {
		t.Helper()
		var cms []summary.Summary
		var pods *summary.Summary
		for i, s := range sums {
			switch {
			case s.Resource == "configmaps.v1" && s.Stream != nil && s.Stream.Namespace == "":
				cms = append(cms, s)
			case s.Resource == "pods.v1" && s.Stream != nil && s.Stream.Namespace == ns:
				pods = &sums[i]
			}
		}
		if len(cms) != 2 || cms[0].Stream.UserAgent != cms[1].Stream.UserAgent || cms[0].Stream.RemoteAddr == cms[1].Stream.RemoteAddr {
			t.Fatalf("%s: %d streams of configmaps in every namespace, want 2 of one User-Agent from two connections: %+v", what, len(cms), cms)
		}
		for _, s := range cms {
			if s.Counters.Lists != 1 || s.Counters.Relists != 0 || !strings.HasPrefix(s.Stream.UserAgent, "kubectl/") {
				t.Errorf("%s: stream #%d of %s (%s): %d lists, %d relists; want 1 and 0", what, s.Stream.ID, s.Stream.RemoteAddr, s.Stream.UserAgent, s.Counters.Lists, s.Counters.Relists)
			}
			// It listed and never watched: it left "Listed", not Watching.
			l := s.Stream.ClientLeft
			if l == nil || l.State != "Listed" {
				t.Fatalf("%s: kubectl get's stream #%d does not say its client left after its list: %+v", what, s.Stream.ID, l)
			}
			// Gone for longer than --forget-after: what it held is forgotten.
			if l.ForgottenObjects == nil || *l.ForgottenObjects < 1 || s.Objects != 0 || len(s.Store) != 0 {
				t.Errorf("%s: kubectl get's stream #%d: %d objects held, forgotten %v; want none held, all it listed forgotten", what, s.Stream.ID, s.Objects, l.ForgottenObjects)
			}
		}
		if pods == nil {
			t.Fatalf("%s: no stream of kubectl get pods -w in %s", what, ns)
		}
		if l := pods.Stream.ClientLeft; l == nil || l.State != "Watching" || l.AgeSeconds <= 0 {
			t.Errorf("%s: the killed kubectl get -w's stream: client left %+v, want it left while Watching", what, l)
		}
	}
	check("live", allSummaries(t, stdout))
	if noted > 30*time.Second {
		t.Errorf("the proxy said the killed client left %s after it was killed", noted)
	}

	code, out, errOut := run(t, "replay", tracePath, "--speed", "0", "--no-tui", "--summary", "-o", "json")
	if code != ExitOK {
		t.Fatalf("replaying the proxy's trace: exit %d\n%s", code, errOut)
	}
	check("replayed", allSummaries(t, out))
}

// TestE2EParallelKubectlGetsOverSeveralPagesAreOneStreamEach runs three
// kubectl get in parallel through the proxy over 520 ConfigMaps: kubectl
// asks for pages of 500, so each lists in two pages. Each is one stream
// with one complete list of all of them, no relist and no finding (the
// second's first page was counted a relist of the first's list, and pages
// went to a stream whose client had left: 500 missed deletes).
func TestE2EParallelKubectlGetsOverSeveralPagesAreOneStreamEach(t *testing.T) {
	c := cluster(t)
	dir := pluginPath(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ns := uniqueNamespace(t, cs, "paged-clients")
	const objects = 520
	for i := range objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	proxyKC := filepath.Join(t.TempDir(), "proxy.kubeconfig")
	p := startPlugin(t, dir, c.Kubeconfig(), "proxy", "--port", "0", "--no-tui", "-o", "json", "--summary", "--print-kubeconfig", proxyKC)
	waitForProxyKubeconfig(t, proxyKC)
	const clients = 3
	errs := make(chan error, clients)
	for range clients {
		go func() {
			get := exec.Command(filepath.Join(dir, "kubectl"), "--kubeconfig", proxyKC, "get", "cm", "-n", ns, "--no-headers")
			get.Env = []string{"HOME=" + t.TempDir()}
			out, err := get.CombinedOutput()
			if n := strings.Count(string(out), "\n"); err != nil || n != objects {
				err = fmt.Errorf("kubectl get cm -n %s: %d lines, %v\n%.300s", ns, n, err, out)
			}
			errs <- err
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second) // the proxy has processed the last pages
	stdout, _ := p.interrupt(t)
	var streams []summary.Summary
	for _, s := range allSummaries(t, stdout) {
		if s.Resource == "configmaps.v1" && s.Stream != nil && s.Stream.Namespace == ns {
			streams = append(streams, s)
		}
	}
	if len(streams) != clients {
		t.Fatalf("%d streams of configmaps in %s, want one per kubectl get (%d)", len(streams), ns, clients)
	}
	for _, s := range streams {
		if s.Objects != objects || s.Counters.Lists != 1 || s.Counters.Relists != 0 || len(s.Findings) != 0 {
			t.Errorf("stream #%d (%s): %d objects, %d lists, %d relists, %d findings; want %d, 1, 0, 0",
				s.Stream.ID, s.Stream.RemoteAddr, s.Objects, s.Counters.Lists, s.Counters.Relists, len(s.Findings), objects)
		}
	}
}

// waitForProxyKubeconfig waits, a minute at most, for the kubeconfig a
// proxy started with --print-kubeconfig writes at path.
func waitForProxyKubeconfig(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the proxy wrote no kubeconfig within a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
