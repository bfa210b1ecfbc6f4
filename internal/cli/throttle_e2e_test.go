package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

// TestE2EAThrottledWatchSaysWhoThrottledItLiveAndInItsReplay: a FlowSchema
// routes some users' ConfigMap lists to a PriorityLevel of a few seats that
// rejects what it cannot seat; parallel lists by one of them fill it. The
// watch command, run as another of them, is answered 429, and raises
// `throttled` with the count, the Retry-After and the FlowSchema and
// PriorityLevel: named for a user who may read them, by UID for one who may
// not. The replay of its trace raises the same finding.
func TestE2EAThrottledWatchSaysWhoThrottledItLiveAndInItsReplay(t *testing.T) {
	t.Parallel()
	c := testcluster.ForTest(t, testcluster.Options{Users: []string{"load", "reader", "blind"}})
	ctx := context.Background()
	const ns = "throttled"
	th, err := c.Throttle(ctx, ns, []string{"load", "reader", "blind"}, []string{"reader"})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	// Lists long enough to hold their seats a while.
	data := map[string]string{"v": strings.Repeat("x", 4096)}
	for i := range 200 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)}, Data: data}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		user              string
		flowSchema, level string
	}{
		{"reader", th.FlowSchema + " (uid " + th.FlowSchemaUID + ")", th.PriorityLevel + " (uid " + th.PriorityLevelUID + ")"},
		{"blind", "uid " + th.FlowSchemaUID, "uid " + th.PriorityLevelUID},
	} {
		t.Run(tc.user, func(t *testing.T) {
			dir := t.TempDir()
			ucfg, err := c.UserConfig(tc.user)
			if err != nil {
				t.Fatal(err)
			}
			kc := filepath.Join(dir, "kubeconfig")
			if err := testcluster.WriteKubeconfig(kc, ucfg); err != nil {
				t.Fatal(err)
			}
			tracePath := filepath.Join(dir, "throttled.jsonl")
			stop, err := c.ListLoad(ctx, "load", ns, 16)
			if err != nil {
				t.Fatal(err)
			}
			code, out, stderr := run(t, "configmaps", "-n", ns, "--kubeconfig", kc, "--duration", "10s", "--initial-list", "list", "--page-size", "1", "--no-tui", "--summary", "-o", "json", "--trace", tracePath)
			loadThrottled := stop()
			if code != ExitOK {
				t.Fatalf("watch: exit %d\n%s", code, stderr)
			}
			t.Logf("the load was answered 429 %d times", loadThrottled)
			live := throttledFinding(t, "live", out)
			if live.Count < 1 || live.Evidence.Facts["retryAfter"] == "" ||
				live.Evidence.Facts["flowSchema"] != tc.flowSchema || live.Evidence.Facts["priorityLevel"] != tc.level {
				t.Errorf("live: %+v\nwant a count, a Retry-After, FlowSchema %q and PriorityLevel %q", live, tc.flowSchema, tc.level)
			}
			t.Logf("live: %s", live.Evidence.Text)
			b, err := os.ReadFile(tracePath)
			if err != nil {
				t.Fatal(err)
			}
			// Every 429 is counted, and its headers recorded on its end line.
			if n := strings.Count(string(b), `"throttle":{"retryAfter":`); int64(n) != live.Count || n != strings.Count(string(b), `"flowSchemaUID":"`+th.FlowSchemaUID+`"`) {
				t.Errorf("the trace records %d 429s with their headers, the finding counts %d", n, live.Count)
			}
			code, out, stderr = run(t, "replay", tracePath, "--speed", "0", "--summary", "-o", "json")
			if code != ExitOK {
				t.Fatalf("replay: exit %d\n%s", code, stderr)
			}
			replayed := throttledFinding(t, "replay", out)
			if l, r := clockless(live), clockless(replayed); fmt.Sprint(l) != fmt.Sprint(r) {
				t.Errorf("the replay's finding differs:\nlive   %+v\nreplay %+v", l, r)
			}
		})
	}
}

// throttledFinding is the throttled finding of the one summary ending out.
func throttledFinding(t *testing.T, what, out string) findings.Finding {
	t.Helper()
	sum := lastJSONObject(t, out)
	for _, f := range sum.Findings {
		if f.ID == findings.Throttled {
			return f
		}
	}
	t.Fatalf("%s: no throttled finding in %+v\n%s", what, sum.Findings, out[max(0, len(out)-3000):])
	return findings.Finding{}
}

func clockless(f findings.Finding) findings.Finding {
	return summary.Summary{Findings: []findings.Finding{f}}.WithoutClockReadings().Findings[0]
}
