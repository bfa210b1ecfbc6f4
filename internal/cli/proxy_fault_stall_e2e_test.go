package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// TestE2EProxyFaultStallInitialListKeepsAWatchListInformerFromSyncing runs
// a client-go typed informer with client-go's defaults (WatchListClient on:
// its list is a streaming list) through --fault stall-initial-list: its
// initial events come, its initial-events-end bookmark never does, and
// the informer does not sync within 20 s (client-go waits for the watch's
// timeout, 5 to 10 minutes). Its stream streamed one list, never
// completed, and raises watch-list-unsupported saying the streaming list
// stalled, caused by the injected fault; the replay raises the same.
func TestE2EProxyFaultStallInitialListKeepsAWatchListInformerFromSyncing(t *testing.T) {
	if !clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		t.Fatal("client-go's WatchListClient is off: the informer would LIST, and there is no streaming list to stall")
	}
	c := cluster(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()
	ns := uniqueNamespace(t, cs, "proxy-stall")
	const n = 4
	for i := range n {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const ua = "stall-informer/1 (linux/amd64)"
	fr := startFaultProxy(t, ua, "--fault", "stall-initial-list", "--fault-target", "configmaps")
	stop, stopInformer := informerStop(t)
	factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(fr.cfg), 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	factory.Start(stop)
	syncCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		t.Fatal("the informer synced through --fault stall-initial-list")
	}
	stopInformer()
	sums := fr.stop(t)
	check := func(what string, sums []summary.Summary, faults []summary.FaultSummary) {
		t.Helper()
		s := streamOf(t, sums, "configmaps.v1", ua)
		withheld, _ := faultCount(faults, s.Stream.ID, "stall-initial-list")
		var ids []findings.ID
		for _, f := range s.Findings {
			ids = append(ids, f.ID)
		}
		t.Logf("%s: stream #%d (%s): %d withheld, state %s, %d watches, %d lists, findings %v", what, s.Stream.ID, s.Stream.Strategy, withheld, s.State, s.Counters.Watches, s.Counters.Lists, ids)
		if s.Stream.Strategy != reflector.StrategyStream || withheld != 1 || s.Counters.Watches != 1 || s.Counters.Relists != 0 {
			t.Errorf("%s: stream #%d (%s): %d bookmark(s) withheld, %d watches, %d relists; want a streaming list, 1, 1, 0", what, s.Stream.ID, s.Stream.Strategy, withheld, s.Counters.Watches, s.Counters.Relists)
		}
		f := findingOf(t, s, findings.WatchListUnsupported)
		if !strings.Contains(f.Title, "stalled") || !strings.HasPrefix(f.Cause, "caused by --fault stall-initial-list (injected by the observing proxy). ") ||
			!strings.Contains(f.Evidence.Text, "never came") {
			t.Errorf("%s: watch-list-unsupported does not say the streaming list stalled on the injected fault: %s\n%s\n%s", what, f.Title, f.Evidence.Text, f.Cause)
		}
	}
	check("live", sums, faultsOf(t, fr.out.String()))
	code, replayed, errOut := run(t, "replay", fr.trace, "--speed", "0", "--no-tui", "--summary", "-o", "json")
	if code != ExitOK {
		t.Fatalf("replaying the proxy's trace: exit %d\n%s", code, errOut)
	}
	check("replayed", allSummaries(t, replayed), faultsOf(t, replayed))
	checkReplaySays(t, fr.trace, sums...)
}
