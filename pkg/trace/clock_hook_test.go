package trace

import (
	"testing"
	"time"
)

func TestClockAdvanceHooksRunOnlyWhenTheClockMovesForward(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newVirtualClock(t0)
	p := &Replay{clock: c}
	var seen []time.Duration
	p.OnClockAdvance(func(now time.Time) {
		if got := c.Now(); !got.Equal(now) {
			t.Errorf("hook at %s while Now is %s", now, got)
		}
		seen = append(seen, now.Sub(t0))
	})
	for _, d := range []time.Duration{time.Second, time.Second, 500 * time.Millisecond, 3 * time.Second} {
		c.advanceTo(t0.Add(d))
	}
	if len(seen) != 2 || seen[0] != time.Second || seen[1] != 3*time.Second {
		t.Errorf("hook calls: got %v, want [1s 3s]", seen)
	}
}
