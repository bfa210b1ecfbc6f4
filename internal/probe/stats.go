// Package probe is the active delivery probe of --probe NAMESPACE: one
// Lease of its own, renewed every interval, whose watch events (through the
// run's own reflector machinery) time the apiserver's watch path on the
// run's connection; and Stats, the probe's measures, which a live run and
// the replay of its trace fill alike.
package probe

import (
	"slices"
	"sort"
	"sync"
	"time"
)

// Sample is one renewal of the probe's Lease: when it was sent (the run's
// clock), how long the update took to be answered (Write), and how long
// from sending it to receiving its watch event (Event).
type Sample struct {
	At    time.Time
	Write time.Duration
	Event time.Duration
}

// Figures are percentiles of samples: write to event p50, p90, p99 and
// max, and the write's own p50.
type Figures struct {
	Count              int
	P50, P90, P99, Max time.Duration
	WriteP50           time.Duration
}

// MaxSamples bounds the samples Stats keeps (about 91 hours at one every
// 5 s); past it the oldest go, and "the whole run" is the last MaxSamples.
const MaxSamples = 1 << 16

// Stats keeps the probe's samples, in the order they were taken. It is
// safe for concurrent use.
type Stats struct {
	mu      sync.Mutex
	samples []Sample
	// events and writes are the samples' write-to-event and write times,
	// each sorted: slow-delivery reads the whole run's figures after every
	// sample (a replay at full speed too), which must not sort it each time.
	events, writes []time.Duration
	dropped        uint64 // the oldest samples let go (MaxSamples)
	lost           int
	on             bool
}

// NewStats returns empty Stats of a probe that runs. The zero Stats are
// those of the replay of a trace, which may or may not hold a probe's
// lines: On once one came.
func NewStats() *Stats { return &Stats{on: true} }

// On reports whether the run has a probe (a replay: whether its trace had
// a probe line so far).
func (s *Stats) On() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.on
}

// Note records a note of the probe's (its Lease created or deleted, an
// update that failed): the run has a probe. The note's text is the
// trace's and the lines', not kept here.
func (s *Stats) Note(string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = true
}

// Add records one sample.
func (s *Stats) Add(x Sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = true
	if len(s.samples) == MaxSamples {
		s.samples = slices.Delete(s.samples, 0, MaxSamples/8)
		s.dropped += MaxSamples / 8
		s.events, s.writes = s.events[:0], s.writes[:0]
		for _, x := range s.samples {
			s.events, s.writes = append(s.events, x.Event), append(s.writes, x.Write)
		}
		slices.Sort(s.events)
		slices.Sort(s.writes)
	}
	s.samples = append(s.samples, x)
	s.events, s.writes = insertSorted(s.events, x.Event), insertSorted(s.writes, x.Write)
}

// insertSorted inserts d into sorted, keeping it sorted.
func insertSorted(sorted []time.Duration, d time.Duration) []time.Duration {
	i, _ := slices.BinarySearch(sorted, d)
	return slices.Insert(sorted, i, d)
}

// Over is how many of the whole run's samples took longer than d from
// write to event.
func (s *Stats) Over(d time.Duration) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events) - sort.Search(len(s.events), func(i int) bool { return s.events[i] > d })
}

// EventsFrom says whether the run has a probe (a replay: whether its
// trace had one so far), and returns the write-to-event times of the
// samples taken since the run's i-th (from 0; of those, the ones let go
// since are gone) and how many were taken in all: a reader that keeps
// running totals (a Prometheus histogram, which must never go down) reads
// each sample once, however long the run.
func (s *Stats) EventsFrom(i uint64) (on bool, events []time.Duration, total uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	total = s.dropped + uint64(len(s.samples))
	for _, x := range s.samples[min(max(i, s.dropped)-s.dropped, uint64(len(s.samples))):] {
		events = append(events, x.Event)
	}
	return s.on, events, total
}

// AddLost counts one renewal lost: its watch event never came (within
// LostAfter), so it made no sample.
func (s *Stats) AddLost() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = true
	s.lost++
}

// Lost is how many renewals were lost over the whole run.
func (s *Stats) Lost() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

// Samples is a copy of the samples, oldest first.
func (s *Stats) Samples() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.samples)
}

// Figures are the percentiles of the samples sent at or after since (the
// zero time: all of them, the whole run).
func (s *Stats) Figures(since time.Time) Figures {
	s.mu.Lock()
	defer s.mu.Unlock()
	events, writes := s.events, s.writes
	if !since.IsZero() {
		events, writes = nil, nil
		for _, x := range s.samples {
			if !x.At.Before(since) {
				events, writes = append(events, x.Event), append(writes, x.Write)
			}
		}
		slices.Sort(events)
		slices.Sort(writes)
	}
	if len(events) == 0 {
		return Figures{}
	}
	return Figures{
		Count: len(events),
		P50:   quantile(events, 0.50), P90: quantile(events, 0.90), P99: quantile(events, 0.99),
		Max:      events[len(events)-1],
		WriteP50: quantile(writes, 0.50),
	}
}

// LastMinute are the figures of the samples sent in the minute before now.
func (s *Stats) LastMinute(now time.Time) Figures { return s.Figures(now.Add(-time.Minute)) }

// Recent is the write-to-event times of the last n samples, oldest first
// (the dashboard's sparkline).
func (s *Stats) Recent(n int) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	from := max(0, len(s.samples)-n)
	out := make([]time.Duration, 0, len(s.samples)-from)
	for _, x := range s.samples[from:] {
		out = append(out, x.Event)
	}
	return out
}

// quantile is the nearest-rank q quantile of sorted, which is not empty.
func quantile(sorted []time.Duration, q float64) time.Duration {
	rank := int(q*float64(len(sorted))+0.999999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}
