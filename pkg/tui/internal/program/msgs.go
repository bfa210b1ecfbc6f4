package program

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/player"
)

// SnapshotMsg is one poll of the feed.
type SnapshotMsg struct {
	// At is when it was taken (Options.Now).
	At time.Time
	// Stats are Feed.Stats' (HasStats: the feed has them).
	HasStats bool
	Stats    reflector.Stats
	// Counters and StoreReady are Feed.Store's (HasStore: the feed has one).
	HasStore   bool
	Counters   store.Counters
	StoreReady bool
	// NotesLost is how many notes the NoteBuffer dropped.
	NotesLost int64
	// Alerts are Feed.Alerts', nil without it.
	Alerts *Alerts
	// Player is Options.Player's reading, nil without a player.
	Player *player.State
	// Probe is Options.Probe's reading, nil when it was not read: no
	// probe, or this resource's dashboard is not the one shown.
	Probe *ProbeView
	// Findings are Feed.Findings' (HasFindings: the feed has an engine).
	HasFindings bool
	Findings    []findings.Finding
	// Churn is Feed.Churn's (HasChurn: it was read), read only while the
	// churn pane is open on this resource's dashboard.
	HasChurn bool
	Churn    diff.Summary
}

// NotesMsg delivers notes from the NoteBuffer.
type NotesMsg struct{ Notes []reflector.Note }

// AuditMsg is the end of an audit.
type AuditMsg struct {
	// Report is the audit's report, or Err why there is none.
	Report *reflector.AuditReport
	Err    error
}

// ForceRelistDoneMsg says ForceRelist returned.
type ForceRelistDoneMsg struct{}

// EndedMsg says the run ended by itself (Options.Ended).
type EndedMsg struct{}

// WaitEnded waits for Options.Ended; nil when there is none.
func WaitEnded(ctx context.Context, ended <-chan struct{}) tea.Cmd {
	if ended == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case <-ended:
			return EndedMsg{}
		case <-ctx.Done():
			return nil
		}
	}
}
