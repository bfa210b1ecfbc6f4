package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/plugintest"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

// The findings engine against the real API server: each finding of the
// catalogue that a test cluster can provoke, from the situation that
// provokes it, through the whole command (--summary -o json, the FINDING
// lines, --trace and its replay); and healthy runs that must raise nothing.
// The scenarios are waits, each on a cluster of its own where it restarts,
// compacts or reconfigures one, so they run in parallel.

// syncBuffer is an output the command writes while the test reads it.
type syncBuffer = plugintest.Buffer

// liveRun is the command running in-process; stop ends it as ctrl+c does
// (Execute's signal context is the command's context; here it is ours).
type liveRun struct {
	out, errOut *syncBuffer
	cancel      context.CancelFunc
	done        chan error
}

func startRun(t *testing.T, args ...string) *liveRun {
	t.Helper()
	r := &liveRun{out: &syncBuffer{}, errOut: &syncBuffer{}, done: make(chan error, 1)}
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: r.out, ErrOut: r.errOut}
	cmd := testCommand(streams)
	cmd.SetArgs(args)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// waitFor waits until the output has n lines containing s.
func (r *liveRun) waitFor(t *testing.T, s string, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for strings.Count(r.out.String(), s) < n {
		select {
		case err := <-r.done:
			r.done <- err
			t.Fatalf("the run ended (%v) before %d lines with %q\n%s", err, n, s, tail(r.errOut.String()))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d lines with %q within %s\n%s", n, s, within, tail(r.out.String()))
		}
	}
}

// stop ends the run (if its --duration has not) and returns its summaries.
func (r *liveRun) stop(t *testing.T) []summary.Summary {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err
		if err != nil {
			t.Fatalf("the run failed: %v\n%s", err, tail(r.errOut.String()))
		}
	case <-time.After(time.Minute):
		t.Fatal("the run did not end within a minute of its stop")
	}
	return allSummaries(t, r.out.String())
}

// wait waits for the run to end by itself (--duration, --once).
func (r *liveRun) wait(t *testing.T, within time.Duration) []summary.Summary {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err
		if err != nil {
			t.Fatalf("the run failed: %v\n%s", err, tail(r.errOut.String()))
		}
	case <-time.After(within):
		t.Fatalf("the run did not end within %s", within)
	}
	return allSummaries(t, r.out.String())
}

func tail(s string) string { return s[max(0, len(s)-3000):] }

// only returns the one summary of a run of one resource.
func only(t *testing.T, sums []summary.Summary) summary.Summary {
	t.Helper()
	if len(sums) != 1 {
		t.Fatalf("%d summaries, want 1", len(sums))
	}
	return sums[0]
}

// findingOf returns finding id of s, failing t when it was not raised.
func findingOf(t *testing.T, s summary.Summary, id findings.ID) findings.Finding {
	t.Helper()
	for _, f := range s.Findings {
		if f.ID == id {
			return f
		}
	}
	t.Fatalf("%s raised no %s; its findings: %s", s.Resource, id, describeFindings(s.Findings))
	return findings.Finding{}
}

func describeFindings(fs []findings.Finding) string {
	if len(fs) == 0 {
		return "none"
	}
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\n  %s", strings.ReplaceAll(f.Detail(), "\n", "\n  "))
	}
	return b.String()
}

// onlyFindings fails t when s raised a finding other than want, or missed one of want.
func onlyFindings(t *testing.T, s summary.Summary, want ...findings.ID) {
	t.Helper()
	var got []string
	for _, f := range s.Findings {
		got = append(got, string(f.ID))
	}
	var w []string
	for _, id := range want {
		w = append(w, string(id))
	}
	sort.Strings(got)
	sort.Strings(w)
	if !reflect.DeepEqual(got, w) {
		t.Errorf("%s raised %v, want %v: %s", s.Resource, got, w, describeFindings(s.Findings))
	}
}

// noneAboveInfo fails t on a warning or error finding.
func noneAboveInfo(t *testing.T, s summary.Summary) {
	t.Helper()
	if n := findings.CountAtLeast(s.Findings, findings.Warning); n > 0 {
		t.Errorf("a healthy run of %s raised %d warning or error finding(s): %s", s.Resource, n, describeFindings(s.Findings))
	}
}

// findingLines are the FINDING lines of -o json output.
func findingLines(t *testing.T, out string) []findings.Finding {
	t.Helper()
	var fs []findings.Finding
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, `"type":"finding"`) {
			continue
		}
		var l struct {
			Type    string            `json:"type"`
			Finding *findings.Finding `json:"finding"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil || l.Finding == nil {
			t.Fatalf("a FINDING line that is not one: %v: %s", err, line)
		}
		fs = append(fs, *l.Finding)
	}
	return fs
}

// checkLinesAndReplay checks that each finding of the summary was printed
// once as a FINDING line where it was raised, and that the replay of the
// run's trace raises the same findings (the same evidence, on the recorded clock).
func checkLinesAndReplay(t *testing.T, out, tracePath string, live []summary.Summary) {
	t.Helper()
	checkLinesAndReplayExit(t, out, tracePath, live, ExitOK)
}

// checkLinesAndReplayExit is checkLinesAndReplay of a run that ended with
// wantCode: its replay ends the same way.
func checkLinesAndReplayExit(t *testing.T, out, tracePath string, live []summary.Summary, wantCode int) {
	t.Helper()
	lines := findingLines(t, out)
	var raised []findings.ID
	for _, s := range live {
		for _, f := range s.Findings {
			raised = append(raised, f.ID)
		}
	}
	var printed []findings.ID
	for _, f := range lines {
		printed = append(printed, f.ID)
	}
	sort.Slice(raised, func(i, j int) bool { return raised[i] < raised[j] })
	sort.Slice(printed, func(i, j int) bool { return printed[i] < printed[j] })
	if !reflect.DeepEqual(raised, printed) {
		t.Errorf("FINDING lines %v, want one per finding of the summary %v", printed, raised)
	}
	code, rout, rerr := run(t, "replay", tracePath, "--speed", "0", "--no-tui", "--summary", "-o", "json")
	if code != wantCode {
		t.Fatalf("replay: exit %d, want %d\n%s", code, wantCode, rerr)
	}
	replayed := allSummaries(t, rout)
	if len(replayed) != len(live) {
		t.Fatalf("%d resources replayed, %d live", len(replayed), len(live))
	}
	for i := range live {
		l, r := comparableFindings(live[i].Findings), comparableFindings(replayed[i].Findings)
		if !reflect.DeepEqual(l, r) {
			t.Errorf("%s: the replay raises other findings than the live run:\nlive:   %+v\nreplay: %+v\n%s\n%s", live[i].Resource, l, r,
				describeFindings(live[i].Findings), describeFindings(replayed[i].Findings))
		}
	}
}

// comparableFinding is what a live run and its replay agree on: the
// finding, its severity and count, the requests and objects of its evidence.
// Its times, and the durations its sentences give, are each run's clock
// readings (a replay's clock stands at the last line it took).
type comparableFinding struct {
	ID           findings.ID
	Severity     findings.Severity
	Count        int64
	Requests     []int64
	Objects      []findings.Object
	ObjectsTotal int
}

func comparableFindings(fs []findings.Finding) []comparableFinding {
	out := make([]comparableFinding, 0, len(fs))
	for _, f := range fs {
		out = append(out, comparableFinding{f.ID, f.Severity, f.Count, f.Evidence.Requests, f.Evidence.Objects, f.Evidence.ObjectsTotal})
	}
	return out
}

// longestWithoutBookmark reads a trace: the longest time a watch that asked
// for bookmarks was open without one (from its start or its last bookmark
// to its next bookmark or its end).
func longestWithoutBookmark(t *testing.T, path string) time.Duration {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ r, id int64 }
	since := map[key]int64{} // open watches that asked: the last bookmark (or the start)
	var longest int64
	for _, line := range bytes.Split(b, []byte("\n")) {
		var l struct {
			K, Verb, Type string
			R, ID, At     int64
			Opts          struct {
				AllowWatchBookmarks bool `json:"allowWatchBookmarks"`
			}
		}
		if len(line) == 0 || json.Unmarshal(line, &l) != nil {
			continue
		}
		k := key{l.R, l.ID}
		switch {
		case l.K == "request" && l.Verb == "watch" && l.Opts.AllowWatchBookmarks:
			since[k] = l.At
		case l.K == "event" && l.Type == "BOOKMARK" || l.K == "end":
			if from, ok := since[k]; ok {
				longest = max(longest, l.At-from)
				since[k] = l.At
				if l.K == "end" {
					delete(since, k)
				}
			}
		}
	}
	return time.Duration(longest)
}

// newNamespaceIn creates namespace ns on c with n ConfigMaps cm-0 … and returns them.
func newNamespaceIn(t *testing.T, cs kubernetes.Interface, ns string, n int) []*corev1.ConfigMap {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var out []*corev1.ConfigMap
	for i := 0; i < n; i++ {
		cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cm)
	}
	return out
}

// throughFaultProxy is a kubeconfig that reaches c through a new fault proxy.
func throughFaultProxy(t *testing.T, c *testcluster.Cluster) (*testcluster.Proxy, string) {
	t.Helper()
	proxy, err := c.NewProxy()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	return proxy, kubeconfigOf(t, proxy.Config(c.Config()))
}

// kubeconfigOf writes cfg as a kubeconfig file of the test's and returns its path.
func kubeconfigOf(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testcluster.WriteKubeconfig(kc, cfg); err != nil {
		t.Fatal(err)
	}
	return kc
}

// restartCompactedBehind cuts the watch off at the fault proxy, runs
// during (the gap), and restarts kube-apiserver with etcd compacted; the
// watcher reaches the port again just before kube-apiserver starts.
func restartCompactedBehind(t *testing.T, c *testcluster.Cluster, proxy *testcluster.Proxy, during func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	proxy.Refuse(time.Hour)
	proxy.CutAll()
	if during != nil {
		during()
	}
	if err := c.RestartCompacted(ctx, func() { proxy.Refuse(0) }); err != nil {
		t.Fatal(err)
	}
}

// scenarios runs each scenario added as a subtest of t at once. The
// scenarios are waits: each runs from its own goroutine (t.Run allows it),
// not as a parallel subtest, which would wait for -parallel's slots (2 on 2
// cores) and take them from the other tests. Defer wait.
func scenarios(t *testing.T) (add func(name string, f func(t *testing.T)), wait func()) {
	var wg sync.WaitGroup
	return func(name string, f func(t *testing.T)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(name, f)
		}()
	}, wg.Wait
}

func TestE2EFindingsFromRealScenarios(t *testing.T) {
	t.Parallel()
	scenario, wait := scenarios(t)
	defer wait()

	// kube-apiserver --watch-cache=false sends no bookmarks: a watch that
	// asked for them and stayed open past 75 s after its first event raises
	// no-bookmarks, not before; with a LIST first, and with the default
	// streaming list, whose end bookmark is the end of a list, not progress.
	scenario("no-bookmarks", func(t *testing.T) {
		c := testcluster.ForTest(t, testcluster.Options{DisableWatchCache: true})
		cs := kubernetes.NewForConfigOrDie(c.Config())
		type run struct {
			ns, trace string
			r         *liveRun
		}
		var runs []*run
		for _, tc := range []struct{ ns, strategy string }{{"quiet-list", "list"}, {"quiet-default", ""}} {
			newNamespaceIn(t, cs, tc.ns, 3)
			x := &run{ns: tc.ns, trace: filepath.Join(t.TempDir(), tc.ns+".jsonl")}
			args := []string{"configmaps", "-n", tc.ns, "--kubeconfig", c.Kubeconfig(), "--no-tui", "-o", "json", "--summary", "--trace", x.trace, "--duration", "90s"}
			if tc.strategy != "" {
				args = append(args, "--initial-list", tc.strategy)
			}
			x.r = startRun(t, args...)
			runs = append(runs, x)
		}
		for _, x := range runs {
			x.r.waitFor(t, `"reason":"list-complete"`, 1, time.Minute)
		}
		watchingAt := time.Now()
		// An object written at once, then now and then: the resource moves
		// on (a server with a watch cache would have a resourceVersion to
		// bookmark), only bookmarks are missing.
		for time.Since(watchingAt) < 60*time.Second {
			for _, x := range runs {
				if _, err := cs.CoreV1().ConfigMaps(x.ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "later-"}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				if fs := findingLines(t, x.r.out.String()); len(fs) > 0 {
					t.Fatalf("%s: %s after %s, before the watch was open 75 s", x.ns, fs[0].ID, time.Since(watchingAt).Round(time.Second))
				}
			}
			time.Sleep(15 * time.Second)
		}
		for _, x := range runs {
			s := only(t, x.r.wait(t, 2*time.Minute))
			f := findingOf(t, s, findings.NoBookmarks)
			if f.Severity != findings.Warning || f.Count != 1 || len(f.Evidence.Requests) != 1 || s.Counters.Bookmarks != 0 || s.Counters.Watches != 1 || s.Bookmark.AgeSeconds != nil {
				t.Errorf("%s: want one warning on the one watch, which had no bookmark: %s\ncounters %+v, bookmark %+v", x.ns, f.Detail(), s.Counters, s.Bookmark)
			}
			// The default lists by streaming: its one bookmark ended the list.
			if want := int64(map[string]int{"quiet-list": 0, "quiet-default": 1}[x.ns]); s.Counters.InitialEventsEnd != want {
				t.Errorf("%s: want %d initial-events-end bookmark(s), counted apart from progress bookmarks: %+v", x.ns, want, s.Counters)
			}
			onlyFindings(t, s, findings.NoBookmarks)
			checkLinesAndReplay(t, x.r.out.String(), x.trace, []summary.Summary{s})
		}
	})

	// A restart with etcd compacted while objects are deleted and
	// recreated in the gap: missed-deletes names exactly those, with their UIDs.
	scenario("missed-deletes", func(t *testing.T) {
		c := testcluster.ForTest(t, testcluster.Options{})
		cs := kubernetes.NewForConfigOrDie(c.Config())
		cms := newNamespaceIn(t, cs, "gap", 10)
		proxy, kc := throughFaultProxy(t, c)
		tracePath := filepath.Join(t.TempDir(), "missed-deletes.jsonl")
		r := startRun(t, "configmaps", "-n", "gap", "--kubeconfig", kc, "--no-tui", "-o", "json", "--summary", "--trace", tracePath)
		r.waitFor(t, `"reason":"list-complete"`, 1, time.Minute)
		time.Sleep(time.Second)
		want := map[string]findings.Object{}
		restartCompactedBehind(t, c, proxy, func() {
			ctx := context.Background()
			for _, cm := range cms[:3] { // deleted
				if err := cs.CoreV1().ConfigMaps("gap").Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				want[cm.Name] = findings.Object{Namespace: "gap", Name: cm.Name, What: "deleted", OldUID: string(cm.UID)}
			}
			for _, cm := range cms[3:5] { // recreated
				if err := cs.CoreV1().ConfigMaps("gap").Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				again, err := cs.CoreV1().ConfigMaps("gap").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.Name}}, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				want[cm.Name] = findings.Object{Namespace: "gap", Name: cm.Name, What: "recreated", OldUID: string(cm.UID), NewUID: string(again.UID)}
			}
		})
		r.waitFor(t, `"reason":"relist-diff"`, 1, time.Minute)
		s := only(t, r.stop(t))
		f := findingOf(t, s, findings.MissedDeletes)
		got := map[string]findings.Object{}
		for _, o := range f.Evidence.Objects {
			got[o.Name] = o
		}
		if f.Severity != findings.Warning || f.Count != 5 || f.Evidence.ObjectsTotal != 5 || !reflect.DeepEqual(got, want) {
			t.Errorf("want a warning of 5 objects, %v: %s", want, f.Detail())
		}
		if w := f.Evidence.Window; w == nil || w.Seconds < 1 {
			t.Errorf("want the window the watch was down, from its last event to the relist: %+v", w)
		}
		if s.Counters.Gone != 1 || s.Counters.Relists != 1 {
			t.Errorf("want one 410 and one relist: %+v", s.Counters)
		}
		onlyFindings(t, s, findings.MissedDeletes)
		checkLinesAndReplay(t, r.out.String(), tracePath, []summary.Summary{s})
	})

	// Three restarts with compaction within a few minutes: relist-storm.
	scenario("relist-storm", func(t *testing.T) {
		c := testcluster.ForTest(t, testcluster.Options{})
		cs := kubernetes.NewForConfigOrDie(c.Config())
		newNamespaceIn(t, cs, "storm", 5)
		churn, err := testcluster.StartChurn(c.Config(), testcluster.ChurnOptions{Namespace: "storm", Names: 20, Rate: 10})
		if err != nil {
			t.Fatal(err)
		}
		defer churn.Stop()
		proxy, kc := throughFaultProxy(t, c)
		tracePath := filepath.Join(t.TempDir(), "relist-storm.jsonl")
		r := startRun(t, "configmaps", "-n", "storm", "--kubeconfig", kc, "--no-tui", "-o", "json", "--summary", "--trace", tracePath)
		r.waitFor(t, `"reason":"list-complete"`, 1, time.Minute)
		for i := 1; i <= 3; i++ {
			time.Sleep(2 * time.Second)
			restartCompactedBehind(t, c, proxy, nil)
			r.waitFor(t, `"reason":"relist-diff"`, i, time.Minute)
			if i < 3 && strings.Contains(r.out.String(), string(findings.RelistStorm)) {
				t.Fatalf("relist-storm after %d relists", i)
			}
		}
		time.Sleep(time.Second)
		t.Logf("churn: %s", churn.Stop())
		s := only(t, r.stop(t))
		f := findingOf(t, s, findings.RelistStorm)
		if f.Severity != findings.Error || f.Count != 3 || s.Counters.Relists != 3 || len(f.Evidence.Requests) != 3 {
			t.Errorf("want an error of the 3 relists: %s\ncounters %+v", f.Detail(), s.Counters)
		}
		if !strings.Contains(f.Cause, "410 Gone came right after a reconnect") {
			t.Errorf("want the cause to say each 410 came right after a reconnect: %s", f.Cause)
		}
		// The churn's deletes in the gaps may be missed deletes; nothing else.
		for _, g := range s.Findings {
			if g.ID != findings.RelistStorm && g.ID != findings.MissedDeletes {
				t.Errorf("a relist storm also raised %s", g.Detail())
			}
		}
		checkLinesAndReplay(t, r.out.String(), tracePath, []summary.Summary{s})
	})

	// --initial-list=stream against an API server whose WatchList is off:
	// watch-list-unsupported, a warning; info when the streaming list was
	// not asked for (auto).
	scenario("watch-list-unsupported", func(t *testing.T) {
		c := testcluster.ForTest(t, testcluster.Options{FeatureGates: map[string]bool{"WatchList": false}})
		cs := kubernetes.NewForConfigOrDie(c.Config())
		newNamespaceIn(t, cs, "nostream", 7)
		for _, tc := range []struct {
			strategy string
			want     findings.Severity
		}{{"stream", findings.Warning}, {"auto", findings.Info}} {
			tracePath := filepath.Join(t.TempDir(), tc.strategy+".jsonl")
			r := startRun(t, "configmaps", "-n", "nostream", "--kubeconfig", c.Kubeconfig(), "--no-tui", "-o", "json", "--summary",
				"--initial-list", tc.strategy, "--trace", tracePath, "--once")
			s := only(t, r.wait(t, time.Minute))
			f := findingOf(t, s, findings.WatchListUnsupported)
			if f.Severity != tc.want || f.Evidence.Facts["answer"] == "" || !strings.Contains(f.Evidence.Facts["answer"], "422") || f.Evidence.Facts["listObjects"] != "7" ||
				f.Evidence.Facts["listBytes"] == "" || !strings.Contains(f.Evidence.Text, " KiB in ") {
				t.Errorf("--initial-list %s: want a%s with the server's answer (422) and what the LIST cost (7 objects, its KiB): %s", tc.strategy, " "+string(tc.want), f.Detail())
			}
			onlyFindings(t, s, findings.WatchListUnsupported)
			checkLinesAndReplay(t, r.out.String(), tracePath, []summary.Summary{s})
		}
	})

	// A proxy that cuts every connection 2 s after it opens: watch-flapping,
	// with the watches' typical lifetime.
	scenario("watch-flapping", func(t *testing.T) {
		c := cluster(t)
		cs := kubernetes.NewForConfigOrDie(c.Config())
		newNamespaceIn(t, cs, "flapping", 3)
		proxy, kc := throughFaultProxy(t, c)
		proxy.CutAfter(2 * time.Second)
		tracePath := filepath.Join(t.TempDir(), "flapping.jsonl")
		r := startRun(t, "configmaps", "-n", "flapping", "--kubeconfig", kc, "--no-tui", "-o", "json", "--summary", "--trace", tracePath)
		r.waitFor(t, `"type":"finding"`, 1, 2*time.Minute)
		s := only(t, r.stop(t))
		f := findingOf(t, s, findings.WatchFlapping)
		if f.Severity != findings.Warning || f.Count < 5 {
			t.Errorf("want a warning of 5 or more watches: %s", f.Detail())
		}
		if life, err := time.ParseDuration(f.Evidence.Facts["typicalLifetime"]); err != nil || life < time.Second || life > 3*time.Second {
			t.Errorf("want a typical lifetime of about 2s: %q (%v)", f.Evidence.Facts["typicalLifetime"], err)
		}
		if s.Counters.Gone != 0 || s.Counters.Relists != 0 {
			t.Errorf("the cuts should resume from the cursor, without 410 or relist: %+v", s.Counters)
		}
		onlyFindings(t, s, findings.WatchFlapping)
		checkLinesAndReplay(t, r.out.String(), tracePath, []summary.Summary{s})
	})

	// Watches of a resource nothing changes, on a default API server, with
	// short timeouts (10-20 s): the server has no newer resourceVersion to
	// bookmark, so they get none, and that is no evidence of missing
	// bookmarks; nor is a watch that ran to the timeout it asked for flapping.
	scenario("short-watch-timeouts", func(t *testing.T) {
		// A cluster of its own: a write elsewhere would give the server something to bookmark.
		c := testcluster.ForTest(t, testcluster.Options{})
		cs := kubernetes.NewForConfigOrDie(c.Config())
		newNamespaceIn(t, cs, "short", 3)
		tracePath := filepath.Join(t.TempDir(), "short.jsonl")
		r := startRun(t, "configmaps", "-n", "short", "--kubeconfig", c.Kubeconfig(), "--no-tui", "-o", "json", "--summary",
			"--initial-list", "list", "--watch-timeout", "10s", "--trace", tracePath, "--duration", "60s")
		r.waitFor(t, `"reason":"list-complete"`, 1, time.Minute)
		// Then one create, 25 s in: the watch that sees it gets the bookmark
		// sent 2 s before its timeout, if the event came before that. One
		// that came in a watch's last 2 s gets none (the next watch starts
		// at its resourceVersion, with nothing newer), so an update 8 s
		// later, inside the next watch, which ends by 47 s, well before
		// the run does.
		time.Sleep(25 * time.Second)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "one-write"}}
		if _, err := cs.CoreV1().ConfigMaps("short").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(8 * time.Second)
		cm.Data = map[string]string{"k": "v"}
		if _, err := cs.CoreV1().ConfigMaps("short").Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		s := only(t, r.wait(t, 2*time.Minute))
		if s.Counters.Watches < 3 || s.Counters.Added != 1 || s.Counters.Modified != 1 || s.Counters.Bookmarks == 0 {
			t.Errorf("want 3 or more watches ended at their timeouts, two events and a bookmark: %+v", s.Counters)
		}
		onlyFindings(t, s)
		checkLinesAndReplay(t, r.out.String(), tracePath, []summary.Summary{s})
	})

	// A healthy run of 150 s with churn on a default API server raises no
	// finding above info; nor does a client-go informer's stream through the
	// observing proxy at the same time. Both get bookmarks within 75 s: the
	// server sends one a minute, so two or more in the run.
	scenario("healthy", func(t *testing.T) {
		c := cluster(t)
		cs := kubernetes.NewForConfigOrDie(c.Config())
		newNamespaceIn(t, cs, "healthy", 10)
		churn, err := testcluster.StartChurn(c.Config(), testcluster.ChurnOptions{Namespace: "healthy", Names: 50, Rate: 20})
		if err != nil {
			t.Fatal(err)
		}
		defer churn.Stop()
		const runFor = 150 * time.Second
		work := t.TempDir()
		watchTrace, proxyTrace, kc := filepath.Join(work, "healthy.jsonl"), filepath.Join(work, "proxy.jsonl"), filepath.Join(work, "proxy.kubeconfig")
		w := startRun(t, "configmaps", "-n", "healthy", "--kubeconfig", c.Kubeconfig(), "--no-tui", "-o", "json", "--summary",
			"--trace", watchTrace, "--duration", runFor.String())
		p := startRun(t, "proxy", "--kubeconfig", c.Kubeconfig(), "--port", "0", "--no-tui", "-o", "json", "--summary",
			"--trace", proxyTrace, "--print-kubeconfig", kc, "--duration", (runFor + 10*time.Second).String())
		waitForProxyKubeconfig(t, kc)
		cfg, err := clientcmd.BuildConfigFromFlags("", kc)
		if err != nil {
			t.Fatal(err)
		}
		cfg.UserAgent = "healthy-informer/v0"
		factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(cfg), 0, informers.WithNamespace("healthy"))
		inf := factory.Core().V1().ConfigMaps().Informer()
		stop := make(chan struct{})
		defer close(stop)
		factory.Start(stop)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatal("the informer did not sync through the proxy within a minute")
		}
		ws := only(t, w.wait(t, runFor+time.Minute))
		ps := p.wait(t, time.Minute)
		t.Logf("churn: %s", churn.Stop())
		noneAboveInfo(t, ws)
		if ws.Counters.Bookmarks < 2 || ws.Counters.Relists != 0 || ws.Counters.Added+ws.Counters.Modified+ws.Counters.Deleted < 100 {
			t.Errorf("want a run of %s with churn, bookmarks and no relist: %+v", runFor, ws.Counters)
		}
		longest := longestWithoutBookmark(t, watchTrace)
		t.Logf("our watch: %d bookmarks; the longest a watch went without one: %s", ws.Counters.Bookmarks, longest.Round(time.Millisecond))
		if longest > 75*time.Second {
			t.Errorf("a watch went %s without a bookmark, on an API server with its watch cache", longest)
		}
		checkLinesAndReplay(t, w.out.String(), watchTrace, []summary.Summary{ws})
		var informer *summary.Summary
		for i, s := range ps {
			if s.Stream != nil && s.Stream.UserAgent == cfg.UserAgent && s.Resource == "configmaps.v1" {
				informer = &ps[i]
			}
		}
		if informer == nil {
			t.Fatalf("no stream of the informer among the proxy's %d", len(ps))
		}
		t.Logf("the informer's stream: %d bookmarks; longest without one: %s", informer.Counters.Bookmarks, longestWithoutBookmark(t, proxyTrace).Round(time.Millisecond))
		if len(informer.Findings) > 0 || informer.Counters.Bookmarks < 2 || informer.Counters.Relists != 0 {
			t.Errorf("the informer's stream: want no finding, bookmarks and no relist: %s\ncounters %+v", describeFindings(informer.Findings), informer.Counters)
		}
		checkLinesAndReplay(t, p.out.String(), proxyTrace, ps)
	})
}
