package outputs

import (
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui"
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
		x.metrics.SetProbe(st.EventsFrom)
	}
	if x.rules != nil {
		x.rules.SetProbe(func() time.Duration { return st.Figures(time.Time{}).P99 })
	}
}

// probeView is the dashboard's view of the session's probe; nil without one.
func probeView(sess *session.Session) func() tui.ProbeView {
	st := sess.Probe
	if st == nil {
		return nil
	}
	return func() tui.ProbeView {
		// Read at each poll of the shown dashboard: the whole run's figures
		// (a sort of up to probe.MaxSamples) only when the minute has none.
		minute := st.LastMinute(sess.Now())
		if minute.Count == 0 {
			minute = st.Figures(time.Time{}) // nothing in the last minute (a replay jumped, the watch is down): the run's
		}
		return tui.ProbeView{On: st.On(), Count: minute.Count, MinuteP50: minute.P50, MinuteP99: minute.P99, Recent: st.Recent(20)}
	}
}
