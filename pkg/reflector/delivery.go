package reflector

import (
	"math"
	"time"
)

// Delivery is what is known of how late a watch event arrived: the passive
// estimate of docs/design.md, "Delivery latency". A Source fills it for
// ADDED, MODIFIED and DELETED events whose object carries a write time.
type Delivery struct {
	// Written is the object's latest write time known from its metadata,
	// on the server's clock: the newest of managedFields[].time,
	// deletionTimestamp and creationTimestamp (all to the second). Zero
	// when the object has none (or a trace did not record it).
	Written time.Time
	// Lag is the event's arrival minus Written, corrected for the
	// server's clock by the watch response's Date header. Its precision is
	// about ±2 s (the three times are to the second); it means something
	// only when Written is set.
	Lag time.Duration
}

// Known reports whether the event carries a write time (and so a Lag).
func (d Delivery) Known() bool { return !d.Written.IsZero() }

// LagBucketCount is the number of buckets of LagCounts.
const LagBucketCount = 5

// LagCounts counts the events of each lag bucket: <2s, 2-5s, 5-15s,
// 15-60s and >60s (the summary's `delivery.lag`). The estimate's precision
// (±2 s) allows no finer ones.
type LagCounts [LagBucketCount]int64

// LagBucketOf is the index of d's bucket in LagCounts.
func LagBucketOf(d time.Duration) int {
	switch {
	case d < 2*time.Second:
		return 0
	case d < 5*time.Second:
		return 1
	case d < 15*time.Second:
		return 2
	case d < 60*time.Second:
		return 3
	}
	return 4
}

// LagBucketName is bucket i's name in the summary: "<2s", "2-5s", "5-15s",
// "15-60s", ">60s".
func LagBucketName(i int) string {
	if names := [...]string{"<2s", "2-5s", "5-15s", "15-60s", ">60s"}; i >= 0 && i < len(names) {
		return names[i]
	}
	return ""
}

// LagBucketUpper is bucket i's upper bound in seconds (+Inf for >60s).
func LagBucketUpper(i int) float64 {
	switch i {
	case 0:
		return 2
	case 1:
		return 5
	case 2:
		return 15
	case 3:
		return 60
	}
	return math.Inf(1)
}

// Total is the number of events counted.
func (c LagCounts) Total() int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// QuantileBucket is the index of the bucket that holds the q quantile
// (0 < q ≤ 1) of the counted lags, -1 when none was counted.
func (c LagCounts) QuantileBucket(q float64) int {
	total := c.Total()
	if total == 0 {
		return -1
	}
	rank := int64(math.Ceil(q * float64(total)))
	var seen int64
	for i, v := range c {
		seen += v
		if seen >= rank {
			return i
		}
	}
	return LagBucketCount - 1
}

// P99Bucket is the bucket that holds the 99th percentile, -1 when none
// was counted: a findings rule reads it (over 15 s is bucket 3 or 4).
func (c LagCounts) P99Bucket() int { return c.QuantileBucket(0.99) }

// P99Seconds is the upper bound of the 99th percentile's bucket in seconds
// ("the p99 is under this"), +Inf when it is >60s, 0 when none was counted:
// the measure `lag-p99` of --fail-on.
func (c LagCounts) P99Seconds() float64 {
	b := c.P99Bucket()
	if b < 0 {
		return 0
	}
	return LagBucketUpper(b)
}

// LagStats is the passive estimate of a Ledger: the buckets of the events
// applied past their list whose object carried a write time, and the sum
// of their lags (for a histogram's _sum), a negative one counted as 0.
type LagStats struct {
	Counts LagCounts
	Sum    time.Duration
}

// add counts one lag. A lag below 0 is the estimate's error (the write
// times and the server's Date are to the second): it is 0 in the sum,
// which a histogram's mean (sum / count) reads, as it is in the first
// bucket.
func (s *LagStats) add(d time.Duration) {
	s.Counts[LagBucketOf(d)]++
	s.Sum += max(d, 0)
}
