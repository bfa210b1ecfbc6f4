package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/helpscreen"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/player"
)

// statusFor is how long an action's status line stays before the footer
// shows the key help again.
const statusFor = 10 * time.Second

// chrome frames every screen, the overview's and a resource's alike: the
// header (title, what is watched, state line, LIVE or REPLAY badge), the
// footer (an action's status or the key help, and the notes dropped), the ?
// help screen and the replay's player (its keys and last reading). The
// root holds the one chrome; the component shown hands it what only it knows.
type chrome struct {
	opts   Options
	st     common.Styles
	help   help.Model
	keys   chromeKeys
	status status // the player's last action's
	// player is the player as last read, by a player key or any
	// resource's poll (havePlayer: once read).
	player        player.State
	havePlayer    bool
	width, height int  // the terminal's, 0 until it says
	ended         bool // the run ended by itself (Options.Ended): any key quits
	helpScreen    helpscreen.Screen
}

// status is an action's one-line report, shown in the footer until a newer one.
type status struct {
	text string
	sev  common.Severity
	at   time.Time
}

// progress is where a replay stands, for the header's badge: done of total
// (Options.Progress's), shown when there is no player to say where it is;
// and whether the reflector stopped (the replay ended), shown either way.
type progress struct {
	done, total int64
	stopped     bool
}

// screenKeys are a root model's own keys, which the chrome lays out around
// its own: in the footer, first after help and quit, rest after the
// player's; on the help screen, help and quit join moves, the player's actions.
type screenKeys interface {
	footerKeys() (first, rest []key.Binding)
	helpGroups() (nav, moves, actions []key.Binding)
}

func newChrome(opts Options, st common.Styles) chrome {
	h := help.New()
	h.Styles = st.Help
	keys := newChromeKeys()
	if opts.Player != nil {
		keys.Player.Enable()
	}
	return chrome{opts: opts, st: st, help: h, keys: keys}
}

// size is the screen's width and height, and the lines between header and footer.
func (c *chrome) size() (w, h, body int) {
	w, h = c.width, c.height
	if w <= 0 || h <= 0 {
		w, h = defaultWidth, defaultHeight
	}
	return w, h, h - headerLines - 1
}

// view frames the screen: draw's header, body (fitted between header and
// footer) and footer; on a terminal too small, a notice instead.
func (c *chrome) view(draw func() (header, body []string, footer string)) tea.View {
	width, height, bodyLines := c.size()
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

// header is the title line (the tool, the trace, the context and server,
// the uptime), what is watched (parts), and the state line with the
// findings' count (findings, "" for none) and r's badge.
func (c *chrome) header(width int, now time.Time, parts []string, state, findings string, r progress) []string {
	st, o := c.st, c.opts
	left := st.App.Render("kubectl watchcache")
	switch {
	case o.Replay && o.Trace != "":
		left += st.Label.Render("  trace ") + o.Trace
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
	return []string{common.Spread(left, st.Label.Render("up ")+format.Age(now.Sub(o.Start)), width),
		common.Clip(strings.Join(parts, st.Faint.Render(" · ")), width), common.SpreadKeeping(state, joinRight(findings, c.badge(r)), width, stateKept)}
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

// watchedParts say how resources are watched, as far as they all watch
// alike: the selectors, how lists are made (with lists) or, for another
// program's reflector, whose it is (client), and the wire.
func watchedParts(rs []Resource, lists bool, client string) []string {
	var parts []string
	if sel, ok := shared(rs, func(r *Resource) string { return r.Target.LabelSelector }); ok && sel != "" {
		parts = append(parts, "-l "+sel)
	}
	if sel, ok := shared(rs, func(r *Resource) string { return r.Target.FieldSelector }); ok && sel != "" {
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
		if method, ok := shared(rs, func(r *Resource) string { return listMethod(*r) }); ok {
			parts = append(parts, method)
		}
		switch meta, _ := shared(rs, func(r *Resource) string { return fmt.Sprint(r.MetadataOnly) }); meta {
		case "true":
			parts = append(parts, "metadata-only")
		case "false":
			parts = append(parts, "full objects")
		}
	}
	if wire, ok := shared(rs, func(r *Resource) string { return string(r.Wire) }); ok && wire != "" {
		parts = append(parts, wire)
	}
	return parts
}

// shared is f's value for every one of rs; ok is false when they differ, or there are none.
func shared(rs []Resource, f func(r *Resource) string) (v string, ok bool) {
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

// badge says LIVE, or REPLAY with its position: the player's in recorded
// time when there is one, else r's done of total; and whether the replay ended.
func (c *chrome) badge(r progress) string {
	st := c.st
	if !c.opts.Replay {
		if c.ended {
			return st.Good.Render("LIVE") + st.Label.Render(" ended")
		}
		return st.Good.Render("LIVE")
	}
	b := st.Badge.Render(" REPLAY ")
	switch {
	case c.havePlayer:
		b += " " + player.Badge(st, c.player, c.opts.Start, r.stopped)
	case r.total > 0:
		pct := min(r.done*100/r.total, 100)
		b += fmt.Sprintf(" %s %d%% %s/%s", common.ProgressBar(r.done, r.total, 10), pct, format.Count(r.done), format.Count(r.total))
	case r.done > 0:
		b += " " + format.Count(r.done)
	}
	if r.stopped {
		b += st.Label.Render(" ended")
	}
	return b
}

// expire drops the status once it is older than statusFor at now.
func (s *status) expire(now time.Time) {
	if s.text != "" && now.Sub(s.at) > statusFor {
		s.text = ""
	}
}

// footer is over (a prompt), else the status s, else hint (faint), else the
// key help; on the right, how many notes were dropped on the way to the screen.
func (c *chrome) footer(width int, over string, s status, hint string, keys screenKeys, lost int64) string {
	right := ""
	if lost > 0 {
		right = c.st.Warn.Render("dropped " + format.Count(lost) + " notes")
	}
	left := over
	switch {
	case c.ended:
		left = c.st.Warn.Render(endedHint)
	case left != "":
	case s.text != "":
		left = c.st.Sev(s.sev, s.text)
	case hint != "":
		left = c.st.Faint.Render(hint)
	default:
		first, rest := keys.footerKeys()
		short := append([]key.Binding{c.keys.Help, c.keys.Quit}, first...)
		short = append(append(short, c.keys.Player.PlayPause, c.keys.Player.Step), rest...)
		h := c.help
		h.SetWidth(max(width-ansi.StringWidth(right)-1, 10))
		left = h.ShortHelpView(short)
	}
	return common.Spread(left, right, width)
}

// endedHint is the footer of a run that ended by itself (Options.Ended).
const endedHint = "ended: press any key to quit"

// helpHintFor is the hint under a help screen of total lines.
func (c *chrome) helpHintFor(total int) string {
	_, _, body := c.size()
	return helpscreen.HintFor(total, body)
}

// helpKey handles a key on the help screen of total lines: q quits, ? and
// esc close it, the rest scroll it when it does not fit.
func (c *chrome) helpKey(k tea.KeyPressMsg, total int) (cmd tea.Cmd, closed bool) {
	_, _, body := c.size()
	return c.helpScreen.Key(k, c.keys.Quit, c.keys.Help, c.keys.Close, total, body)
}

// helpLines is the help screen: the keys in columns, then the legend, to
// which a replay adds what it cannot do and the player, before after.
func (c *chrome) helpLines(width int, keysTitle, legendTitle string, keys screenKeys, legend [][2]string, after ...[2]string) []string {
	st := c.st
	nav, moves, actions := keys.helpGroups()
	groups := enabledOnly([][]key.Binding{nav, append(moves, c.keys.Help, c.keys.Quit), append(actions, c.keys.Player.Group()...)})
	out := append([]string{st.TabActive.Render(" " + keysTitle + " "), ""}, helpscreen.Keys(st, groups, width)...)
	out = append(out, "", st.TabActive.Render(" "+legendTitle+" "), "")
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
