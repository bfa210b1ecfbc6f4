package tui

import (
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// Options describe the run the dashboard shows, whatever its resources, and
// size each resource's bounded buffers; the fields' documentation is the
// type's own, in the dashboard's shared context. Nothing in them changes
// while the dashboard runs.
type Options = program.Options

// Resource is one resource the dashboard shows: what is watched, how its
// lists are made, and its Feed.
type Resource = program.Resource

// Feed is how data and commands cross between the run and the dashboard;
// every field is optional.
type Feed = program.Feed

// Kind says what a dashboard's rows are, for its title, header, help and
// keys. The zero Kind is reflectors run here; Observing gives other
// programs'.
type Kind = program.Kind

// Observing is the Kind of other programs' reflectors, seen from their
// traffic rather than run here; source ("proxy 127.0.0.1:8001") is shown in
// the title line.
func Observing(source string) Kind { return program.Observing(source) }

// NoteBuffer is the bounded hand-over of reflector notes to the dashboard:
// its Push never blocks, and counts what it drops.
type NoteBuffer = program.NoteBuffer

// NewNoteBuffer returns a buffer for capacity notes (values below 1 mean 1).
func NewNoteBuffer(capacity int) *NoteBuffer { return program.NewNoteBuffer(capacity) }

// DefaultNoteBuffer is a NoteBuffer capacity that absorbs a burst of watch
// events, or a relist storm, between two deliveries to the screen.
const DefaultNoteBuffer = program.DefaultNoteBuffer

// Alerts is what Feed.Alerts reports: every rule's row, and a banner once a
// rule tripped.
type Alerts = program.Alerts

// AlertRow is one alert rule (--fail-on) on one resource, as the dashboard
// shows it.
type AlertRow = program.AlertRow

// ProbeView is what the dashboard shows of a run's delivery probe
// (Options.Probe).
type ProbeView = program.ProbeView

// View is where a dashboard is (the resource open, its log's filters),
// handed to Options.Rewind for the next dashboard's Options.Reopen.
type View = program.View

// Player controls a replay's pace (Options.Player): the dashboard's player
// keys (space, →, +, -, 0-9) call it, and the header's progress line reads
// it. *trace.Player implements it. It must be safe for concurrent use, and
// its methods must return at once.
type Player = program.Player

// Defaults of the Options fields left zero.
const (
	// DefaultRefresh is how often stats are polled and buffered events are
	// delivered; it is also the minimum (at most ten times a second).
	DefaultRefresh = program.DefaultRefresh
	// DefaultLogSize is how many entries the event log keeps.
	DefaultLogSize = program.DefaultLogSize
	// DefaultTrackedObjects is how many objects keep a version history.
	DefaultTrackedObjects = program.DefaultTrackedObjects
	// DefaultAuditTimeout bounds one audit started with the a key.
	DefaultAuditTimeout = program.DefaultAuditTimeout
)
