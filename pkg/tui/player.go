package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
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

// playerState is one reading of a Player, for the screen.
type playerState struct {
	paused   bool
	speed    float64
	pos, end time.Duration
	endKnown bool
}

// readPlayer reads p's state.
func readPlayer(p Player) playerState {
	s := playerState{paused: p.Paused(), speed: p.Speed()}
	s.pos, _ = p.Position()
	s.end, s.endKnown = p.End()
	return s
}

// playerKeys are the replay player's bindings: enabled only when the
// dashboard has a Player.
type playerKeys struct {
	PlayPause, Step, Faster, Slower, Jump key.Binding
}

func newPlayerKeys() playerKeys {
	digits := make([]string, 10)
	for i := range digits {
		digits[i] = strconv.Itoa(i)
	}
	return playerKeys{
		PlayPause: key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "pause, resume"), key.WithDisabled()),
		Step:      key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "step"), key.WithDisabled()),
		Faster:    key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "faster ×2"), key.WithDisabled()),
		Slower:    key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "slower ÷2"), key.WithDisabled()),
		Jump:      key.NewBinding(key.WithKeys(digits...), key.WithHelp("0-9", "jump to 0-90%"), key.WithDisabled()),
	}
}

// enable turns the player's keys on.
func (k *playerKeys) enable() {
	for _, b := range []*key.Binding{&k.PlayPause, &k.Step, &k.Faster, &k.Slower, &k.Jump} {
		b.SetEnabled(true)
	}
}

// group is the player's column of the help.
func (k playerKeys) group() []key.Binding {
	return []key.Binding{k.PlayPause, k.Step, k.Faster, k.Slower, k.Jump}
}

// enabledOnly drops the disabled bindings of each group, and groups left empty.
func enabledOnly(groups [][]key.Binding) [][]key.Binding {
	var out [][]key.Binding
	for _, g := range groups {
		var kept []key.Binding
		for _, b := range g {
			if b.Enabled() {
				kept = append(kept, b)
			}
		}
		if len(kept) > 0 {
			out = append(out, kept)
		}
	}
	return out
}

// playerLegend explains the player's keys in the help.
const playerLegend = "space pauses the replay and resumes it; → serves it up to the next request or decision, then pauses; " +
	"+ and - double and halve the speed (×max: as fast as possible); 0-9 jump to that tenth of the recorded time: " +
	"forward as fast as possible, back by starting the replay again and running it fast to that point " +
	"(with --metrics-address or --fail-on a replay only runs forward: they count the trace once)"

// playerKey acts on k when it is one of the player's keys (ok false
// otherwise): the status says what it did, and the player is read afresh.
// A rewind quits (cmd): the replay starts again.
func (c *chrome) playerKey(k tea.KeyPressMsg, now time.Time) (cmd tea.Cmd, ok bool) {
	p, keys := c.opts.Player, c.keys.Player
	if p == nil {
		return nil, false
	}
	sev, text, quit := common.SevNone, "", false
	switch {
	case key.Matches(k, keys.PlayPause):
		text = "replay paused: space resumes, → steps to the next request or decision"
		if !p.TogglePause() {
			text = "replay resumed at " + speedText(p.Speed())
		}
	case key.Matches(k, keys.Step):
		p.Step()
		text = "stepping to the next request or decision, then paused"
	case key.Matches(k, keys.Faster):
		text = "replay speed " + speedText(p.Faster())
	case key.Matches(k, keys.Slower):
		text = "replay speed " + speedText(p.Slower())
	case key.Matches(k, keys.Jump):
		sev, text, quit = c.jump(int(k.Text[0] - '0'))
	default:
		return nil, false
	}
	c.status = status{text: text, sev: sev, at: now}
	c.replay.player, c.replay.havePlayer = readPlayer(p), true
	if quit {
		return tea.Quit, true
	}
	return nil, true
}

// jump seeks to tenth tenths of the recorded span; quit says it rewinds.
func (c *chrome) jump(tenth int) (sev common.Severity, text string, quit bool) {
	p, start := c.opts.Player, c.opts.Start
	end, ok := p.End()
	if !ok {
		return common.SevWarn, "the trace's length is not known yet: try again in a moment", false
	}
	target := end * time.Duration(tenth) / 10
	where := fmt.Sprintf("%d%% (%s)", tenth*10, clockTime(start, target))
	if err := p.Seek(target); err != nil {
		if pos, _ := p.Position(); target < pos {
			if c.opts.Rewind != nil {
				c.opts.Rewind(target)
				return common.SevNone, "rewinding to " + where + ": the replay starts again and runs to it", true
			}
			return common.SevWarn, fmt.Sprintf("%s is behind the replay (%s): with metrics or rules a replay only runs forward; run it again to see that part", where, clockTime(start, pos)), false
		}
		return common.SevBad, "jump to " + where + ": " + err.Error(), false
	}
	return common.SevNone, "jumping to " + where + ", then on at " + speedText(p.Speed()), false
}

// speedText is a speed as the screen shows it: "×2", "×1/4", "×max".
func speedText(s float64) string {
	switch {
	case s <= 0:
		return "×max"
	case s >= 1:
		return "×" + strconv.FormatFloat(s, 'g', 4, 64)
	}
	return "×1/" + strconv.FormatFloat(1/s, 'g', 4, 64)
}

// clockTime is the wall time a recorded offset stands for: "12:03:04".
func clockTime(start time.Time, at time.Duration) string {
	return start.Add(at).Format("15:04:05")
}

// playerBadge is the replay's position in recorded time, its speed, and
// whether it is paused: "▶ ×1 ███░░░░░░░ 12:03:04 / 12:10:00 · 29%".
func playerBadge(st common.Styles, p playerState, start time.Time, stopped bool) string {
	var b strings.Builder
	switch {
	case stopped:
	case p.paused:
		b.WriteString(st.Warn.Render("⏸ paused") + " ")
	default:
		b.WriteString("▶ ")
	}
	b.WriteString(speedText(p.speed))
	if !p.endKnown {
		fmt.Fprintf(&b, " %s / …", clockTime(start, p.pos))
		return b.String()
	}
	pct := int64(100)
	if p.end > 0 {
		pct = min(int64(p.pos)*100/int64(p.end), 100)
	}
	fmt.Fprintf(&b, " %s %s / %s · %d%%", progressBar(int64(p.pos), int64(max(p.end, 1)), 10), clockTime(start, p.pos), clockTime(start, p.end), pct)
	return b.String()
}
