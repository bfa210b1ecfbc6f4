package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

// TestE2EProxyFaultStaleRaisesResourceVersionBackwardsNamingIt runs a
// client-go typed informer through --fault stale@every=3s while a ConfigMap
// is written twice a second, once on protobuf (client-go's default for
// built-in types) and once on JSON: after each firing an event is sent again
// two events later. The client's stream counts exactly as many events going
// backwards as the fault sent again, and raises resource-version-backwards
// caused by the fault; the replay the same.
func TestE2EProxyFaultStaleRaisesResourceVersionBackwardsNamingIt(t *testing.T) {
	for _, wire := range []string{"application/vnd.kubernetes.protobuf", "application/json"} {
		t.Run(wire[strings.LastIndexAny(wire, "./")+1:], func(t *testing.T) { testFaultStale(t, wire) })
	}
}

func testFaultStale(t *testing.T, wire string) {
	c := cluster(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()
	ns := uniqueNamespace(t, cs, "proxy-stale")
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const ua, spec = "stale-informer/1 (linux/amd64)", "stale@every=3s"
	fr := startFaultProxy(t, ua, "--fault", spec, "--fault-target", "configmaps")
	fr.cfg.ContentType, fr.cfg.AcceptContentTypes = wire, wire
	stop, stopInformer := informerStop(t)
	factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(fr.cfg), 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	factory.Start(stop)
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync through the proxy")
	}
	for i := 0; i < 30; i++ {
		if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"i": fmt.Sprint(i)}}, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(time.Second)
	stopInformer()
	sums := fr.stop(t)
	check := func(what string, sums []summary.Summary, faults []summary.FaultSummary) {
		t.Helper()
		s := streamOf(t, sums, "configmaps.v1", ua)
		sent, _ := faultCount(faults, s.Stream.ID, spec)
		t.Logf("%s: stream #%d (%s): %d events sent again, %d backwards, %d modified", what, s.Stream.ID, s.Stream.ContentType, sent, s.Counters.ResourceVersionBackwards, s.Counters.Modified)
		if !strings.HasPrefix(s.Stream.ContentType, wire) {
			t.Errorf("%s: stream #%d is %s, want %s", what, s.Stream.ID, s.Stream.ContentType, wire)
		}
		if sent < 3 || s.Counters.ResourceVersionBackwards != int64(sent) {
			t.Errorf("%s: stream #%d: %d events sent again, %d going backwards; want 3 or more, the same", what, s.Stream.ID, sent, s.Counters.ResourceVersionBackwards)
		}
		f := findingOf(t, s, findings.RVBackwards)
		if !strings.HasPrefix(f.Cause, "caused by --fault "+spec+" (injected by the observing proxy). ") {
			t.Errorf("%s: resource-version-backwards does not name the fault as its cause: %s", what, f.Cause)
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
