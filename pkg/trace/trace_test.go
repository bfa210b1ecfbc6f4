package trace_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

const bundled = "../../testdata/traces"

// replayed is the outcome of replaying a trace through a fresh reflector.
type replayed struct {
	rp  *trace.Replay
	r   *reflector.Reflector
	st  *store.Store
	sum summary.Summary
}

// replayTrace replays path; onStore may subscribe to the store before the run.
func replayTrace(t *testing.T, path string, onStore func(*store.Store)) (replayed, error) {
	t.Helper()
	rd, err := trace.Open(path)
	if err != nil {
		return replayed{}, err
	}
	defer rd.Close()
	rp := trace.NewReplay(rd, 0)
	st, w := store.New()
	if onStore != nil {
		onStore(st)
	}
	r, err := reflector.New(rp.Resources()[0].ReflectorConfig(), w, st)
	if err != nil {
		t.Fatal(err)
	}
	rp.Resources()[0].SetForceRelist(r.ForceRelist)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runErr := rp.Run(ctx, r)
	return replayed{rp: rp, r: r, st: st, sum: summary.New(rd.Header().Resources[0].Resource, r.Stats(), st, nil, rp.Clock().Now())}, runErr
}

// replayFile replays path and returns the replay and summary.
func replayFile(t *testing.T, path string) (*trace.Replay, summary.Summary, error) {
	t.Helper()
	out, err := replayTrace(t, path, nil)
	return out.rp, out.sum, err
}

func TestBundledTracesReplayWithoutDivergence(t *testing.T) {
	cases := []struct {
		name  string
		check func(t *testing.T, s summary.Summary)
	}{
		{"demo", func(t *testing.T, s summary.Summary) {
			c := s.Counters
			if c.Gone != 1 || c.Relists != 1 || c.Bookmarks < 1 || c.ListPages < 3 {
				t.Errorf("counters: got %+v, want 1 gone, 1 relist, bookmarks and pages", c)
			}
		}},
		{"steady", func(t *testing.T, s summary.Summary) {
			if c := s.Counters; c.Added != 10 || c.Modified != 30 || c.Deleted != 10 || c.Relists != 0 || s.Objects != 100 {
				t.Errorf("got %d objects, counters %+v", s.Objects, c)
			}
		}},
		{"gone-relist", func(t *testing.T, s summary.Summary) {
			if c := s.Counters; c.Gone != 1 || c.Relists != 1 || s.Objects != 37 {
				t.Errorf("got %d objects, counters %+v", s.Objects, c)
			}
		}},
		{"bookmarks", func(t *testing.T, s summary.Summary) {
			if c := s.Counters; c.Bookmarks < 3 || c.Added+c.Modified+c.Deleted != 0 || s.Bookmark.ResourceVersion == "" {
				t.Errorf("got bookmark %+v, counters %+v", s.Bookmark, c)
			}
		}},
		{"recreate", func(t *testing.T, s summary.Summary) {
			if c := s.Counters; c.Deleted != 1 || c.Added != 1 || c.Relists != 1 || s.Objects != 5 {
				t.Errorf("got %d objects, counters %+v", s.Objects, c)
			}
		}},
		{"streaming", func(t *testing.T, s summary.Summary) {
			if c := s.Counters; c.Lists != 1 || c.ListPages != 0 || c.Watches < 1 || s.Objects != 50 {
				t.Errorf("got %d objects, counters %+v", s.Objects, c)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rp, sum, err := replayFile(t, filepath.Join(bundled, tc.name+".jsonl"))
			if err != nil {
				t.Fatalf("replay: %v", err)
			}
			if d, _ := rp.Differences(5); len(d) > 0 {
				t.Errorf("decisions differ: %v", d)
			}
			if w := rp.Warnings(); len(w) > 0 {
				t.Errorf("warnings: %v", w)
			}
			tc.check(t, sum)
		})
	}
}

func TestDemoRelistDiffNamesWhatTheWatchMissed(t *testing.T) {
	out, err := replayTrace(t, filepath.Join(bundled, "demo.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := out.r
	d := r.Stats().LastRelistDiff
	if d == nil {
		t.Fatal("no relist diff")
	}
	var names []string
	for _, e := range d.Deleted {
		names = append(names, e.Ref.Name)
	}
	if got, want := strings.Join(names, ","), "web-42,web-7,web-99"; got != want {
		t.Errorf("missed deletes: got %s, want %s", got, want)
	}
	if len(d.Recreated) != 1 || d.Recreated[0].Ref.Name != "api-2" || len(d.Updated) != 2 {
		t.Errorf("missed recreates/updates: got %+v / %+v", d.Recreated, d.Updated)
	}
}

// copyLines writes the first n lines of src to a new file, optionally editing one.
func rewrite(t *testing.T, src string, edit func(lines []string) []string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	out := strings.Join(edit(lines), "\n")
	path := filepath.Join(t.TempDir(), "edited.jsonl")
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAReplayThatAsksForAnotherVerbReportsTheDivergence(t *testing.T) {
	// Turn the first watch request into a list request.
	var at int
	path := rewrite(t, filepath.Join(bundled, "steady.jsonl"), func(lines []string) []string {
		for i, l := range lines {
			if strings.Contains(l, `"k":"request"`) && strings.Contains(l, `"verb":"watch"`) {
				lines[i] = strings.Replace(l, `"verb":"watch"`, `"verb":"list"`, 1)
				at = i + 1
				break
			}
		}
		return append(lines, "")
	})
	_, _, err := replayFile(t, path)
	var d *trace.Divergence
	if !errors.As(err, &d) {
		t.Fatalf("replay: got %v, want a divergence", err)
	}
	if d.Line != at || d.Expected != reflector.VerbList || d.Got != reflector.VerbWatch {
		t.Errorf("divergence: got %+v, want line %d expected list got watch", d, at)
	}
}

func TestATruncatedLastLineReplaysEverythingBeforeItWithAWarning(t *testing.T) {
	var kept int
	path := rewrite(t, filepath.Join(bundled, "steady.jsonl"), func(lines []string) []string {
		kept = len(lines) - 3
		lines = lines[:kept]
		last := lines[kept-1]
		lines[kept-1] = last[:len(last)/2] // cut mid-line, no newline
		return lines
	})
	rp, _, err := replayFile(t, path)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	w := rp.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], "edited.jsonl:"+itoa(kept)+": the last line is truncated") {
		t.Errorf("warnings: got %v, want one naming line %d", w, kept)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestReaderErrorsNameTheProblemAndTheLine(t *testing.T) {
	header := `{"k":"header","v":1,"startedAt":"2026-01-01T00:00:00Z","resource":{"version":"v1","resource":"configmaps"}}`
	cases := []struct {
		name, content, want string
	}{
		{"empty", "", "the trace is empty"},
		{"not json", "hello\n", "t.jsonl:1: not a watchcache trace (the first line is not JSON)"},
		{"no header", `{"k":"note","at":1}` + "\n", `t.jsonl:1: not a watchcache trace: the first line is "note", want a header`},
		// What -o json or --summary -o json printed, saved and replayed by mistake.
		{"json lines of -o json", `{"at":"2026-12-06T10:00:00Z","resource":"configmaps.v1","type":"ADDED"}` + "\n", `t.jsonl:1: not a watchcache trace: the first line has no "k", want a header ({"k":"header",…}); the JSON lines of -o json and --summary are not a trace: record one with --trace FILE`},
		{"future version", `{"k":"header","v":7}` + "\n", "t.jsonl:1: unsupported trace version 7 (this build reads versions 1 and 2)"},
		{"malformed middle line", header + "\n" + `{"k":"note","at":1}` + "\n{bad\n" + `{"k":"note","at":2}` + "\n", "t.jsonl:3: malformed line"},
		{"empty middle line", header + "\n\n" + `{"k":"note","at":2}` + "\n", "t.jsonl:2: empty line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rd, err := trace.NewReader("t.jsonl", strings.NewReader(tc.content))
			for err == nil {
				_, err = rd.Next()
			}
			if errors.Is(err, io.EOF) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// A .gz trace cut or broken before its first line is said to be so, not
// "empty" (a gzip of nothing is the empty trace).
func TestAGzipTraceCutBeforeItsFirstLineIsNotCalledEmpty(t *testing.T) {
	var whole bytes.Buffer
	zw := gzip.NewWriter(&whole)
	if _, err := zw.Write([]byte(`{"k":"header","v":2,"startedAt":"2026-01-01T00:00:00Z"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var empty bytes.Buffer
	if err := gzip.NewWriter(&empty).Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		content []byte
		want    string
	}{
		{"cut in its header", whole.Bytes()[:8], "the gzip file is cut short before its header ends"},
		{"cut in its first line", whole.Bytes()[:len(whole.Bytes())/2], "the header line is truncated"},
		{"garbage after a gzip header", []byte("\x1f\x8b\x08\x00garbage"), "the file is cut short or broken before its first line"},
		{"a gzip of nothing", empty.Bytes(), "the trace is empty"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".jsonl.gz")
		if err := os.WriteFile(path, tc.content, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := trace.Open(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

func TestUnknownLineKindsAreSkippedWithAWarning(t *testing.T) {
	in := `{"k":"header","v":1,"startedAt":"2026-01-01T00:00:00Z"}` + "\n" + `{"k":"future-thing","at":1}` + "\n" + `{"k":"note","at":2,"reason":"x"}` + "\n"
	rd, err := trace.NewReader("t.jsonl", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	l, err := rd.Next()
	if err != nil || l.K != trace.KindNote || l.Reason != "x" {
		t.Fatalf("Next: got %+v, %v; want the note", l, err)
	}
	if w := rd.Warnings(); len(w) != 1 || !strings.Contains(w[0], `t.jsonl:2: skipped a line of unknown kind "future-thing"`) {
		t.Errorf("warnings: got %v", w)
	}
}

func TestGzipTracesRoundTripAndATruncatedGzipStillReplays(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(bundled, "demo.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	if _, err := gz.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	whole := filepath.Join(dir, "demo.jsonl.gz")
	if err := os.WriteFile(whole, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	_, sum, err := replayFile(t, whole)
	if err != nil || sum.Counters.Relists != 1 {
		t.Fatalf("gzip replay: %v, counters %+v", err, sum.Counters)
	}
	// Named without .gz (or .GZ), it is read as gzip all the same: its first bytes say so.
	for _, name := range []string{"demo.jsonl", "demo.jsonl.GZ"} {
		renamed := filepath.Join(dir, name)
		if err := os.WriteFile(renamed, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, sum, err := replayFile(t, renamed); err != nil || sum.Counters.Relists != 1 {
			t.Errorf("gzip replay of %s: %v, counters %+v", name, err, sum.Counters)
		}
	}
	cut := filepath.Join(dir, "cut.jsonl.gz")
	if err := os.WriteFile(cut, buf.Bytes()[:buf.Len()*2/3], 0o600); err != nil {
		t.Fatal(err)
	}
	rp, _, err := replayFile(t, cut)
	if err != nil {
		t.Fatalf("truncated gzip replay: %v", err)
	}
	if len(rp.Warnings()) != 1 {
		t.Errorf("warnings: got %v, want one about the truncated last line", rp.Warnings())
	}

	// Cut where the recorder flushed (it flushes every second): every line
	// is whole, and only the gzip stream says the file was cut.
	lines := bytes.SplitAfter(raw, []byte("\n"))
	var flushed bytes.Buffer
	gz = gzip.NewWriter(&flushed)
	if _, err := gz.Write(bytes.Join(lines[:len(lines)/2], nil)); err != nil {
		t.Fatal(err)
	}
	if err := gz.Flush(); err != nil {
		t.Fatal(err)
	}
	atFlush := filepath.Join(dir, "cut-at-a-flush.jsonl.gz")
	if err := os.WriteFile(atFlush, flushed.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	rp, _, err = replayFile(t, atFlush)
	if err != nil {
		t.Fatalf("gzip replay cut at a flush: %v", err)
	}
	if w := rp.Warnings(); len(w) != 1 || !strings.Contains(w[0], "the gzip stream ends early") {
		t.Errorf("warnings: got %v, want one saying the gzip stream ends early", w)
	}
}

// forced-relist-restart.jsonl has a watch sent after one that ended at its
// ERROR event: the end line left of that one stands before its request.
func TestReplayedRequestsCarryTheRecordedOptions(t *testing.T) {
	for _, name := range []string{"demo.jsonl", "forced-relist-restart.jsonl"} {
		t.Run(name, func(t *testing.T) { replayedRequestsCarryTheRecordedOptions(t, filepath.Join(bundled, name)) })
	}
}

func replayedRequestsCarryTheRecordedOptions(t *testing.T, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recorded []reflector.RequestOptions
	for _, line := range strings.Split(string(b), "\n") {
		var l trace.Line
		if json.Unmarshal([]byte(line), &l) == nil && l.K == trace.KindRequest {
			recorded = append(recorded, *l.Opts)
		}
	}
	out, err := replayTrace(t, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	replayed := out.r.Stats().Requests
	if len(replayed) != len(recorded) {
		t.Fatalf("requests: got %d, want %d", len(replayed), len(recorded))
	}
	for i := range recorded {
		if replayed[i].Opts != recorded[i] {
			t.Errorf("request %d options: got %+v, want %+v", i+1, replayed[i].Opts, recorded[i])
		}
	}
}

// The bundled trace of three resources ends with each one's stop: a watch
// canceled, then its "stopped" decision. Whichever resource reads the end of
// the trace ends the replay, and the others must still count the decisions
// they were handed; replayed many times, no run may lose one.
func TestSeveralResourcesReplayEveryRecordedDecisionEveryTime(t *testing.T) {
	for i := range 40 {
		rp, _, err := replayEach(t, filepath.Join(bundled, "several.jsonl"))
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if len(rp.Resources()) != 3 || rp.RecordedDecisions() == 0 {
			t.Fatalf("run %d: %d resources, %d recorded decisions", i, len(rp.Resources()), rp.RecordedDecisions())
		}
		if shown, total := rp.Differences(5); total != 0 {
			t.Fatalf("run %d: %d differences: %v", i, total, shown)
		}
	}
}

// replayEach replays the trace at path as fast as it goes, a reflector per
// resource, and returns the replay, its reflectors and the run's error.
func replayEach(t *testing.T, path string) (*trace.Replay, []*reflector.Reflector, error) {
	t.Helper()
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rp := trace.NewReplay(rd, 0)
	reflectors, _ := reflectorsFor(t, rp)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return rp, reflectors, rp.Run(ctx, reflectors...)
}

// reflectorsFor builds a reflector and store for each of rp's resources.
func reflectorsFor(t *testing.T, rp *trace.Replay) ([]*reflector.Reflector, []*store.Store) {
	t.Helper()
	var reflectors []*reflector.Reflector
	var stores []*store.Store
	for _, rr := range rp.Resources() {
		st, w := store.New()
		r, err := reflector.New(rr.ReflectorConfig(), w, st)
		if err != nil {
			t.Fatal(err)
		}
		rr.SetForceRelist(r.ForceRelist)
		reflectors, stores = append(reflectors, r), append(stores, st)
	}
	return reflectors, stores
}

// A replay stopped while its reflector picks the next watch's timeout (it
// peeks at the next recorded request, which the pace holds back for an hour
// here) returns at once instead of waiting for that line forever.
func TestAReplayStoppedBetweenAListAndItsWatchReturns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "slow.jsonl")
	lines := []string{
		`{"k":"header","v":2,"startedAt":"2026-01-01T00:00:00Z","resources":[{"resource":{"version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true},"namespace":"hand"}]}`,
		`{"k":"request","r":0,"at":1000000,"id":1,"verb":"list","opts":{}}`,
		`{"k":"page","r":0,"at":2000000,"id":1,"resourceVersion":"10","items":0}`,
		`{"k":"end","r":0,"at":2000000,"id":1,"reason":"closed"}`,
		`{"k":"request","r":0,"at":3600000000000,"id":2,"verb":"watch","opts":{"resourceVersion":"10","allowWatchBookmarks":true,"timeoutSeconds":300}}`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rp := trace.NewReplay(rd, 1)
	reflectors, stores := reflectorsFor(t, rp)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- rp.Run(ctx, reflectors...) }()
	if err := stores[0].WaitUntilReady(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-errc:
	case <-time.After(30 * time.Second):
		t.Fatal("the replay did not return after it was stopped")
	}
}

// OnLine hands over every line of the resource, in the trace's order, and
// before the reflector notes what it did with it: a request's end line
// comes before its request-ended note, whose clock then reads the line's time.
func TestOnLineSeesEveryLineBeforeTheNotesAboutIt(t *testing.T) {
	path := filepath.Join(bundled, "steady.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Count(strings.TrimSpace(string(b)), "\n") // the lines after the header
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rp := trace.NewReplay(rd, 0)
	rr := rp.Resources()[0]
	var seen []*trace.Line
	ends := map[int64]int64{} // request id: its end line's at
	rr.OnLine(func(l *trace.Line) {
		seen = append(seen, l)
		if l.K == trace.KindEnd {
			ends[l.ID] = l.At
		}
	})
	cfg := rr.ReflectorConfig()
	start := rd.Header().StartedAt
	var late []string
	cfg.OnNote = func(n reflector.Note) {
		rr.Note(n)
		if n.Kind != reflector.NoteRequestEnded || n.Request.End.Reason == reflector.EndCanceled || n.Request.End.Reason == reflector.EndStopped {
			return
		}
		if at, ok := ends[n.Request.ID]; !ok || n.At.Sub(start) != time.Duration(at) {
			late = append(late, strconv.FormatInt(n.Request.ID, 10))
		}
	}
	st, w := store.New()
	r, err := reflector.New(cfg, w, st)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rp.Run(ctx, r); err != nil {
		t.Fatal(err)
	}
	if len(seen) != want {
		t.Errorf("OnLine saw %d lines, want the trace's %d", len(seen), want)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i].At < seen[i-1].At {
			t.Errorf("line %d came before line %d: out of order", i+1, i)
		}
	}
	if len(late) > 0 {
		t.Errorf("requests %s ended without OnLine having handed their end line first", strings.Join(late, ", "))
	}
}

// A recording cut anywhere (a run killed, a file cut short, between two
// lines or inside one) replays up to there without a difference: what the
// replay decides after the last line (its answer to a watch's end, a
// backoff, its stop) was never recorded, so it is compared with nothing.
// A difference found on such a cut made `replay --strict` fail a CI job
// whose monitor was killed right after a watch ended. Nor does the replay
// make a request the recording does not have (it showed one, "request #1 …
// stopped after 0s", for a trace cut after its header).
func TestARecordingCutAnywhereReplaysWithoutADifference(t *testing.T) {
	for _, name := range []string{"demo", "steady", "gone-relist", "recreate", "bookmarks", "streaming", "forced-relist-restart"} {
		b, err := os.ReadFile(filepath.Join(bundled, name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
		for k := 2; k < len(lines); k++ {
			for _, half := range []bool{false, true} {
				body := strings.Join(lines[:k], "")
				if half { // and the next line cut in its middle
					body += lines[k][:len(lines[k])/2]
				}
				path := filepath.Join(t.TempDir(), "cut.jsonl")
				if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
				out, err := replayTrace(t, path, nil)
				if err != nil {
					t.Errorf("%s cut after line %d (half a line more: %v): %v", name, k, half, err)
					continue
				}
				if shown, total := out.rp.Differences(3); total > 0 {
					t.Errorf("%s cut after line %d (half a line more: %v): %d differences: %v", name, k, half, total, shown)
				}
				// The replay makes no request the recording does not have:
				// it stops at the trace's end.
				if got, want := out.r.Stats().Totals.Requests, int64(strings.Count(strings.Join(lines[:k], ""), `{"k":"request"`)); got != want {
					t.Errorf("%s cut after line %d (half a line more: %v): the replay made %d requests, the recording has %d", name, k, half, got, want)
				}
			}
		}
	}
}

// A replayed reflector begins where the recorded one did: at its resource's
// first line (its first decision), not at the header's start, which the
// recording wrote before any reflector ran. So Stats.Started, and the time
// to sync counted from it, are the recorded run's, for each resource.
func TestAReplayedReflectorStartsAtItsResourcesFirstLine(t *testing.T) {
	for _, name := range []string{"demo.jsonl", "several.jsonl", "streaming.jsonl"} {
		path := filepath.Join(bundled, name)
		rd, err := trace.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		h := rd.Header()
		first := map[int]time.Duration{}
		for {
			l, err := rd.Next()
			if err != nil {
				break
			}
			if _, seen := first[l.R]; !seen {
				first[l.R] = time.Duration(l.At)
			}
		}
		_ = rd.Close()
		_, reflectors, err := replayEach(t, path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, r := range reflectors {
			want := h.StartedAt.Add(first[i])
			if first[i] == 0 {
				t.Fatalf("%s: resource %d has no line after the start", name, i)
			}
			if got := r.Stats().Started; !got.Equal(want) {
				t.Errorf("%s: resource %d started at %s, want its first line's %s (the header's is %s)", name, i, got, want, h.StartedAt)
			}
		}
	}
}
