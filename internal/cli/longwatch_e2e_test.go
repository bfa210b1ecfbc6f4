package cli

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

// TestE2EALongNoTUIRunSurvivesRestartsCutsAndCompaction runs the built
// plugin through kubectl with --no-tui and a short --give-up-after while
// ConfigMaps churn; the watch streams for longer than --give-up-after, then
// an apiserver restart, a proxy cut, or a restart with etcd compacted in
// the gap ends it. The run exits 0 and its summary equals a LIST.
func TestE2EALongNoTUIRunSurvivesRestartsCutsAndCompaction(t *testing.T) {
	// Each case on a cluster of its own.
	t.Parallel()
	const giveUpAfter = 25 * time.Second // see the reflector's long-watch test
	dir := pluginPath(t)
	cases := []struct {
		name     string
		viaProxy bool
		cut      func(t *testing.T, c *testcluster.Cluster, proxy *testcluster.Proxy)
		wantGone bool
	}{
		{"apiserver restart", false, func(t *testing.T, c *testcluster.Cluster, _ *testcluster.Proxy) { restartAPIServer(t, c) }, false},
		{"proxy cut", true, func(t *testing.T, _ *testcluster.Cluster, proxy *testcluster.Proxy) { proxy.CutAll() }, false},
		{"apiserver restart with etcd compacted in the gap", true, func(t *testing.T, c *testcluster.Cluster, proxy *testcluster.Proxy) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			// As in the reflector's test: the watcher is cut off, etcd is
			// compacted while kube-apiserver is down, and the watcher can
			// reach the port again before kube-apiserver starts.
			proxy.Refuse(time.Hour)
			proxy.CutAll()
			time.Sleep(time.Second)
			if err := c.RestartCompacted(ctx, func() { proxy.Refuse(0) }); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	// Each case restarts or cuts a cluster of its own, so they run in parallel.
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := testcluster.ForTest(t, testcluster.Options{})
			cs, err := kubernetes.NewForConfig(c.Config())
			if err != nil {
				t.Fatal(err)
			}
			ns := "long-" + string(rune('a'+i))
			if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			kubeconfig := c.Kubeconfig()
			var proxy *testcluster.Proxy
			if tc.viaProxy {
				if proxy, err = c.NewProxy(); err != nil {
					t.Fatal(err)
				}
				defer proxy.Close()
				kubeconfig = filepath.Join(t.TempDir(), "proxy.kubeconfig")
				if err := testcluster.WriteKubeconfig(kubeconfig, proxy.Config(c.Config())); err != nil {
					t.Fatal(err)
				}
			}
			runLong(t, dir, kubeconfig, ns, giveUpAfter, c.Config(), cs, func(t *testing.T) { tc.cut(t, c, proxy) }, tc.wantGone)
		})
	}
}

// runLong runs the plugin for long enough to stream past giveUpAfter, cut
// it, recover and settle, with churn until a few seconds before the end.
func runLong(t *testing.T, dir, kubeconfig, ns string, giveUpAfter time.Duration, cfg *rest.Config, cs kubernetes.Interface, cut func(*testing.T), wantGone bool) {
	t.Helper()
	churn, err := testcluster.StartChurn(cfg, testcluster.ChurnOptions{Namespace: ns, Names: 60, Rate: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer churn.Stop()
	// --duration only bounds a run that would hang; SIGINT ends it, as a user would.
	p := startPlugin(t, dir, kubeconfig, "configmaps", "-n", ns, "--no-tui", "--summary", "-o", "json",
		"--give-up-after", giveUpAfter.String(), "--duration", "3m")
	start := time.Now()
	p.waitForLine(t, `"reason":"list-complete"`)
	time.Sleep(giveUpAfter + 4*time.Second)
	cutAt := time.Now()
	cut(t)
	t.Logf("the cut took %s", time.Since(cutAt).Round(time.Millisecond))
	// Churn on past the recovery, then stop it and let the watch settle.
	time.Sleep(5 * time.Second)
	t.Logf("churn: %s", churn.Stop())
	time.Sleep(3 * time.Second)
	out, _ := p.interrupt(t)
	t.Logf("ran for %s", time.Since(start).Round(time.Second))
	sum := lastSummary(t, out)
	want := listNamespace(t, cs, ns)
	if !reflect.DeepEqual(sum.Store, want) {
		t.Errorf("the summary's store differs from a LIST: %d cached, %d listed", len(sum.Store), len(want))
	}
	c := sum.Counters
	if wantGone && (c.Gone == 0 || c.Relists == 0) {
		t.Errorf("want a 410 and a relist, got counters %+v", c)
	}
	if c.Relists < c.Gone {
		t.Errorf("every 410 is followed by a relist: %d 410s, %d relists", c.Gone, c.Relists)
	}
	t.Logf("counters: %+v", c)
}

// lastSummary decodes the summary object that ends -o json output.
func lastSummary(t *testing.T, out string) summary.Summary {
	t.Helper()
	return lastJSONObject(t, out)
}

// listNamespace is the ConfigMaps of ns as the summary lists them.
func listNamespace(t *testing.T, cs kubernetes.Interface, ns string) []summary.StoreEntry {
	t.Helper()
	l, err := cs.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]summary.StoreEntry, 0, len(l.Items))
	for _, cm := range l.Items {
		out = append(out, summary.StoreEntry{Namespace: cm.Namespace, Name: cm.Name, UID: string(cm.UID), ResourceVersion: cm.ResourceVersion})
	}
	return out
}

func restartAPIServer(t *testing.T, c *testcluster.Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
}
