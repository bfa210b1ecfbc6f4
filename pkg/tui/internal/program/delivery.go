package program

import "time"

// ProbeView is what the dashboard shows of a run's delivery probe (one per
// run): its write-to-event p50 and p99 over the last minute (over the run
// when the last minute has no sample), and the last samples, oldest first,
// for a sparkline.
type ProbeView struct {
	// On says the run has a probe (a replay: its trace had one so far).
	On bool
	// Count is how many samples the p50 and p99 are of (0: no sample yet).
	Count                int
	MinuteP50, MinuteP99 time.Duration
	Recent               []time.Duration
}
