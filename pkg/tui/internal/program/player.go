package program

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/player"
)

// Player controls a replay's pace: the dashboard's player keys (space, →,
// +, -, 0-9) call it, and the header's progress line reads it; the
// methods' documentation is the interface's own, in the player component.
// *trace.Player implements it. The dashboard calls it from its own
// goroutines, so it must be safe for concurrent use, and its methods must
// return at once.
type Player = player.Player

// PlayerKey acts on k when it is one of the player's keys (ok false
// otherwise): the status says what it did, and the player is read afresh.
// A rewind quits (cmd): the replay starts again, and view is where the
// next dashboard opens. ended says the replay has ended (its reflectors stopped).
func (c *Chrome) PlayerKey(k tea.KeyPressMsg, now time.Time, ended bool, view View) (cmd tea.Cmd, ok bool) {
	p := c.opts.Player
	if p == nil {
		return nil, false
	}
	var rewind func(time.Duration)
	if r := c.opts.Rewind; r != nil {
		rewind = func(at time.Duration) { r(at, view) }
	}
	sev, text, quit, ok := player.Act(p, c.Keys.Player, k, c.opts.Start, rewind, ended)
	if !ok {
		return nil, false
	}
	c.Status = NewStatus(text, sev, now, c.opts.Replay)
	c.Player, c.HavePlayer = player.Read(p), true
	if quit {
		return tea.Quit, true
	}
	return nil, true
}
