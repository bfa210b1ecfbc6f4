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
	w.Observe(at(0), time.Time{}, reflector.Counters{Added: 100, Modified: 5}) // from zero: the dashboard starts with the run
	w.Observe(at(300*time.Millisecond), time.Time{}, reflector.Counters{Added: 103, Modified: 5})
	w.Observe(at(900*time.Millisecond), time.Time{}, reflector.Counters{Added: 104, Modified: 5})
	w.Observe(at(2*time.Second), time.Time{}, reflector.Counters{Added: 104, Modified: 9}) // a second went by unseen
	added, modified := w.Series(0), w.Series(1)
	if got := added[len(added)-3:]; !slices.Equal(got, []int64{104, 0, 0}) {
		t.Errorf("ADDED last 3 seconds = %v, want [104 0 0]", got)
	}
	if got := modified[len(modified)-3:]; !slices.Equal(got, []int64{5, 2, 2}) {
		t.Errorf("MODIFIED last 3 seconds = %v, want [5 2 2]: the 4 of the last look spread over the 2 seconds since the one before", got)
	}
	if got := w.Total(0); got != 104 {
		t.Errorf("ADDED over the minute = %d, want 104", got)
	}
	if got := w.PerSecond(1); got != 2 {
		t.Errorf("MODIFIED last complete second = %d, want 2", got)
	}
}

// A replay at --speed 0 can end before the dashboard's first look, and one
// look can span minutes of the trace's clock: the events still show, in the
// seconds they fell in, not as a minute of zeros.
func TestRateWindowSpreadsALookThatSpansManySeconds(t *testing.T) {
	var w Window
	// The first look, after the whole trace, which began 7 seconds before.
	w.Observe(at(10*time.Minute), at(10*time.Minute-7*time.Second), reflector.Counters{Modified: 7})
	if got := w.Series(1)[Seconds-8:]; !slices.Equal(got, []int64{0, 1, 1, 1, 1, 1, 1, 1}) {
		t.Errorf("7 events counted from 7 seconds before the first look read %v, want one a second", got)
	}
	w.Observe(at(20*time.Minute), time.Time{}, reflector.Counters{Modified: 7 + 6000}) // 10 a second for 10 minutes
	if got := w.Total(1); got != 600 {
		t.Errorf("MODIFIED over the last minute = %d, want 600 (10 a second)", got)
	}
	if got := w.PerSecond(1); got != 10 {
		t.Errorf("MODIFIED last complete second = %d, want 10", got)
	}
	w.Observe(at(20*time.Minute+3*time.Second), time.Time{}, reflector.Counters{Modified: 6007 + 5}) // 5 over 3 seconds: 1, 2, 2
	if got := w.Series(1)[Seconds-3:]; !slices.Equal(got, []int64{1, 2, 2}) {
		t.Errorf("5 events over 3 seconds read %v, want [1 2 2]", got)
	}
}

// Fewer events than seconds: a replay at --speed 0 whose one look spans
// 113 seconds holding 56 deletes. They are spaced across the whole span, so
// the last minute holds its share of them (about 60/113), not all 56.
func TestRateWindowSpacesFewerEventsThanSeconds(t *testing.T) {
	var w Window
	end := at(10 * time.Minute)
	w.Observe(end, end.Add(-113*time.Second), reflector.Counters{Deleted: 56})
	if got := w.Total(2); got < 29 || got > 30 {
		t.Errorf("DELETED over the last minute = %d, want 29 or 30 (56 spread over 113 seconds)", got)
	}
	for k, v := range w.Series(2) {
		if v > 1 {
			t.Errorf("second %d holds %d deletes, want at most 1: 56 over 113 seconds", k, v)
		}
	}
}

func TestRateWindowForgetsWhatIsOlderThanAMinute(t *testing.T) {
	var w Window
	w.Observe(at(0), time.Time{}, reflector.Counters{})
	w.Observe(at(time.Second), time.Time{}, reflector.Counters{Deleted: 7})
	if got := w.Total(2); got != 7 {
		t.Fatalf("DELETED total = %d, want 7", got)
	}
	w.Observe(at(60*time.Second), time.Time{}, reflector.Counters{Deleted: 7})
	if got := w.Total(2); got != 7 {
		t.Errorf("59s later DELETED total = %d, want 7 (still inside the window)", got)
	}
	w.Observe(at(61*time.Second), time.Time{}, reflector.Counters{Deleted: 7})
	if got := w.Total(2); got != 0 {
		t.Errorf("60s later DELETED total = %d, want 0", got)
	}
}

func TestRateWindowTreatsACounterResetAsNewEvents(t *testing.T) {
	var w Window
	w.Observe(at(0), time.Time{}, reflector.Counters{Bookmarks: 50})
	w.Observe(at(time.Second), time.Time{}, reflector.Counters{Bookmarks: 2})
	if got := w.Total(3); got != 52 {
		t.Errorf("BOOKMARK total = %d, want 52 (50, then 2 from a new reflector)", got)
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
