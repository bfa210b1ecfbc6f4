package tui

import (
	"context"
	"time"

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

// versionsPerObject is how many versions of one object the history keeps.
const versionsPerObject = 16

// Options describe the run the dashboard shows and size its bounded buffers.
// Nothing in them changes while the dashboard runs.
type Options struct {
	// Context is the kubeconfig context; Server is the API server URL (never
	// credentials). In a replay they come from the trace header.
	Context string
	Server  string
	// Target is the resource, namespace ("" = all namespaces) and selectors.
	Target reflector.Target
	// Strategy, PageSize and MetadataOnly describe how lists are made;
	// Wire is the encoding asked for ("" when unknown: not shown).
	Strategy     reflector.Strategy
	PageSize     int64
	MetadataOnly bool
	Wire         reflector.Wire

	// Replay marks a replayed trace. Trace names the trace file: the one
	// replayed, or the one a live run records to. Progress, when set, reports
	// the replay position in any unit (trace lines, bytes); it is called from
	// the poller, never from the reflector.
	Replay   bool
	Trace    string
	Progress func() (done, total int64)

	// Now is the time source for ages, uptime and the event-rate window; it
	// is called from the dashboard's goroutines, so it must be safe for
	// concurrent use. In a replay pass the virtual clock's Now so ages follow
	// the trace. Default time.Now.
	Now func() time.Time
	// Start is when the run started, for the uptime; default Now() when the
	// model is built.
	Start time.Time

	// Refresh is the poll and delivery interval; default and minimum DefaultRefresh.
	Refresh time.Duration
	// LogSize bounds the event log; default DefaultLogSize.
	LogSize int
	// TrackedObjects bounds how many objects keep a version history (the
	// least recently changed is forgotten first); default DefaultTrackedObjects.
	TrackedObjects int
	// AuditTimeout bounds one audit; default DefaultAuditTimeout.
	AuditTimeout time.Duration
	// NoColor forces the plain profile in Run. NO_COLOR in the environment
	// has the same effect without it.
	NoColor bool
}

// withDefaults fills the zero fields.
func (o Options) withDefaults() Options {
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

// Feed is how data and commands cross between the run and the dashboard.
// Every field is optional: the dashboard shows what it is given and says what
// it cannot do. Stats and Progress are called from a poller goroutine at most
// ten times a second, ForceRelist and Audit from their own goroutines, so none
// of them runs on the reflector's goroutine or blocks the screen.
type Feed struct {
	// Stats returns a snapshot of the reflector, e.g. (*reflector.Reflector).Stats.
	Stats func() reflector.Stats
	// Store is the cache the reflector fills: the dashboard reads its counters,
	// looks objects up, and subscribes to its changes for the event log and
	// the object history.
	Store *store.Store
	// Notes carries the reflector's notes: pass its Push as reflector.Config.OnNote.
	Notes *NoteBuffer
	// ForceRelist asks the reflector to relist, e.g. (*reflector.Reflector).ForceRelist.
	// Nil where it makes no sense (a replay).
	ForceRelist func()
	// Audit compares the cache with a fresh consistent list. Nil, or a
	// function returning an error such as "audit needs a live cluster", in a replay.
	Audit func(ctx context.Context) (*reflector.AuditReport, error)
}
