package outputs

import (
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
)

// attachProbe gives the metrics and the rules the session's delivery probe
// (a live run's with --probe; a replay's, which is on once its trace had a
// probe line).
func (x *Outputs) attachProbe(sess *session.Session) {
	st := sess.Probe
	if st == nil {
		return
	}
	if x.metrics != nil {
		x.metrics.SetProbe(func() (bool, []time.Duration) {
			samples := st.Samples()
			events := make([]time.Duration, len(samples))
			for i, s := range samples {
				events[i] = s.Event
			}
			return st.On(), events
		})
	}
	if x.rules != nil {
		x.rules.SetProbe(func() time.Duration { return st.Figures(time.Time{}).P99 })
	}
}
