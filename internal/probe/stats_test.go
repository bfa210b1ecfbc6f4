package probe

import (
	"slices"
	"testing"
	"time"
)

func TestFiguresAreNearestRankPercentilesOfTheWholeRunAndTheLastMinute(t *testing.T) {
	s := NewStats()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// 100 samples, one a second: write-to-event 1..100 ms, write 10 ms.
	for i := 1; i <= 100; i++ {
		s.Add(Sample{At: start.Add(time.Duration(i) * time.Second), Write: 10 * time.Millisecond, Event: time.Duration(i) * time.Millisecond})
	}
	f := s.Figures(time.Time{})
	if f.Count != 100 || f.P50 != 50*time.Millisecond || f.P90 != 90*time.Millisecond || f.P99 != 99*time.Millisecond || f.Max != 100*time.Millisecond || f.WriteP50 != 10*time.Millisecond {
		t.Errorf("whole run: %+v", f)
	}
	m := s.LastMinute(start.Add(100 * time.Second))
	if m.Count != 61 || m.P50 != 70*time.Millisecond || m.Max != 100*time.Millisecond {
		t.Errorf("last minute (samples 40..100): %+v", m)
	}
	if got := s.Recent(3); len(got) != 3 || got[0] != 98*time.Millisecond || got[2] != 100*time.Millisecond {
		t.Errorf("recent: %v", got)
	}
	if (NewStats()).Figures(time.Time{}) != (Figures{}) {
		t.Error("no samples: figures not zero")
	}
}

func TestLostRenewalsAreCountedApartFromTheSamples(t *testing.T) {
	s := new(Stats)
	s.AddLost()
	s.AddLost()
	if !s.On() || s.Lost() != 2 || len(s.Samples()) != 0 {
		t.Errorf("on %v, lost %d, samples %d; want on, 2 lost and no samples", s.On(), s.Lost(), len(s.Samples()))
	}
}

// The whole run's figures and Over are kept sorted as samples come, and
// rebuilt when the oldest go: they must equal the figures of the samples
// kept, sorted afresh, before and after MaxSamples.
func TestTheWholeRunsFiguresAreThoseOfTheSamplesKept(t *testing.T) {
	s := NewStats()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	check := func() {
		t.Helper()
		var events, writes []time.Duration
		over := 0
		for _, x := range s.Samples() {
			events, writes = append(events, x.Event), append(writes, x.Write)
			if x.Event > 40*time.Millisecond {
				over++
			}
		}
		slices.Sort(events)
		slices.Sort(writes)
		want := Figures{Count: len(events), P50: quantile(events, 0.5), P90: quantile(events, 0.9), P99: quantile(events, 0.99), Max: events[len(events)-1], WriteP50: quantile(writes, 0.5)}
		if got := s.Figures(time.Time{}); got != want {
			t.Errorf("after %d samples: %+v, want %+v", len(events), got, want)
		}
		if got := s.Over(40 * time.Millisecond); got != over {
			t.Errorf("after %d samples: %d over 40ms, want %d", len(events), got, over)
		}
	}
	for i := range MaxSamples + 100 {
		// Write-to-event times that are not in order, and grow, so that the
		// samples let go change the figures.
		s.Add(Sample{At: start.Add(time.Duration(i) * time.Second), Write: time.Duration(i%97) * time.Millisecond, Event: time.Duration(i%89+i/1000) * time.Millisecond})
		if i == 1000 || i == MaxSamples-1 || i == MaxSamples || i == MaxSamples+99 {
			check()
		}
	}
}

// BenchmarkWholeRunFiguresAfterEachSample is what slow-delivery does after
// each of a day's samples (one every 5 s), as a replay at --speed 0 does them.
func BenchmarkWholeRunFiguresAfterEachSample(b *testing.B) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		s := NewStats()
		for i := range 17280 {
			s.Add(Sample{At: start.Add(time.Duration(i) * 5 * time.Second), Write: time.Duration(i%97) * time.Millisecond, Event: time.Duration(i%89) * time.Millisecond})
			_ = s.Figures(time.Time{})
			_ = s.Over(time.Second)
		}
	}
}
