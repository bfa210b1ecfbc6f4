package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
)

// pluginPath is a directory with the plugin and kubectl, for PATH.
func pluginPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(builtPlugin(t), "kubectl-watchcache"), filepath.Join(dir, "kubectl-watchcache")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cluster(t).Binaries().Kubectl, filepath.Join(dir, "kubectl")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// kubectl runs "kubectl args..." with only dir on PATH, as a user with KUBECONFIG set would.
func kubectl(t *testing.T, dir string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(dir, "kubectl"), args...)
	cmd.Env = []string{"PATH=" + dir, "HOME=" + t.TempDir(), "KUBECONFIG=" + cluster(t).Kubeconfig()}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

func listConfigMaps(t *testing.T) []summary.StoreEntry {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cluster(t).Config())
	if err != nil {
		t.Fatal(err)
	}
	l, err := cs.CoreV1().ConfigMaps("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []summary.StoreEntry
	for _, cm := range l.Items {
		out = append(out, summary.StoreEntry{Namespace: cm.Namespace, Name: cm.Name, UID: string(cm.UID), ResourceVersion: cm.ResourceVersion})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func TestE2EThePluginThroughKubectlMatchesAList(t *testing.T) {
	createConfigMaps(t, "plugin", 7)
	dir := pluginPath(t)
	before := listConfigMaps(t)
	out, stderr, err := kubectl(t, dir, "watchcache", "configmaps", "-A", "--no-tui", "--once", "--summary", "-o", "json", "--initial-list", "list")
	if err != nil {
		t.Fatalf("kubectl watchcache: %v\n%s", err, stderr)
	}
	// -o json prints JSON lines, then the summary object as the last line.
	sum := lastJSONObject(t, out)
	after := listConfigMaps(t)
	if !reflect.DeepEqual(sum.Store, before) && !reflect.DeepEqual(sum.Store, after) {
		t.Errorf("summary store differs from a LIST:\n got %v\nwant %v", sum.Store, after)
	}
	if sum.Objects != len(sum.Store) || sum.Objects < 7 || sum.Counters.Lists != 1 {
		t.Errorf("summary: got %d objects, counters %+v", sum.Objects, sum.Counters)
	}
}

func TestE2EATracedRunReplaysToTheSameSummary(t *testing.T) {
	createConfigMaps(t, "traced", 5)
	dir := pluginPath(t)
	tracePath := filepath.Join(t.TempDir(), "run.jsonl")
	cs, err := kubernetes.NewForConfig(cluster(t).Config())
	if err != nil {
		t.Fatal(err)
	}
	p := startPlugin(t, dir, cluster(t).Kubeconfig(), "configmaps", "-n", "traced", "--no-tui", "--summary", "-o", "json", "--trace", tracePath, "--watch-timeout", "2s")
	// Writes once the list is in, while the plugin watches, so the trace has events.
	p.waitForLine(t, `"reason":"list-complete"`)
	for i := 0; i < 10; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("during-%d", i)}}
		if _, err := cs.CoreV1().ConfigMaps("traced").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cs.CoreV1().ConfigMaps("traced").Delete(context.Background(), "cm-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.waitForLine(t, `"name":"cm-a"`)
	time.Sleep(3 * time.Second) // past a watch timeout and its bookmark
	live, stderr := p.interrupt(t)
	liveSum := lastSummary(t, live)
	replayed, stderr2, err := kubectl(t, dir, "watchcache", "replay", tracePath, "--speed", "0", "--no-tui", "--summary", "-o", "json")
	if err != nil {
		t.Fatalf("kubectl watchcache replay: %v\n%s\n(live: %s)", err, stderr2, stderr)
	}
	replaySum := lastSummary(t, replayed)
	checkSyncTimes(t, liveSum, replaySum)
	liveSum, replaySum = liveSum.WithoutClockReadings(), replaySum.WithoutClockReadings()
	if !reflect.DeepEqual(liveSum, replaySum) {
		t.Errorf("summaries differ:\nlive   %+v\nreplay %+v", liveSum, replaySum)
	}
	if liveSum.Counters.Added != 10 || liveSum.Counters.Deleted != 1 || liveSum.Objects != 14 {
		t.Errorf("live summary: got %d objects, counters %+v", liveSum.Objects, liveSum.Counters)
	}
}

// plugin is the plugin running as a user runs it, its output read as it comes.
type plugin struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	out    strings.Builder
	lines  chan string
	errOut syncBuffer // written by the process's stderr copier while tests read it
	exited chan error
}

// startPlugin runs kubectl-watchcache with args and KUBECONFIG=kubeconfig, with only dir on PATH.
func startPlugin(t *testing.T, dir, kubeconfig string, args ...string) *plugin {
	t.Helper()
	p := &plugin{cmd: exec.Command(filepath.Join(dir, "kubectl-watchcache"), args...), lines: make(chan string, 1<<16), exited: make(chan error, 1)}
	p.cmd.Env = []string{"PATH=" + dir, "HOME=" + t.TempDir(), "KUBECONFIG=" + kubeconfig}
	p.cmd.Stderr = &p.errOut
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default: // nobody waits for lines any more
			}
		}
		close(p.lines)
		p.exited <- p.cmd.Wait()
	}()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	return p
}

// waitForLine waits for an output line containing s.
func (p *plugin) waitForLine(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("the plugin exited before printing %q\n%s", s, p.errOut.String())
			}
			if strings.Contains(line, s) {
				return
			}
		case <-timeout:
			t.Fatalf("no line with %q within a minute", s)
		}
	}
}

// servingAt is the address the plugin said it serves its metrics at
// ("serving metrics at http://ADDRESS/metrics" on stderr), within a minute.
func (p *plugin) servingAt(t *testing.T) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if url, ok := metrics.ServingURL(p.errOut.String()); ok {
			return strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/metrics")
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plugin said nowhere it serves\n%s", tail(p.errOut.String()))
		}
	}
}

// terminate ends the plugin with SIGTERM, as a kubelet ends a pod, and
// wants it to exit 0 within the grace period.
func (p *plugin) terminate(t *testing.T, grace time.Duration) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range p.lines { // drain, so the reader reaches the end
		}
	}()
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("the plugin failed on SIGTERM: %v\n%s", err, tail(p.errOut.String()))
		}
	case <-time.After(grace):
		t.Fatalf("the plugin did not end within %s of SIGTERM", grace)
	}
}

// interrupt ends the plugin as ctrl+c does and returns its output; the run must succeed.
func (p *plugin) interrupt(t *testing.T) (stdout, stderr string) {
	t.Helper()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range p.lines { // drain, so the reader reaches the end
		}
	}()
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("the plugin failed: %v\n%s", err, p.errOut.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("the plugin did not exit within a minute of SIGINT")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String(), p.errOut.String()
}

// TestE2EARunKilledMidWatchReplaysStrictlyAndSaysItEndsEarly: a run killed
// with SIGKILL while it watches leaves a trace without its stop (perhaps with
// a last line cut in two). Its replay with --strict is no divergence: it
// exits 0 and says the recording ends early.
func TestE2EARunKilledMidWatchReplaysStrictlyAndSaysItEndsEarly(t *testing.T) {
	createConfigMaps(t, "killed", 5)
	dir := pluginPath(t)
	tracePath := filepath.Join(t.TempDir(), "killed.jsonl")
	p := startPlugin(t, dir, cluster(t).Kubeconfig(), "configmaps", "-n", "killed", "--no-tui", "-o", "json", "--trace", tracePath)
	p.waitForLine(t, `"reason":"list-complete"`)
	cs, err := kubernetes.NewForConfig(cluster(t).Config())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("late-%d", i)}}
		if _, err := cs.CoreV1().ConfigMaps("killed").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p.waitForLine(t, "late-4")
	// The recorder flushes every second: kill the run once the trace holds
	// its last event, as a run killed after a while would have.
	deadline := time.Now().Add(time.Minute)
	for {
		b, _ := os.ReadFile(tracePath)
		if strings.Contains(string(b), "late-4") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the trace never held the last event")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range p.lines {
		}
	}()
	<-p.exited
	code, _, stderr := run(t, "replay", tracePath, "--speed", "0", "--strict", "--no-tui")
	if code != ExitOK || !strings.Contains(stderr, "the recording ends early") || strings.Contains(stderr, "decided differently") {
		t.Errorf("replaying the killed run's trace with --strict: exit %d, stderr:\n%s\nwant exit 0 and that the recording ends early", code, stderr)
	}
}

// checkSyncTimes: a replay syncs as long after its start as the recorded run
// did, give or take what passes between the trace's header and the first
// request (a live run's clock and a replay's are not the same clock).
func checkSyncTimes(t *testing.T, live, replayed summary.Summary) {
	t.Helper()
	if live.SyncSeconds == nil || replayed.SyncSeconds == nil {
		t.Errorf("%s: time to sync live %v, replayed %v: want both", live.Resource, live.SyncSeconds, replayed.SyncSeconds)
		return
	}
	if d := *live.SyncSeconds - *replayed.SyncSeconds; d > 0.5 || d < -0.5 {
		t.Errorf("%s: synced %.3fs after the start live, %.3fs in the replay", live.Resource, *live.SyncSeconds, *replayed.SyncSeconds)
	}
}
