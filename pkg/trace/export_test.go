package trace

import "time"

// SetClock makes r read the time from now (a replay's clock, when a test
// records a replay again).
func SetClock(r *Recorder, now func() time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now = now
}
