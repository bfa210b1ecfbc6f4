package trace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// rerecord replays the bundled trace name (or the trace at name, when it
// is a path) through reflectors whose requests and decisions a rotating
// Recorder records again, to path. It returns what each resource's cache
// held at the end.
func rerecord(t *testing.T, name, path string, rot trace.Rotation) []string {
	t.Helper()
	src := name
	if filepath.Base(name) == name {
		src = filepath.Join(bundled, name)
	}
	rd, err := trace.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rp := trace.NewReplay(rd, 0)
	var stores []*store.Store
	var reflectors []*reflector.Reflector
	rot.Snapshot = func(i int) ([]*store.Object, string) { return stores[i].List(), reflectors[i].Stats().ResourceVersion }
	rec, err := trace.CreateRotating(path, rd.Header(), rot)
	if err != nil {
		t.Fatal(err)
	}
	trace.SetClock(rec, rp.Now)
	for i, rr := range rp.Resources() {
		cfg := rr.ReflectorConfig()
		cfg.Source = rec.Source(i, cfg.Source)
		notes := rec.Notes(i)
		cfg.OnNote = func(n reflector.Note) { rr.Note(n); notes(n) }
		st, w := store.New()
		r, err := reflector.New(cfg, w, st)
		if err != nil {
			t.Fatal(err)
		}
		rr.SetForceRelist(r.ForceRelist)
		reflectors, stores = append(reflectors, r), append(stores, st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rp.Run(ctx, reflectors...); err != nil {
		t.Fatalf("replaying %s: %v", name, err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return caches(stores)
}

// caches lists each store's objects, sorted: identity and resourceVersion.
func caches(stores []*store.Store) []string {
	var out []string
	for i, st := range stores {
		for _, o := range st.List() {
			out = append(out, fmt.Sprintf("%d %s/%s uid=%s rv=%s", i, o.Namespace, o.Name, o.UID, o.ResourceVersion))
		}
	}
	slices.Sort(out)
	return out
}

// replaySegment replays one segment strictly: no error, every recorded
// decision made again. It returns the caches at its end.
func replaySegment(t *testing.T, path string) []string {
	t.Helper()
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rp := trace.NewReplay(rd, 0)
	reflectors, stores := reflectorsFor(t, rp)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rp.Run(ctx, reflectors...); err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	if rp.RecordedDecisions() == 0 {
		t.Errorf("%s: no decision recorded", filepath.Base(path))
	}
	if shown, total := rp.Differences(5); total != 0 {
		t.Errorf("%s: %d differences from the recorded decisions: %v", filepath.Base(path), total, shown)
	}
	if w := rp.Warnings(); len(w) > 0 {
		t.Errorf("%s: warnings: %v", filepath.Base(path), w)
	}
	return caches(stores)
}

// Every bundled trace recorded from a real API server, recorded again with
// a rotation at 3 KiB, and at 1 byte (every resume starts a segment, the
// resumes a 410 answers among them): it becomes several segments (the
// LIST and the streaming strategies, one resource and three), and each
// replays alone, making every decision it recorded, with no warning; the
// last one ends with the caches the whole run ended with.
func TestARotatingTraceIsSegmentsThatEachReplayAlone(t *testing.T) {
	for _, name := range []string{"demo.jsonl", "several.jsonl", "streaming.jsonl", "steady.jsonl", "gone-relist.jsonl", "forced-relist-restart.jsonl", "recreate.jsonl", "bookmarks.jsonl"} {
		for _, size := range []int64{3 << 10, 1} {
			t.Run(fmt.Sprintf("%s/%d", name, size), func(t *testing.T) { rotatedReplaysAlone(t, name, size) })
		}
	}
}

func rotatedReplaysAlone(t *testing.T, name string, size int64) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	want := rerecord(t, name, path, trace.Rotation{MaxBytes: size, Keep: 1000})
	var segments []string
	for n := 1000; n >= 1; n-- {
		if _, err := os.Stat(trace.SegmentPath(path, n)); err == nil {
			segments = append(segments, trace.SegmentPath(path, n))
		}
	}
	segments = append(segments, path)
	var got []string
	snapshots := 0
	for k, seg := range segments {
		got = replaySegment(t, seg)
		rd, err := trace.Open(seg)
		if err != nil {
			t.Fatal(err)
		}
		h := rd.Header()
		_ = rd.Close()
		if want := k; h.Segment != want && !(k == 0 && h.Segment == 0) {
			t.Errorf("%s: header segment %d, want %d", filepath.Base(seg), h.Segment, want)
		}
		b, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		snapshots += strings.Count(string(b), `"snapshot":true`)
		// A snapshot's notes say their sentences whole (a reviewer found
		// "initial list (<nil>)").
		if strings.Contains(string(b), "<nil>") {
			t.Errorf("%s holds a Go nil: %s", filepath.Base(seg), b[max(strings.Index(string(b), "<nil>")-120, 0):strings.Index(string(b), "<nil>")+5])
		}
	}
	t.Logf("%s: %d segments, %d snapshots", name, len(segments), snapshots)
	switch {
	case filepath.Base(name) == "streaming.jsonl":
		// One streaming list and its watch, never resumed: a full
		// trace moves to a new segment only at a resume.
		if len(segments) != 1 {
			t.Fatalf("%d segments: a trace whose watch never resumed rotated", len(segments))
		}
	case len(segments) < 2 || snapshots == 0:
		t.Fatalf("%d segments, %d snapshots: the trace did not rotate", len(segments), snapshots)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the last segment's replay ends with\n%s\nthe run ended with\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// An auto resource whose streaming list the server refused makes its
// relists LISTs from then on: a segment begins it with the refusal, as the
// replay of the segment alone meets it, so that the replay falls back too
// and relists with a LIST at the next 410 (it asked for a streaming list,
// where the trace had a LIST).
// So it is for a streaming list whose initial events did not end in time.
func TestARotatedSegmentReplaysTheFallbackFromARefusedStreamingList(t *testing.T) {
	for _, name := range []string{"stream-refused.jsonl", "initial-events-timeout.jsonl"} {
		for _, size := range []int64{3 << 10, 1} {
			t.Run(fmt.Sprintf("%s/%d", name, size), func(t *testing.T) { rotatedReplaysAlone(t, "testdata/rotate/"+name, size) })
		}
	}
}

// Keep bounds the files: the oldest segments are removed.
func TestARotatingTraceKeepsOnlyKeepEarlierSegments(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl.gz")
	rerecord(t, "demo.jsonl", path, trace.Rotation{MaxBytes: 1 << 10, Keep: 2})
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"out.1.jsonl.gz", "out.2.jsonl.gz", "out.jsonl.gz"}; !slices.Equal(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	for _, n := range names {
		replaySegment(t, filepath.Join(dir, n))
	}
}

func TestSegmentPaths(t *testing.T) {
	for path, want := range map[string]string{
		"out.jsonl":              "out.3.jsonl",
		"dir/out.jsonl.gz":       "dir/out.3.jsonl.gz",
		"out":                    "out.3",
		"/a.b/.trace.jsonl":      "/a.b/.trace.3.jsonl",
		"/a.b/.trace":            "/a.b/.trace.3",
		".trace.gz":              ".trace.3.gz",
		"/tmp/run-2026.12.jsonl": "/tmp/run-2026.12.3.jsonl",
	} {
		if got := trace.SegmentPath(path, 3); got != want {
			t.Errorf("SegmentPath(%q, 3) = %q, want %q", path, got, want)
		}
	}
}

func TestCreateRotatingRefusesWhatCannotRotate(t *testing.T) {
	snap := func(int) ([]*store.Object, string) { return nil, "" }
	h := trace.Header{Resources: []trace.ResourceHeader{{}}}
	path := filepath.Join(t.TempDir(), "out.jsonl")
	for _, c := range []struct {
		h    trace.Header
		rot  trace.Rotation
		want string
	}{
		{h, trace.Rotation{MaxBytes: 0, Keep: 1, Snapshot: snap}, "size must be above 0"},
		{h, trace.Rotation{MaxBytes: 1, Keep: 0, Snapshot: snap}, "at least one earlier segment"},
		{h, trace.Rotation{MaxBytes: 1, Keep: 1}, "snapshots"},
		{trace.Header{Observed: true}, trace.Rotation{MaxBytes: 1, Keep: 1, Snapshot: snap}, "observed trace does not rotate"},
	} {
		if _, err := trace.CreateRotating(path, c.h, c.rot); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error saying %q", c.rot, err, c.want)
		}
	}
}

// A segment begins its resources with their caches, which may be larger
// than --trace-max-size: the size bounds the history after them, so a cache
// over the size does not start a segment at every watch resume (3 KiB
// against the demo's cache started one at each of its nine resumes).
func TestASegmentIsFullWhenItsHistoryPastItsCachesReachesTheSize(t *testing.T) {
	const size = 3 << 10
	path := filepath.Join(t.TempDir(), "out.jsonl")
	rerecord(t, "demo.jsonl", path, trace.Rotation{MaxBytes: size, Keep: 1000})
	var full []string // the segments a rotation closed: all but the current one
	for n := 1000; n >= 1; n-- {
		if _, err := os.Stat(trace.SegmentPath(path, n)); err == nil {
			full = append(full, trace.SegmentPath(path, n))
		}
	}
	if len(full) == 0 {
		t.Fatal("the trace did not rotate")
	}
	for _, seg := range full {
		b, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		// A cache is written at one instant: its snapshot request and
		// every line of its resource at that request's time.
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")[1:]
		type when struct {
			r  int
			at int64
		}
		read := func(l string) (w when, snapshot bool) {
			var v struct {
				R        int   `json:"r"`
				At       int64 `json:"at"`
				Snapshot bool  `json:"snapshot"`
			}
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatal(err)
			}
			return when{v.R, v.At}, v.Snapshot
		}
		caches := map[when]bool{}
		for _, l := range lines {
			if w, snapshot := read(l); snapshot {
				caches[w] = true
			}
		}
		history := 0
		for _, l := range lines {
			if w, _ := read(l); !caches[w] {
				history += len(l) + 1
			}
		}
		if history < size {
			t.Errorf("%s: %d bytes of history past its header and caches, under the size %d: a rotation came too soon", filepath.Base(seg), history, size)
		}
	}
}
