package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// The demo trace's relist found 3 deletes and 1 recreate that its watch
// missed while the API server restarted (see testdata/traces).
func TestExplainSaysWhatTheDemoMissedAndReplayAgrees(t *testing.T) {
	code, out, stderr := run(t, "explain", bundled+"demo.jsonl", "-o", "json")
	if code != 0 {
		t.Fatalf("explain: exit %d: %s", code, stderr)
	}
	var got struct {
		Resources []Explained `json:"resources"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("explain -o json is not one object: %v\n%s", err, out)
	}
	if len(got.Resources) != 1 || len(got.Resources[0].Findings) != 1 {
		t.Fatalf("want one resource with one finding, got %+v", got)
	}
	f := got.Resources[0].Findings[0]
	if f.ID != findings.MissedDeletes || f.Severity != findings.Warning || f.Count != 4 || f.Evidence.ObjectsTotal != 4 || f.Cause == "" || f.Action == "" {
		t.Fatalf("want missed-deletes counting 4 objects with cause and action, got %+v", f)
	}
	// The summary of a replay carries the same finding, and a rule on it exits 3.
	code, out, stderr = run(t, "replay", bundled+"demo.jsonl", "--speed", "0", "--no-tui", "--summary", "-o", "json", "--fail-on", "finding:missed-deletes>0")
	if code != ExitAlert {
		t.Fatalf("replay --fail-on finding:missed-deletes>0: exit %d, want %d: %s", code, ExitAlert, stderr)
	}
	sums, err := summary.Decode([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(sums[0].Findings) != 1 || sums[0].Findings[0].ID != f.ID || sums[0].Findings[0].Count != f.Count {
		t.Fatalf("the replay's summary disagrees with explain: %+v", sums[0].Findings)
	}
	// The FINDING line comes right after the relist diff that raised it.
	if i, j := strings.Index(out, `"reason":"relist-diff"`), strings.Index(out, `"type":"finding"`); i < 0 || j < i {
		t.Fatalf("the finding line should follow the relist diff:\n%s", out)
	}
}

func TestIgnoredFindingsStayInTheSummaryAndTripNoRule(t *testing.T) {
	code, out, stderr := run(t, "replay", bundled+"demo.jsonl", "--speed", "0", "--no-tui", "--summary", "-o", "json",
		"--ignore-finding", "missed-deletes", "--fail-on", "findings>0")
	if code != 0 {
		t.Fatalf("an ignored finding tripped findings>0: exit %d: %s", code, stderr)
	}
	sums, err := summary.Decode([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if fs := sums[0].Findings; len(fs) != 1 || !fs[0].Ignored {
		t.Fatalf("want the ignored finding kept and marked, got %+v", fs)
	}
}

func TestExplainBadInput(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"explain"}, ExitUsage, "error: explain takes one trace file, got 0 arguments"},
		{[]string{"explain", "/nonexistent.jsonl"}, 1, "error: cannot read /nonexistent.jsonl: no such file or directory"},
		{[]string{"explain", bundled + "demo.jsonl", "-o", "yaml"}, ExitUsage, `error: invalid output format "yaml": want one of text, json, sarif, junit`},
		{[]string{"explain", bundled + "demo.jsonl", "--ignore-finding", "missed"}, ExitUsage, `error: unknown finding "missed" in --ignore-finding`},
		{[]string{"explain", bundled + "demo.jsonl", "--relist-storm", "3"}, ExitUsage, `error: invalid --relist-storm "3": want COUNT/DURATION`},
		{[]string{"explain", empty}, 1, "error: "},
	}
	for _, tc := range cases {
		code, _, stderr := run(t, tc.args...)
		if code != tc.code || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("%v: got %d %q, want %d %q…", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

func TestReportMarksAnIgnoredFinding(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	if code, _, stderr := run(t, "report", bundled+"demo.jsonl", "-o", out, "--ignore-finding", "missed-deletes"); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `id="f0-missed-deletes"`) || !strings.Contains(string(b), "--ignore-finding") {
		t.Fatal("the report does not show the ignored finding as ignored")
	}
	if code, _, _ := run(t, "report", bundled+"demo.jsonl", "-o", out, "--ignore-finding", "nope"); code != ExitUsage {
		t.Fatalf("an unknown finding: exit %d, want %d", code, ExitUsage)
	}
}

func TestProbeNamespaceIsCheckedBeforeAnyRequest(t *testing.T) {
	for _, tc := range []struct{ probe, want string }{
		{"", "error: --probe needs a namespace: --probe NAMESPACE"},
		{"Bad_NS", `error: invalid --probe namespace "Bad_NS": a lowercase RFC 1123 label must consist of`},
	} {
		code, _, stderr := run(t, "configmaps", "--kubeconfig", "/nonexistent", "--probe", tc.probe)
		if code != ExitUsage || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("--probe %q: got %d %q, want %d %q…", tc.probe, code, stderr, ExitUsage, tc.want)
		}
	}
}

func TestProbeFlagsWithoutAProbeAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"--probe-interval", "10s"}, {"--probe-cleanup"}} {
		code, _, stderr := run(t, append([]string{"configmaps", "--kubeconfig", "/nonexistent"}, args...)...)
		if code != ExitUsage || !strings.HasPrefix(stderr, "error: "+args[0]+" needs --probe NAMESPACE") {
			t.Errorf("%v: got %d %q, want %d and that it needs --probe", args, code, stderr, ExitUsage)
		}
	}
}

func TestIgnoreFindingTakesACommaSeparatedList(t *testing.T) {
	code, out, stderr := run(t, "explain", bundled+"demo.jsonl", "-o", "json", "--ignore-finding", "relist-storm,missed-deletes")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, `"ignored":true`) {
		t.Errorf("missed-deletes not marked ignored: %s", out)
	}
	if code, _, stderr := run(t, "explain", bundled+"demo.jsonl", "--ignore-finding", "relist-storm,nope"); code != ExitUsage || !strings.Contains(stderr, `unknown finding "nope"`) {
		t.Errorf("a list with an unknown ID: exit %d %q, want %d naming it", code, stderr, ExitUsage)
	}
}

// A proxy's trace in which no client listed or watched: explain has
// nothing to say of any stream and says why; replay refuses --fail-on on
// it, as it refuses it on any trace replayed as recorded.
func TestExplainAndReplayOfAProxysTraceWithoutStreams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "proxy.jsonl")
	rec, err := trace.Create(path, trace.Header{StartedAt: time.Now(), Tool: "kubectl watchcache proxy", Observed: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "explain", path)
	if code != ExitOK || out != "" || !strings.Contains(stderr, "warning: in this trace, no LIST or WATCH was observed") {
		t.Errorf("explain: exit %d, out %q, stderr %q; want 0, nothing, and a warning that no stream was observed", code, out, stderr)
	}
	code, _, stderr = run(t, "replay", path, "--no-tui", "--fail-on", "relists>0")
	if code != ExitUsage || !strings.HasPrefix(stderr, "error: --fail-on does not apply to an observed trace (kubectl watchcache proxy): shown as recorded") {
		t.Errorf("replay --fail-on: exit %d, stderr %q", code, stderr)
	}
}

// TestExplainsHelpNamesEveryFinding: the help's list is the catalogue's,
// so a new rule is in it (noisy-updates was left out of a list written by hand).
func TestExplainsHelpNamesEveryFinding(t *testing.T) {
	code, out, _ := run(t, "explain", "--help")
	if code != ExitOK {
		t.Fatalf("explain --help: exit %d", code)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, e := range findings.Catalogue() {
		if !strings.Contains(flat, string(e.ID)) {
			t.Errorf("explain --help does not name %s", e.ID)
		}
	}
}

// A proxy's trace cut before its streams' stops (the proxy killed) is said
// cut by replay and explain, as a watch's trace is; replayed, it had said
// its watch was stopped, and nothing more.
func TestAProxysTraceCutShortIsSaidCut(t *testing.T) {
	b, err := os.ReadFile(bundled + "proxy.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(cut, []byte(strings.Join(lines[:12], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bundled + "proxy.jsonl", cut} {
		for _, args := range [][]string{{"replay", path, "--speed", "0", "--no-tui"}, {"explain", path}} {
			code, _, stderr := run(t, args...)
			if said := strings.Contains(stderr, trace.EndedEarlyText); code != ExitOK || said != (path == cut) {
				t.Errorf("%v: exit %d, stderr %q; want 0, saying the recording ends early only of the cut trace", args, code, stderr)
			}
		}
	}
}

// An explain interrupted before the trace's end fails: findings of part of
// a trace would pass, in CI, for those of all of it.
func TestAnInterruptedExplainFails(t *testing.T) {
	rd, err := trace.Open(bundled + "demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := explain(ctx, rd, findings.Options{}, func(string) {}); err == nil || !strings.Contains(err.Error(), "before its end") {
		t.Errorf("explain of a canceled run: got %v, want it stopped before the trace's end", err)
	}
}

// The monitor's help offers no flag it hides (-o) and nothing of a
// dashboard it has not (the object detail).
func TestTheMonitorsHelpSpeaksOfWhatItHas(t *testing.T) {
	code, out, _ := run(t, "monitor", "--help")
	if code != ExitOK {
		t.Fatalf("monitor --help: exit %d", code)
	}
	for _, gone := range []string{"-o json", "object detail", "--keep-objects"} {
		if strings.Contains(out, gone) {
			t.Errorf("monitor --help says %q:\n%s", gone, out)
		}
	}
}
