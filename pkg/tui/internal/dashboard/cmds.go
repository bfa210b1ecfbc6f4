package dashboard

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/churn"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/player"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// maxBatch bounds one delivery of notes to the model: all that waits in a
// buffer of DefaultNoteBuffer, which absorbs what comes between two
// deliveries; of a caller's larger buffer, what does not fit waits for the
// next (and a full buffer drops, counted, never blocking the writer). It is
// no smaller: the reader comes back a Refresh after each delivery, so a
// smaller batch would cap what the log takes at maxBatch a Refresh, and
// leave the buffer too full to absorb the next burst.
const maxBatch = program.DefaultNoteBuffer

// takeSnapshot polls everything the feed offers. It runs on a command
// goroutine, never on the reflector's.
func takeSnapshot(opts program.Options, feed program.Feed) program.SnapshotMsg {
	s := program.SnapshotMsg{At: opts.Now()}
	if feed.Stats != nil {
		s.HasStats, s.Stats = true, feed.Stats()
	}
	if feed.Store != nil {
		s.HasStore, s.Counters, s.StoreReady = true, feed.Store.Counters(), feed.Store.Ready()
	}
	if opts.Player != nil {
		p := player.Read(opts.Player)
		s.Player = &p
	}
	if feed.Notes != nil {
		s.NotesLost = feed.Notes.Dropped()
	}
	if feed.Alerts != nil {
		a := feed.Alerts()
		s.Alerts = &a
	}
	if feed.Findings != nil {
		s.HasFindings, s.Findings = true, feed.Findings()
	}
	return s
}

// PollCmd takes the next snapshot after wait; with the churn pane open on
// this resource's dashboard, and its last read churn.Every old, the
// snapshot reads Feed.Churn too; with this resource's dashboard shown, it
// reads the run's probe (one for every resource: only the screen shows it).
func (m Model) PollCmd(wait time.Duration) tea.Cmd {
	opts, feed := m.Opts, m.Feed
	readChurn := m.mode() == program.StateChurn && feed.Churn != nil && m.churn.Due(m.Now)
	readProbe := opts.Probe != nil && m.isShown()
	take := func() tea.Msg {
		s := takeSnapshot(opts, feed)
		if readChurn {
			s.HasChurn, s.Churn = true, feed.Churn(churn.Top)
		}
		if readProbe {
			p := opts.Probe()
			s.Probe = &p
		}
		return s
	}
	if wait <= 0 {
		return take
	}
	return tea.Tick(wait, func(time.Time) tea.Msg { return take() })
}

// notesCmd delivers the next batch of notes, no sooner than wait from now.
func (m Model) notesCmd(wait time.Duration) tea.Cmd {
	b := m.Feed.Notes
	if b == nil {
		return nil
	}
	done := m.ctx.Done()
	return func() tea.Msg {
		if wait > 0 {
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-done:
				return nil
			case <-t.C:
			}
		}
		select {
		case <-done:
			return nil
		case <-b.Ready():
		}
		return program.NotesMsg{Notes: b.Take(maxBatch)}
	}
}

// forceRelistCmd asks the reflector to relist, off the screen's goroutine.
func forceRelistCmd(f func()) tea.Cmd {
	return func() tea.Msg {
		f()
		return program.ForceRelistDoneMsg{}
	}
}

// auditCmd runs an audit, bounded by the audit timeout and by the model's life.
func (m Model) auditCmd() tea.Cmd {
	audit, ctx, timeout := m.Feed.Audit, m.ctx, m.Opts.AuditTimeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		rep, err := audit(ctx)
		if err == nil && rep == nil {
			err = errors.New("audit returned no report")
		}
		return program.AuditMsg{Report: rep, Err: err}
	}
}
