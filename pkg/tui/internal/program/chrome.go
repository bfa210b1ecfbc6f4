package program

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/helpscreen"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/player"
)

// statusFor is how long an action's status line stays before the footer
// shows the key help again.
const statusFor = 10 * time.Second

// Chrome frames every screen, the overview's and a resource's alike: the
// header (title, what is watched, state line, LIVE or REPLAY badge), the
// footer (an action's status or the key help, and the notes dropped), the ?
// help screen and the replay's player (its keys and last reading). The
// root holds the one chrome; the component shown hands it what only it knows.
type Chrome struct {
	opts Options
	st   common.Styles
	help help.Model
	// Keys are the keys of every screen: help, quit, the player's.
	Keys ChromeKeys
	// Status is the player's last action's, or Options.Warning at the start.
	Status Status
	// Player is the player as last read, by a player key or any
	// resource's poll (HavePlayer: once read).
	Player     player.State
	HavePlayer bool
	// Probe is the run's delivery probe (Options.Probe) as last read by the
	// poll of the dashboard shown: reading it sorts its samples, which the
	// screen's goroutine must not wait for on every frame.
	Probe ProbeView
	// Width and Height are the terminal's, 0 until it says.
	Width, Height int
	// Ended says the run ended by itself (Options.Ended): its last screen
	// stays, to be looked through, until q.
	// EndedAt is when it was heard of: the uptime stops there.
	Ended   bool
	EndedAt time.Time
	// RecordingStopped says the trace stopped on a write error: the header
	// says so where it named the trace being recorded.
	RecordingStopped bool
	// helpScreen is the help screen's scroll.
	helpScreen helpscreen.Screen
}

// Status is an action's one-line report, shown in the footer until a newer
// one, or until it expires (Expire).
type Status struct {
	// Text is the report, "" for none; Sev grades it; At is when it was
	// made, on the run's clock.
	Text string
	Sev  common.Severity
	At   time.Time
	// made is when it was made on the wall clock (zero: not known): a
	// replay's clock runs at its speed, and any run's stops once it has
	// ended (a replay's too while it is paused).
	made time.Time
	// replay: a replay's status, which ages on the wall clock alone.
	replay bool
}

// NewStatus is the status text graded sev, made now: at on the run's
// clock; a replay's (replay) ages on the wall clock alone.
func NewStatus(text string, sev common.Severity, at time.Time, replay bool) Status {
	return Status{Text: text, Sev: sev, At: at, made: time.Now(), replay: replay}
}

// ScreenKeys are a root model's own keys, which the chrome lays out around
// its own: in the footer, first after help and quit, rest after the
// player's; on the help screen, help and quit join moves, the player's actions.
type ScreenKeys interface {
	FooterKeys() (first, rest []key.Binding)
	HelpGroups() (nav, moves, actions []key.Binding)
}

func newChrome(opts Options, st common.Styles) Chrome {
	h := help.New()
	h.Styles = st.Help
	keys := newChromeKeys()
	if opts.Player != nil {
		keys.Player.Enable()
	}
	c := Chrome{opts: opts, st: st, help: h, Keys: keys}
	switch {
	case opts.Warning != "":
		c.Status = NewStatus("warning: "+opts.Warning, common.SevWarn, opts.Start, opts.Replay)
	case opts.Notice != "":
		c.Status = NewStatus(opts.Notice, common.SevNone, opts.NoticeAt, opts.Replay)
	}
	return c
}

// Size is the screen's width and height, and the lines between header and footer.
func (c *Chrome) Size() (w, h, body int) {
	w, h = c.Width, c.Height
	if w <= 0 || h <= 0 {
		w, h = DefaultWidth, DefaultHeight
	}
	return w, h, h - headerLines - 1
}

// view frames the screen: draw's header, body (fitted between header and
// footer) and footer; on a terminal too small, a notice instead.
func (c *Chrome) view(draw func() (header, body []string, footer string)) tea.View {
	width, height, bodyLines := c.Size()
	var lines []string
	if width < minWidth || height < minHeight {
		msg := fmt.Sprintf("kubectl watchcache: the terminal is %dx%d; it needs at least %dx%d", width, height, minWidth, minHeight)
		lines = strings.Split(common.Wrap(msg, width, " "), "\n")
	} else {
		header, body, footer := draw()
		lines = append(header, common.FitLines(body, width, bodyLines)...)
		lines = append(lines, footer)
	}
	v := tea.NewView(strings.Join(common.FitLines(lines, width, height), "\n"))
	v.AltScreen = true
	v.WindowTitle = "kubectl watchcache"
	return v
}

// Header is the title line (the tool, the trace, the context and server,
// the uptime), what is watched (parts), and the state line with the
// findings' count (findings, "" for none) and the badge (stopped: a
// replay's reflectors returned, it ended).
func (c *Chrome) Header(width int, now time.Time, parts []string, state, findings string, stopped bool) []string {
	st, o := c.st, c.opts
	left := st.App.Render("kubectl watchcache")
	switch {
	case o.Replay && o.Trace != "":
		left += st.Label.Render("  trace ") + o.Trace
	case o.Trace != "" && c.RecordingStopped:
		left += st.Bad.Render("  recording stopped ") + o.Trace
	case o.Trace != "":
		left += st.Label.Render("  recording ") + o.Trace
	}
	if o.Kind.Source != "" {
		left += st.Label.Render("  observing ") + o.Kind.Source
	}
	if o.Context != "" {
		left += st.Label.Render("  ctx ") + o.Context
	}
	if o.Server != "" {
		left += "  " + o.Server
	}
	up := "up "
	if c.Ended {
		// The run is over: how long it ran, beside the state's "Stopped for".
		up, now = "ran ", c.Frozen(now)
	}
	// Right is one more cell from the state, so a state that just fits
	// never reads as one phrase with the findings' count.
	right := " " + joinRight(findings, c.badge(stopped, false))
	if ansi.StringWidth(right) > width-min(stateKept, ansi.StringWidth(state))-1 {
		// Too narrow for the whole badge: its end (where the replay is,
		// and "ended") matters more than its bar and clock.
		right = " " + joinRight(findings, c.badge(stopped, true))
	}
	return []string{common.Spread(left, st.Label.Render(up)+format.Age(now.Sub(o.Start)), width),
		common.Clip(strings.Join(parts, st.Faint.Render(" · ")), width), common.SpreadKeeping(state, right, width, stateKept)}
}

// stateKept is how much of the state line's left (the state: "● Backoff
// for 1.2s") a narrow screen keeps before the right side is cut.
const stateKept = 24

// joinRight puts a before b, two spaces apart, when there is an a.
func joinRight(a, b string) string {
	if a == "" {
		return b
	}
	return a + "  " + b
}

// WatchedParts say how resources are watched, as far as they all watch
// alike: the selectors, how lists are made (with lists) or, for another
// program's reflector, whose it is (client), and the wire.
func WatchedParts(rs []Resource, lists bool, client string) []string {
	var parts []string
	if sel, ok := Shared(rs, func(r *Resource) string { return r.Target.LabelSelector }); ok && sel != "" {
		parts = append(parts, "-l "+sel)
	}
	if sel, ok := Shared(rs, func(r *Resource) string { return r.Target.FieldSelector }); ok && sel != "" {
		parts = append(parts, "--field-selector "+sel)
	}
	switch {
	case client != "":
		// Another program's reflector: what it asked for (how it lists is in its requests).
		parts = append(parts, "client "+client)
		switch {
		case len(rs) != 1:
		case rs[0].Table:
			parts = append(parts, "tables")
		case rs[0].MetadataOnly:
			parts = append(parts, "metadata-only")
		case rs[0].Wire != "":
			parts = append(parts, "full objects")
		}
	case lists:
		if method, ok := Shared(rs, func(r *Resource) string { return listMethod(*r) }); ok {
			parts = append(parts, method)
		}
		switch meta, _ := Shared(rs, func(r *Resource) string { return fmt.Sprint(r.MetadataOnly) }); meta {
		case "true":
			parts = append(parts, "metadata-only")
		case "false":
			parts = append(parts, "full objects")
		}
	}
	if wire, ok := Shared(rs, func(r *Resource) string { return string(r.Wire) }); ok && wire != "" {
		parts = append(parts, wire)
	}
	return parts
}

// Shared is f's value for every one of rs; ok is false when they differ, or there are none.
func Shared(rs []Resource, f func(r *Resource) string) (v string, ok bool) {
	if len(rs) == 0 {
		return "", false
	}
	v = f(&rs[0])
	for i := range rs[1:] {
		if f(&rs[i+1]) != v {
			return "", false
		}
	}
	return v, true
}

// MetricsLegend is the help's first legend entry when the run serves
// metrics (Options.Metrics), else none.
func (c *Chrome) MetricsLegend() [][2]string {
	if c.opts.Metrics == "" {
		return nil
	}
	return [][2]string{{"metrics", "served at " + c.opts.Metrics + " (--metrics-address)"}}
}

// Frozen is t, or the moment the run ended if t is later: an ended run's
// screen stays as it was then (ages, "for" durations, the rates), however
// long it is looked at.
func (c *Chrome) Frozen(t time.Time) time.Time {
	if c.Ended && !c.EndedAt.IsZero() && t.After(c.EndedAt) {
		return c.EndedAt
	}
	return t
}

// badge says LIVE, or REPLAY with its position: the player's in recorded
// time when there is one; and whether the replay ended (stopped). Compact,
// it leaves out the progress bars and the player's clock.
func (c *Chrome) badge(stopped, compact bool) string {
	st := c.st
	if !c.opts.Replay {
		if c.Ended {
			return st.Good.Render("LIVE") + st.Label.Render(" ended")
		}
		return st.Good.Render("LIVE")
	}
	b := st.Badge.Render(" REPLAY ")
	if c.HavePlayer {
		b += " " + player.Badge(st, c.Player, c.opts.Start, stopped, compact)
	}
	early := stopped && c.opts.EndedEarly != nil && c.opts.EndedEarly()
	switch {
	case early && compact:
		b += st.Warn.Render(" ended early")
	case early:
		b += st.Warn.Render(" ended early: before its run's stop")
	case stopped:
		b += st.Label.Render(" ended")
	}
	if c.opts.Differences != nil {
		if n := c.opts.Differences(); n > 0 && compact {
			b += st.Warn.Render(fmt.Sprintf(" %d differ", n))
		} else if n > 0 {
			b += st.Warn.Render(" " + format.PluralUngrouped(n, "decision") + " differ")
		}
	}
	return b
}

// Expire drops the status once it is older than statusFor as a person
// reads it: a replay's on the wall clock (its own runs at its speed); a
// live run's on its clock, now, or on the wall clock once its clock stopped
// at its end.
func (s *Status) Expire(now time.Time) {
	age := now.Sub(s.At)
	if !s.made.IsZero() && (s.replay || time.Since(s.made) > age) {
		age = time.Since(s.made)
	}
	if s.Text != "" && age > statusFor {
		s.Text = ""
	}
}

// Footer is over (a prompt), else the status s followed by what room is
// left of hint (faint), else of the key help; on the right, how many notes
// were dropped on the way to the screen. Once a replay has ended
// (replayEnded), the help leaves out the keys that play on.
func (c *Chrome) Footer(width int, over string, s Status, hint string, keys ScreenKeys, lost int64, replayEnded bool) string {
	right := ""
	if lost > 0 {
		right = c.st.Warn.Render("dropped " + format.Count(lost) + " notes")
	}
	if over != "" {
		return common.Spread(over, right, width)
	}
	left, room := "", width-ansi.StringWidth(right)-1
	if c.Ended {
		left = c.st.Warn.Render(endedHint) + "  "
		room -= ansi.StringWidth(left)
	}
	if s.Text != "" {
		status := c.st.Sev(s.Sev, s.Text) + "  "
		left += status
		room -= ansi.StringWidth(status)
	}
	switch {
	case room < minFooterHelp && left != "":
	case hint != "" && left != "":
		left += c.st.Faint.Render(common.Clip(hint, room))
	case hint != "":
		left += c.st.Faint.Render(hint)
	default:
		first, rest := keys.FooterKeys()
		short := append([]key.Binding{c.Keys.Help, c.Keys.Quit}, first...)
		switch {
		case !replayEnded:
			short = append(short, c.Keys.Player.PlayPause, c.Keys.Player.Step)
		case c.opts.Rewind != nil:
			short = append(short, c.Keys.Player.Jump) // it replays again from a point
		}
		short = append(short, rest...)
		h := c.help
		h.SetWidth(max(room, minFooterHelp))
		left += h.ShortHelpView(short)
	}
	return common.Spread(left, right, width)
}

// minFooterHelp is the least room the footer gives the key help or hint;
// after a status, with less room left, they are left out.
const minFooterHelp = 10

// endedHint begins the footer of a run that ended by itself (Options.Ended).
const endedHint = "run ended"

// helpHintFor is the hint under a help screen of total lines.
func (c *Chrome) helpHintFor(total int) string {
	_, _, body := c.Size()
	return c.helpScreen.Hint(total, body)
}

// helpKey handles a key on the help screen of total lines: q quits, ? and
// esc close it, the rest scroll it when it does not fit.
func (c *Chrome) helpKey(k tea.KeyPressMsg, total int) (cmd tea.Cmd, closed bool) {
	_, _, body := c.Size()
	return c.helpScreen.Key(k, c.Keys.Quit, c.Keys.Help, c.Keys.Close, total, body)
}

// HelpLines is the help screen: the keys in columns, then the legend,
// after the run's warning at its start (Options.Warning), to which a replay
// adds what it cannot do and the player, before after.
func (c *Chrome) HelpLines(width int, keysTitle, legendTitle string, keys ScreenKeys, legend [][2]string, after ...[2]string) []string {
	st := c.st
	nav, moves, actions := keys.HelpGroups()
	groups := enabledOnly([][]key.Binding{nav, append(moves, c.Keys.Help, c.Keys.Quit), append(actions, c.Keys.Player.Group()...)})
	out := append([]string{st.TabActive.Render(" " + keysTitle + " "), ""}, helpscreen.Keys(st, groups, width)...)
	out = append(out, "", st.TabActive.Render(" "+legendTitle+" "), "")
	if w := c.opts.Warning; w != "" {
		// The footer says it for statusFor only: it stays here.
		legend = append([][2]string{{"warning", w}}, legend...)
	}
	if c.opts.Replay {
		legend = append(legend, [2]string{"replay", "force relist and audit need a live cluster"})
		if c.opts.Player != nil {
			legend = append(legend, [2]string{"player", player.Legend})
		}
	}
	return append(out, helpscreen.Legend(st, append(legend, after...), width)...)
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

// ActsOn says r and a can act in a run of opts: not in a replay, not on
// a passive Kind of rows (another program's reflectors).
func ActsOn(opts Options) bool { return !opts.Replay && opts.Kind.Passive == "" }

// listMethod is how a resource's lists are made: "list, page 500".
func listMethod(r Resource) string {
	strategy := string(r.Strategy)
	if strategy == "" {
		strategy = string(reflector.StrategyList)
	}
	if r.PageSize > 0 {
		return strategy + ", page " + format.Count(r.PageSize)
	}
	return strategy + ", unpaged"
}

// Screen geometry.
const (
	// DefaultWidth and DefaultHeight are the screen's size before the
	// terminal reports its own, and Run's for an output that is not a terminal.
	DefaultWidth, DefaultHeight = 80, 24
	minWidth, minHeight         = 40, 10 // below this only a notice fits
	headerLines                 = 3
)
