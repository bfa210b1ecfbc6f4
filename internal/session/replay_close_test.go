package session

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// openFiles is how many files this process has open.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// A replay the session opened by path closes its trace when it has run:
// the dashboard's rewinds start a new session each time, and none may keep
// the last one's file open.
func TestAReplayClosesTheTraceItOpened(t *testing.T) {
	paths, err := filepath.Glob("../../testdata/traces/*.jsonl*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no bundled traces: %v", err)
	}
	before := openFiles(t)
	for _, path := range paths {
		for i := 0; i < 3; i++ {
			s, err := NewReplay(path, 0)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			_ = s.Run(context.Background()) // a trace that ends early is still read through
		}
	}
	if after := openFiles(t); after != before {
		t.Errorf("%d files open after %d replays, %d before", after, 3*len(paths), before)
	}
}
