// Package subjects says as data, in one place, what differs for a run whose
// subjects are other programs' streams (kubectl watchcache proxy, or its
// trace replayed) rather than reflectors run here. It depends on the trace
// format and the dashboard's Kind only, so any front end can read it.
package subjects

import (
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui"
)

// Traits are what the front ends show or do differently for a run's
// subjects: how other programs' streams differ from reflectors run here
// (a few texts still live with the view that shows them; docs/design.md
// names them). The zero Traits are a run of our reflectors;
// Of gives an observed run's. A front end reads these fields;
// it never asks whether the run is observed.
type Traits struct {
	// Dashboard is how the dashboard names and treats the subjects.
	Dashboard tui.Kind
	// Clients says each subject is one client's stream: the metrics label
	// every series with its client, the JSON summary is a list of streams
	// (summary.WriteObservedJSON), and the report describes each stream by
	// its client and the options of its requests.
	Clients bool
	// Arrive says subjects come and go while the run goes on: the dashboard
	// takes them as they come, and a live run ends when it is asked to, not
	// when its subjects end (a replay ends with its trace).
	Arrive bool
	// None is what such a run says when no subject came: a whole line of
	// the text summary, and explain's warning after "in this trace, ".
	None string
	// AsRecorded, when set, says a replay of the run shows the recorded
	// traffic as it was and decides nothing again: no decision to compare,
	// no --fail-on rule to evaluate, and an error in the replay is the
	// trace's. It is the replay's notice.
	AsRecorded string
	// About, when set, is the report header's line on what the subjects are.
	About string
	// NoBackoffs, when set, says why the subjects' backoffs are unknown.
	NoBackoffs string
}

// Of are the Traits of the run whose trace header is h: the proxy's
// streams (a live proxy's session has such a header too, recording or
// not), or our reflectors (the zero Traits). The dashboard's source is
// "recorded traffic, as recorded"; a live proxy names its own address.
func Of(h trace.Header) Traits {
	if !h.Observed {
		return Traits{}
	}
	return Traits{
		Dashboard:  tui.Observing("recorded traffic, as recorded"),
		Clients:    true,
		Arrive:     true,
		None:       "no LIST or WATCH was observed",
		AsRecorded: "an observed trace (kubectl watchcache proxy): shown as recorded, nothing re-simulated",
		About: "other programs' reflectors, as kubectl watchcache proxy saw their traffic: each resource is one client's stream, " +
			"its requests as that client sent them, and its cache rebuilt from what the client received",
		NoBackoffs: "another program's waits are not on the wire: its backoffs are unknown",
	}
}
