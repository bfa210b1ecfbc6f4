package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
			// The load holds the level's seats; whether one of the watch's
			// requests is rejected in its 10 s is up to the server's queues:
			// a run that was never answered 429 is run again (up to 3 times),
			// and what is checked is the run that was.
			var code int
			var out, stderr string
			for attempt := 1; ; attempt++ {
				stop, err := c.ListLoad(ctx, "load", ns, 16)
				if err != nil {
					t.Fatal(err)
				}
				code, out, stderr = run(t, "configmaps", "-n", ns, "--kubeconfig", kc, "--duration", "10s", "--initial-list", "list", "--page-size", "1", "--no-tui", "--summary", "-o", "json", "--trace", tracePath)
				loadThrottled := stop()
				if code != ExitOK {
					t.Fatalf("watch: exit %d\n%s", code, stderr)
				}
				t.Logf("attempt %d: the load was answered 429 %d times", attempt, loadThrottled)
				if strings.Contains(out, `"code":429`) || attempt == 3 {
					break
				}
			}
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

// TestE2EAClientThrottledInEveryRequestNamesWhoThrottledItOnceItMayRead: a
// FlowSchema routes every request of two users (every verb on every
// resource, the flow-control objects' reads included, and every
// non-resource URL) to a PriorityLevel without seats, which rejects them
// all. Both watch with the default flags (the streaming list); "reader" may
// read FlowSchemas and PriorityLevels, "blind" may not. While the level
// rejects, the lookup of the names is rejected too: the throttled finding
// and its FINDING line give them by UID. Once the level has seats, the
// reader's run looks again after its lookup's Retry-After, with no 429 to
// prompt it, and names them: in a FINDING line, the summary, and its trace,
// whose replay and explain name them as the live run did. The blind run
// never learns them; its action says how to find them, and the commands it
// gives, run as the admin, do.
func TestE2EAClientThrottledInEveryRequestNamesWhoThrottledItOnceItMayRead(t *testing.T) {
	t.Parallel()
	c := testcluster.ForTest(t, testcluster.Options{Users: []string{"reader", "blind", "holder"}})
	ctx := context.Background()
	const ns = "rejected"
	dir := t.TempDir()
	// Discovery, cached before the level rejects it (as ~/.kube/cache holds
	// it): no command would start without it.
	cache := filepath.Join(dir, "cache")
	if code, _, stderr := run(t, "configmaps", "-n", "default", "--kubeconfig", c.Kubeconfig(), "--cache-dir", cache, "--once", "--no-tui"); code != ExitOK {
		t.Fatalf("caching discovery: exit %d\n%s", code, stderr)
	}
	th, err := c.ThrottleEverything(ctx, ns, []string{"reader", "blind"}, []string{"reader"}, "holder")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	watch := func(user string) (*liveRun, string) {
		ucfg, err := c.UserConfig(user)
		if err != nil {
			t.Fatal(err)
		}
		kc := filepath.Join(dir, user+".kubeconfig")
		if err := testcluster.WriteKubeconfig(kc, ucfg); err != nil {
			t.Fatal(err)
		}
		tracePath := filepath.Join(dir, user+".jsonl")
		return startRun(t, "configmaps", "-n", ns, "--kubeconfig", kc, "--cache-dir", cache, "--no-tui", "--summary", "-o", "json", "--trace", tracePath), tracePath
	}
	reader, readerTrace := watch("reader")
	blind, _ := watch("blind")
	// Each was answered 429, and raised throttled (the reader's lookup, at
	// that 429, was rejected too: the level seats nothing); then the level
	// gets seats.
	reader.waitFor(t, `"type":"finding"`, 1, time.Minute)
	blind.waitFor(t, `"type":"finding"`, 1, time.Minute)
	if err := c.Unthrottle(ctx, th); err != nil {
		t.Fatal(err)
	}
	// No 429 comes now; the reader's lookup is retried all the same, and a
	// FINDING line names them.
	reader.waitFor(t, `"flowSchema":"`+th.FlowSchema+` (uid `+th.FlowSchemaUID+`)"`, 1, 30*time.Second)
	reader.stop(t)
	blind.stop(t)
	readerOut, blindOut := reader.out.String(), blind.out.String()

	named := func(name, uid string) string { return name + " (uid " + uid + ")" }
	fs, pl := named(th.FlowSchema, th.FlowSchemaUID), named(th.PriorityLevel, th.PriorityLevelUID)
	// The reader: a FINDING line by UID, then one with the names.
	var lines []findings.Finding
	for _, f := range findingLines(t, readerOut) {
		if f.ID == findings.Throttled {
			lines = append(lines, f)
		}
	}
	if len(lines) < 2 || lines[0].Evidence.Facts["flowSchema"] != "uid "+th.FlowSchemaUID ||
		lines[len(lines)-1].Evidence.Facts["flowSchema"] != fs || lines[len(lines)-1].Evidence.Facts["priorityLevel"] != pl {
		t.Errorf("reader: FINDING lines %+v\nwant one by UID, then one naming FlowSchema %s and PriorityLevel %s", lines, fs, pl)
	}
	live := throttledFinding(t, "reader", readerOut)
	if live.Evidence.Facts["flowSchema"] != fs || live.Evidence.Facts["priorityLevel"] != pl ||
		!strings.Contains(live.Evidence.Text, "classified it as FlowSchema "+fs+", PriorityLevel "+pl) ||
		!strings.HasPrefix(live.Action, "FlowSchema "+th.FlowSchema+" matches this client and sends it to PriorityLevel "+th.PriorityLevel) {
		t.Errorf("reader's summary: %+v\nwant FlowSchema %s and PriorityLevel %s named", live, fs, pl)
	}
	if len(lines) > 0 {
		t.Logf("reader's first FINDING line: %s", lines[0].Evidence.Text)
	}
	t.Logf("reader's summary: %s\n%s", live.Evidence.Text, live.Action)
	// Its replay and explain name them offline.
	code, out, stderr := run(t, "replay", readerTrace, "--speed", "0", "--no-tui")
	if code != ExitOK || !strings.Contains(out, "FINDING warning throttled") || !strings.Contains(out, "classified it as FlowSchema "+fs+", PriorityLevel "+pl) {
		t.Errorf("replay: exit %d, no FINDING line naming %s and %s\n%s\n%s", code, fs, pl, out, stderr)
	}
	code, out, stderr = run(t, "explain", readerTrace)
	if code != ExitOK || !strings.Contains(out, "FlowSchema "+fs+", PriorityLevel "+pl) || !strings.Contains(out, "FlowSchema "+th.FlowSchema+" matches this client") {
		t.Errorf("explain: exit %d, does not name %s and %s\n%s\n%s", code, fs, pl, out, stderr)
	}
	code, out, stderr = run(t, "explain", readerTrace, "-o", "json")
	var explained struct{ Resources []Explained }
	if err := json.Unmarshal([]byte(out), &explained); code != ExitOK || err != nil || len(explained.Resources) != 1 {
		t.Fatalf("explain -o json: exit %d, %v\n%s\n%s", code, err, out, stderr)
	}
	for _, f := range explained.Resources[0].Findings {
		if f.ID == findings.Throttled && fmt.Sprint(clockless(f)) != fmt.Sprint(clockless(live)) {
			t.Errorf("explain's finding differs:\nlive    %+v\nexplain %+v", clockless(live), clockless(f))
		}
	}

	// The blind run: by UID to the end, and how to find them.
	unnamed := throttledFinding(t, "blind", blindOut)
	if unnamed.Evidence.Facts["flowSchema"] != "uid "+th.FlowSchemaUID || unnamed.Evidence.Facts["priorityLevel"] != "uid "+th.PriorityLevelUID {
		t.Errorf("blind: %+v, want both by UID", unnamed.Evidence.Facts)
	}
	t.Logf("blind's action: %s", unnamed.Action)
	bin := t.TempDir()
	if err := os.Symlink(c.Binaries().Kubectl, filepath.Join(bin, "kubectl")); err != nil {
		t.Fatal(err)
	}
	var commands int
	for _, part := range strings.Split(unnamed.Action, "; ") {
		i := strings.Index(part, "kubectl get ")
		if i < 0 {
			continue
		}
		commands++
		sh := exec.Command("sh", "-c", part[i:])
		sh.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "KUBECONFIG=" + c.Kubeconfig()}
		got, err := sh.CombinedOutput()
		want := th.FlowSchema
		if strings.Contains(part, "prioritylevelconfigurations") {
			want = th.PriorityLevel
		}
		if err != nil || !strings.HasPrefix(string(got), want+" ") {
			t.Errorf("%s: %v\n%s\nwant a line for %s", part[i:], err, got, want)
		}
	}
	if commands != 2 {
		t.Errorf("blind's action gives %d kubectl commands, want 2: %s", commands, unnamed.Action)
	}
}
