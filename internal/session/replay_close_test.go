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
