package metrics_test

import (
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
)

func TestTheLagHistogramHasTheEstimatesBucketsAndTheProbeItsSamples(t *testing.T) {
	m := metrics.New(false)
	m.SetProbe(func() (bool, []time.Duration) {
		return true, []time.Duration{3 * time.Millisecond, 40 * time.Millisecond, 2 * time.Second}
	})
	// One event under 2 s, one 2-5 s, one 15-60 s; one without a recorded lag.
	replayWithMetrics(t, m, "../../pkg/trace/testdata/handwritten/delivery.jsonl")
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, mf := range mfs {
		switch mf.GetName() {
		case "watchcache_event_lag_seconds":
			found++
			h := mf.GetMetric()[0].GetHistogram()
			got := map[float64]uint64{}
			for _, b := range h.GetBucket() {
				got[b.GetUpperBound()] = b.GetCumulativeCount()
			}
			if h.GetSampleCount() != 3 || got[2] != 1 || got[5] != 2 || got[15] != 2 || got[60] != 3 {
				t.Errorf("lag histogram: count %d, buckets %v; want 3, {2:1 5:2 15:2 60:3}", h.GetSampleCount(), got)
			}
			if s := h.GetSampleSum(); s < 25.6 || s > 25.8 {
				t.Errorf("lag sum %v, want 25.7 (1.2 + 4.5 + 20)", s)
			}
		case "watchcache_probe_write_to_event_seconds":
			found++
			h := mf.GetMetric()[0].GetHistogram()
			if h.GetSampleCount() != 3 {
				t.Errorf("probe histogram count %d, want 3", h.GetSampleCount())
			}
			for _, b := range h.GetBucket() {
				if b.GetUpperBound() == 0.05 && b.GetCumulativeCount() != 2 {
					t.Errorf("probe ≤ 50ms: %d, want 2", b.GetCumulativeCount())
				}
			}
		}
	}
	if found != 2 {
		t.Errorf("found %d of the 2 delivery histograms", found)
	}
}

func TestNoProbeNoProbeHistogram(t *testing.T) {
	m := metrics.New(false)
	m.SetProbe(func() (bool, []time.Duration) { return false, nil })
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "watchcache_probe_write_to_event_seconds" {
			t.Error("a run without a probe exports the probe's histogram")
		}
	}
}
