package cli

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/report"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

const bundled = "../../testdata/traces/"
const handWritten = "testdata/rules/"

// Every measure trips on a trace that breaks it and stays quiet on one that does not.
func TestEveryRuleTripsOnATraceThatBreaksItAndNotOnOneThatDoesNot(t *testing.T) {
	cases := []struct {
		rule, trips, quiet, want string
	}{
		{"relists>0", bundled + "gone-relist.jsonl", bundled + "steady.jsonl", "relists is 1"},
		{"gone>=1", bundled + "gone-relist.jsonl", bundled + "steady.jsonl", "gone is 1"},
		{"gone>1", handWritten + "anomalies.jsonl", bundled + "gone-relist.jsonl", ""},
		{"too-large>0", handWritten + "anomalies.jsonl", bundled + "demo.jsonl", "too-large is 1"},
		{"uid-mismatches>0", handWritten + "anomalies.jsonl", bundled + "gone-relist.jsonl", "uid-mismatches is 1"},
		{"duplicates>0", handWritten + "anomalies.jsonl", bundled + "demo.jsonl", "duplicates is 1"},
		{"rv-backwards>0", handWritten + "anomalies.jsonl", bundled + "demo.jsonl", "rv-backwards is 1"},
		{"backoffs>0", handWritten + "slow-sync.jsonl", bundled + "steady.jsonl", "backoffs is 1"},
		{"watch-errors>0", bundled + "demo.jsonl", bundled + "steady.jsonl", "watch-errors is "},
		{"missed>5", bundled + "demo.jsonl", bundled + "gone-relist.jsonl", "missed is 6"},
		{"missed-deletes>2", bundled + "demo.jsonl", bundled + "recreate.jsonl", "missed-deletes is 3"},
		{"bookmark-age>3m", handWritten + "quiet-watch.jsonl", bundled + "bookmarks.jsonl", "bookmark-age is 3m0.001s"}, // a second after the last line 3m after the bookmark, not at the next line
		{"bookmark-age>7m", "", handWritten + "quiet-watch.jsonl", ""},
		{"no-progress>5m", handWritten + "quiet-watch.jsonl", bundled + "steady.jsonl", "no-progress is 5m0.001s"},
		{"no-progress>10m", "", handWritten + "quiet-watch.jsonl", ""},
		{"sync>30s", handWritten + "slow-sync.jsonl", bundled + "streaming.jsonl", "sync is 31s"},
		{"sync>1m", "", handWritten + "slow-sync.jsonl", ""},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			if tc.trips != "" && tc.want != "" {
				code, _, stderr := run(t, "replay", tc.trips, "--speed", "0", "--no-tui", "--fail-on", tc.rule)
				if code != ExitAlert {
					t.Errorf("%s: exit %d, want %d: %s", tc.trips, code, ExitAlert, stderr)
				}
				want := "error: --fail-on " + tc.rule + " tripped on configmaps.v1 in namespace "
				if !strings.Contains(stderr, want) || !strings.Contains(stderr, ": "+tc.want) {
					t.Errorf("%s: stderr lacks %q and %q:\n%s", tc.trips, want, tc.want, stderr)
				}
			}
			code, _, stderr := run(t, "replay", tc.quiet, "--speed", "0", "--no-tui", "--fail-on", tc.rule)
			if code != ExitOK || strings.Contains(stderr, "tripped") {
				t.Errorf("%s: exit %d, want %d without a trip: %s", tc.quiet, code, ExitOK, stderr)
			}
		})
	}
}

func TestATripPrintsTheSummaryAndStopsTheReplayThere(t *testing.T) {
	code, out, stderr := run(t, "replay", handWritten+"quiet-watch.jsonl", "--speed", "0", "--no-tui", "--summary", "--fail-on", "bookmark-age>3m", "--fail-on", "relists>0")
	if code != ExitAlert {
		t.Fatalf("exit %d, want %d: %s", code, ExitAlert, stderr)
	}
	if want := "error: --fail-on bookmark-age>3m tripped on configmaps.v1 in namespace quiet: bookmark-age is 3m0.001s\n"; stderr != want {
		t.Errorf("stderr: got %q, want %q", stderr, want)
	}
	// The trip came 3 minutes after the bookmark before the one at 8m,
	// before that one: the summary is of that moment.
	if !strings.Contains(out, "resource configmaps.v1: 1 object at resourceVersion 12\n") || !strings.Contains(out, "bookmarks 2, list-end bookmarks 0\n") {
		t.Errorf("summary is not of the moment of the trip:\n%s", out)
	}
	if strings.Contains(out, "00:10:00") {
		t.Errorf("the replay went on after the trip:\n%s", out)
	}
}

func TestFailOnWarnPrintsTheAlertAndTheRunGoesOn(t *testing.T) {
	code, out, stderr := run(t, "replay", handWritten+"quiet-watch.jsonl", "--speed", "0", "--no-tui", "--fail-on", "no-progress>5m", "--fail-on-warn")
	if code != ExitOK {
		t.Fatalf("exit %d, want %d: %s", code, ExitOK, stderr)
	}
	if want := "warning: --fail-on no-progress>5m tripped on configmaps.v1 in namespace quiet: no-progress is 5m0.001s (--fail-on-warn: the run goes on)\n"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if !strings.Contains(out, "Stopped       stopped: stopped") || !strings.Contains(out, "00:10:10") {
		t.Errorf("the replay did not run to the end of the trace:\n%s", out)
	}
}

// An alert is the rules' note, not a decision of the reflector's: a trace
// whose decisions the replay compares replays with no difference, --strict
// too, when a rule trips and the run goes on.
func TestAnAlertThatLetsTheReplayGoOnIsNoDifference(t *testing.T) {
	code, _, stderr := run(t, "replay", "../../testdata/traces/demo.jsonl", "--speed", "0", "--no-tui", "--strict", "--fail-on", "findings>0", "--fail-on-warn")
	if code != ExitOK || strings.Contains(stderr, "difference") || !strings.Contains(stderr, "tripped") {
		t.Fatalf("exit %d, want %d, the rule tripped and no difference:\n%s", code, ExitOK, stderr)
	}
}

func TestBadRulesAreUsageErrorsThatListTheMeasures(t *testing.T) {
	measures := "; measures: relists, gone, too-large, uid-mismatches, duplicates, rv-backwards, backoffs, watch-errors, missed, missed-deletes, bookmark-age, no-progress, sync, lag-p99, probe-p99, findings, finding:ID (IDs: " +
		"missed-deletes, relist-storm, no-bookmarks, watch-list-unsupported, large-initial-list, throttled, resource-version-backwards, cache-drift, watch-flapping, uid-mismatch, gave-up, request-refused, slow-delivery, noisy-updates)"
	cases := []struct{ rule, want string }{
		{"x", `error: invalid --fail-on "x": no comparison: want MEASURE>VALUE such as relists>0 or bookmark-age>3m` + measures},
		{"relist>0", `error: invalid --fail-on "relist>0": unknown measure "relist"` + measures},
		{"relists<3", `error: invalid --fail-on "relists<3": unsupported comparison "<": want > or >= (a rule says when something is too much)` + measures},
		{"relists>", `error: invalid --fail-on "relists>": no value after >` + measures},
		{">3", `error: invalid --fail-on ">3": no measure before the comparison` + measures},
		{"relists>1.5", `error: invalid --fail-on "relists>1.5": relists takes a count (0 or more), not "1.5"` + measures},
		{"sync>30", `error: invalid --fail-on "sync>30": sync takes a duration such as 30s, 3m or 1h, not "30"` + measures},
		{"finding:missed-delete>0", `error: invalid --fail-on "finding:missed-delete>0": unknown finding "missed-delete"` + measures},
	}
	for _, tc := range cases {
		for _, args := range [][]string{{"pods"}, {"replay", bundled + "steady.jsonl"}} {
			code, _, stderr := run(t, append(args, "--fail-on", tc.rule)...)
			if code != ExitUsage || strings.TrimSpace(stderr) != tc.want {
				t.Errorf("%v --fail-on %q: got %d %q, want %d %q", args, tc.rule, code, stderr, ExitUsage, tc.want)
			}
		}
	}
	code, _, stderr := run(t, "pods", "--fail-on-warn")
	if want := "error: --fail-on-warn needs at least one --fail-on rule"; code != ExitUsage || strings.TrimSpace(stderr) != want {
		t.Errorf("--fail-on-warn alone: got %d %q, want %d %q", code, stderr, ExitUsage, want)
	}
	code, _, stderr = run(t, "pods", "--metrics-address", "9090")
	if want := `error: invalid --metrics-address "9090": want HOST:PORT, e.g. 127.0.0.1:9090`; code != ExitUsage || strings.TrimSpace(stderr) != want {
		t.Errorf("--metrics-address 9090: got %d %q, want %d %q", code, stderr, ExitUsage, want)
	}
}

func TestE2ELiveRunTripsOnNoProgressAndStopsBeforeItsDuration(t *testing.T) {
	createConfigMaps(t, "quiet-live", 2)
	start := time.Now()
	// Nothing is written and bookmarks come about once a minute: two seconds without data trip the rule.
	tracePath := filepath.Join(t.TempDir(), "tripped.jsonl")
	code, out, stderr := run(t, "configmaps", "--kubeconfig", kubeconfig(t), "-n", "quiet-live", "--no-tui", "--duration", "60s", "--summary", "-o", "json",
		"--fail-on", "relists>0", "--fail-on", "no-progress>2s", "--trace", tracePath)
	took := time.Since(start)
	if code != ExitAlert {
		t.Fatalf("exit %d, want %d: %s", code, ExitAlert, stderr)
	}
	if !strings.Contains(stderr, "\nerror: --fail-on no-progress>2s tripped on configmaps.v1 in namespace quiet-live: no-progress is ") || strings.Contains(stderr, "relists>0") {
		t.Errorf("stderr: %q", stderr)
	}
	if took > 30*time.Second {
		t.Errorf("the run took %s: the trip did not stop it", took)
	}
	if sum := lastJSONObject(t, out); sum.Objects != 2 {
		t.Errorf("summary: got %+v", sum)
	}
	// The trip is a note of the run: a line, and in the trace, where the
	// report's "Alert rules" finds it and a strict replay compares it with
	// nothing.
	if !strings.Contains(out, `"reason":"alert","detail":"--fail-on no-progress>2s tripped on configmaps.v1 in namespace quiet-live: no-progress is `) {
		t.Errorf("no alert line:\n%s", out)
	}
	rd, err := trace.Open(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Analyze(t.Context(), rd, report.Options{})
	rd.Close()
	if err != nil {
		t.Fatal(err)
	}
	if al := rep.Alerts; !al.Evaluated || len(al.Tripped) != 1 || al.Tripped[0].Rule != "no-progress>2s" || al.Tripped[0].Resource != "configmaps.v1" {
		t.Errorf("the report's alerts: %+v, want no-progress>2s tripped on configmaps.v1", al)
	}
	if code, _, stderr := run(t, "replay", tracePath, "--speed", "0", "--no-tui", "--strict"); code != ExitOK {
		t.Errorf("replay --strict: exit %d, want %d: %s", code, ExitOK, stderr)
	}
	code, _, stderr = run(t, "configmaps", "--kubeconfig", kubeconfig(t), "-n", "quiet-live", "--no-tui", "--once", "--fail-on", "relists>0", "--fail-on", "sync>30s")
	if code != ExitOK {
		t.Errorf("--once with rules that hold: exit %d, want %d: %s", code, ExitOK, stderr)
	}
}

// A live run that ended by itself (--once) keeps its dashboard until q,
// and its rules end with it: no-progress, the time since data last came,
// neither trips while the ended screen is read nor at the last evaluation
// after q, which sees the run as it was when it ended.
func TestE2EAnEndedRunsRulesDoNotCountOnWhileItsScreenIsRead(t *testing.T) {
	createConfigMaps(t, "ended-rules", 1)
	d := endedDashboard(t, "configmaps", "--kubeconfig", kubeconfig(t), "-n", "ended-rules", "--once", "--fail-on", "no-progress>2s")
	time.Sleep(4 * time.Second) // the ended screen is read: twice the rule's threshold
	if err := d.quit(t); err != nil {
		t.Errorf("the run ended with %v, want no trip: the rule counted after the end\n%s", err, d.errOut.String())
	}
}

// ended is a watch's dashboard whose run ended by itself, its last screen
// kept until q.
type ended struct {
	keys        *io.PipeWriter
	out, errOut *syncBuffer
	done        chan error
}

// endedDashboard runs the watch command with args on a terminal's
// dashboard until it says the run ended (it fails the test after a minute).
func endedDashboard(t *testing.T, args ...string) *ended {
	t.Helper()
	in, keys := io.Pipe()
	t.Cleanup(func() { keys.Close() })
	d := &ended{keys: keys, out: &syncBuffer{}, errOut: &syncBuffer{}, done: make(chan error, 1)}
	o, runE := newWatchCommand(genericiooptions.IOStreams{In: in, Out: d.out, ErrOut: d.errOut}, "test")
	o.isTerminal = func() bool { return true }
	cmd := &cobra.Command{Use: "kubectl-watchcache", RunE: runE, SilenceErrors: true, SilenceUsage: true}
	o.AddFlags(cmd)
	cmd.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	go func() { d.done <- cmd.ExecuteContext(ctx) }()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(d.out.String(), "run ended"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the dashboard never said the run ended:\n%s\n%s", d.out.String(), d.errOut.String())
		}
	}
	return d
}

// quit presses q and returns how the command ended.
func (d *ended) quit(t *testing.T) error {
	t.Helper()
	if _, err := d.keys.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	return <-d.done
}
