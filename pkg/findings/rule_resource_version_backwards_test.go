package findings

import (
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

func TestRVBackwardsCountsEachTimeWithTheCursor(t *testing.T) {
	f := newFeed(t, Options{})
	for _, rv := range []string{"8", "9"} {
		f.id++
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonRVBackwards, ResourceVersion: rv, Cursor: "10"})
	}
	got, ok := f.e.Get(RVBackwards)
	if !ok || got.Count != 2 || got.Severity != Error || got.Evidence.Facts["resourceVersion"] != "9" || got.Evidence.Facts["cursor"] != "10" || len(got.Evidence.Requests) != 2 {
		t.Fatalf("want resource-version-backwards twice, the last at 9 behind 10: %v %+v", ok, got)
	}
}
