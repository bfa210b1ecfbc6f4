package trace_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// testHeader is a valid header line, without its newline.
const testHeader = `{"k":"header","v":1,"startedAt":"2026-01-01T00:00:00Z","resource":{"version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true},"objects":"metadata","options":{"strategy":"list","watchTimeout":"5m0s","idleTimeout":"10m0s","initialEventsTimeout":"1m0s"}}`

// generated is an io.Reader over chunks made on demand (nil ends it), so a
// test can read a trace far larger than what it keeps in memory.
type generated struct {
	next func() []byte
	cur  []byte
	read int64
}

func (g *generated) Read(p []byte) (int, error) {
	for len(g.cur) == 0 {
		if g.cur = g.next(); g.cur == nil {
			return 0, io.EOF
		}
	}
	n := copy(p, g.cur)
	g.cur = g.cur[n:]
	g.read += int64(n)
	return n, nil
}

// chunks yields each chunk repeated as often as its count says.
func chunks(parts ...any) *generated {
	i, left := 0, -1
	return &generated{next: func() []byte {
		for i < len(parts) {
			b, n := parts[i].([]byte), parts[i+1].(int)
			if left < 0 {
				left = n
			}
			if left > 0 {
				left--
				return b
			}
			i, left = i+2, -1
		}
		return nil
	}}
}

// readAll reads every line of a trace and returns the error that ended it (nil at io.EOF).
func readAll(name string, in io.Reader) error {
	rd, err := trace.NewReader(name, in)
	if err != nil {
		return err
	}
	for {
		if _, err := rd.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// itemOfLength is an item line of request 1 of exactly n bytes, newline excluded.
func itemOfLength(n int) []byte {
	head := `{"k":"item","at":2000,"id":1,"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns","name":"a","uid":"u-a","resourceVersion":"5"},"data":{"k":"`
	tail := `"}}}`
	return []byte(head + strings.Repeat("A", n-len(head)-len(tail)) + tail)
}

func TestALineLongerThanTheBoundIsRefusedWithoutReadingTheRestOfIt(t *testing.T) {
	// A note line of 64 MiB of 'A', made as it is read.
	mib := bytes.Repeat([]byte("A"), 1<<20)
	in := chunks([]byte(testHeader+"\n"+`{"k":"note","at":1,"detail":"`), 1, mib, 64, []byte("\"}\n"), 1)
	err := readAll("t.jsonl", in)
	var le *trace.LineError
	if !errors.As(err, &le) || err.Error() != "t.jsonl:2: line longer than 16 MiB" {
		t.Fatalf("got %v, want the *LineError t.jsonl:2: line longer than 16 MiB", err)
	}
	// The reader stops at the bound: at most one read buffer (1 MiB) beyond it.
	if limit := int64(trace.MaxLineBytes + 2<<20); in.read > limit {
		t.Errorf("read %d bytes of a 64 MiB line, want at most %d", in.read, limit)
	}
}

func TestLinesUpToTheBoundAreReadAndOneByteMoreIsNot(t *testing.T) {
	atBound, over := itemOfLength(trace.MaxLineBytes), itemOfLength(trace.MaxLineBytes+1)
	header := []byte(testHeader + "\n" + list1 + "\n")
	cases := []struct {
		name string
		in   [][]byte
		want string // "" reads to the end
	}{
		{"at the bound", [][]byte{header, atBound, []byte("\n" + page1 + "\n")}, ""},
		{"at the bound, last line without newline", [][]byte{header, atBound}, ""},
		{"one byte over", [][]byte{header, over, []byte("\n")}, "t.jsonl:3: line longer than 16 MiB"},
		{"one byte over, last line without newline", [][]byte{header, over}, "t.jsonl:3: line longer than 16 MiB"},
		{"the header line", [][]byte{[]byte(`{"k":"header","v":1,"tool":"` + strings.Repeat("x", trace.MaxLineBytes) + `"}` + "\n")}, "t.jsonl:1: line longer than 16 MiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := readAll("t.jsonl", bytes.NewReader(bytes.Join(tc.in, nil)))
			if tc.want == "" && err != nil {
				t.Fatalf("got %v, want the whole trace read", err)
			}
			if tc.want != "" && (err == nil || err.Error() != tc.want) {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
		})
	}
}

// gzipBomb is a gzip trace: the header, then a note line of aMiB MiB of 'A'.
// The 'A's are gzip members of 1 MiB each, made once and repeated (a file
// of members, as `cat a.gz b.gz` makes, reads as one stream), so the test
// makes hundreds of MiB of decompressed bytes without compressing them all.
func gzipBomb(t testing.TB, aMiB int) []byte {
	t.Helper()
	member := func(b []byte) []byte {
		var buf bytes.Buffer
		gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gz.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	out := member([]byte(testHeader + "\n" + `{"k":"note","at":1,"detail":"`))
	a := member(bytes.Repeat([]byte("A"), 1<<20))
	out = append(out, bytes.Repeat(a, aMiB)...)
	return append(out, member([]byte("\"}\n"))...)
}

func writeFile(t testing.TB, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// childEnv names the test a child test process runs.
const childEnv = "WATCHCACHE_TRACE_TEST_CHILD"

// inChild runs the calling test alone in a new test process, where the heap
// is its own, and reports whether this is that process. The parent fails when
// the child does, and logs the child's output (its measurements).
func inChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("child process:\n%s", out)
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+t.Name())) {
		t.Fatalf("the child process failed (%v)", err)
	}
	return false
}

// heapUse is what f allocated: the peak heap above the heap before f,
// sampled every millisecond, and every byte it allocated in all (which bounds the peak).
type heapUse struct{ peak, total uint64 }

func (h heapUse) String() string {
	return fmt.Sprintf("peak heap %.1f MiB, allocated in all %.1f MiB", float64(h.peak)/(1<<20), float64(h.total)/(1<<20))
}

func measureHeap(f func()) heapUse {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	stop, sampled := make(chan struct{}), make(chan uint64)
	go func() {
		var highest uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			highest = max(highest, m.HeapAlloc)
			select {
			case <-stop:
				sampled <- highest
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(stop)
	highest := <-sampled
	runtime.ReadMemStats(&after)
	highest = max(highest, after.HeapAlloc)
	return heapUse{peak: highest - min(highest, before.HeapAlloc), total: after.TotalAlloc - before.TotalAlloc}
}

func TestAGzipBombFailsAtTheLineBoundWithBoundedMemory(t *testing.T) {
	if !inChild(t) {
		return
	}
	const aMiB = 600
	path := writeFile(t, "bomb.jsonl.gz", gzipBomb(t, aMiB))
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var runErr error
	use := measureHeap(func() {
		_, runErr = replayFileQuietly(path)
	})
	t.Logf("gzip bomb: %d KiB file, %d MiB decompressed line: %v", fi.Size()>>10, aMiB, use)
	want := path + ":2: line longer than 16 MiB"
	var le *trace.LineError
	if !errors.As(runErr, &le) || runErr.Error() != want {
		t.Errorf("replay: got %v, want %s", runErr, want)
	}
	// The line buffer grows by doubling to the bound: about 2×16 MiB in all, plus the 1 MiB read buffer.
	if limit := uint64(3 * trace.MaxLineBytes); use.total > limit {
		t.Errorf("the replay allocated %d MiB, want at most %d MiB (%d MiB decompressed)", use.total>>20, limit>>20, aMiB)
	}
}

// replayFileQuietly replays path as fast as possible, without a testing.T (for measurements).
func replayFileQuietly(path string) (*reflector.Reflector, error) {
	rd, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return replayReader(rd)
}

func replayReader(rd *trace.Reader) (*reflector.Reflector, error) {
	rp := trace.NewReplay(rd, 0)
	st, w := store.New()
	r, err := reflector.New(rp.Resources()[0].ReflectorConfig(), w, st)
	if err != nil {
		return nil, err
	}
	rp.Resources()[0].SetForceRelist(r.ForceRelist)
	err = rp.Run(context.Background(), r)
	w.Close()
	return r, err
}

// longWatch is a trace made as it is read: a LIST of objects small objects,
// then one watch with events MODIFIED events cycling over them, and no end
// (the recording stopped inside the watch). at(i) is called before event i
// is made.
func longWatch(objects, events int, at func(i int)) *generated {
	obj := func(b []byte, i, rv int) []byte {
		b = fmt.Appendf(b, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns","name":"cm-%d","uid":"uid-%d","resourceVersion":"%d"}}`, i, i, rv)
		return b
	}
	var buf []byte
	step, ns := 0, int64(0)
	line := func(f string, args ...any) []byte {
		ns += 1000
		buf = fmt.Appendf(buf[:0], f, append([]any{ns}, args...)...)
		return buf
	}
	return &generated{next: func() []byte {
		defer func() { step++ }()
		switch i := step; {
		case i == 0:
			return []byte(testHeader + "\n")
		case i == 1:
			return line(`{"k":"request","at":%d,"id":1,"verb":"list","opts":{}}` + "\n")
		case i < 2+objects:
			b := line(`{"k":"item","at":%d,"id":1,"object":`)
			return append(obj(b, i-2, i), "}\n"...)
		case i == 2+objects:
			return line(`{"k":"page","at":%d,"id":1,"resourceVersion":"%d","items":%d}`+"\n", 1+objects, objects)
		case i == 3+objects:
			return line(`{"k":"end","at":%d,"id":1,"reason":"closed"}` + "\n")
		case i == 4+objects:
			return line(`{"k":"request","at":%d,"id":2,"verb":"watch","opts":{"resourceVersion":"%d","allowWatchBookmarks":true,"timeoutSeconds":300}}`+"\n", 1+objects)
		case i < 5+objects+events:
			e := i - 5 - objects
			if at != nil {
				at(e)
			}
			b := line(`{"k":"event","at":%d,"id":2,"type":"MODIFIED","object":`)
			return append(obj(b, e%objects, 2+objects+e), "}\n"...)
		}
		if at != nil {
			at(events)
		}
		return nil
	}}
}

func TestALongWatchWithoutAnEndReplaysInConstantMemory(t *testing.T) {
	if !inChild(t) {
		return
	}
	const objects = 1000
	events := 1_000_000
	if raceEnabled || testing.Short() {
		events = 200_000 // the race detector makes a replay about ten times slower
	}
	// The live heap after a collection, a tenth of the way in and at the end:
	// the cache is full from the start, so anything that grows is held per line.
	var early, late uint64
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	in := longWatch(objects, events, func(i int) {
		switch i {
		case events / 10:
			early = live()
		case events:
			late = live()
		}
	})
	rd, err := trace.NewReader("long.jsonl", in)
	if err != nil {
		t.Fatal(err)
	}
	var r *reflector.Reflector
	start := time.Now()
	use := measureHeap(func() { r, err = replayReader(rd) })
	took := time.Since(start)
	if err != nil {
		t.Fatalf("replay: got %v, want the end of the trace to end the replay cleanly", err)
	}
	if got := r.Stats().Counters.Modified; got != int64(events) {
		t.Errorf("replayed %d events, want %d", got, events)
	}
	t.Logf("%d events (%d MiB) in %v (%.0f events/s): %v; live heap %.1f MiB after %d events, %.1f MiB after %d",
		events, in.read>>20, took.Round(time.Millisecond), float64(events)/took.Seconds(), use,
		float64(early)/(1<<20), events/10, float64(late)/(1<<20), events)
	if grew := int64(late) - int64(early); grew > 8<<20 {
		t.Errorf("the live heap grew by %d MiB over %d events, want it constant (within 8 MiB)", grew>>20, events*9/10)
	}
}

// BenchmarkReplayWatchWithoutEnd replays 1,000,000 events over 1,000 objects,
// read from memory: as one watch the recording stopped inside (no end), and
// as the same events in watches of 10,000 that each end normally.
func BenchmarkReplayWatchWithoutEnd(b *testing.B) {
	const objects, events = 1000, 1_000_000
	for _, bc := range []struct {
		name string
		data func() []byte
	}{
		{"one-watch-no-end", func() []byte {
			data, err := io.ReadAll(longWatch(objects, events, nil))
			if err != nil {
				b.Fatal(err)
			}
			return data
		}},
		{"watches-of-10000-with-ends", func() []byte { return endedWatches(b, objects, events, 10_000) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data := bc.data()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				rd, err := trace.NewReader(bc.name, bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				r, err := replayReader(rd)
				if err != nil {
					b.Fatal(err)
				}
				if got := r.Stats().Counters.Modified; got != events {
					b.Fatalf("replayed %d events, want %d", got, events)
				}
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// endedWatches is longWatch's trace with its events in watches of per events,
// each ended by the server's timeout, and the run stopped after the last.
func endedWatches(tb testing.TB, objects, events, per int) []byte {
	tb.Helper()
	var out bytes.Buffer
	data, err := io.ReadAll(longWatch(objects, events, nil))
	if err != nil {
		tb.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	watch := 5 + objects - 1 // the index of the watch request line
	for _, l := range lines[:watch] {
		out.Write(l)
	}
	id, at := 2, int64(0)
	for e := 0; e < events; e++ {
		l := lines[watch+1+e]
		at = atOf(tb, l)
		if e%per == 0 {
			fmt.Fprintf(&out, `{"k":"request","at":%d,"id":%d,"verb":"watch","opts":{"resourceVersion":"%d","allowWatchBookmarks":true,"timeoutSeconds":300}}`+"\n", at, id, 1+objects+e)
		}
		out.Write(bytes.Replace(l, []byte(`"id":2,`), []byte(`"id":`+strconv.Itoa(id)+`,`), 1))
		if e%per == per-1 || e == events-1 {
			reason := `"reason":"closed"`
			if e == events-1 {
				reason = `"reason":"canceled","error":"context canceled"`
			}
			fmt.Fprintf(&out, `{"k":"end","at":%d,"id":%d,%s}`+"\n", at, id, reason)
			id++
		}
	}
	return out.Bytes()
}

func atOf(tb testing.TB, line []byte) int64 {
	tb.Helper()
	_, rest, ok := bytes.Cut(line, []byte(`"at":`))
	end := bytes.IndexByte(rest, ',')
	if !ok || end < 0 {
		tb.Fatalf("no at in %s", line)
	}
	at, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	if err != nil {
		tb.Fatal(err)
	}
	return at
}

// Lines for hand-made traces.
const (
	list1   = `{"k":"request","at":1000,"id":1,"verb":"list","opts":{}}`
	item1   = `{"k":"item","at":2000,"id":1,"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns","name":"a","uid":"u-a","resourceVersion":"5"}}}`
	page1   = `{"k":"page","at":2000,"id":1,"resourceVersion":"10","items":1}`
	end1    = `{"k":"end","at":2000,"id":1,"reason":"closed"}`
	watch2  = `{"k":"request","at":3000,"id":2,"verb":"watch","opts":{"resourceVersion":"10","allowWatchBookmarks":true,"timeoutSeconds":300}}`
	event2  = `{"k":"event","at":4000,"id":2,"type":"MODIFIED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns","name":"a","uid":"u-a","resourceVersion":"11"}}}`
	end2    = `{"k":"end","at":5000,"id":2,"reason":"closed"}`
	hourAt  = int64(3 * time.Hour)
	msAt    = int64(time.Millisecond)
	listed1 = list1 + "\n" + item1 + "\n" + page1 + "\n" + end1
)

// malformed are traces every reader of traces must refuse, with the error
// (after the file name) each must give.
var malformed = []struct {
	name, lines, want string
}{
	{"deeply nested JSON", strings.Repeat("[", 100_000), ":2: malformed line: JSON nested more than 10000 levels deep (at byte 10001)"},
	{"deeply nested object", `{"k":"note","at":1,"detail":` + strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000) + "}", ":2: malformed line: JSON nested more than 10000 levels deep (at byte 10028)"},
	{"a header in the middle", listed1 + "\n" + testHeader, ":6: a second header line (the header is line 1 only; are two traces joined together?)"},
	{"a request id reused while open", list1 + "\n" + item1 + "\n" + list1, ":4: request id 1 reused while request 1 (line 2) is still open"},
	{"a request while another is open", list1 + "\n" + watch2, ":3: request 2 starts while request 1 (line 2) is still open: a request ends before the next one starts"},
	{"request ids that do not increase", listed1 + "\n" + strings.Replace(watch2, `"id":2`, `"id":1`, 1), ":6: request id 1 after request 1: request ids increase"},
	{"an audit line without its audit", `{"k":"audit","at":1,"resourceVersion":"5"}`, `:2: audit line without its "audit"`},
	{"a request without an id", `{"k":"request","at":1,"verb":"list"}`, ":2: request line with id 0, want a positive id"},
	{"a request of another verb", strings.Replace(list1, `"list"`, `"delete"`, 1), `:2: request 1 has verb "delete", want list or watch`},
	{"an end for an unknown id", listed1 + "\n" + `{"k":"end","at":3000,"id":9,"reason":"closed"}`, ":6: end line for request 9, which never started"},
	{"an end for an ended request", listed1 + "\n" + end1, ":6: end line for request 1, which is not open"},
	{"an event of another request", listed1 + "\n" + watch2 + "\n" + strings.Replace(event2, `"id":2`, `"id":1`, 1), ":7: event line for request 1 inside request 2 (line 6)"},
	{"at backwards by hours", fmt.Sprintf(`{"k":"note","at":%d}`+"\n"+`{"k":"note","at":%d}`, hourAt, msAt), ":3: at 1000000 is 2h59m59.999s before line 2's at 10800000000000: lines are in the order they were written, so at steps back at most 1m0s"},
	{"a negative at", `{"k":"note","at":-9223372036854775808}`, ":2: at -9223372036854775808 is more than 290 years before the trace's start: lines are in the order they were written, so at steps back at most 1m0s"},
	{"a page count that disagrees with the items", list1 + "\n" + item1 + "\n" + item1 + "\n" + strings.Replace(page1, `"items":1`, `"items":3`, 1), ":5: page line of request 1 says 3 items, but 2 item lines came before it"},
	{"a page without its count", list1 + "\n" + strings.Replace(page1, `,"items":1`, ``, 1), ":3: page line of request 1 without its items count"},
	{"a second page", list1 + "\n" + item1 + "\n" + page1 + "\n" + page1, ":5: a second page line for request 1"},
	{"an item after the page", list1 + "\n" + item1 + "\n" + page1 + "\n" + item1, ":5: item line after the page line of request 1"},
	{"a list closed without its page", list1 + "\n" + item1 + "\n" + end1, ":4: list request 1 ended closed without its page line"},
	{"an item in a watch", listed1 + "\n" + watch2 + "\n" + strings.Replace(item1, `"id":1`, `"id":2`, 1), ":7: item line in watch request 2 (items belong to a list)"},
	{"an event in a list", list1 + "\n" + strings.Replace(event2, `"id":2`, `"id":1`, 1), ":3: event line in list request 1 (events belong to a watch)"},
	{"a large field outside the object", list1 + "\n" + strings.Replace(page1, `"items":1`, `"items":0,"continue":"`+strings.Repeat("c", 100<<10)+`"`, 1), ":3: page line with 100 KiB outside its object, want at most 64 KiB (only an object may be large)"},
	{"a large note", `{"k":"note","at":1,"detail":"` + strings.Repeat("A", 1<<20) + `"}`, ":2: note line with 1024 KiB outside its object, want at most 64 KiB (only an object may be large)"},
	{"a malformed last line that is not cut short", listed1 + "\n" + `{"k":"note","at":9000}}`, ":6: malformed line: invalid character '}' after top-level value"},
}

func TestMalformedTracesAreLineErrors(t *testing.T) {
	for _, tc := range malformed {
		t.Run(tc.name, func(t *testing.T) {
			for _, newline := range []string{"\n", ""} {
				rd, err := trace.NewReader("t.jsonl", strings.NewReader(testHeader+"\n"+tc.lines+newline))
				if err != nil {
					t.Fatal(err)
				}
				for err == nil {
					_, err = rd.Next()
				}
				var le *trace.LineError
				if !errors.As(err, &le) || err.Error() != "t.jsonl"+tc.want {
					t.Fatalf("got %v, want the *LineError t.jsonl%s", err, tc.want)
				}
				if _, again := rd.Next(); again != err {
					t.Errorf("Next after the error: got %v, want the same error again", again)
				}
			}
		})
	}
}

func TestAReplayOfAMalformedTraceEndsWithItsLineError(t *testing.T) {
	for _, tc := range malformed {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "t.jsonl", []byte(testHeader+"\n"+tc.lines+"\n"))
			_, _, err := replayFile(t, path)
			var le *trace.LineError
			if !errors.As(err, &le) || err.Error() != path+tc.want {
				t.Fatalf("got %v, want the *LineError %s%s", err, path, tc.want)
			}
		})
	}
}

func TestSmallStepsBackOfAtAreJitterNotErrors(t *testing.T) {
	// Within MaxAtStepBack of the largest at so far, also before the header's start.
	lines := fmt.Sprintf(`{"k":"note","at":-5000000}`+"\n"+`{"k":"note","at":%d}`+"\n"+`{"k":"note","at":%d}`+"\n"+`{"k":"note","at":%d}`+"\n",
		hourAt, hourAt-5*msAt, hourAt-int64(trace.MaxAtStepBack))
	if err := readAll("t.jsonl", strings.NewReader(testHeader+"\n"+lines)); err != nil {
		t.Fatalf("got %v, want steps back of at most %v read", err, trace.MaxAtStepBack)
	}
	// Read, but said once, naming the line: two lines swapped replay in
	// their new order, and what the replay then decides (a resourceVersion
	// going backwards) points elsewhere (a reviewer found no word of it).
	rd, err := trace.NewReader("t.jsonl", strings.NewReader(testHeader+"\n"+lines))
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = rd.Next()
	}
	want := "t.jsonl:2: at steps back 5ms before the trace's start: its lines may be out of the order they were written"
	if w := rd.Warnings(); len(w) != 1 || !strings.HasPrefix(w[0], want) {
		t.Errorf("warnings %q, want one beginning %q", w, want)
	}
}

func TestWarningsAreCapped(t *testing.T) {
	// Unknown kinds (one of them 1 MiB long) are skipped with a warning each; a reader keeps 100.
	long := `{"k":"` + strings.Repeat("x", 1<<20) + `","at":1}` + "\n"
	in := chunks([]byte(testHeader+"\n"), 1, []byte(long), 1, []byte(`{"k":"future","at":1}`+"\n"), 1000)
	rd, err := trace.NewReader("t.jsonl", in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("Next: got %v, want io.EOF", err)
	}
	w := rd.Warnings()
	if len(w) != 101 || w[100] != "t.jsonl: 901 more warnings" {
		t.Fatalf("warnings: got %d, last %q; want 101 ending with the count of the rest", len(w), w[len(w)-1])
	}
	if want := `t.jsonl:2: skipped a line of unknown kind "` + strings.Repeat("x", 64) + `…" (written by a newer version?)`; w[0] != want {
		t.Errorf("first warning: got %.200q, want %q", w[0], want)
	}
}

func TestALegitimateTraceStillReplays(t *testing.T) {
	// Every ordering rule at once: a list, a watch with a note between its events, and a trace that ends inside the watch.
	lines := listed1 + "\n" + `{"k":"note","at":2500,"state":"Watching","reason":"list-complete","detail":"list complete: 1 objects at resourceVersion 10"}` + "\n" +
		watch2 + "\n" + event2 + "\n" + end2 + "\n" +
		strings.NewReplacer(`"id":2`, `"id":4`, `"at":3000`, `"at":6000`).Replace(watch2) + "\n" +
		strings.NewReplacer(`"id":2`, `"id":4`, `"at":4000`, `"at":7000`).Replace(event2) + "\n"
	path := writeFile(t, "t.jsonl", []byte(testHeader+"\n"+lines))
	rp, sum, err := replayFile(t, path)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if sum.Counters.Modified != 2 || sum.Counters.Watches < 2 || len(rp.Warnings()) != 0 {
		t.Errorf("got counters %+v, warnings %v", sum.Counters, rp.Warnings())
	}
}

// A header that lists no resources (the session refuses it; Replay is
// public) is refused by Run, which would otherwise wait for resources that
// never stop.
func TestAReplayOfAHeaderWithNoResourcesIsRefusedNotWaitedOn(t *testing.T) {
	rd := readerOf(t, `{"k":"header","v":2,"startedAt":"2026-01-01T00:00:00Z","resources":[]}`+"\n")
	errc := make(chan error, 1)
	go func() { errc <- trace.NewReplay(rd, 0).Run(context.Background()) }()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "lists no resources") {
			t.Errorf("got %v, want the header refused", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run of a header with no resources did not return")
	}
}
