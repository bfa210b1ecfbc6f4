package metrics_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/cli"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/plugintest"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testdeps"
)

// noWatchCache serves watches from etcd, so compacting etcd under a watch
// that is away gives it a 410 when it comes back.
var noWatchCache = testcluster.NewLazy(testcluster.Options{DisableWatchCache: true})

// TestMain fails the package at once when Prometheus is missing (the
// Prometheus test needs it), and otherwise runs the tests on the package's cluster.
func TestMain(m *testing.M) {
	if code := testdeps.Main(testdeps.Prometheus()); code != 0 {
		os.Exit(code)
	}
	os.Exit(testcluster.Main(m, noWatchCache))
}

// plugin is the plugin running in this process, as a user would run it.
type plugin struct{ *plugintest.Run }

func startPlugin(t *testing.T, args ...string) plugin {
	t.Helper()
	return plugin{plugintest.Start(t, func(s genericiooptions.IOStreams) *cobra.Command { return cli.NewCommand(s, "test") }, args...)}
}

// metricsURL waits for the line that says where the metrics are served.
func (p plugin) metricsURL(t *testing.T) string {
	t.Helper()
	var url string
	plugintest.Eventually(t, 30*time.Second, "the metrics endpoint", func() bool {
		if u, ok := metrics.ServingURL(p.ErrOut.String()); ok {
			url = u
			return true
		}
		if ended, err := p.Ended(); ended {
			t.Fatalf("the plugin ended: %v\n%s", err, p.ErrOut.String())
		}
		return false
	})
	return url
}

func createConfigMaps(t *testing.T, cs kubernetes.Interface, ns string, n int) {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": "v"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// summaryOf decodes the JSON summary printed after the JSON lines.
func summaryOf(t *testing.T, out string) summary.Summary {
	t.Helper()
	sums, err := summary.Decode([]byte(out))
	if err != nil || len(sums) != 1 {
		t.Fatalf("want one summary as the last line: %v (%d summaries)\n%s", err, len(sums), out[max(0, len(out)-2000):])
	}
	return sums[0]
}

func TestE2EMetricsScrapedDuringA410AndARelistEqualTheSummary(t *testing.T) {
	c := noWatchCache.Get(t)
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("metrics-%d", time.Now().UnixNano()%1e6)
	createConfigMaps(t, cs, ns, 20)
	proxy, err := c.NewProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	kc := filepath.Join(t.TempDir(), "via-proxy.yaml")
	if err := testcluster.WriteKubeconfig(kc, proxy.Config(c.Config())); err != nil {
		t.Fatal(err)
	}
	p := startPlugin(t, "configmaps", "--kubeconfig", kc, "-n", ns, "--no-tui", "--summary", "-o", "json",
		"--initial-list", "list", "--page-size", "5", "--metrics-address", "127.0.0.1:0")
	url := p.metricsURL(t)
	labels := l("resource", "configmaps.v1", "namespace", ns, "label_selector", "", "field_selector", "")
	with := func(kv ...string) map[string]string {
		out := l(kv...)
		for k, v := range labels {
			out[k] = v
		}
		return out
	}
	scraped := func(name string, lbl map[string]string) float64 {
		f, err := tryScrape(url)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := f.value(name, lbl)
		return v
	}
	plugintest.Eventually(t, 30*time.Second, "the first complete list", func() bool { return scraped("watchcache_lists_total", with("result", "complete")) == 1 })
	if got := scraped("watchcache_store_objects", labels); got != 20 {
		t.Errorf("store objects: got %v, want 20", got)
	}

	// Take the watch away, delete two objects and compact etcd past the cursor while it is away.
	proxy.Refuse(time.Hour)
	proxy.CutAll()
	plugintest.Eventually(t, 30*time.Second, "the watch to end in an error", func() bool {
		return scraped("watchcache_watch_duration_seconds", with("end", "error")) >= 1
	})
	ctx := context.Background()
	for _, name := range []string{"cm-3", "cm-11"} {
		if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Writes elsewhere move etcd's revision past the cursor, so compaction removes it.
	createConfigMaps(t, cs, ns+"-elsewhere", 3)
	if _, err := c.Compact(ctx); err != nil {
		t.Fatalf("compact: %v", err)
	}
	proxy.Refuse(0)
	plugintest.Eventually(t, 60*time.Second, "a relist after the 410", func() bool {
		return scraped("watchcache_lists_total", with("result", "complete")) == 2
	})
	// The relist's diff raises missed-deletes just after the metrics counted it.
	plugintest.Eventually(t, 30*time.Second, "the missed-deletes finding", func() bool {
		return scraped("watchcache_findings", with("id", "missed-deletes", "severity", "warning")) == 1
	})
	f := scrape(t, url)
	if err := p.Stop(); err != nil {
		t.Fatalf("the plugin failed: %v\n%s", err, p.ErrOut.String())
	}
	sum := summaryOf(t, p.Out.String())
	countersEqualTheSummary(t, f, sum, labels)
	if sum.Counters.Gone != 1 || sum.Counters.Relists != 1 || sum.Objects != 18 {
		t.Errorf("summary: %d objects, counters %+v; want 18 objects after 1 410 and 1 relist", sum.Objects, sum.Counters)
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"watchcache_relists_total", with("cause", "gone"), 1},
		{"watchcache_gone_total", with("on", "watch"), 1},
		{"watchcache_relist_missed_total", with("kind", "delete"), 2},
		{"watchcache_list_pages_total", with("result", "ok"), 8},
		{"watchcache_state", with("state", "Watching"), 1},
	} {
		if got := f.get(t, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v: got %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
}
