package program

import (
	"context"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// Defaults of the Options fields left zero.
const (
	// DefaultRefresh is how often stats are polled and buffered events are
	// delivered; it is also the minimum (at most ten times a second).
	DefaultRefresh = 100 * time.Millisecond
	// DefaultLogSize is how many entries the event log keeps.
	DefaultLogSize = 2000
	// DefaultTrackedObjects is how many objects keep a version history.
	DefaultTrackedObjects = 2000
	// DefaultAuditTimeout bounds one audit started with the a key.
	DefaultAuditTimeout = time.Minute
)

// Options describe the run the dashboard shows, whatever its resources, and
// size each resource's bounded buffers. Nothing in them changes while the
// dashboard runs.
type Options struct {
	// Context is the kubeconfig context; Server is the API server URL (never
	// credentials). In a replay they come from the trace header.
	Context string
	Server  string

	// Replay marks a replayed trace. Trace names the trace file: the one
	// replayed, or the one a live run records to.
	Replay bool
	Trace  string
	// Player, when set, controls the replay: the player keys (space, →, +,
	// -, 0-9) call it, and the header shows its position in recorded time,
	// its speed and whether it is paused.
	Player Player
	// Rewind, when set with Player, lets a jump go behind the replay: the
	// dashboard calls it with the jump's target (an offset from the
	// trace's start) and quits, and the caller starts the replay again
	// from the beginning and runs it as fast as possible to the target (a
	// replayed reflector cannot unlearn what it was served). Without it a
	// jump behind the replay is refused. v is where the dashboard was:
	// give it to the next one as Reopen.
	Rewind func(at time.Duration, v View)
	// Reopen, when set (the dashboard after a rewind), is where the one
	// before it was: the resource it had open, and that log's filters.
	Reopen *View

	// Ended, when set, is closed when the run ended by itself (a live
	// --once or --duration, a tripped rule, every resource stopped): the
	// dashboard keeps its last screen, to be looked through, its footer
	// says the run ended, and q quits. (A replay's end is its reflectors' stop: the REPLAY
	// badge says "ended", and the player keys still work.)
	Ended <-chan struct{}

	// Kind says what the resources are: reflectors run here (the zero
	// Kind), or other programs' seen from their traffic (Observing).
	Kind Kind
	// Added, when set, brings resources that appear while the dashboard
	// runs (the streams an observing proxy sees open): each gets its row as
	// it arrives. The overview then shows its table whatever the number of
	// rows, none included.
	Added <-chan Resource
	// Connect, when set, is what the overview shows while it has no row:
	// how a program reaches the run (an observing proxy's address and the
	// kubeconfig to use), one line each.
	Connect []string

	// Now is the time source for ages, uptime and the event-rate window; it
	// is called from the dashboard's goroutines, so it must be safe for
	// concurrent use. In a replay pass the virtual clock's Now so ages follow
	// the trace. Default time.Now.
	Now func() time.Time
	// Start is when the run started, for the uptime; default Now() when the
	// model is built.
	Start time.Time

	// Refresh is each resource's poll and delivery interval; default and
	// minimum DefaultRefresh.
	Refresh time.Duration
	// LogSize bounds each resource's event log; default DefaultLogSize.
	LogSize int
	// TrackedObjects bounds how many objects of each resource keep a version
	// history (the least recently changed is forgotten first); default
	// DefaultTrackedObjects.
	TrackedObjects int
	// AuditTimeout bounds one audit; default DefaultAuditTimeout.
	AuditTimeout time.Duration
	// Probe, when set, is the run's delivery probe (--probe), shown on the
	// delivery line of every resource's health section. The poll of the
	// dashboard shown calls it, off the screen's goroutine and at most
	// once a Refresh; it must be safe for concurrent use.
	Probe func() ProbeView
	// Warning, when set, is what the run found wrong before it started (a
	// namespace that does not exist): the footer leads with it, as with an
	// action's status, for its first seconds.
	Warning string
	// Notice, when set and there is no Warning, is what the run says as
	// it starts (a replay that started again to rewind), shown as an
	// action's status is, from NoticeAt on the run's clock.
	Notice   string
	NoticeAt time.Time
	// Metrics, when set, is the URL the run serves its metrics at
	// (--metrics-address): the help says it, a chosen port (:0) too.
	Metrics string
	// Differences, when set (a replay), is how many of the replayed
	// reflectors' decisions differed from the recorded ones so far: the
	// badge says so as they come, not only at exit. Called at each redraw,
	// from the dashboard's goroutine; it must be safe for concurrent use.
	Differences func() int
	// EndedEarly, when set (a replay), says the recording ends before its
	// run recorded its stop (killed, its file cut, a rotating trace's
	// earlier segment): the ended badge says "ended early", not only the
	// line after q. Called at each redraw.
	EndedEarly func() bool
	// NoColor forces the plain profile in Run. NO_COLOR in the environment
	// has the same effect without it.
	NoColor bool
}

// WithDefaults fills the zero fields.
func (o Options) WithDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Start.IsZero() {
		o.Start = o.Now()
	}
	if o.Refresh < DefaultRefresh {
		o.Refresh = DefaultRefresh
	}
	if o.LogSize <= 0 {
		o.LogSize = DefaultLogSize
	}
	if o.TrackedObjects <= 0 {
		o.TrackedObjects = DefaultTrackedObjects
	}
	if o.AuditTimeout <= 0 {
		o.AuditTimeout = DefaultAuditTimeout
	}
	return o
}

// Resource is one resource the dashboard shows: what is watched, how its
// lists are made, and its feed. A run that watches several resources has one
// Resource, with its own reflector, store and Feed, for each.
type Resource struct {
	// Target is the resource, namespace ("" = all namespaces) and selectors.
	Target reflector.Target
	// Strategy, PageSize and MetadataOnly describe how lists are made;
	// Wire is the encoding asked for ("" when unknown: not shown).
	Strategy     reflector.Strategy
	PageSize     int64
	MetadataOnly bool
	Wire         reflector.Wire
	// Client names the program whose reflector this is, for an observed
	// one (see Observing): its User-Agent, shown on its row (cut to
	// what tells programs apart) and in its header, with ClientAddr, the
	// address of its first connection. For an observed one, Wire and
	// MetadataOnly are what the client asked for, and Table says it asked
	// for Tables (kubectl get).
	Client     string
	ClientAddr string
	Table      bool
	// Probe says it is the delivery probe's watch of its Lease (--probe):
	// its row says "(probe)" where the Lease's field selector would be.
	Probe bool
	// Feed is how the resource's data and commands reach the dashboard.
	Feed Feed
}

// Feed is how data and commands cross between the run and the dashboard.
// Every field is optional: the dashboard shows what it is given and says what
// it cannot do. Stats, Alerts, Findings and the Store's counters are read by
// the resource's poll, a command bubbletea runs on a goroutine of its own, at
// most ten times a second; ForceRelist and Audit run on goroutines of their
// own too: none of them runs on the reflector's goroutine or blocks the screen.
type Feed struct {
	// Stats returns a snapshot of the reflector, e.g. (*reflector.Reflector).Stats.
	Stats func() reflector.Stats
	// Store is the cache the reflector fills: the dashboard reads its
	// counters and looks objects up. The event log and the object history
	// come from the notes.
	Store *store.Store
	// Notes carries the reflector's notes: pass its Push as reflector.Config.OnNote.
	Notes *NoteBuffer
	// ForceRelist asks the reflector to relist, e.g. (*reflector.Reflector).ForceRelist.
	// Nil where it makes no sense (a replay).
	ForceRelist func()
	// Audit compares the cache with a fresh consistent list. Nil, or a
	// function returning an error such as "audit needs a live cluster", in a replay.
	Audit func(ctx context.Context) (*reflector.AuditReport, error)
	// Alerts reports the alert rules and what tripped; nil when there are no rules.
	Alerts func() Alerts
	// Findings returns what the findings engine raised so far, in the order
	// it raised them, ignored ones included, e.g. (*findings.Engine).List.
	// Nil where there is no engine: no findings pane, count or column then.
	Findings func() []findings.Finding
	// Churn returns what the MODIFIED events diffed so far changed (--diff),
	// with the top paths and objects, e.g. (*reflector.Reflector).Churn. It
	// is polled only while the churn pane (c) is open, at most once a
	// second, never per event. Nil where nothing is diffed (another
	// program's reflector): no churn pane then.
	Churn func(top int) diff.Summary
	// Diffing says whether each MODIFIED event is diffed as it comes
	// (--diff, or a replay --diff of a trace of whole objects), so that a
	// churn pane with nothing in it can say why: nothing changed yet, or
	// nothing is diffed. Read when the pane is drawn (a proxy's stream
	// learns its wire from its first answer); nil: never.
	Diffing func() bool
}

// Kind says what a dashboard's rows are, for its title, header, help and
// keys. The zero Kind is reflectors run here; Observing gives other
// programs'. The dashboard reads these fields and never asks which it is.
type Kind struct {
	// Source, when set, follows "observing" in the title line: where the
	// rows come from.
	Source string
	// Noun names one row in the overview's header; "resource" when empty.
	Noun string
	// Passive, when set, says why r and a never act on the rows.
	Passive string
	// Legend holds the overview help's rows for this kind, put before its
	// last row.
	Legend [][2]string
	// OwnLists says each row lists as its own requests say, so the header
	// shows no list method for the run.
	OwnLists bool
}

// Observing is the Kind of other programs' reflectors, seen from their
// traffic rather than run here (an observing proxy, or the replay of its
// trace, shown as recorded); source ("proxy 127.0.0.1:8001") is shown in
// the title line.
func Observing(source string) Kind {
	return Kind{
		Source:  source,
		Noun:    "observed stream",
		Passive: "this is another program's reflector, only observed",
		Legend: [][2]string{{"○ left", "the stream's client left (every connection it used closed, nothing open): FOR says since when, " +
			"and what state it was in; it goes on if the client comes back"}},
		OwnLists: true,
	}
}

// View is where a dashboard is, for the next one after a rewind: the
// resource open (Row; -1 for the overview's table, with the resource
// Selected in it), its log's text and type filters, and whether the
// overview lists forgotten streams (h).
type View struct {
	Row           int
	Selected      int
	Filter        string
	TypeIdx       int
	ShowForgotten bool
}
