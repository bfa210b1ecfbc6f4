package reflector

import (
	"math"
	"testing"
	"time"
)

func lagged(e WatchEvent, lag time.Duration) WatchEvent {
	e.Delivery = Delivery{Written: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Lag: lag}
	return e
}

func TestTheLedgerBucketsTheLagOfAppliedEventsOnly(t *testing.T) {
	// A streaming list's initial events are list items: not counted; nor an
	// event without a write time, nor a bookmark.
	h := runFake(t, Config{Strategy: StrategyStream},
		call{verb: VerbWatch, events: []WatchEvent{
			lagged(ev(EventAdded, obj("old", "u-o", "5")), time.Hour),
			bookmark("10", true),
			lagged(ev(EventModified, obj("old", "u-o", "11")), 300*time.Millisecond),
			lagged(ev(EventAdded, obj("a", "u-a", "12")), 1999*time.Millisecond),
			lagged(ev(EventAdded, obj("b", "u-b", "13")), 2*time.Second),
			lagged(ev(EventModified, obj("b", "u-b", "14")), 4*time.Second),
			lagged(ev(EventModified, obj("b", "u-b", "15")), 14*time.Second),
			lagged(ev(EventDeleted, obj("b", "u-b", "16")), 59*time.Second),
			lagged(ev(EventAdded, obj("c", "u-c", "17")), 61*time.Second),
			ev(EventModified, obj("c", "u-c", "18")),
			// The estimate's error below 0: the first bucket, 0 in the sum
			// (a histogram's sum of -8.9 s made its mean lag negative).
			lagged(ev(EventAdded, obj("d", "u-d", "19")), -800*time.Millisecond),
			bookmark("20", false),
		}},
	)
	got := h.r.Stats().Lag
	if want := (LagCounts{3, 2, 1, 1, 1}); got.Counts != want {
		t.Errorf("buckets %v, want %v", got.Counts, want)
	}
	if want := 300*time.Millisecond + 1999*time.Millisecond + 2*time.Second + 4*time.Second + 14*time.Second + 59*time.Second + 61*time.Second; got.Sum != want {
		t.Errorf("sum %v, want %v", got.Sum, want)
	}
	if h.r.ledger.Lag() != got {
		t.Error("Ledger.Lag differs from Stats().Lag")
	}
}

func TestLagCountsQuantiles(t *testing.T) {
	var c LagCounts
	if c.P99Bucket() != -1 || c.P99Seconds() != 0 {
		t.Errorf("empty: bucket %d, %v s", c.P99Bucket(), c.P99Seconds())
	}
	c = LagCounts{99, 1, 0, 0, 0}
	if c.P99Bucket() != 0 || c.P99Seconds() != 2 {
		t.Errorf("99 under 2 s, 1 under 5 s: bucket %d, %v s, want the first (2 s)", c.P99Bucket(), c.P99Seconds())
	}
	c = LagCounts{98, 0, 0, 1, 1}
	if c.P99Bucket() != 3 || c.P99Seconds() != 60 {
		t.Errorf("bucket %d, %v s, want 15-60s", c.P99Bucket(), c.P99Seconds())
	}
	c = LagCounts{0, 0, 0, 0, 3}
	if !math.IsInf(c.P99Seconds(), 1) || LagBucketName(c.P99Bucket()) != ">60s" {
		t.Errorf("all over a minute: %v s, %s", c.P99Seconds(), LagBucketName(c.P99Bucket()))
	}
	for i, want := range []string{"<2s", "2-5s", "5-15s", "15-60s", ">60s"} {
		if LagBucketName(i) != want {
			t.Errorf("bucket %d named %q, want %q", i, LagBucketName(i), want)
		}
	}
}
