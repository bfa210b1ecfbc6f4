package program

import (
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// A status goes 10 s after it was made on the run's clock, or on the wall
// clock: a replay's clock stands still while it is paused and once it has
// ended, and the footer must not keep an action's report for ever.
func TestAStatusGoesAfterItsTimeOnTheRunsClockOrTheWallClock(t *testing.T) {
	at := time.Date(2026, 12, 6, 3, 43, 16, 0, time.UTC)
	s := NewStatus("stepping to the next request or decision, then paused", common.SevNone, at)
	s.Expire(at.Add(statusFor))
	if s.Text == "" {
		t.Fatal("a status made just now went at once")
	}
	s.Expire(at.Add(statusFor + time.Second))
	if s.Text != "" {
		t.Errorf("a status %s old on the run's clock stayed", statusFor+time.Second)
	}

	s = NewStatus("replay resumed at ×1", common.SevNone, at)
	s.made = time.Now().Add(-statusFor - time.Second) // made 11 s ago on the wall clock
	s.Expire(at)                                      // the replay's clock has not moved
	if s.Text != "" {
		t.Errorf("a status %s old on the wall clock stayed while the replay's clock stood still", statusFor+time.Second)
	}
}
