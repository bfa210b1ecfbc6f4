package reflector_test

import (
	"context"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// giveUpAfter is short, so that each watch below streams for longer than
// it before it is cut, yet longer than the time an apiserver restart leaves
// the watcher without any answer, which a run must survive: from 1 s on an
// idle machine to 20 s (TLS handshakes timing out) when other test packages
// load its two cores.
const giveUpAfter = 25 * time.Second

// TestE2ELongWatchesSurviveTheirCuts: a watch that has streamed for longer
// than GiveUpAfter, with creates, updates, deletes and recreates going on,
// is ended by an apiserver restart (GOAWAY), a proxy cut, or an apiserver
// restart with etcd compacted in the gap (410, relist, diff). The reflector
// recovers each time and its cache equals a fresh LIST.
func TestE2ELongWatchesSurviveTheirCuts(t *testing.T) {
	t.Parallel() // each case on a cluster of its own
	cases := []struct {
		name string
		// viaProxy watches through the fault proxy.
		viaProxy bool
		cut      func(t *testing.T, c *testcluster.Cluster, proxy *testcluster.Proxy)
		// relist: a 410 and a relist must happen ("must"), must not ("never"), or may:
		// a restarted apiserver's watch cache starts at its current resourceVersion,
		// and a watch from before it gets 410 if anything was written in between.
		relist string
	}{
		{"apiserver restart", false, func(t *testing.T, c *testcluster.Cluster, _ *testcluster.Proxy) {
			restart(t, c)
		}, "may"},
		{"proxy cut", true, func(t *testing.T, _ *testcluster.Cluster, proxy *testcluster.Proxy) {
			if n := proxy.CutAll(); n == 0 {
				t.Fatal("the proxy had no connection to cut")
			}
		}, "never"},
		{"apiserver restart with etcd compacted in the gap", true, func(t *testing.T, c *testcluster.Cluster, proxy *testcluster.Proxy) {
			// The watcher is cut off while the churn goes on directly, etcd
			// is compacted past its cursor, and the apiserver restarts with
			// an empty watch cache: its resourceVersion is gone.
			compactedRestart(t, c, proxy)
		}, "must"},
	}
	// Each case has a cluster of its own (it restarts or cuts it), so the
	// cases run in parallel; in each, a reflector per wire watches the same
	// churn through the same cut.
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := testcluster.ForTest(t, testcluster.Options{})
			cs := clientset(t, c.Config())
			ns := newNamespace(t, cs)
			createConfigMaps(t, cs, ns, "pre", 50)
			restCfg := c.Config()
			var proxy *testcluster.Proxy
			if tc.viaProxy {
				var err error
				if proxy, err = c.NewProxy(); err != nil {
					t.Fatal(err)
				}
				defer proxy.Close()
				restCfg = proxy.Config(restCfg)
			}
			churn, err := testcluster.StartChurn(c.Config(), testcluster.ChurnOptions{Namespace: ns, Names: 60, Rate: 40})
			if err != nil {
				t.Fatal(err)
			}
			defer churn.Stop()
			runs := map[reflector.Wire]*run{}
			for _, wire := range wires() {
				target := reflector.Target{Resource: configMaps, Namespace: ns}
				runs[wire] = startReflector(t, wire, restCfg, target, reflector.Config{
					GiveUpAfter: giveUpAfter, Backoff: reflector.Backoff{Initial: 200 * time.Millisecond, Max: 2 * time.Second},
					// Audits go straight to this case's server, not through its fault proxy.
					AuditSource: liveSource(t, wire, c.Config(), target),
				})
			}
			before := map[reflector.Wire]reflector.Counters{}
			for wire, rn := range runs {
				rn.waitReady(t)
				before[wire] = rn.r.Stats().Counters
			}

			// Stream for longer than GiveUpAfter before the cut.
			time.Sleep(giveUpAfter + 2*time.Second)
			for wire, rn := range runs {
				mid, b := rn.r.Stats(), before[wire]
				if streamed := mid.Counters.Added + mid.Counters.Modified + mid.Counters.Deleted - b.Added - b.Modified - b.Deleted; streamed < 100 {
					t.Fatalf("%s: the watch applied %d events before the cut, want a watch that streamed", wire, streamed)
				}
			}
			cutAt := time.Now()
			tc.cut(t, c, proxy)
			t.Logf("%s took %s", tc.name, time.Since(cutAt).Round(time.Millisecond))

			// Keep churning after the recovery, then let the watches catch up.
			time.Sleep(3 * time.Second)
			stats := churn.Stop()
			t.Logf("churn: %s", stats)
			for _, wire := range wires() {
				t.Run(string(wire), func(t *testing.T) { checkRecovered(t, runs[wire], tc.relist) })
			}
		})
	}
}

// checkRecovered: the reflector still runs, never gave up, its cache equals
// a fresh LIST, and it relisted as relist says ("must", "never" or "may").
func checkRecovered(t *testing.T, rn *run, relist string) {
	t.Helper()
	select {
	case err := <-rn.done:
		rn.done <- err
		t.Fatalf("the reflector stopped: %v (decisions %v)", err, rn.notes.reasons())
	default:
	}
	rn.auditClean(t)
	st := rn.r.Stats()
	if rn.notes.count(reflector.ReasonGaveUp) != 0 || st.State == reflector.StateFailed {
		t.Errorf("the reflector gave up: state %s, decisions %v", st.State, rn.notes.reasons())
	}
	switch relist {
	case "must":
		if st.Counters.Gone == 0 || st.Counters.Relists == 0 || st.LastRelistDiff == nil || st.LastRelistDiff.Missed() == 0 {
			t.Errorf("want a 410, a relist and a diff naming what was missed: counters %+v, diff %+v", st.Counters, st.LastRelistDiff)
		}
	case "never":
		if st.Counters.Relists != 0 {
			t.Errorf("relists: got %d, want none: the watch resumes from its resourceVersion", st.Counters.Relists)
		}
	}
	t.Logf("counters after the cut: %+v", st.Counters)
	if st.Counters.Gone > 0 && st.Counters.Relists < st.Counters.Gone {
		t.Errorf("every 410 is followed by a relist: %d 410s, %d relists", st.Counters.Gone, st.Counters.Relists)
	}
}

// compactedRestart cuts the watcher off (the churn goes on directly),
// stops kube-apiserver, compacts etcd past every resourceVersion the watcher
// saw, lets the watcher reach the port again and starts kube-apiserver with
// an empty watch cache: the watch's resourceVersion is gone.
func compactedRestart(t *testing.T, c *testcluster.Cluster, proxy *testcluster.Proxy) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	proxy.Refuse(time.Hour)
	proxy.CutAll()
	time.Sleep(time.Second)
	if err := c.RestartCompacted(ctx, func() { proxy.Refuse(0) }); err != nil {
		t.Fatal(err)
	}
}

func restart(t *testing.T, c *testcluster.Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
}
