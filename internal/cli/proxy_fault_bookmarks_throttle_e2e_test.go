package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

// TestE2EProxyFaultNoBookmarksRaisesNoBookmarksForAClientsStream runs a
// client-go informer whose watches time out after 12 s (a ListWatch that
// sets TimeoutSeconds) through --fault no-bookmarks while a ConfigMap is
// written every second: the API server's bookmark before each timeout is
// dropped, two watches in a row run to their timeout without one, and the
// client's stream raises no-bookmarks, caused by the fault; the proxy
// counts the bookmarks it dropped, the stream saw none, and the replay
// raises the same.
func TestE2EProxyFaultNoBookmarksRaisesNoBookmarksForAClientsStream(t *testing.T) {
	c := cluster(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()
	ns := uniqueNamespace(t, cs, "proxy-nobm")
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const ua = "no-bookmarks-informer/1 (linux/amd64)"
	fr := startFaultProxy(t, ua, "--fault", "no-bookmarks", "--fault-target", "configmaps")
	through := kubernetes.NewForConfigOrDie(fr.cfg)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return through.CoreV1().ConfigMaps(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			timeout := int64(12)
			o.TimeoutSeconds = &timeout
			return through.CoreV1().ConfigMaps(ns).Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	stop, stopInformer := informerStop(t)
	go inf.Run(stop)
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync through the proxy")
	}
	// 40 s of writes: three watches of 12 s run to their timeout, each with events.
	for i := 0; i < 40; i++ {
		if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"i": fmt.Sprint(i)}}, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
	stopInformer()
	sums := fr.stop(t)
	check := func(what string, sums []summary.Summary, faults []summary.FaultSummary) {
		t.Helper()
		s := streamOf(t, sums, "configmaps.v1", ua)
		dropped, _ := faultCount(faults, s.Stream.ID, "no-bookmarks")
		t.Logf("%s: stream #%d: %d bookmarks dropped, %d seen, %d watches, %d modified", what, s.Stream.ID, dropped, s.Counters.Bookmarks, s.Counters.Watches, s.Counters.Modified)
		if dropped < 2 || s.Counters.Bookmarks != 0 || s.Counters.Watches < 3 || s.Counters.Modified < 30 {
			t.Errorf("%s: stream #%d: %d bookmarks dropped, %d seen, %d watches, %d MODIFIED; want 2 or more, 0, 3 or more, 30 or more",
				what, s.Stream.ID, dropped, s.Counters.Bookmarks, s.Counters.Watches, s.Counters.Modified)
		}
		f := findingOf(t, s, findings.NoBookmarks)
		if !strings.HasPrefix(f.Cause, "caused by --fault no-bookmarks (injected by the observing proxy). ") {
			t.Errorf("%s: no-bookmarks does not name the fault as its cause: %s", what, f.Cause)
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

// TestE2EProxyFaultThrottleRaisesThrottledAndTheClientBacksOff runs 20
// LISTs of a client-go typed client through --fault throttle@p=0.5 (Retry-After
// 1 s): about half of its requests, retries included, are answered 429, and
// client-go retries each after its Retry-After: every LIST succeeds, and
// they take at least a second per 429. The client's stream raises throttled, counting exactly the 429s the
// fault answered and naming it as the cause; the replay raises the same.
func TestE2EProxyFaultThrottleRaisesThrottledAndTheClientBacksOff(t *testing.T) {
	c := cluster(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()
	ns := uniqueNamespace(t, cs, "proxy-throttle")
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const ua, spec, lists = "throttled-lister/1 (linux/amd64)", "throttle@p=0.5", 20
	fr := startFaultProxy(t, ua, "--fault", spec, "--fault-target", "configmaps")
	through := kubernetes.NewForConfigOrDie(fr.cfg)
	began := time.Now()
	for i := range lists {
		l, err := through.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("LIST %d through the proxy: %v", i, err)
		}
	}
	took := time.Since(began)
	sums := fr.stop(t)
	check := func(what string, sums []summary.Summary, faults []summary.FaultSummary) {
		t.Helper()
		s := streamOf(t, sums, "configmaps.v1", ua)
		throttled, _ := faultCount(faults, s.Stream.ID, spec)
		f := findingOf(t, s, findings.Throttled)
		t.Logf("%s: stream #%d: %d answered 429, throttled counts %d, %d lists, %d pages; the LISTs took %s", what, s.Stream.ID, throttled, f.Count, s.Counters.Lists, s.Counters.ListPages, took)
		// Each attempt, a retry too, is answered 429 with p = 0.5 (drawn
		// from --fault-seed 1): of throttled+lists attempts, about half.
		if share := float64(throttled) / float64(throttled+lists); share < 0.3 || share > 0.7 || f.Count != int64(throttled) || s.Counters.ListPages != lists {
			t.Errorf("%s: stream #%d: %d 429s answered of %d requests, throttled counts %d, %d list pages; want 30%% to 70%%, the same, %d", what, s.Stream.ID, throttled, throttled+lists, f.Count, s.Counters.ListPages, lists)
		}
		// client-go waited each Retry-After (1 s) before its retry.
		if took < time.Duration(throttled)*time.Second {
			t.Errorf("%s: %d LISTs with %d 429s took %s: the client did not back off a second per 429", what, lists, throttled, took)
		}
		if !strings.HasPrefix(f.Title, "the observing proxy (--fault) throttled ") {
			t.Errorf("%s: the title %q blames another than the proxy", what, f.Title)
		}
		if !strings.HasPrefix(f.Cause, "caused by --fault "+spec+" (injected by the observing proxy). ") || f.Evidence.Facts["retryAfter"] != "1s" {
			t.Errorf("%s: throttled does not name the fault as its cause, or its Retry-After: %s %v", what, f.Cause, f.Evidence.Facts)
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
