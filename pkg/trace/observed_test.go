package trace

import (
	"errors"
	"io"
	"strings"
	"testing"
)

const observedHeader = `{"k":"header","v":2,"observed":true,"resources":[]}`
const cmResource = `{"k":"resource","r":%d,"resource":{"resource":{"version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true}},"client":{"userAgent":"x"}}`

func readAll(t *testing.T, trace string) (*Reader, error) {
	t.Helper()
	rd, err := NewReader("t.jsonl", strings.NewReader(trace))
	if err != nil {
		return nil, err
	}
	for {
		if _, err := rd.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return rd, nil
			}
			return rd, err
		}
	}
}

func TestAnObservedTraceGrowsItsResourcesAsItGoes(t *testing.T) {
	lines := []string{observedHeader,
		strings.Replace(cmResource, "%d", "0", 1),
		`{"k":"request","r":0,"id":1,"verb":"list"}`,
		strings.Replace(cmResource, "%d", "1", 1),
		`{"k":"request","r":1,"id":1,"verb":"watch"}`,
		`{"k":"page","r":0,"id":1,"resourceVersion":"5","items":0}`,
		`{"k":"end","r":0,"id":1,"reason":"closed"}`,
	}
	rd, err := readAll(t, strings.Join(lines, "\n")+"\n")
	if err != nil {
		t.Fatal(err)
	}
	if h := rd.Header(); !h.Observed || len(h.Resources) != 2 || h.Resources[1].Resource.GVR.Resource != "configmaps" {
		t.Fatalf("header %+v", h)
	}
}

func TestResourceLinesAreChecked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"not observed", []string{`{"k":"header","v":2,"resources":[{"resource":{"version":"v1","resource":"pods"}}]}`, strings.Replace(cmResource, "%d", "1", 1)},
			"t.jsonl:2: resource line in a trace that is not observed (its header has no observed: true)"},
		{"skips an index", []string{observedHeader, strings.Replace(cmResource, "%d", "1", 1)},
			"t.jsonl:2: resource line for resource 1, want the next one, 0"},
		{"no resource", []string{observedHeader, `{"k":"resource","r":0}`}, "t.jsonl:2: resource line without its resource"},
		{"a line before its resource", []string{observedHeader, `{"k":"request","r":0,"id":1,"verb":"list"}`},
			"t.jsonl:2: request line for resource 0, but the header lists 0"},
		{"still one request at a time", []string{observedHeader, strings.Replace(cmResource, "%d", "0", 1),
			`{"k":"request","r":0,"id":1,"verb":"list"}`, `{"k":"request","r":0,"id":2,"verb":"watch"}`},
			"t.jsonl:4: request 2 starts while request 1 (line 3) is still open"},
		{"a negative stream id", []string{observedHeader, strings.Replace(strings.Replace(cmResource, "%d", "0", 1), `"r":0`, `"r":0,"id":-1`, 1)},
			"t.jsonl:2: resource line with stream id -1, want a positive one (or none)"},
		{"a stream id twice", []string{observedHeader, strings.Replace(strings.Replace(cmResource, "%d", "0", 1), `"r":0`, `"r":0,"id":4`, 1),
			strings.Replace(strings.Replace(cmResource, "%d", "1", 1), `"r":1`, `"r":1,"id":4`, 1)},
			"t.jsonl:3: resource line with stream id 4, which resource 0 has"},
	} {
		_, err := readAll(t, strings.Join(tc.lines, "\n")+"\n")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// An observed trace's replay (Feed) says it read the trace to its end, and
// keeps the error a line fed gave, as a reflector trace's replay does.
func TestAFedReplayReadsToTheEndAndKeepsItsError(t *testing.T) {
	trace := observedHeader + "\n" + strings.Replace(cmResource, "%d", "0", 1) + "\n" + `{"k":"request","r":0,"id":1,"verb":"list"}` + "\n"
	for _, fail := range []bool{false, true} {
		rd, err := NewReader("t.jsonl", strings.NewReader(trace))
		if err != nil {
			t.Fatal(err)
		}
		rp := NewReplay(rd, 0)
		bad := errors.New("bad line")
		rp.Feed(func(l *Line) error {
			if fail && l.K == KindRequest {
				return bad
			}
			return nil
		})
		runErr := rp.Run(t.Context())
		if fail && (!errors.Is(runErr, bad) || !errors.Is(rp.Err(), bad) || rp.ReadToEnd()) {
			t.Errorf("a fed line failed: Run %v, Err %v, ReadToEnd %v; want the error twice, not read to the end", runErr, rp.Err(), rp.ReadToEnd())
		}
		if !fail && (runErr != nil || rp.Err() != nil || !rp.ReadToEnd()) {
			t.Errorf("Run %v, Err %v, ReadToEnd %v; want read to the end without an error", runErr, rp.Err(), rp.ReadToEnd())
		}
	}
}

// A proxy's trace cut before a stream's stopped note (the proxy killed, the
// file cut) says so, as a reflector's does; whole, it does not.
func TestAnObservedTraceCutBeforeAStreamsStopIsSaidCut(t *testing.T) {
	head := observedHeader + "\n" + strings.Replace(cmResource, "%d", "0", 1) + "\n" + `{"k":"request","r":0,"id":1,"verb":"watch"}` + "\n"
	for _, tc := range []struct {
		trace string
		cut   bool
	}{
		{head, true},
		{head + `{"k":"end","r":0,"id":1,"reason":"stopped"}` + "\n" + `{"k":"note","r":0,"reason":"stopped","state":"Stopped"}` + "\n", false},
	} {
		rd, err := NewReader("t.jsonl", strings.NewReader(tc.trace))
		if err != nil {
			t.Fatal(err)
		}
		rp := NewReplay(rd, 0)
		rp.Feed(func(*Line) error { return nil })
		if err := rp.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := rp.RecordingCut(); got != tc.cut {
			t.Errorf("RecordingCut: got %v, want %v, of\n%s", got, tc.cut, tc.trace)
		}
	}
}
