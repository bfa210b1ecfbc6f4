package outputs_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/cli"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/outputs"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/plugintest"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

// startPlugin runs the plugin's command line in this process.
func startPlugin(t *testing.T, args ...string) *plugintest.Run {
	t.Helper()
	return plugintest.Start(t, func(s genericiooptions.IOStreams) *cobra.Command { return cli.NewCommand(s, "test") }, args...)
}

// stopRun interrupts the run as SIGINT would, and returns its summaries.
func stopRun(t *testing.T, p *plugintest.Run) []summary.Summary {
	t.Helper()
	err := p.Stop()
	sums, decErr := summary.Decode([]byte(p.Out.String()))
	if decErr != nil {
		t.Fatalf("the run ended with %v; its summary: %v\n%s", err, decErr, p.ErrOut.String())
	}
	return sums
}

// The differential test, live: our reflector (with the defaults, a
// streaming list in protobuf) and a client-go informer seen through the
// observing proxy, on a real apiserver restarted with etcd compacted in the
// middle of churn. Each run's live views, its summary and a scrape of its
// metrics at the end, count what its ledger counts; its trace, replayed,
// counts the same again through every view (checkViews: the summary, the
// metrics, the report and the findings' evidence).
func TestE2EEveryViewCountsWhatTheLedgerCountsLive(t *testing.T) {
	c := testcluster.ForTest(t, testcluster.Options{})
	cs := kubernetes.NewForConfigOrDie(c.Config())
	const ns = "differential"
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	churn, err := testcluster.StartChurn(c.Config(), testcluster.ChurnOptions{Namespace: ns, Names: 40, Rate: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer churn.Stop()

	work := t.TempDir()
	watchTrace, proxyTrace, kc := filepath.Join(work, "watch.jsonl"), filepath.Join(work, "proxy.jsonl"), filepath.Join(work, "proxy.kubeconfig")
	p := startPlugin(t, "proxy", "--kubeconfig", c.Kubeconfig(), "--port", "0", "--no-tui", "-o", "json", "--summary",
		"--trace", proxyTrace, "--print-kubeconfig", kc, "--metrics-address", "127.0.0.1:0")
	plugintest.Eventually(t, time.Minute, "the proxy's kubeconfig", func() bool { _, err := os.Stat(kc); return err == nil })
	// One command after the other: the first sets klog's flags (process
	// globals) as it runs, and the second reads them as it is built.
	w := startPlugin(t, "configmaps", "-n", ns, "--kubeconfig", c.Kubeconfig(), "--no-tui", "-o", "json", "--summary",
		"--trace", watchTrace, "--metrics-address", "127.0.0.1:0")
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.UserAgent = "differential-informer/v0"
	factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(cfg), 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatal("the informer did not sync through the proxy")
	}
	time.Sleep(5 * time.Second)

	// The restart: etcd compacted past every resourceVersion the watches
	// hold, so each comes back to a 410 and relists, churn going on.
	if err := c.RestartCompacted(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	plugintest.Eventually(t, 2*time.Minute, "a relist in both runs", func() bool {
		return strings.Contains(w.Out.String(), `"reason":"relist`) && strings.Contains(p.Out.String(), `"relist`)
	})
	time.Sleep(5 * time.Second)
	t.Logf("churn: %s", churn.Stop())
	// Quiet: no write is left to deliver when the views are read.
	time.Sleep(3 * time.Second)

	for _, run := range []struct {
		name  string
		p     *plugintest.Run
		trace string
	}{{"our reflector", w, watchTrace}, {"the proxy", p, proxyTrace}} {
		scrape := scrapeMetrics(t, run.p.ErrOut.String())
		sums := stopRun(t, run.p)
		// The ledger, as the trace replays it (byte for byte the run's: see
		// TestEveryBundledTraceReplaysTheSameEveryTime), and every view of
		// the replay against it.
		checkViews(t, run.trace)
		_, sess, runErr := replay(t, outputs.Options{Out: io.Discard, ErrOut: io.Discard}, run.trace)
		subs := sess.Subjects()
		if runErr != nil {
			t.Logf("%s: the replay ended with %v", run.name, runErr)
		}
		byName := map[string]summary.Summary{}
		for _, s := range sums {
			byName[s.Resource+"|"+streamOf(s)] = s
		}
		relisted := false
		for _, sub := range subs {
			want := ledgerTotals(sub.Stats())
			relisted = relisted || want.Relists > 0
			t.Logf("%s, %s: the ledger counts %+v", run.name, sub.Name(), want)
			_, client := sub.Describe()
			s, ok := byName[sub.Target().Resource.String()+"|"+client.UserAgent]
			if !ok {
				t.Errorf("%s: no live summary of %s (%s)", run.name, sub.Name(), client.UserAgent)
				continue
			}
			if got := summaryTotals(s, want); got != want {
				t.Errorf("%s, %s: the live summary counts\n%+v, the ledger\n%+v", run.name, sub.Name(), got, want)
			}
			if got := metricsTotals(scrape.of(t, sub), want); got != want {
				t.Errorf("%s, %s: the live metrics count\n%+v, the ledger\n%+v", run.name, sub.Name(), got, want)
			}
		}
		if !relisted {
			t.Errorf("%s: no relist after the restart with etcd compacted", run.name)
		}
	}
}

// streamOf is the client a summary is about ("" for our reflector's).
func streamOf(s summary.Summary) string {
	if s.Stream == nil {
		return ""
	}
	return s.Stream.UserAgent
}
