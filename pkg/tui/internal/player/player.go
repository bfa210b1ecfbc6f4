// Package player is the replay player component: the Player a replay
// gives the dashboard, one reading of it (State) for the header's badge, its
// keys (space, →, +, -, 0-9) and what each does (Act), and its legend in
// the help.
package player

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
// the header's progress line reads it (tui.Player is this interface;
// *trace.Player implements it). The dashboard calls it from its own
// goroutines, so it must be safe for concurrent use, and its methods must
// return at once.
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
	// Reached is the recorded time the replay has come to: Position's, or,
	// between two lines at pace, on towards the next (the header's clock).
	Reached() time.Duration
	// End is the recorded time of the trace's last line, once known.
	End() (time.Duration, bool)
}

// State is one reading of a Player, for the screen.
type State struct {
	Paused   bool
	Speed    float64
	Pos, End time.Duration
	EndKnown bool
}

// Read reads p's state.
func Read(p Player) State {
	s := State{Paused: p.Paused(), Speed: p.Speed()}
	s.Pos = p.Reached()
	s.End, s.EndKnown = p.End()
	return s
}

// Keys are the replay player's bindings: enabled only when the
// dashboard has a Player.
type Keys struct {
	PlayPause, Step, Faster, Slower, Jump key.Binding
}

// NewKeys are the player's keys, disabled until Enable.
func NewKeys() Keys {
	digits := make([]string, 10)
	for i := range digits {
		digits[i] = strconv.Itoa(i)
	}
	return Keys{
		PlayPause: key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "pause, resume"), key.WithDisabled()),
		Step:      key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "step"), key.WithDisabled()),
		Faster:    key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "faster ×2"), key.WithDisabled()),
		Slower:    key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "slower ÷2"), key.WithDisabled()),
		Jump:      key.NewBinding(key.WithKeys(digits...), key.WithHelp("0-9", "jump to 0-90%"), key.WithDisabled()),
	}
}

// Enable turns the player's keys on.
func (k *Keys) Enable() {
	for _, b := range []*key.Binding{&k.PlayPause, &k.Step, &k.Faster, &k.Slower, &k.Jump} {
		b.SetEnabled(true)
	}
}

// Group is the player's column of the help.
func (k Keys) Group() []key.Binding {
	return []key.Binding{k.PlayPause, k.Step, k.Faster, k.Slower, k.Jump}
}

// Legend explains the player's keys in the help.
const Legend = "space pauses the replay and resumes it; → serves it up to the next request or decision, then pauses; " +
	"+ and - double and halve the speed (×max: as fast as possible); 0-9 jump to that tenth of the recorded time: " +
	"forward as fast as possible, back by starting the replay again and running it fast to that point " +
	"(with --metrics-address or --fail-on a replay only runs forward: they count the trace once)"

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

// Badge is the replay's position in recorded time, its speed, and
// whether it is paused: "▶ ×1 ███░░░░░░░ 12:03:04 / 12:10:00 · 29%";
// compact (a narrow screen): "▶ ×1 · 29%".
func Badge(st common.Styles, p State, start time.Time, stopped, compact bool) string {
	var b strings.Builder
	switch {
	case stopped:
	case p.Paused:
		b.WriteString(st.Warn.Render("⏸ paused") + " ")
	default:
		b.WriteString("▶ ")
	}
	b.WriteString(speedText(p.Speed))
	if !p.EndKnown {
		fmt.Fprintf(&b, " %s / …", clockTime(start, p.Pos))
		return b.String()
	}
	pct := int64(100)
	if p.End > 0 {
		pct = min(int64(p.Pos)*100/int64(p.End), 100)
	}
	if compact {
		fmt.Fprintf(&b, " · %d%%", pct)
		return b.String()
	}
	fmt.Fprintf(&b, " %s %s / %s · %d%%", common.ProgressBar(int64(p.Pos), int64(max(p.End, 1)), 10), clockTime(start, p.Pos), clockTime(start, p.End), pct)
	return b.String()
}

// Act does what k asks of p when it is one of keys (ok false otherwise),
// and says what it did: start is the trace's start in wall time, rewind
// (nil: none) starts the replay again at an earlier point; quit says it did
// (the dashboard quits, and the replay starts again). Once the replay has
// ended, the keys that play on say so instead; + and - set the speed a
// jump back replays at, where there is one.
func Act(p Player, keys Keys, k tea.KeyPressMsg, start time.Time, rewind func(time.Duration), ended bool) (sev common.Severity, text string, quit, ok bool) {
	speed := key.Matches(k, keys.Faster) || key.Matches(k, keys.Slower)
	switch {
	case ended && (key.Matches(k, keys.PlayPause) || key.Matches(k, keys.Step) || speed && rewind == nil):
		// Nothing is left to play: say so rather than what the key would do.
		text = "the replay has ended: q quits"
		if rewind != nil {
			text = "the replay has ended: 0-9 replays it again from that point (+ and - set its speed), q quits"
		}
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
		// The key's name, "0" to "9" for Jump: a message a program builds
		// may have no Text, never no name.
		sev, text, quit = jump(p, int(k.String()[0]-'0'), start, rewind)
	default:
		return common.SevNone, "", false, false
	}
	if ended && speed && rewind != nil {
		// The speed a jump back replays at (×max ran it to the end at once).
		text += ": 0-9 replays it again from that point at it"
	}
	return sev, text, quit, true
}

// jump seeks to tenth tenths of the recorded span; quit says it rewinds.
func jump(p Player, tenth int, start time.Time, rewind func(time.Duration)) (sev common.Severity, text string, quit bool) {
	end, ok := p.End()
	if !ok {
		return common.SevWarn, "the trace's length is not known yet: try again in a moment", false
	}
	target := end * time.Duration(tenth) / 10
	where := fmt.Sprintf("%d%% (%s)", tenth*10, clockTime(start, target))
	if err := p.Seek(target); err != nil {
		if pos, _ := p.Position(); target < pos {
			if rewind != nil {
				rewind(target)
				return common.SevNone, "rewinding to " + where + ": the replay starts again and runs to it", true
			}
			return common.SevWarn, fmt.Sprintf("%s is behind the replay (%s): with metrics or rules a replay only runs forward; run it again to see that part", where, clockTime(start, pos)), false
		}
		return common.SevBad, "jump to " + where + ": " + err.Error(), false
	}
	return common.SevNone, "jumping to " + where + ", then on at " + speedText(p.Speed()), false
}
