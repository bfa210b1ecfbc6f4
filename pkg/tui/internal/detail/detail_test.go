package detail

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// A resource without a generation (a Secret, a ConfigMap) shows none, not 0.
func TestObjectFactsShowAGenerationOnlyWhereTheObjectHasOne(t *testing.T) {
	for gen, want := range map[int64]string{0: "  generation   -", 3: "  generation   3"} {
		o := &store.Object{UID: "u1", ResourceVersion: "7", Generation: gen}
		if got := ObjectFacts(o); !slices.Contains(got, want) {
			t.Errorf("generation %d: facts %q, want the line %q", gen, got, want)
		}
	}
}

// A running request has not ended; one a forced relist cut says its cause,
// not an error; one that ended in an error says so.
func TestARequestsDetailSaysHowItEndedAndWhy(t *testing.T) {
	now := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
	lines := func(end *reflector.RequestEnd) string {
		r := &reflector.RequestInfo{ID: 3, Verb: reflector.VerbWatch, Started: now.Add(-time.Minute), End: end}
		return strings.Join(Request(r, now), "\n")
	}
	if got := lines(nil); strings.Contains(got, "ended") {
		t.Errorf("a running request:\n%s", got)
	}
	if got := lines(&reflector.RequestEnd{Reason: reflector.EndCanceled, Err: reflector.ErrForcedRelist}); !strings.Contains(got, "cause        forced relist") || strings.Contains(got, "error") {
		t.Errorf("a watch a forced relist cut:\n%s", got)
	}
	if got := lines(&reflector.RequestEnd{Reason: reflector.EndError, Err: errors.New("unexpected EOF")}); !strings.Contains(got, "error        unexpected EOF") {
		t.Errorf("a watch that failed:\n%s", got)
	}
}

// A version with more changed paths than the detail lists shows the first
// maxVersionPaths, then how many more: none after.
func TestAVersionListsItsFirstPathsThenHowManyMore(t *testing.T) {
	ch := &diff.Changes{}
	for i := range maxVersionPaths + 5 {
		ch.Paths = append(ch.Paths, diff.Change{Path: fmt.Sprintf(".data.k%02d", i), Op: diff.Changed})
	}
	got := ChangeLines(common.Styles{}, ch, false)
	if len(got) != maxVersionPaths+1 || !strings.Contains(got[maxVersionPaths-1], fmt.Sprintf(".data.k%02d", maxVersionPaths-1)) ||
		got[maxVersionPaths] != "… and 5 more paths (--no-tui --diff lists them all)" {
		t.Errorf("%d lines, the last two %q; want %d paths, then that 5 more are not listed", len(got), got[max(len(got)-2, 0):], maxVersionPaths)
	}
}
