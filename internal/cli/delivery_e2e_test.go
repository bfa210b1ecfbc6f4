package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/probe"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/report"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// adminClient is a clientset of the shared cluster's admin.
func adminClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cluster(t).Config())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// newNamespace creates namespace ns on the shared cluster.
func newNamespace(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// delayProxy is a proxy in front of the shared cluster and a kubeconfig that goes through it.
func delayProxy(t *testing.T) (*testcluster.Proxy, string) {
	t.Helper()
	return throughFaultProxy(t, cluster(t))
}

// probeLeases are the names of the probe Leases in ns, live or left behind.
func probeLeases(t *testing.T, cs kubernetes.Interface, ns string) []string {
	t.Helper()
	leases, err := probe.List(context.Background(), cs, ns)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range leases {
		names = append(names, l.Name)
	}
	return names
}

// probeSummary runs a probed watch of ns through kc for d and returns the
// probe's figures, after checking that the Lease is gone.
func probeRun(t *testing.T, cs kubernetes.Interface, kc, ns string, d time.Duration, tracePath string) *summary.ProbeSummary {
	t.Helper()
	p, _ := probeRunSummaries(t, cs, kc, ns, d, tracePath)
	return p
}

// probeRunSummaries is probeRun, with the summaries (configmaps', the Lease's).
func probeRunSummaries(t *testing.T, cs kubernetes.Interface, kc, ns string, d time.Duration, tracePath string) (*summary.ProbeSummary, []summary.Summary) {
	t.Helper()
	args := []string{"configmaps", "--kubeconfig", kc, "-n", ns, "--no-tui", "--probe", ns, "--probe-interval", "1s",
		"--duration", d.String(), "--summary", "-o", "json"}
	if tracePath != "" {
		args = append(args, "--trace", tracePath)
	}
	code, out, stderr := run(t, args...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sums := allSummaries(t, out)
	if len(sums) != 2 || sums[1].Resource != "leases.v1.coordination.k8s.io" {
		t.Fatalf("summaries of %d resources, want configmaps and the probe's Lease: %+v", len(sums), sums)
	}
	p := sums[0].Delivery.Probe
	if p == nil || sums[1].Delivery.Probe == nil || *p != *sums[1].Delivery.Probe {
		t.Fatalf("probe figures: %+v and %+v, want the same in every resource's summary", p, sums[1].Delivery.Probe)
	}
	// The summaries say which watch is the probe's, and where each watches.
	if sums[0].Probe || !sums[1].Probe || sums[0].Namespace != ns || sums[1].Namespace != ns ||
		sums[0].FieldSelector != "" || !strings.HasPrefix(sums[1].FieldSelector, "metadata.name=kubectl-watchcache-probe-") {
		t.Errorf("summaries: configmaps probe=%v namespace=%q selector=%q, leases probe=%v namespace=%q selector=%q; want the Lease's watch marked the probe's, by its name, both in %s",
			sums[0].Probe, sums[0].Namespace, sums[0].FieldSelector, sums[1].Probe, sums[1].Namespace, sums[1].FieldSelector, ns)
	}
	if left := probeLeases(t, cs, ns); len(left) != 0 {
		t.Errorf("probe Leases left after the run: %v", left)
	}
	return p, sums
}

func TestE2EProbeMeasuresTheDelayAddedToTheServersBytesAndItsReplayShowsTheSame(t *testing.T) {
	cs := adminClient(t)
	ns := "probe-delay"
	newNamespace(t, cs, ns)
	p, kc := delayProxy(t)

	base, sums := probeRunSummaries(t, cs, kc, ns, 8*time.Second, "")
	for _, s := range sums {
		if len(s.Findings) > 0 {
			t.Errorf("%s: a healthy probed run raised findings: %+v", s.Resource, s.Findings)
		}
	}
	if base.Count < 4 {
		t.Fatalf("%d probe samples in 8s at 1s, want at least 4: %+v", base.Count, base)
	}
	// A sanity bound on the undelayed run: its p99 stays under the delay
	// added next (the checks below tell the runs apart by their p50s). An
	// absolute bound of 100ms failed once in CI, with a dozen test
	// clusters starting on two cores: 171ms.
	const delay = 300 * time.Millisecond
	if base.P99 >= delay.Seconds() {
		t.Errorf("without delay the probe's p99 is %.3fs, want under the %v this test adds next", base.P99, delay)
	}

	p.Delay(delay)
	tracePath := filepath.Join(t.TempDir(), "probe.jsonl")
	delayed := probeRun(t, cs, kc, ns, 10*time.Second, tracePath)
	if delayed.Count < 4 {
		t.Fatalf("%d probe samples with the delay: %+v", delayed.Count, delayed)
	}
	if delayed.P50 < delay.Seconds() || delayed.P50 > base.P50+delay.Seconds()+0.1 {
		t.Errorf("with %v of delay the probe's p50 is %.3fs, want at least %.3fs and at most %.3fs (the p50 without it, %.3fs, + the delay + 100ms)",
			delay, delayed.P50, delay.Seconds(), base.P50+delay.Seconds()+0.1, base.P50)
	}
	if delayed.WriteP50 < delay.Seconds() {
		t.Errorf("the update's own p50 %.3fs, want at least the delay (its answer is the server's bytes too)", delayed.WriteP50)
	}

	code, out, stderr := run(t, "replay", tracePath, "--speed", "0", "--summary", "-o", "json")
	if code != ExitOK {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	replayed := allSummaries(t, out)
	for i, s := range replayed {
		if s.Delivery.Probe == nil || *s.Delivery.Probe != *delayed {
			t.Errorf("replayed resource %d: probe %+v, want the recorded run's %+v", i, s.Delivery.Probe, delayed)
		}
	}
	checkProbeReport(t, tracePath, delayed)
}

// checkProbeReport checks the report of a probed run's trace: the probe's
// chart is on the Lease's timeline only, with every sample of the run in
// its buckets and the run's figures, and the Lease's events (whose
// managedFields move with each renewal) have their lag chart.
func checkProbeReport(t *testing.T, tracePath string, want *summary.ProbeSummary) {
	t.Helper()
	htmlPath := filepath.Join(t.TempDir(), "probe.html")
	if code, _, stderr := run(t, "report", tracePath, "-o", htmlPath); code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), `class="plot chart c-probe"`); n != 1 {
		t.Errorf("the report has %d probe charts, want 1 (on the Lease's timeline)", n)
	}
	rd, err := trace.Open(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rep, err := report.Analyze(t.Context(), rd, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lease := rep.Resources[1]
	if rep.Resources[0].Probe != nil || lease.Probe == nil {
		t.Fatalf("probe figures on configmaps %+v and on the Lease %+v, want them on the Lease only", rep.Resources[0].Probe, lease.Probe)
	}
	samples := 0
	for _, b := range lease.Buckets {
		samples += b.ProbeN
	}
	p := lease.Probe
	if samples != want.Count || p.Count != want.Count || p.P50.Seconds() != want.P50 || p.P99.Seconds() != want.P99 || p.Max.Seconds() != want.Max {
		t.Errorf("the report's probe: %+v with %d samples in its buckets, want the run's %+v", *p, samples, *want)
	}
	if lease.Lag.Total() < int64(want.Count) || !strings.Contains(string(page), `class="plot chart c-lag"`) {
		t.Errorf("the Lease's lag buckets %v, want at least one event per sample (each renewal's), and a lag chart", lease.Lag)
	}
}

// TestE2EAProbeSlowerThanTwoSecondsRaisesSlowDelivery holds the server's
// bytes for 2.5 s: every probe update reaches its watch after more than
// 2 s, so the Lease's watch raises slow-delivery once it has 5 samples,
// and the replay of its trace raises the same.
func TestE2EAProbeSlowerThanTwoSecondsRaisesSlowDelivery(t *testing.T) {
	cs := adminClient(t)
	ns := "probe-slow"
	newNamespace(t, cs, ns)
	p, kc := delayProxy(t)
	p.Delay(2500 * time.Millisecond)
	tracePath := filepath.Join(t.TempDir(), "slow.jsonl")
	probe, sums := probeRunSummaries(t, cs, kc, ns, 30*time.Second, tracePath)
	if probe.Count < 5 || probe.P99 <= 2 {
		t.Fatalf("want 5 samples or more over 2s, got %+v", probe)
	}
	find := func(s summary.Summary) *findings.Finding {
		for i, f := range s.Findings {
			if f.ID == findings.SlowDelivery {
				return &s.Findings[i]
			}
		}
		return nil
	}
	live := find(sums[1])
	if live == nil || live.Severity != findings.Warning || live.Evidence.Facts["probe p99"] == "" {
		t.Fatalf("the Lease's watch: want slow-delivery naming the probe's p99, got %+v", sums[1].Findings)
	}
	code, out, stderr := run(t, "replay", tracePath, "--speed", "0", "--no-tui", "--summary", "-o", "json")
	if code != ExitOK {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	if r := allSummaries(t, out); !r[1].Probe || r[0].Probe {
		t.Errorf("the replay's summaries do not mark the Lease's watch alone as the probe's: %v, %v", r[0].Probe, r[1].Probe)
	}
	replayed := find(allSummaries(t, out)[1])
	if replayed == nil || replayed.Count != live.Count || replayed.Evidence.Facts["probe p99"] != live.Evidence.Facts["probe p99"] {
		t.Fatalf("the replay's slow-delivery %+v, want the live run's %+v", replayed, live)
	}
}

// TestE2EPassiveLagWithFourSecondsOfDelayLandsInItsBuckets starts a watch
// through the proxy, then holds the server's bytes for 4 s and modifies
// objects: each event's lag is the delay, within the estimate's ±2 s (the
// watch's Date was read before the delay, so the clock correction does not
// absorb it).
func TestE2EPassiveLagWithFourSecondsOfDelayLandsInItsBuckets(t *testing.T) {
	cs := adminClient(t)
	ns := "lag-delay"
	newNamespace(t, cs, ns)
	ctx := context.Background()
	for i := range 3 {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The updates come in a later second than the creations: a MODIFIED
	// event whose newest time is its creation's has no estimate.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	p, kc := delayProxy(t)
	for _, wire := range []string{"protobuf", "json"} {
		t.Run(wire, func(t *testing.T) {
			p.Delay(0)
			tracePath := filepath.Join(t.TempDir(), "lag.jsonl")
			args := []string{"configmaps", "-n", ns, "--no-tui", "-o", "json", "--summary", "--wire", wire, "--trace", tracePath}
			if wire == "protobuf" {
				args = append(args, "--metadata-only")
			}
			cmd, lines, finish := startProbedPlugin(t, kc, args...)
			waitForLine(t, lines, `"reason":"list-complete"`)
			p.Delay(4 * time.Second)
			for i := range 3 {
				cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, fmt.Sprintf("cm-%d", i), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				cm.Data["n"] = wire
				if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{FieldManager: "lag-test-" + wire}); err != nil {
					t.Fatal(err)
				}
			}
			for range 3 {
				waitForLine(t, lines, `"type":"event"`)
			}
			_ = cmd.Process.Signal(syscall.SIGINT)
			out := finish()
			sums := allSummaries(t, out)
			lag := sums[0].Delivery.Lag
			if lag.To5+lag.To15 != 3 || lag.Under2 != 0 || lag.To60 != 0 || lag.Over60 != 0 {
				t.Errorf("lag buckets %+v, want the 3 updates in 2-5s or 5-15s", lag)
			}
			code, out, stderr := run(t, "replay", tracePath, "--speed", "0", "--summary", "-o", "json")
			if code != ExitOK {
				t.Fatalf("replay: exit %d: %s", code, stderr)
			}
			if got := lastJSONObject(t, out).Delivery.Lag; got != lag {
				t.Errorf("replayed lag buckets %+v, want the recorded run's %+v", got, lag)
			}
		})
	}
}

// startProbedPlugin runs the built plugin with args against kubeconfig kc; lines
// are its stdout lines as they come; finish waits for it and returns its
// whole stdout.
func startProbedPlugin(t *testing.T, kc string, args ...string) (*exec.Cmd, <-chan string, func() string) {
	t.Helper()
	dir := builtPlugin(t)
	cmd := exec.Command(filepath.Join(dir, "kubectl-watchcache"), append([]string{"--kubeconfig", kc}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 4096)
	var all strings.Builder
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	exited := false
	t.Cleanup(func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, lines, func() string {
		<-read
		err := cmd.Wait()
		exited = true
		if err != nil {
			t.Fatalf("the plugin: %v\n%s", err, stderr.String())
		}
		return all.String()
	}
}

// waitForLine waits (up to a minute) for a line containing want.
func waitForLine(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case l := <-lines:
			if strings.Contains(l, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no line with %s within a minute", want)
		}
	}
}

func TestE2EProbeLeaseIsGoneAfterSIGINTAndSIGTERM(t *testing.T) {
	cs := adminClient(t)
	ns := "probe-signals"
	newNamespace(t, cs, ns)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, lines, finish := startProbedPlugin(t, cluster(t).Kubeconfig(), "configmaps", "-n", ns, "--no-tui", "-o", "json", "--probe", ns, "--probe-interval", "1s")
			waitForLine(t, lines, `"reason":"list-complete"`)
			if got := probeLeases(t, cs, ns); len(got) != 1 {
				t.Fatalf("probe Leases while running: %v, want one", got)
			}
			_ = cmd.Process.Signal(sig)
			finish()
			if got := probeLeases(t, cs, ns); len(got) != 0 {
				t.Errorf("probe Leases after %s: %v, want none", sig, got)
			}
		})
	}
}

func TestE2EProbeRefusesAForbiddenOrMissingNamespaceBeforeTheRun(t *testing.T) {
	cfg, err := cluster(t).UserConfig("nobody")
	if err != nil {
		t.Fatal(err)
	}
	kc := kubeconfigOf(t, cfg)
	code, out, stderr := run(t, "configmaps", "--kubeconfig", kc, "-n", "default", "--no-tui", "--probe", "default", "--summary", "-o", "json")
	want := `error: --probe default: forbidden: cannot create leases.coordination.k8s.io in namespace "default"`
	if code != ExitFailure || !strings.HasPrefix(strings.TrimSpace(stderr), want) || out != "" {
		t.Errorf("forbidden: exit %d, stdout %q, stderr %q; want %d and %q", code, out, stderr, ExitFailure, want)
	}
	code, out, stderr = run(t, "configmaps", "--kubeconfig", kubeconfig(t), "-n", "default", "--no-tui", "--probe", "no-such-namespace", "--summary", "-o", "json")
	want = `error: --probe no-such-namespace: namespace "no-such-namespace" not found`
	if code != ExitFailure || strings.TrimSpace(stderr) != want || out != "" {
		t.Errorf("missing namespace: exit %d, stdout %q, stderr %q; want %d and %q", code, out, stderr, ExitFailure, want)
	}
}

// TestE2EAProbeLeaseLeftBehindIsReportedAndCleanupRemovesIt leaves a probe
// Lease whose renewals stopped ten minutes ago, next to the Lease of a
// probe still running in the same namespace: a second run warns of the
// first only, and its --probe-cleanup deletes the first only.
func TestE2EAProbeLeaseLeftBehindIsReportedAndCleanupRemovesIt(t *testing.T) {
	cs := adminClient(t)
	ns := "probe-leftover"
	newNamespace(t, cs, ns)
	seconds := int32(60)
	stopped := metav1.NewMicroTime(time.Now().Add(-10 * time.Minute))
	left := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: probe.NamePrefix + "killed", Labels: map[string]string{probe.LabelKey: probe.LabelValue}},
		Spec:       coordinationv1.LeaseSpec{LeaseDurationSeconds: &seconds, AcquireTime: &stopped, RenewTime: &stopped},
	}
	if _, err := cs.CoordinationV1().Leases(ns).Create(context.Background(), left, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	other := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses"}}
	if _, err := cs.CoordinationV1().Leases(ns).Create(context.Background(), other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cmd, lines, finish := startProbedPlugin(t, cluster(t).Kubeconfig(), "configmaps", "-n", ns, "--no-tui", "-o", "json", "--probe", ns, "--probe-interval", "1s")
	waitForLine(t, lines, `"reason":"list-complete"`)
	var live string
	for _, name := range probeLeases(t, cs, ns) {
		if name != left.Name {
			live = name
		}
	}
	if live == "" {
		t.Fatalf("no Lease of the running probe: %v", probeLeases(t, cs, ns))
	}

	code, _, stderr := run(t, "configmaps", "--kubeconfig", kubeconfig(t), "-n", ns, "--no-tui", "--once", "--probe", ns)
	if code != ExitOK || !strings.Contains(stderr, "warning: probe Lease left by earlier runs in "+ns+" (label "+probe.LabelKey+"="+probe.LabelValue+"): "+left.Name+";") {
		t.Errorf("exit %d, stderr %q: want a warning naming the Lease left behind, and it alone", code, stderr)
	}
	if strings.Contains(stderr, live) {
		t.Errorf("stderr %q names the running probe's Lease %s", stderr, live)
	}
	code, _, stderr = run(t, "configmaps", "--kubeconfig", kubeconfig(t), "-n", ns, "--no-tui", "--once", "--probe", ns, "--probe-cleanup")
	if code != ExitOK || !strings.Contains(stderr, "probe: deleted 1 Lease left by earlier runs in "+ns+": "+left.Name+"\n") {
		t.Errorf("cleanup: exit %d, stderr %q", code, stderr)
	}
	if got := probeLeases(t, cs, ns); len(got) != 1 || got[0] != live {
		t.Errorf("probe Leases after the cleanup run: %v, want the running probe's %s alone", got, live)
	}
	if _, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), "someone-elses", metav1.GetOptions{}); err != nil {
		t.Errorf("the cleanup touched a Lease not its own: %v", err)
	}

	// The running probe, its Lease kept, still renews it.
	renewed := func() time.Time {
		l, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), live, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the running probe's Lease: %v", err)
		}
		if l.Spec.RenewTime == nil {
			t.Fatalf("the running probe's Lease %s has no renewTime", live)
		}
		return l.Spec.RenewTime.Time
	}
	before := renewed()
	for deadline := time.Now().Add(10 * time.Second); !renewed().After(before); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the running probe's Lease not renewed in 10s since %s", before)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	finish()
	if got := probeLeases(t, cs, ns); len(got) != 0 {
		t.Errorf("probe Leases after the running probe ended: %v, want none", got)
	}
}

// The probe ends with the run, not with the dashboard: a run ended by
// --duration keeps its last screen until q, and meanwhile its Lease, which
// no reflector watches any more, is not renewed (each renewal would count
// as lost, and the apiserver would be written to for nothing).
func TestE2EAProbeStopsRenewingItsLeaseWhenItsRunEndsBeforeItsDashboard(t *testing.T) {
	cs := adminClient(t)
	ns := "probe-run-ended"
	newNamespace(t, cs, ns)
	d := endedDashboard(t, "configmaps", "--kubeconfig", kubeconfig(t), "-n", ns, "--probe", ns, "--probe-interval", "1s", "--duration", "3s")
	names := probeLeases(t, cs, ns)
	if len(names) != 1 {
		t.Fatalf("probe Leases while the ended screen is read: %v, want the run's", names)
	}
	version := func() string {
		l, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), names[0], metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l.ResourceVersion
	}
	// A renewal sent as the run ended may still be answered: from then on, none.
	time.Sleep(time.Second)
	ended := version()
	time.Sleep(3 * time.Second) // three probe intervals
	if now := version(); now != ended {
		t.Errorf("the Lease was renewed after the run ended (resourceVersion %s, then %s): the probe outlived its run", ended, now)
	}
	if err := d.quit(t); err != nil {
		t.Errorf("the run ended with %v\n%s", err, d.errOut.String())
	}
	if got := probeLeases(t, cs, ns); len(got) != 0 {
		t.Errorf("probe Leases after q: %v, want none", got)
	}
}
