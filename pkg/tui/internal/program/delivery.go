package program

import "time"

// ProbeView is what the dashboard shows of a run's delivery probe (one per
// run): its write-to-event p50 and p99 over the last minute and the run,
// and the last samples, oldest first, for a sparkline.
type ProbeView struct {
	// On says the run has a probe (a replay: its trace had one so far).
	On                   bool
	Count                int
	MinuteP50, MinuteP99 time.Duration
	P50, P99             time.Duration
	Recent               []time.Duration
}
