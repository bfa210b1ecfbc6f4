package report

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// bundledTraces are the recorded traces and the hand-written ones.
func bundledTraces(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, glob := range []string{"../../testdata/traces/*.jsonl", "../../pkg/trace/testdata/handwritten/*.jsonl"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) < 10 {
		t.Fatalf("found %d bundled traces, want at least 10", len(paths))
	}
	return paths
}

func analyzeFile(t testing.TB, path string, opts Options) *Report {
	t.Helper()
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rep, err := Analyze(rd, opts)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rep
}

func replaySummary(t testing.TB, path string) summary.Summary {
	t.Helper()
	sess, err := session.NewReplay(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Run(context.Background()); err != nil {
		t.Fatalf("replay of %s: %v", path, err)
	}
	return sess.Summary()
}

func TestTheCountersAreTheReplaysSummaryCounters(t *testing.T) {
	for _, path := range bundledTraces(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rep := analyzeFile(t, path, Options{})
			want := replaySummary(t, path)
			res := rep.Resources[0]
			got := res.Counters
			if !res.BackoffsKnown {
				got.Backoffs = want.Counters.Backoffs // a trace without decisions does not say
			}
			if got != want.Counters {
				t.Errorf("counters:\n got %+v\nwant %+v", got, want.Counters)
			}
			if res.Objects != want.Objects || res.ResourceVersion != want.ResourceVersion || res.BookmarkRV != want.Bookmark.ResourceVersion {
				t.Errorf("end: got %d objects at %q, bookmark %q; want %d at %q, bookmark %q",
					res.Objects, res.ResourceVersion, res.BookmarkRV, want.Objects, want.ResourceVersion, want.Bookmark.ResourceVersion)
			}
		})
	}
}
