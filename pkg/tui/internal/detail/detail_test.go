package detail

import (
	"slices"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
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
