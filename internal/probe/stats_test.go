package probe

import (
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
