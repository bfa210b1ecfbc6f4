package findings

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

func TestGaveUpSaysHowLongAndTheLastError(t *testing.T) {
	f := newFeed(t, Options{})
	f.decide(reflector.Decision{State: reflector.StateStopped, Reason: reflector.ReasonGaveUp, Wait: 30 * time.Second, Cause: "connection refused"})
	got, ok := f.e.Get(GaveUp)
	if !ok || got.Severity != Error || got.Title != "gave up after 30s without progress" || !strings.HasSuffix(got.Evidence.Text, "the last error: connection refused") {
		t.Fatalf("want gave-up after 30s with the last error: %v %+v", ok, got)
	}
}
