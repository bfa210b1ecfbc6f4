package metrics_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/probe"
)

func TestTheLagHistogramHasTheEstimatesBucketsAndTheProbeItsSamples(t *testing.T) {
	m := metrics.New(false)
	m.SetProbe(func(from uint64) (bool, []time.Duration, uint64) {
		return true, []time.Duration{3 * time.Millisecond, 40 * time.Millisecond, 2 * time.Second}[from:], 3
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

// A Prometheus histogram has every bucket, those no sample fell under too
// (at 0): histogram_quantile and a sum over instances need each le.
func TestTheProbeHistogramHasEveryBucket(t *testing.T) {
	m := metrics.New(false)
	m.SetProbe(func(from uint64) (bool, []time.Duration, uint64) {
		return true, []time.Duration{20 * time.Second, 25 * time.Second}[from:], 2 // both in the last bucket
	})
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "watchcache_probe_write_to_event_seconds" {
			continue
		}
		var got []float64
		for _, b := range mf.GetMetric()[0].GetHistogram().GetBucket() {
			want := uint64(0)
			if b.GetUpperBound() >= 30 {
				want = 2
			}
			if b.GetCumulativeCount() != want {
				t.Errorf("le %v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
			}
			got = append(got, b.GetUpperBound())
		}
		if want := []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}; !slices.Equal(got, want) {
			t.Errorf("buckets %v, want %v", got, want)
		}
		return
	}
	t.Error("no probe histogram")
}

func TestNoProbeNoProbeHistogram(t *testing.T) {
	m := metrics.New(false)
	m.SetProbe(func(uint64) (bool, []time.Duration, uint64) { return false, nil, 0 })
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

// The probe keeps its last probe.MaxSamples samples (about 91 hours at
// one every 5 s), and lets the oldest eighth go past them; its histogram
// counts every sample of the run, and never goes down: Prometheus reads a
// count that falls as a counter reset (it fell from 65,536 to 57,345).
func TestTheProbeHistogramNeverGoesDownWhenTheProbeLetsOldSamplesGo(t *testing.T) {
	st := probe.NewStats()
	m := metrics.New(false)
	m.SetProbe(st.EventsFrom)
	scrape := func() (count uint64, sum float64) {
		t.Helper()
		mfs, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "watchcache_probe_write_to_event_seconds" {
				h := mf.GetMetric()[0].GetHistogram()
				return h.GetSampleCount(), h.GetSampleSum()
			}
		}
		t.Fatal("no probe histogram")
		return 0, 0
	}
	add := func(n int) {
		for range n {
			st.Add(probe.Sample{Event: 10 * time.Millisecond})
		}
	}
	add(probe.MaxSamples - 1)
	if c, _ := scrape(); c != probe.MaxSamples-1 {
		t.Fatalf("count %d, want %d", c, probe.MaxSamples-1)
	}
	add(2) // past the cap: the oldest eighth goes
	add(probe.MaxSamples / 4)
	want := uint64(probe.MaxSamples + 1 + probe.MaxSamples/4)
	if c, sum := scrape(); c != want || sum < float64(want)*0.0099 || sum > float64(want)*0.0101 {
		t.Errorf("count %d, sum %v; want %d and %v", c, sum, want, float64(want)*0.01)
	}
	if c, _ := scrape(); c != want {
		t.Errorf("a scrape with no new sample: count %d, want %d", c, want)
	}
}
