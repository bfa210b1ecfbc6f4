package dashboard

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/churn"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/detail"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/panes"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/rates"
)

// Screen geometry.
const (
	gaugeColumnWidth = 40
	numGauges        = 10
)

// layout says which sections fit and how many rows each pane gets.
type layout struct {
	width     int
	wide      bool // all panes at once; otherwise the focused one under a tab bar
	gaugeCols int
	gaugeRows int // 0 when the gauges do not fit
	showRates bool
	body      int // lines between header and footer
	paneRows  [panes.Num]int
	logWidth  int // wide: the log's share of the width
}

// rows is how many lines pane p gets below its title.
func (l layout) rows(p panes.Pane) int { return l.paneRows[p] }

// selectable is how many of a pane's lines show rows: the requests have a
// column head, the diff a two-line summary.
func (l layout) selectable(p panes.Pane) int {
	switch p {
	case panes.Requests:
		return l.paneRows[p] - 1
	case panes.Diff:
		return l.paneRows[p] - 2
	}
	return l.paneRows[p]
}

func (m *Model) layout() layout {
	w, h, body := m.Chrome.Size()
	l := layout{width: w, body: body}
	l.gaugeCols = min(max(w/gaugeColumnWidth, 1), 4)
	l.gaugeRows = (numGauges + l.gaugeCols - 1) / l.gaugeCols
	l.showRates = true
	l.wide = w >= common.WideWidth && h >= common.WideHeight
	top := func() int {
		n := m.alertLineCount()
		if l.gaugeRows > 0 {
			n += 1 + l.gaugeRows
			if m.showsDelivery() {
				n++
			}
			if m.showsFaults() {
				n++
			}
		}
		if l.showRates {
			n += 1 + rates.NumSeries
		}
		return n
	}
	if l.wide {
		rest := l.body - top()
		reqBlock := min(max(rest/3, 4), max(m.rowsIn(panes.Requests)+2, 4))
		l.paneRows[panes.Requests] = reqBlock - 1
		lower := rest - reqBlock - 1
		l.paneRows[panes.Log], l.paneRows[panes.Diff] = lower, lower
		l.logWidth = w * 3 / 5
		return l
	}
	// Compact: drop the rates, then the gauges, to keep at least 3 pane rows.
	if l.body-top()-1 < 3 {
		l.showRates = false
	}
	if l.body-top()-1 < 3 {
		l.gaugeRows = 0
	}
	rows := max(l.body-top()-1, 0)
	for p := range panes.Num {
		l.paneRows[p] = rows
	}
	return l
}

// View renders the screen.
func (m Model) View() tea.View {
	return m.Frame(&m, nil, m.Now, func() []string {
		if m.State == program.StateChurn {
			_, _, body := m.Chrome.Size()
			return m.churn.Window(m.St, m.Chrome.Width, body)
		}
		return m.dashboard(m.layout())
	})
}

// Header is the run's identity, the resource, the reflector's state, and live or replay.
func (m *Model) Header(width int) []string {
	t := m.res.Target
	name := m.St.Value.Render(t.Resource.String())
	if t.Resource.Kind != "" && width >= common.WideWidth {
		name += " " + m.St.Label.Render(t.Resource.Kind)
	}
	client := strings.TrimSpace(m.res.Client + " " + m.res.ClientAddr)
	parts := append([]string{name, scope(t)}, program.WatchedParts([]program.Resource{m.res}, m.res.Client == "", client)...)
	return m.Chrome.Header(width, m.Now, parts, m.stateLine(), m.findingsBadge(), m.Stopped)
}

// findingsBadge is the header's count of findings, "" without an engine.
func (m *Model) findingsBadge() string {
	if !m.HaveFindings {
		return ""
	}
	return findingspane.TallyOf(m.Findings).Badge(m.St)
}

// scope is where a target watches: its namespace, all namespaces, or the cluster.
func scope(t reflector.Target) string {
	switch {
	case t.Namespace != "":
		return "namespace " + t.Namespace
	case t.Resource.Namespaced || t.Resource.Kind == "":
		return "all namespaces"
	}
	return "cluster-scoped"
}

// stateLine is the reflector's state, colored, with how long it has been in it.
func (m *Model) stateLine() string {
	st := m.St
	if !m.HaveStats {
		return st.Faint.Render("○ waiting for the reflector's first stats")
	}
	s := m.Stats
	if !s.ClientLeft.IsZero() {
		return st.Faint.Render("○ " + common.ClientLeftText(&s, m.Now))
	}
	sev := common.StateSeverity(s.State)
	c := s.Current
	// A request the server has not answered for a second is no watch yet
	// (a hung connection, a TLS handshake that does not end).
	unanswered := c != nil && c.Awaiting && m.Now.Sub(c.Started) >= time.Second
	if unanswered {
		sev = common.SevWarn
	}
	line := st.Sev(sev, "● "+s.State.String())
	if !s.StateSince.IsZero() {
		line += " for " + format.Age(m.Now.Sub(s.StateSince))
	}
	if s.State == reflector.StateBackoff && !s.BackoffUntil.IsZero() {
		line += ", retry in " + format.Age(s.BackoffUntil.Sub(m.Now))
	}
	switch {
	case unanswered:
		line += st.Warn.Render(fmt.Sprintf(" · %s #%d sent %s ago: no answer from the server yet", c.Verb, c.ID, format.Age(m.Now.Sub(c.Started))))
	case c != nil:
		line += st.Label.Render(fmt.Sprintf(" · %s #%d running %s, %s", c.Verb, c.ID, format.Age(m.Now.Sub(c.Started)), common.RequestCount(c)))
	}
	if s.LastError != "" && s.State != reflector.StateWatching {
		line += st.Bad.Render(" · last error: ") + s.LastError
	}
	return line
}

// section is a rule with a title: "── health ─────".
func (m *Model) section(title string, width int) string {
	return common.SectionRule(m.St, title, width)
}

// dashboard renders everything between the header and the footer.
func (m *Model) dashboard(l layout) []string {
	out := m.alertLines(l.width)
	if l.gaugeRows > 0 {
		out = append(out, m.section("health", l.width))
		out = append(out, m.gaugeLines(l)...)
		if m.showsDelivery() {
			out = append(out, m.deliveryLine(l.width))
		}
		if m.showsFaults() {
			out = append(out, m.faultsLine(l.width))
		}
	}
	if l.showRates {
		out = append(out, m.section("event rates · last 60s", l.width))
		out = append(out, m.rateLines(l.width)...)
	}
	if l.wide {
		return append(out, m.widePanes(l)...)
	}
	out = append(out, m.tabBar(l.width))
	return append(out, m.paneLines(m.focus, l.width, l.rows(m.focus))...)
}

// paneLines renders one pane's rows.
func (m *Model) paneLines(p panes.Pane, width, h int) []string {
	focused := m.focus == p
	switch p {
	case panes.Requests:
		return m.requests.Lines(m.St, panes.RequestRows(&m.Stats), m.Now, width, h, focused)
	case panes.Diff:
		return m.diff.Lines(m.St, m.Now, width, h, focused)
	}
	return m.Log.Lines(m.St, width, h, focused)
}

// paneTitle is a pane's title line; the focused one stands out.
func (m *Model) paneTitle(p panes.Pane, width int) string {
	title := " " + p.String() + " "
	styled := m.St.Tab.Render(title)
	if m.focus == p {
		styled = m.St.TabActive.Render(title)
	}
	return common.Clip(styled+" "+m.paneStatus(p), width)
}

// paneStatus is what a pane's title says besides its name.
func (m *Model) paneStatus(p panes.Pane) string {
	switch p {
	case panes.Log:
		return m.Log.Title(m.St)
	case panes.Requests:
		n := len(panes.RequestRows(&m.Stats))
		status := format.Count(n) + " recent"
		if s := m.requests.Scroll; !s.Follow && s.Cursor < n-1 {
			// Moved off the newest: say that newer ones came, and how to follow.
			status += m.St.Warn.Render(fmt.Sprintf(" · %s newer below (G follows)", format.Count(n-1-s.Cursor)))
		}
		return status
	case panes.Diff:
		if m.diff.Diff != nil {
			return format.Count(m.diff.Diff.Missed()) + " missed"
		}
	}
	return ""
}

// widePanes shows the requests across the width, the log and the diff side by side.
func (m *Model) widePanes(l layout) []string {
	out := []string{m.paneTitle(panes.Requests, l.width)}
	out = append(out, common.FitLines(m.paneLines(panes.Requests, l.width, l.rows(panes.Requests)), l.width, l.rows(panes.Requests))...)
	rightW := l.width - l.logWidth - 3
	left := append([]string{m.paneTitle(panes.Log, l.logWidth)}, m.paneLines(panes.Log, l.logWidth, l.rows(panes.Log))...)
	right := append([]string{m.paneTitle(panes.Diff, rightW)}, m.paneLines(panes.Diff, rightW, l.rows(panes.Diff))...)
	return append(out, common.SideBySide(left, l.logWidth, m.St.Section.Render(" │ "), right)...)
}

// tabBar names the panes, the focused one highlighted, and its status.
func (m *Model) tabBar(width int) string {
	var tabs []string
	for p := range panes.Num {
		if p == m.focus {
			tabs = append(tabs, m.St.TabActive.Render(" "+p.String()+" "))
		} else {
			tabs = append(tabs, m.St.Tab.Render(" "+p.String()+" "))
		}
	}
	bar := strings.Join(tabs, m.St.Faint.Render("│"))
	status := m.paneStatus(m.focus)
	if ansi.StringWidth(bar)+ansi.StringWidth(status)+2 > width {
		return common.Clip(bar+"  "+status, width)
	}
	return common.Spread(bar, status, width)
}

// Footer is the filter prompt, an action's status, or the key help; with
// the count of anything dropped on the way to the screen.
func (m *Model) Footer(width int) string {
	var over string
	if m.State == program.StateFilter {
		over = m.filter.View(m.St) + m.St.Faint.Render("  enter keep · esc clear")
	}
	hint, _ := m.OverlayHint(m)
	switch {
	case m.State == program.StateChurn:
		hint = churn.Hint
	case m.State == program.StateDetail && m.Detail.Kind == program.DetailObject && m.hasDiffs(m.Detail.Ref):
		hint = detail.ObjectDiffHint(m.Detail.Meta)
	}
	keys := m.shownKeys()
	if !m.diffed {
		keys.Churn.SetEnabled(false) // in the help, not the footer, until an event was diffed
	}
	return m.Chrome.Footer(width, over, m.shownStatus(), hint, keys, m.NotesLost, m.Stopped)
}

// gauge is one labelled health value.
type gauge struct {
	label, value string
}

// Gauge labels, also what hack/tui-check.sh looks for on the screen.
const (
	labelObjects   = "objects"
	labelBookmark  = "bookmark"
	labelLastRV    = "last RV"
	labelGone      = "410 Gone"
	labelRelists   = "relists"
	labelUID       = "UID mismatch"
	labelRestarts  = "watch restarts"
	labelDups      = "duplicates"
	labelBackoffs  = "backoffs"
	labelLatency   = "apply latency"
	gaugeLabelCols = 16
)

func (m *Model) gauges() []gauge {
	st, s, c := m.St, m.Stats, m.Stats.Counters
	objects := st.Faint.Render("-")
	if m.Feed.Store != nil || m.Counters.Objects > 0 {
		switch {
		case m.StoreReady:
			objects = st.Value.Render(format.Count(m.Counters.Objects)) + st.Label.Render(" · "+format.Bytes(m.Counters.BytesHeld))
		case m.reflectorReturned():
			// No list will come: the reflector returned before its first.
			objects = st.Sev(common.StateSeverity(m.Stats.State), strings.ToLower(m.Stats.State.String())+", never listed")
		default:
			objects = st.Warn.Render("waiting for the first list")
		}
	}
	var bookmark string
	switch {
	case !m.HaveStats:
		bookmark = st.Faint.Render("-")
	case s.BookmarkAt.IsZero():
		waited := m.Now.Sub(m.Opts.Start)
		sev := common.BookmarkSeverity(waited)
		if sev == common.SevGood {
			bookmark = st.Faint.Render("none yet")
		} else {
			bookmark = st.Sev(sev, "none yet after "+format.Age(waited))
		}
	default:
		// The age first: it is what the color grades, and what a cut keeps.
		// Late or stale, the word stands for "ago", so that the rv after it
		// fits a column of 24 (120 columns) up to seven digits.
		d := m.Now.Sub(s.BookmarkAt)
		sev := common.BookmarkSeverity(d)
		text := format.Age(d) + " ago"
		switch sev {
		case common.SevWarn:
			text = "late " + format.Age(d)
		case common.SevBad:
			text = "stale " + format.Age(d)
		}
		bookmark = st.Sev(sev, text) + st.Label.Render(" · rv "+common.OrDash(s.BookmarkRV))
	}
	gone := st.Counter(c.Gone, true)
	if !s.LastGone.IsZero() {
		gone += st.Label.Render(" · last " + format.Age(m.Now.Sub(s.LastGone)) + " ago")
	}
	restarts := max(c.Watches-1, 0)
	lat := st.Faint.Render("-")
	switch l := s.ApplyLatency; {
	case m.Opts.Replay:
		// Measured on the replay's virtual clock, which does not move while an event is applied.
		lat = st.Faint.Render("- in a replay")
	case l.Samples > 0:
		sev := common.SevNone
		switch {
		case l.P99 >= time.Second:
			sev = common.SevBad
		case l.P99 >= 100*time.Millisecond:
			sev = common.SevWarn
		}
		lat = st.Sev(sev, "p50 "+format.Latency(l.P50)+" · p99 "+format.Latency(l.P99))
	}
	return []gauge{
		{labelObjects, objects},
		{labelBookmark, bookmark},
		{labelLastRV, st.Value.Render(common.OrDash(s.ResourceVersion))},
		{labelGone, gone},
		{labelRelists, st.Counter(c.Relists, true)},
		{labelUID, st.Counter(c.UIDMismatches, true)},
		{labelRestarts, st.Counter(restarts, false)},
		{labelDups, st.Counter(c.Duplicates, false)},
		{labelBackoffs, st.Counter(c.Backoffs, true)},
		{labelLatency, lat},
	}
}

// gaugeLines lays the gauges out in rows of l.gaugeCols.
func (m *Model) gaugeLines(l layout) []string {
	g := m.gauges()
	colW := l.width / l.gaugeCols
	out := make([]string, 0, l.gaugeRows)
	for r := range l.gaugeRows {
		var b strings.Builder
		for c := range l.gaugeCols {
			i := r*l.gaugeCols + c
			if i >= len(g) {
				break
			}
			cell := " " + m.St.Label.Render(fmt.Sprintf("%-*s", gaugeLabelCols-1, g[i].label)) + g[i].value
			b.WriteString(common.Pad(cell, colW))
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

// rateLines are the sparklines, one per event type.
func (m *Model) rateLines(width int) []string {
	out := make([]string, 0, rates.NumSeries)
	const labelW = 10
	for i := range rates.NumSeries {
		stats := fmt.Sprintf(" %6s/s %8s/min", format.Count(m.Rates.PerSecond(i)), format.Count(m.Rates.Total(i)))
		if width >= common.WideWidth {
			stats += fmt.Sprintf("  total %s", format.Count(rates.Counts(m.Stats.Counters)[i]))
		}
		sw := min(width-labelW-ansi.StringWidth(stats)-1, rates.Seconds)
		line := " " + m.St.Label.Render(fmt.Sprintf("%-*s", labelW-1, rates.SeriesName(i))) +
			m.St.Spark.Render(rates.Sparkline(m.Rates.Series(i), sw)) + m.St.Value.Render(stats)
		out = append(out, line)
	}
	return out
}

// HelpLines is the help screen: the dashboard's keys and how to read it.
func (m *Model) HelpLines(width int) []string {
	st := m.St
	legend := [][2]string{
		{"state", "the reflector's state and for how long, then its request in flight; " + st.Warn.Render("yellow") +
			" when the server has not answered it for a second (a hung connection, a TLS handshake that does not end)"},
		{"objects", "the objects in the cache, and the memory they hold"},
		{"bookmark", "the age of the last progress bookmark and its rv: " + st.Good.Render("green") + " under " + format.Age(common.BookmarkLate) + ", " + st.Warn.Render("yellow") + " (late) under " +
			format.Age(common.BookmarkStale) + ", " + st.Bad.Render("red") + " (stale) beyond: the apiserver sends about one a minute; the bookmark that ends a streaming list is not one (the summary counts those apart)"},
		{"410 Gone", "the server no longer had the history the watch asked to resume from (etcd compacted it, or the server restarted behind it): each one means a relist"},
		{"relist", "after 410 Gone the cache is listed again; the Relist diff pane names what the watch missed"},
		{"last RV", "the cursor: where the next watch resumes, moved by every event and bookmark; the bookmark's rv is the one the last bookmark carried, behind the last RV when events came after it"},
		{"restarts", "watch restarts: WATCH requests after the first, whatever their answer: a resume from the last RV after a server-side timeout or a cut connection, a relist's streaming list, a retry of a refused one"},
		{"duplicate", "duplicates: events that carried an object's cached UID and resourceVersion again: a watch that resumed behind what the cache holds"},
		{"UID", "UID mismatch: an object replaced under the same namespace/name by another UID (deleted and recreated, the delete missed), or a delete of a UID the cache no longer holds"},
		{"backoffs", "waits before retrying a failed request (an error answer, a refused connection, 410s in a row): 0.8s doubling to 30s, with jitter, back to 0.8s after 2 healthy minutes"},
		{"delivery", "how late events come after their object's write: the --probe Lease's p50 and p99 over the last minute, and the passive estimate from the objects' own write times, in buckets (good to about ±2s)"},
		{"latency", "apply latency: from a watch event's arrival to its change in the cache, p50 and p99 of the last samples; " +
			st.Warn.Render("yellow") + " from 100ms, " + st.Bad.Render("red") + " from 1s; not measured in a replay"},
		{"END", "how a request ended: closed by the server (a LIST answered, a watch's timeout, EOF); timeout: we gave up on a silent connection; " +
			"error: an error status, an ERROR event or a transport error; canceled: cut short to act (a forced relist, a fallback) or, observed, its client left; " +
			"stopped: the run ended it (q, --duration, --once, an alert)"},
		{"rates", "events a second over the last second, a minute over the last minute, and since the start"},
		{"Requests", "the last requests: TOOK how long, RECEIVED items or events, END how it ended, OPTIONS as sent"},
		{"log", "store changes and reflector notes (REPLACED: an object of another UID under the same name); enter on an object shows the versions seen and what changed"},
		{"dropped", "notes and changes the screen could not take in time: the reflector never waits for the screen"},
	}
	legend = append(m.Chrome.MetricsLegend(), legend...)
	if m.Keys.Findings.Enabled() {
		legend = append(legend, [2]string{"findings", findingspane.Legend})
	}
	if m.Keys.Churn.Enabled() {
		legend = append(legend, [2]string{"churn", churn.Legend})
	}
	var after [][2]string
	if m.Keys.ToOverview.Enabled() {
		after = append(after, [2]string{"overview", "esc goes back to the overview of all resources once nothing is left to close or clear"})
	}
	return m.Chrome.HelpLines(width, "Keys", "Reading the screen", m.shownKeys(), legend, after...)
}
