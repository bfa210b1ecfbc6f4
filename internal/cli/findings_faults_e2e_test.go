package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

// The findings of the catalogue that TestE2EFindingsFromRealScenarios does
// not provoke, each from its own situation against the real API server: an
// initial list over 100 MiB (streamed and paged), a server that goes away
// for longer than --give-up-after, and what a faulty proxy between the
// client and the server does to a watch (it loses DELETE events; it serves
// an event it carried before again). cache-drift, which only an audit (the
// dashboard's a) finds, is in internal/session.

// throughMiddlebox is a kubeconfig that reaches c through a new middlebox
// (plain HTTP on 127.0.0.1, the admin's token).
func throughMiddlebox(t *testing.T, c *testcluster.Cluster) (*testcluster.Middlebox, string) {
	t.Helper()
	mb, err := c.NewMiddlebox()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mb.Close() })
	return mb, kubeconfigOf(t, mb.Config(c.Config()))
}

// ended waits for a run to end by itself and returns the summaries it
// printed and its error.
func (r *liveRun) ended(t *testing.T, within time.Duration) ([]summary.Summary, error) {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err
		return allSummaries(t, r.out.String()), err
	case <-time.After(within):
		t.Fatalf("the run did not end within %s", within)
	}
	return nil, nil
}

func TestE2EMoreFindingsFromRealScenarios(t *testing.T) {
	t.Parallel()
	scenario, wait := scenarios(t)
	defer wait()

	// 110 ConfigMaps of 1,000,000 bytes each: the first list is over 100 MiB,
	// whether it is streamed (protobuf) or paged (JSON). The finding gives
	// the list's size as received, which is what the server sends for a
	// LIST of the same objects, within 1 %.
	scenario("large-initial-list", func(t *testing.T) {
		c := testcluster.ForTest(t, testcluster.Options{})
		cs := kubernetes.NewForConfigOrDie(c.Config())
		ctx := context.Background()
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "big"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		const objects = 110
		value := strings.Repeat("x", 1_000_000)
		errs := make(chan error, objects)
		var created sync.WaitGroup
		for w := 0; w < 4; w++ {
			created.Add(1)
			go func() {
				defer created.Done()
				for i := w; i < objects; i += 4 {
					_, err := cs.CoreV1().ConfigMaps("big").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("big-%03d", i)}, Data: map[string]string{"d": value}}, metav1.CreateOptions{})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		created.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		listSize := func(accept string) int64 {
			b, err := cs.CoreV1().RESTClient().Get().Namespace("big").Resource("configmaps").SetHeader("Accept", accept).DoRaw(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return int64(len(b))
		}
		for _, tc := range []struct{ initialList, wire, accept string }{
			{"auto", "protobuf", "application/vnd.kubernetes.protobuf"},
			{"list", "json", "application/json"},
		} {
			measured := listSize(tc.accept)
			tracePath := filepath.Join(t.TempDir(), tc.initialList+".jsonl")
			r := startRun(t, "configmaps", "-n", "big", "--kubeconfig", c.Kubeconfig(), "--no-tui", "-o", "json", "--summary",
				"--initial-list", tc.initialList, "--wire", tc.wire, "--trace", tracePath, "--once")
			s := only(t, r.wait(t, 3*time.Minute))
			f := findingOf(t, s, findings.LargeInitialList)
			got, err := strconv.ParseInt(f.Evidence.Facts["bytes"], 10, 64)
			if err != nil || f.Severity != findings.Warning || f.Evidence.Facts["objects"] != strconv.Itoa(objects) {
				t.Errorf("%s list: want a warning with the list's bytes and %d objects: %s", tc.initialList, objects, f.Detail())
			}
			if ratio := float64(got) / float64(measured); ratio < 0.99 || ratio > 1.01 {
				t.Errorf("%s list in %s: the finding says %d bytes, a LIST of the same objects is %d (%.3f×), want within 1 %%", tc.initialList, tc.wire, got, measured, ratio)
			}
			t.Logf("%s list in %s: the finding says %d bytes, a LIST is %d (%.4f×)", tc.initialList, tc.wire, got, measured, float64(got)/float64(measured))
			onlyFindings(t, s, findings.LargeInitialList)
			checkLinesAndReplay(t, r.out.String(), tracePath, []summary.Summary{s})
		}
	})

	// The server goes away (every connection refused) for longer than
	// --give-up-after: gave-up, an error, and the run fails.
	scenario("gave-up", func(t *testing.T) {
		c := cluster(t)
		cs := kubernetes.NewForConfigOrDie(c.Config())
		newNamespaceIn(t, cs, "unreachable", 2)
		proxy, kc := throughFaultProxy(t, c)
		tracePath := filepath.Join(t.TempDir(), "gave-up.jsonl")
		r := startRun(t, "configmaps", "-n", "unreachable", "--kubeconfig", kc, "--no-tui", "-o", "json", "--summary",
			"--trace", tracePath, "--give-up-after", "10s")
		r.waitFor(t, `"reason":"list-complete"`, 1, time.Minute)
		time.Sleep(time.Second)
		if fs := findingLines(t, r.out.String()); len(fs) > 0 {
			t.Fatalf("%s before the server went away", fs[0].ID)
		}
		proxy.Refuse(time.Hour)
		proxy.CutAll()
		sums, err := r.ended(t, time.Minute)
		if err == nil {
			t.Fatal("the run ended without an error after giving up")
		}
		s := only(t, sums)
		f := findingOf(t, s, findings.GaveUp)
		waited, perr := time.ParseDuration(strings.TrimSuffix(strings.TrimPrefix(f.Title, "gave up after "), " without progress"))
		if f.Severity != findings.Error || f.Count != 1 || perr != nil || waited < 10*time.Second {
			t.Errorf("want one error naming how long nothing came, 10s or more: %s", f.Detail())
		}
		onlyFindings(t, s, findings.GaveUp)
		// The replay of the trace gives up as the run did.
		checkLinesAndReplayExit(t, r.out.String(), tracePath, []summary.Summary{s}, ExitFailure)
	})

	// A user RBAC lets list and watch nothing: the server answers 403 on
	// every attempt, request-refused says so with the server's words, and
	// the run fails; its replay fails the same way.
	scenario("request-refused", func(t *testing.T) {
		cfg, err := cluster(t).UserConfig("nobody")
		if err != nil {
			t.Fatal(err)
		}
		tracePath := filepath.Join(t.TempDir(), "refused.jsonl")
		r := startRun(t, "configmaps", "-n", "default", "--kubeconfig", kubeconfigOf(t, cfg), "--no-tui", "-o", "json", "--summary", "--trace", tracePath)
		sums, err := r.ended(t, time.Minute)
		if err == nil {
			t.Fatal("the run ended without an error though every request was refused")
		}
		s := only(t, sums)
		f := findingOf(t, s, findings.RequestRefused)
		if f.Severity != findings.Error || f.Title != "the server refused the watch: 403 Forbidden" || !strings.Contains(f.Evidence.Text, `User "nobody" cannot`) {
			t.Errorf("want an error naming the 403 and the server's words: %s", f.Detail())
		}
		onlyFindings(t, s, findings.RequestRefused)
		checkLinesAndReplayExit(t, r.out.String(), tracePath, []summary.Summary{s}, ExitFailure)
	})

	// A proxy in between loses the DELETE events; two objects are deleted
	// and created again under their names: the watch delivers each new
	// object where the cache holds the old one, uid-mismatch names both
	// with their old and new UIDs. Before the fault the run is quiet.
	scenario("uid-mismatch", func(t *testing.T) {
		c := cluster(t)
		cs := kubernetes.NewForConfigOrDie(c.Config())
		cms := newNamespaceIn(t, cs, "lossy", 4)
		mb, kc := throughMiddlebox(t, c)
		tracePath := filepath.Join(t.TempDir(), "uid-mismatch.jsonl")
		r := startRun(t, "configmaps", "-n", "lossy", "--kubeconfig", kc, "--wire", "json", "--no-tui", "-o", "json", "--summary", "--trace", tracePath)
		r.waitFor(t, `"reason":"list-complete"`, 1, time.Minute)
		ctx := context.Background()
		if _, err := cs.CoreV1().ConfigMaps("lossy").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "passed"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().ConfigMaps("lossy").Delete(ctx, "passed", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if fs := findingLines(t, r.out.String()); len(fs) > 0 {
			t.Fatalf("%s through the middlebox before its fault", fs[0].ID)
		}
		mb.DropDeletes(true)
		want := map[string]findings.Object{}
		for _, cm := range cms[:2] {
			if err := cs.CoreV1().ConfigMaps("lossy").Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			again, err := cs.CoreV1().ConfigMaps("lossy").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.Name}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want[cm.Name] = findings.Object{Namespace: "lossy", Name: cm.Name, OldUID: string(cm.UID), NewUID: string(again.UID), What: "replaced"}
		}
		r.waitFor(t, `"type":"finding"`, 1, time.Minute)
		time.Sleep(2 * time.Second) // the second object's event
		s := only(t, r.stop(t))
		if dropped, _ := mb.Counts(); dropped != 2 {
			t.Errorf("the middlebox dropped %d DELETE events, want 2", dropped)
		}
		f := findingOf(t, s, findings.UIDMismatch)
		if f.Severity != findings.Warning || f.Count != 2 || len(f.Evidence.Objects) != 2 || s.Counters.UIDMismatches != 2 {
			t.Fatalf("want a warning of the 2 objects replaced: %s\ncounters %+v", f.Detail(), s.Counters)
		}
		for _, o := range f.Evidence.Objects {
			if o != want[o.Name] {
				t.Errorf("evidence %+v, want %+v", o, want[o.Name])
			}
		}
		onlyFindings(t, s, findings.UIDMismatch)
		checkLinesAndReplay(t, r.out.String(), tracePath, []summary.Summary{s})
	})

	// A proxy in between serves an event it carried before, once, after a
	// newer one: resource-version-backwards names the request, the old
	// resourceVersion and the cursor it kept.
	scenario("resource-version-backwards", func(t *testing.T) {
		c := cluster(t)
		cs := kubernetes.NewForConfigOrDie(c.Config())
		cms := newNamespaceIn(t, cs, "stale", 3)
		mb, kc := throughMiddlebox(t, c)
		tracePath := filepath.Join(t.TempDir(), "backwards.jsonl")
		r := startRun(t, "configmaps", "-n", "stale", "--kubeconfig", kc, "--wire", "json", "--no-tui", "-o", "json", "--summary", "--trace", tracePath)
		r.waitFor(t, `"reason":"list-complete"`, 1, time.Minute)
		ctx := context.Background()
		update := func(cm *corev1.ConfigMap, v string) *corev1.ConfigMap {
			cm = cm.DeepCopy()
			cm.Data = map[string]string{"k": v}
			out, err := cs.CoreV1().ConfigMaps("stale").Update(ctx, cm, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		first := update(cms[0], "first") // the oldest event the middlebox carries, when the list was paged
		time.Sleep(2 * time.Second)
		if fs := findingLines(t, r.out.String()); len(fs) > 0 {
			t.Fatalf("%s through the middlebox before its fault", fs[0].ID)
		}
		mb.ResendOld()
		newer := update(cms[1], "newer")
		r.waitFor(t, `"type":"finding"`, 1, time.Minute)
		s := only(t, r.stop(t))
		if _, resent := mb.Counts(); resent != 1 {
			t.Errorf("the middlebox served %d old events again, want 1", resent)
		}
		f := findingOf(t, s, findings.RVBackwards)
		old := f.Evidence.Facts["resourceVersion"]
		oldRV, err1 := strconv.ParseInt(old, 10, 64)
		firstRV, err2 := strconv.ParseInt(first.ResourceVersion, 10, 64)
		if f.Severity != findings.Error || f.Count != 1 || f.Evidence.Facts["cursor"] != newer.ResourceVersion || err1 != nil || err2 != nil || oldRV > firstRV ||
			s.Counters.ResourceVersionBackwards != 1 {
			t.Errorf("want an error with the old resourceVersion (at most %s) and the cursor kept (%s): %s\ncounters %+v", first.ResourceVersion, newer.ResourceVersion, f.Detail(), s.Counters)
		}
		onlyFindings(t, s, findings.RVBackwards)
		checkLinesAndReplay(t, r.out.String(), tracePath, []summary.Summary{s})
	})
}
