package summary

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// A resource run without a findings engine (nil findings) says "findings":
// [] as one whose engine raised none does: the contract (docs/design.md,
// "Summary") is a list, never null.
func TestFindingsAreAListWhenNoneWereRaised(t *testing.T) {
	st, _ := store.New()
	var b strings.Builder
	if err := New(reflector.Resource{}, reflector.Stats{}, st, nil, time.Now()).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"findings":[]`) {
		t.Errorf("got %s, want \"findings\":[]", b.String())
	}
}
