package outputs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/alert"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/outputs"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/subjects"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui"
)

// replay replays the trace at path through outputs made with opts, attached
// to its session as the command attaches them. It returns the outputs, not
// yet finished, the session and the run's error.
func replay(t *testing.T, opts outputs.Options, path string) (*outputs.Outputs, *session.Session, error) {
	t.Helper()
	outs, err := outputs.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := session.NewReplay(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := outs.Attach(sess); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return outs, sess, outs.Run(ctx, ctx, cancel, tui.Options{})
}

// A replayed session's notes reach the lines, and a rule that trips ends
// the run with an *AlertError, through the one place that attaches them.
func TestSessionLinesAndRules(t *testing.T) {
	rules, err := alert.ParseAll([]string{"relists>0"})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	outs, _, runErr := replay(t, outputs.Options{Out: &out, ErrOut: &errOut, JSON: true, Summary: true, Monitor: outputs.MonitorOptions{Rules: rules}},
		"../../testdata/traces/gone-relist.jsonl")
	if outs.Rewindable() {
		t.Error("a run with rules must not rewind")
	}
	err = outs.Finish(runErr)
	var ae *outputs.AlertError
	if !errors.As(err, &ae) || len(ae.Trips) != 1 {
		t.Fatalf("Finish = %v, want one trip of relists>0", err)
	}
	if !outs.Tripped() {
		t.Error("Tripped = false after a trip")
	}
	if !strings.HasPrefix(out.String(), `{"seq":1,"resource":"configmaps.v1"`) || !strings.Contains(out.String(), `"reason":"relist-diff"`) {
		t.Errorf("the notes are not JSON lines:\n%s", out.String())
	}
}

// Each observed stream of a proxy's trace gets its line output, named after
// the stream, and its summary, as any subject does.
func TestObservedStreams(t *testing.T) {
	var out, errOut bytes.Buffer
	outs, sess, runErr := replay(t, outputs.Options{Out: &out, ErrOut: &errOut, Summary: true, JSON: true}, "../../testdata/traces/proxy.jsonl")
	if err := outs.Finish(runErr); err != nil {
		t.Fatal(err)
	}
	subs := sess.Subjects()
	if len(subs) == 0 {
		t.Fatal("no streams")
	}
	for _, s := range subs {
		name := s.Name()
		if !strings.Contains(out.String(), `"resource":"`+name+`"`) {
			t.Errorf("no line names stream %s", name)
		}
		if !strings.Contains(errOut.String(), "stream "+name+": "+outputs.Describe(s.Target())) {
			t.Errorf("stream %s not announced:\n%s", name, errOut.String())
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, `{"resources":[`) || strings.Count(last, `"stream":{"id":`) != len(subs) {
		t.Errorf("the last line is not every stream's summary: %s", last)
	}
}

// A proxy's metrics name a client by its User-Agent, never by its stream's
// number: two streams of one client watching the same thing (a client that
// comes again, two informers) share one series, and the scrape works.
func TestObservedMetricsKeepTheStreamNumberOutOfTheLabels(t *testing.T) {
	var out, errOut bytes.Buffer
	outs, err := outputs.New(outputs.Options{Out: &out, ErrOut: &errOut,
		Monitor: outputs.MonitorOptions{MetricsAddress: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = outs.Finish(nil) }()
	target := reflector.Target{Resource: reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true}, Namespace: "prod"}
	sess, err := session.NewObserved(session.ObservedConfig{Rest: &rest.Config{Host: "https://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := outs.Attach(sess); err != nil {
		t.Fatal(err)
	}
	for i, addr := range []string{"127.0.0.1:50000", "127.0.0.1:50001"} {
		sess.Observe(observed.NewStream(i+1, observed.Client{UserAgent: "my-controller/v1", RemoteAddr: addr}, target, time.Now))
	}
	url, ok := metrics.ServingURL(errOut.String())
	if !ok {
		t.Fatalf("no metrics address in %q", errOut.String())
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s\n%s", resp.Status, body)
	}
	series := 0
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "watchcache_watches_total{") {
			series++
			if want := `client="my-controller/v1"`; !strings.Contains(l, want) {
				t.Errorf("the series %s lacks %s", l, want)
			}
		}
		if strings.Contains(l, "#1") || strings.Contains(l, "#2") {
			t.Errorf("a label carries the stream's number: %s", l)
		}
	}
	if series != 1 {
		t.Errorf("two streams of one client watching pods in prod make %d watches_total series, want 1", series)
	}
}

// A monitor's /readyz answers 503, naming what has not synced, until every
// resource completed a list, then 200; /healthz is 200 throughout; and only
// the notes that matter are printed.
func TestMonitorReadinessAndItsLines(t *testing.T) {
	var out, errOut bytes.Buffer
	outs, err := outputs.New(outputs.Options{Out: &out, ErrOut: &errOut, JSON: true, Significant: true,
		Monitor: outputs.MonitorOptions{MetricsAddress: "127.0.0.1:0", Health: true}})
	if err != nil {
		t.Fatal(err)
	}
	url, _ := metrics.ServingURL(errOut.String())
	base := strings.TrimSuffix(url, "/metrics")
	status := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := status("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "not started") {
		t.Errorf("/readyz before a session: %d %q", code, body)
	}
	sess, err := session.NewReplay("../../testdata/traces/gone-relist.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := outs.Attach(sess); err != nil {
		t.Fatal(err)
	}
	if code, body := status("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "not synced yet: configmaps.v1") {
		t.Errorf("/readyz before the first list: %d %q", code, body)
	}
	if code, _ := status("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runErr := outs.Run(ctx, ctx, cancel, tui.Options{})
	if code, body := status("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after the lists: %d %q", code, body)
	}
	if err := outs.Finish(runErr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, l := range lines {
		if strings.Contains(l, `"type":"event"`) || strings.Contains(l, `"type":"request-started"`) || strings.Contains(l, `"type":"dropped"`) {
			t.Errorf("a line that does not matter: %s", l)
		}
	}
	if !strings.Contains(out.String(), `"reason":"gone"`) || strings.Count(out.String(), `"reason":"list-complete"`) < 2 {
		t.Errorf("the 410 and the lists complete (the first, the relist) are not all there:\n%s", out.String())
	}
}

// A proxy's trace in which no client listed or watched says so in its
// summary (text), and is an empty list of streams (JSON); a trace of our
// reflectors has the zero Traits, a proxy's those of Proxied.
func TestAnObservedTraceWithoutStreamsSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.jsonl")
	rec, err := trace.Create(path, trace.Header{StartedAt: time.Now(), Tool: "test", Observed: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	traits := subjects.Of(rd.Header())
	_ = rd.Close()
	if !traits.Clients || !traits.Arrive || traits.AsRecorded == "" || traits.Dashboard.Passive == "" {
		t.Fatalf("an observed trace's traits: %+v, want Proxied's", traits)
	}
	if zero := subjects.Of(trace.Header{}); zero.Clients || zero.Arrive || zero.AsRecorded != "" || zero.Dashboard.Passive != "" || zero.None != "" {
		t.Errorf("our trace's traits: %+v, want the zero Traits", zero)
	}
	for _, json := range []bool{false, true} {
		var out, errOut bytes.Buffer
		outs, sess, runErr := replay(t, outputs.Options{Out: &out, ErrOut: &errOut, Summary: true, JSON: json}, path)
		if err := outs.Finish(runErr); err != nil {
			t.Fatal(err)
		}
		if n := len(sess.Subjects()); n != 0 {
			t.Fatalf("%d subjects, want none", n)
		}
		want := traits.None + "\n"
		if json {
			want = `{"resources":[],"faults":[]}` + "\n"
		}
		if out.String() != want {
			t.Errorf("json=%v: the summary is %q, want %q", json, out.String(), want)
		}
	}
}

// fullWriter is a full disk: every write fails.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// A summary that cannot be written is the run's error, as such: not the
// dashboard's, which a dashboard's context.Canceled would hide.
func TestASummaryThatCannotBeWrittenIsTheRunsError(t *testing.T) {
	var errOut bytes.Buffer
	outs, _, runErr := replay(t, outputs.Options{Out: fullWriter{}, ErrOut: &errOut, Summary: true}, "../../testdata/traces/demo.jsonl")
	err := outs.Finish(runErr)
	if err == nil || !strings.HasPrefix(err.Error(), "writing summary: ") || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("Finish = %v, want the summary's write error", err)
	}
}

// The text lines' name column is as wide as the longest name they give,
// name#N included: a second watch of a resource (the probe's Lease beside
// the user's leases) does not push its lines out of line with the first's.
func TestTheLinesNameColumnFitsASecondWatchOfAResource(t *testing.T) {
	b, err := os.ReadFile("../../pkg/trace/testdata/handwritten/two-resources.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// Both resources are ConfigMaps: the second's lines are configmaps.v1#2.
	two := strings.Replace(string(b), `{"group":"apps","version":"v1","resource":"deployments","kind":"Deployment","namespaced":true}`,
		`{"version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true}`, 1)
	path := filepath.Join(t.TempDir(), "two.jsonl")
	if err := os.WriteFile(path, []byte(two), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	outs, _, runErr := replay(t, outputs.Options{Out: &out, ErrOut: &errOut}, path)
	if err := outs.Finish(runErr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "lines of configmaps.v1#2 are the watch of configmaps.v1 in namespace hand") {
		t.Fatalf("no line says which watch configmaps.v1#2 is:\n%s", errOut.String())
	}
	// The sequence numbers, right after the name column, end in one column.
	seq := regexp.MustCompile(`^\S+ configmaps\.v1(#2)? +\d+ `)
	column := -1
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		m := seq.FindString(l)
		if m == "" {
			t.Fatalf("line %q: no time, name and sequence number", l)
		}
		if column < 0 {
			column = len(m)
		} else if len(m) != column {
			t.Fatalf("the sequence numbers end in columns %d and %d:\n%s", column, len(m), out.String())
		}
	}
}
