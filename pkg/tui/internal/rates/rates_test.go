package rates

import (
	"slices"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// t0 is the tests' time origin; at(d) is d after it.
var t0 = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func TestRateWindowTurnsCounterDeltasIntoPerSecondCounts(t *testing.T) {
	var w Window
	w.Observe(at(0), reflector.Counters{Added: 100, Modified: 5}) // baseline, not an event burst
	w.Observe(at(300*time.Millisecond), reflector.Counters{Added: 103, Modified: 5})
	w.Observe(at(900*time.Millisecond), reflector.Counters{Added: 104, Modified: 5})
	w.Observe(at(2*time.Second), reflector.Counters{Added: 104, Modified: 9})
	added, modified := w.Series(0), w.Series(1)
	if got := added[len(added)-3:]; !slices.Equal(got, []int64{4, 0, 0}) {
		t.Errorf("ADDED last 3 seconds = %v, want [4 0 0]", got)
	}
	if got := modified[len(modified)-1]; got != 4 {
		t.Errorf("MODIFIED this second = %d, want 4", got)
	}
	if got := w.Total(0); got != 4 {
		t.Errorf("ADDED over the minute = %d, want 4 (the baseline is not counted)", got)
	}
	if got := w.PerSecond(1); got != 0 {
		t.Errorf("MODIFIED last complete second = %d, want 0", got)
	}
}

func TestRateWindowForgetsWhatIsOlderThanAMinute(t *testing.T) {
	var w Window
	w.Observe(at(0), reflector.Counters{})
	w.Observe(at(time.Second), reflector.Counters{Deleted: 7})
	if got := w.Total(2); got != 7 {
		t.Fatalf("DELETED total = %d, want 7", got)
	}
	w.Observe(at(60*time.Second), reflector.Counters{Deleted: 7})
	if got := w.Total(2); got != 7 {
		t.Errorf("59s later DELETED total = %d, want 7 (still inside the window)", got)
	}
	w.Observe(at(61*time.Second), reflector.Counters{Deleted: 7})
	if got := w.Total(2); got != 0 {
		t.Errorf("60s later DELETED total = %d, want 0", got)
	}
}

func TestRateWindowTreatsACounterResetAsNewEvents(t *testing.T) {
	var w Window
	w.Observe(at(0), reflector.Counters{Bookmarks: 50})
	w.Observe(at(time.Second), reflector.Counters{Bookmarks: 2})
	if got := w.Total(3); got != 2 {
		t.Errorf("BOOKMARK total = %d, want 2", got)
	}
}

func TestSparkline(t *testing.T) {
	tests := []struct {
		name   string
		values []int64
		width  int
		want   string
	}{
		{"flat zero is the baseline", []int64{0, 0, 0}, 3, "▁▁▁"},
		{"scaled to the peak", []int64{0, 1, 2, 4, 8}, 5, "▁▂▃▅█"},
		{"any event shows above the baseline", []int64{1, 1000}, 2, "▂█"},
		{"summed into fewer columns", []int64{1, 1, 0, 0, 2, 0}, 3, "█▁█"},
		{"no room", []int64{1}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sparkline(tt.values, tt.width); got != tt.want {
				t.Errorf("sparkline(%v, %d) = %q, want %q", tt.values, tt.width, got, tt.want)
			}
		})
	}
}
