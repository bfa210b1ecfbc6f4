package session

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// A trace of our reflectors must name its resources in the header (they are
// made from it); an observed trace's come later, in resource lines, so its
// header may name none. The reader takes both; the replay tells them apart.
func TestAReplayRefusesAHeaderWithoutResourcesUnlessObserved(t *testing.T) {
	for _, tc := range []struct {
		header, want string
	}{
		{`{"k":"header","v":2,"resources":[]}`, "t.jsonl:1: bad header: it lists no resources"},
		{`{"k":"header","v":2}`, "t.jsonl:1: bad header: it lists no resources"},
		{`{"k":"header","v":1,"startedAt":"2026-01-01T00:00:00Z"}`, `t.jsonl:1: bad header: resource 0 names no resource (its "resource" has no "resource")`},
		{`{"k":"header","v":2,"resources":[{"resource":{"group":"apps"}}]}`, `t.jsonl:1: bad header: resource 0 names no resource (its "resource" has no "resource")`},
		{`{"k":"header","v":2,"resources":[],"observed":true}`, ""},
	} {
		rd, err := trace.NewReader("t.jsonl", strings.NewReader(tc.header+"\n"))
		if err != nil {
			t.Fatalf("%s: the reader refused it: %v", tc.header, err)
		}
		s, err := NewReplayOf(rd, 0)
		switch {
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: got %v, want %q", tc.header, err, tc.want)
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want a replay of no streams", tc.header, err)
		case tc.want == "":
			if err := s.Run(context.Background()); err != nil || len(s.Subjects()) != 0 {
				t.Errorf("%s: ran with %v and %d subjects, want none", tc.header, err, len(s.Subjects()))
			}
		}
	}
}

// A resource says whether its MODIFIED events are diffed (the churn pane
// says why it is empty from it): in a replay --diff only where the trace
// kept whole objects, never without --diff.
func TestAReplaysResourceSaysWhetherItDiffs(t *testing.T) {
	const header = `{"k":"header","v":2,"resources":[{"resource":{"version":"v1","resource":"configmaps","kind":"ConfigMap"},"objects":"full"},` +
		`{"resource":{"version":"v1","resource":"pods","kind":"Pod"},"objects":"metadata"}]}`
	for _, d := range []*DiffOptions{nil, {MaxObjects: 10}} {
		rd, err := trace.NewReader("t.jsonl", strings.NewReader(header+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		s, err := newReplayOf(rd, 0, d)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := [2]bool{s.Resources[0].Diffs(), s.Resources[1].Diffs()}, [2]bool{d != nil, false}; got != want {
			t.Errorf("--diff %v: full and metadata objects diff %v, want %v", d != nil, got, want)
		}
	}
}
