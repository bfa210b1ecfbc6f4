package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestE2EProxyFaultDelayMovesTheProbesP50 runs the plugin's delivery probe
// (a Lease it renews every second and watches) through the proxy, without a
// fault and then with --fault delay=300ms: the probe's write-to-event p50
// moves by 0.3 s ± 0.1 s, the delay the proxy said it added.
func TestE2EProxyFaultDelayMovesTheProbesP50(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(cluster(t).Config())
	ns := fmt.Sprintf("proxy-delay-%d", time.Now().UnixNano()%1_000_000)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p50 := func(faults ...string) float64 {
		t.Helper()
		work := t.TempDir()
		kc := filepath.Join(work, "proxy.kubeconfig")
		pr := startRun(t, append([]string{"proxy", "--kubeconfig", kubeconfig(t), "--port", "0", "--no-tui", "-o", "json", "--summary", "--print-kubeconfig", kc}, faults...)...)
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(kc); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the proxy wrote no kubeconfig within a minute\n%s", tail(pr.errOut.String()))
			}
		}
		w := startRun(t, "configmaps", "-n", ns, "--kubeconfig", kc, "--no-tui", "-o", "json", "--summary",
			"--probe", ns, "--probe-interval", "1s", "--duration", "25s")
		sums := w.wait(t, time.Minute)
		pr.stop(t)
		for _, s := range sums {
			if p := s.Delivery.Probe; p != nil {
				if p.Count < 15 || p.Lost > 0 {
					t.Fatalf("the probe: %+v", p)
				}
				return p.P50
			}
		}
		t.Fatal("no probe figures in the summary")
		return 0
	}
	without := p50()
	with := p50("--fault", "delay=300ms")
	moved := with - without
	t.Logf("probe p50 %.3f s without the fault, %.3f s with delay=300ms: moved %.3f s", without, with, moved)
	if moved < 0.2 || moved > 0.4 {
		t.Errorf("delay=300ms moved the probe's p50 by %.3f s (%.3f → %.3f), want 0.3 s ± 0.1 s", moved, without, with)
	}
}
