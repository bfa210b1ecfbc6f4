package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/player"
)

// Player controls a replay's pace: the dashboard's player keys call it, and
// the header's progress line reads it. *trace.Player implements it. The
// dashboard calls it from its own goroutines, so it must be safe for
// concurrent use, and its methods must return at once.
type Player interface {
	// TogglePause pauses a running replay and resumes a paused one, and
	// reports whether it is paused now.
	TogglePause() bool
	// Step serves the replay until its next request or decision, then pauses.
	Step()
	// Faster and Slower double and halve the speed, returning the new one
	// (0: as fast as possible).
	Faster() float64
	Slower() float64
	// Seek runs the replay fast to the recorded time at (an offset from the
	// trace's start), then on at the set speed; a time already passed is an error.
	Seek(at time.Duration) error
	// Paused and Speed are the player's state.
	Paused() bool
	Speed() float64
	// Position is the recorded time of the last line served, and how many were.
	Position() (time.Duration, int64)
	// End is the recorded time of the trace's last line, once known.
	End() (time.Duration, bool)
}

// playerKey acts on k when it is one of the player's keys (ok false
// otherwise): the status says what it did, and the player is read afresh.
// A rewind quits (cmd): the replay starts again.
func (c *chrome) playerKey(k tea.KeyPressMsg, now time.Time) (cmd tea.Cmd, ok bool) {
	p := c.opts.Player
	if p == nil {
		return nil, false
	}
	sev, text, quit, ok := player.Act(p, c.keys.Player, k, c.opts.Start, c.opts.Rewind)
	if !ok {
		return nil, false
	}
	c.status = status{text: text, sev: sev, at: now}
	c.player, c.havePlayer = player.Read(p), true
	if quit {
		return tea.Quit, true
	}
	return nil, true
}
