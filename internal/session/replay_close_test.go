package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openTraces is how many bundled traces this process has open: only those,
// as the runtime and the test's cluster open and close other files at any time.
func openTraces(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.Contains(target, "/testdata/traces/") {
			n++
		}
	}
	return n
}

// A replay the session opened by path closes its trace when it has run:
// the dashboard's rewinds start a new session each time, and none may keep
// the last one's file open.
func TestAReplayClosesTheTraceItOpened(t *testing.T) {
	paths, err := filepath.Glob("../../testdata/traces/*.jsonl*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no bundled traces: %v", err)
	}
	before := openTraces(t)
	for _, path := range paths {
		for i := 0; i < 3; i++ {
			s, err := NewReplay(path, 0)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			_ = s.Run(context.Background()) // a trace that ends early is still read through
		}
	}
	if after := openTraces(t); after != before {
		t.Errorf("%d traces open after %d replays, %d before", after, 3*len(paths), before)
	}
}

// A replay says, as soon as it has read the whole trace, whether the
// recording was cut before its run recorded its stop (the dashboard's badge
// says it then): the bundled demo is whole, its first 60,000 bytes are not;
// a run that failed (403) recorded its end, which is no cut either.
func TestAReplaySaysItsRecordingWasCutOnceItReadItAll(t *testing.T) {
	whole := "../../testdata/traces/demo.jsonl"
	b, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(cut, b[:60000], 0o600); err != nil {
		t.Fatal(err)
	}
	failed := "../../pkg/trace/testdata/failed/two-forbidden.jsonl"
	for path, want := range map[string]bool{whole: false, cut: true, failed: false} {
		s, err := NewReplay(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		if s.Replay.RecordingCut() {
			t.Errorf("%s: cut before it was read", path)
		}
		_ = s.Run(context.Background())
		if got := s.Replay.RecordingCut(); got != want {
			t.Errorf("%s: RecordingCut = %v, want %v", path, got, want)
		}
		s.Replay.Differences(0)
		if got := s.Replay.EndedEarly(); got != want {
			t.Errorf("%s: EndedEarly = %v, want %v", path, got, want)
		}
	}
}
