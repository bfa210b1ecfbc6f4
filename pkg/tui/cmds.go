package tui

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/churn"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/player"
)

// maxBatch bounds one delivery of notes to the model, so
// one message never holds the screen for long; what does not fit waits in
// its buffer (and a full buffer drops, counted, never blocking the writer).
const maxBatch = 16384

// snapshotMsg is one poll of the feed.
type snapshotMsg struct {
	at          time.Time
	hasStats    bool
	stats       reflector.Stats
	hasStore    bool
	counters    store.Counters
	storeReady  bool
	hasProgress bool
	done, total int64
	notesLost   int64
	alerts      *Alerts
	player      *player.State
	// findings are Feed.Findings' (hasFindings: the feed has an engine).
	hasFindings bool
	findings    []findings.Finding
	// churn is Feed.Churn's, read only while the churn pane is open on
	// this resource's dashboard.
	hasChurn bool
	churn    diff.Summary
}

// notesMsg delivers notes from the NoteBuffer.
type notesMsg struct{ notes []reflector.Note }

// auditMsg is the end of an audit.
type auditMsg struct {
	report *reflector.AuditReport
	err    error
}

// forceRelistDoneMsg says ForceRelist returned.
type forceRelistDoneMsg struct{}

// endedMsg says the run ended by itself (Options.Ended).
type endedMsg struct{}

// waitEnded waits for Options.Ended; nil when there is none.
func waitEnded(ctx context.Context, ended <-chan struct{}) tea.Cmd {
	if ended == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case <-ended:
			return endedMsg{}
		case <-ctx.Done():
			return nil
		}
	}
}

// takeSnapshot polls everything the feed offers. It runs on a command
// goroutine, never on the reflector's.
func takeSnapshot(opts Options, feed Feed) snapshotMsg {
	s := snapshotMsg{at: opts.Now()}
	if feed.Stats != nil {
		s.hasStats, s.stats = true, feed.Stats()
	}
	if feed.Store != nil {
		s.hasStore, s.counters, s.storeReady = true, feed.Store.Counters(), feed.Store.Ready()
	}
	if opts.Progress != nil {
		s.hasProgress = true
		s.done, s.total = opts.Progress()
	}
	if opts.Player != nil {
		p := player.Read(opts.Player)
		s.player = &p
	}
	if feed.Notes != nil {
		s.notesLost = feed.Notes.Dropped()
	}
	if feed.Alerts != nil {
		a := feed.Alerts()
		s.alerts = &a
	}
	if feed.Findings != nil {
		s.hasFindings, s.findings = true, feed.Findings()
	}
	return s
}

// pollCmd takes the next snapshot after wait; with the churn pane open on
// this resource's dashboard, and its last read churn.Every old, the
// snapshot reads Feed.Churn too.
func (m Model) pollCmd(wait time.Duration) tea.Cmd {
	opts, feed := m.opts, m.feed
	readChurn := m.mode() == stateChurn && feed.Churn != nil && m.churn.Due(m.now)
	take := func() tea.Msg {
		s := takeSnapshot(opts, feed)
		if readChurn {
			s.hasChurn, s.churn = true, feed.Churn(churn.Top)
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
	if m.feed.Notes == nil {
		return nil
	}
	done, ch := m.life.ctx.Done(), m.feed.Notes.ch
	return func() tea.Msg {
		notes, _, ok := readBatch(done, ch, wait)
		if !ok {
			return nil
		}
		return notesMsg{notes: notes}
	}
}

// readBatch waits wait, then blocks until ch has something, then takes
// what else is ready, up to maxBatch. closed reports that ch was closed;
// ok is false when done closed first.
func readBatch[T any](done <-chan struct{}, ch <-chan T, wait time.Duration) (batch []T, closed, ok bool) {
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-done:
			return nil, false, false
		case <-t.C:
		}
	}
	select {
	case <-done:
		return nil, false, false
	case v, open := <-ch:
		if !open {
			return nil, true, true
		}
		batch = append(batch, v)
	}
	for len(batch) < maxBatch {
		select {
		case v, open := <-ch:
			if !open {
				return batch, true, true
			}
			batch = append(batch, v)
		default:
			return batch, false, true
		}
	}
	return batch, false, true
}

// forceRelistCmd asks the reflector to relist, off the screen's goroutine.
func forceRelistCmd(f func()) tea.Cmd {
	return func() tea.Msg {
		f()
		return forceRelistDoneMsg{}
	}
}

// auditCmd runs an audit, bounded by the audit timeout and by the model's life.
func (m Model) auditCmd() tea.Cmd {
	audit, ctx, timeout := m.feed.Audit, m.life.ctx, m.opts.AuditTimeout
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		rep, err := audit(ctx)
		if err == nil && rep == nil {
			err = errors.New("audit returned no report")
		}
		return auditMsg{report: rep, err: err}
	}
}

// resourceMsg is a message of resource i's Model, routed back to it by the
// Overview: every command of a sub-model is wrapped so that what it returns
// carries the index.
type resourceMsg struct {
	i   int
	msg tea.Msg
}

// wrapCmd makes cmd's message (and those of a batch it returns) a resourceMsg for resource i.
func wrapCmd(i int, cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg { return wrapMsg(i, cmd()) }
}

// wrapMsg routes the Model's own messages to resource i; a batch is wrapped
// command by command, and anything else (tea.QuitMsg) goes to the program as it is.
func wrapMsg(i int, msg tea.Msg) tea.Msg {
	switch msg := msg.(type) {
	case snapshotMsg, notesMsg, auditMsg, forceRelistDoneMsg, endedMsg, churn.Msg:
		return resourceMsg{i: i, msg: msg}
	case tea.BatchMsg:
		out := make(tea.BatchMsg, len(msg))
		for j, c := range msg {
			out[j] = wrapCmd(i, c)
		}
		return out
	}
	return msg
}
