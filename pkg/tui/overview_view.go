package tui

import (
	"cmp"
	"fmt"
	"net"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/rates"
)

// ovCol is a column of the overview's table.
type ovCol int

const (
	colResource ovCol = iota
	colClient         // an observed stream's program: only on the overview of a proxy's streams
	colState
	colFor
	colObjects
	colMemory
	colLastRV
	colBookmark
	colGone
	colRelists
	colFindings // only when the resources have findings engines
	colLag      // the passive delivery estimate's p99 bucket: only once a row has one
	colEvents
	colError
	numOvCols
)

// Column heads, also what hack/tui-check.sh looks for to tell the overview.
const (
	headResource = "RESOURCE"
	headEvents   = "EVENTS/MIN"
)

// ovColumnSpec is a column's head, its narrowest width, whether its values
// are right-aligned, and how far it may grow past its narrowest (-1: all
// that is left).
func ovColumnSpec(c ovCol) (head string, width int, right bool) {
	switch c {
	case colResource:
		return headResource, 14, false
	case colClient:
		return "CLIENT", 12, false
	case colState:
		return "STATE", 12, false
	case colFor:
		return "FOR", 6, false
	case colObjects:
		return "OBJECTS", 8, true
	case colMemory:
		return "MEMORY", 9, true
	case colLastRV:
		return "LAST RV", 10, false
	case colBookmark:
		return "BOOKMARK", 9, false
	case colGone:
		return "410s", 4, true
	case colRelists:
		return "RELISTS", 7, true
	case colFindings:
		return "FINDINGS", 9, false
	case colEvents:
		return headEvents, 14, false
	case colLag:
		return "LAG P99", 7, false
	}
	return "LAST ERROR", 16, false
}

// ovPriority is the order in which columns get room: what a narrow terminal
// keeps first. The totals' columns come early so the totals row always has them.
func ovPriority() [numOvCols]ovCol {
	return [numOvCols]ovCol{colResource, colClient, colState, colObjects, colMemory, colGone, colRelists, colFindings, colEvents,
		colLag, colBookmark, colError, colLastRV, colFor}
}

// Growth limits of the flexible columns.
const (
	maxResourceWidth = 40
	maxClientWidth   = 48
	minClientWidth   = 24 // room for "kube-co…/shared-informers"
	maxEventsWidth   = 26 // a sparkline of 20 cells and the count
	markerWidth      = 2  // "▸ " before the selected row
	minPreviewLines  = 3  // the glimpse of the selected resource's log, with its title
)

// ovColumn is a column that fits, with its width.
type ovColumn struct {
	id    ovCol
	head  string
	width int
	right bool
}

// overviewLayout is what fits on the overview: the columns, and the lines of
// the table's rows and of the glimpse of the log under it.
type overviewLayout struct {
	width, height int
	body          int // lines between header and footer
	cols          []ovColumn
	has           [numOvCols]bool
	banner        int // 1 when an alert banner shows
	rowLines      int // lines for the rows (a row and its reason line)
	preview       int // lines of the selected resource's log glimpse, with its title; 0 for none
}

// tableLayout fits the columns to the width, then the rows and the glimpse to the height.
func (o *Overview) tableLayout() overviewLayout {
	w, h, body := o.chrome.size()
	l := overviewLayout{width: w, height: h, body: body}
	l.cols, l.has = overviewColumnsWith(w-markerWidth, o.nameWidth, o.clientWidth, o.hasFindings(), o.hasLag())
	if _, ok := o.banner(); ok {
		l.banner = 1
	}
	avail := max(l.body-l.banner-3, 1) // the section rule, the column heads, the totals
	needed := max(l.linesFrom(o, 0, len(o.subs)-1), 1)
	if len(o.subs) == 0 {
		needed = len(o.emptyRows())
	}
	l.rowLines = min(needed, avail)
	if rest := avail - l.rowLines; rest >= minPreviewLines {
		l.preview = rest
	}
	return l
}

// overviewColumns picks the columns that fit in width, in priority order, and
// gives what is left to the resource names (up to nameW), the sparkline and
// the last error.
func overviewColumns(width, nameW int) ([]ovColumn, [numOvCols]bool) {
	return overviewColumnsFor(width, nameW, 0, false)
}

// overviewColumnsFor is overviewColumns with a client column as wide as
// clientW (up to maxClientWidth) when the rows have clients (clientW > 0):
// it comes right after the resources, and before their growth; and with a
// findings column when the rows have findings engines (withFindings).
func overviewColumnsFor(width, nameW, clientW int, withFindings bool) ([]ovColumn, [numOvCols]bool) {
	return overviewColumnsWith(width, nameW, clientW, withFindings, false)
}

// overviewColumnsWith is overviewColumnsFor with the LAG P99 column when lag
// (a row's passive delivery estimate counted an event).
func overviewColumnsWith(width, nameW, clientW int, withFindings, lag bool) ([]ovColumn, [numOvCols]bool) {
	var has [numOvCols]bool
	var widths [numOvCols]int
	used := 0
	for _, c := range ovPriority() {
		if c == colClient && clientW == 0 || c == colFindings && !withFindings || c == colLag && !lag {
			continue
		}
		_, w, _ := ovColumnSpec(c)
		if c == colClient {
			w = max(w, min(clientW, minClientWidth))
		}
		need := w
		if used > 0 {
			need++ // the gap before it
		}
		if used+need > width {
			break // a column that does not fit drops every one after it, so what shows is predictable
		}
		has[c], widths[c], used = true, w, used+need
	}
	extra := width - used
	grow := func(c ovCol, limit int) {
		if !has[c] || extra <= 0 {
			return
		}
		add := min(extra, max(limit-widths[c], 0))
		widths[c] += add
		extra -= add
	}
	grow(colResource, min(nameW, maxResourceWidth))
	grow(colClient, min(clientW, maxClientWidth))
	grow(colEvents, maxEventsWidth)
	grow(colError, 1<<30)
	cols := make([]ovColumn, 0, numOvCols)
	for c := range numOvCols {
		if has[c] {
			head, _, right := ovColumnSpec(c)
			cols = append(cols, ovColumn{id: c, head: head, width: widths[c], right: right})
		}
	}
	return cols, has
}

// linesFrom is how many lines rows a to b take, reason lines included.
func (l overviewLayout) linesFrom(o *Overview, a, b int) int {
	n := 0
	for i := max(a, 0); i <= b && i < len(o.subs); i++ {
		n++
		if _, _, ok := l.reason(o, i); ok {
			n++
		}
	}
	return n
}

// reason is the line under a row that says why a resource is in trouble: a
// Failed resource's error always, a resource in Backoff's when the table has
// no room for the last error; or that an observed stream's client left, when
// the table has no room for it.
func (l overviewLayout) reason(o *Overview, i int) (string, common.Severity, bool) {
	m := &o.subs[i]
	if !m.haveStats {
		return "", common.SevNone, false
	}
	s := m.stats
	switch {
	case !s.ClientLeft.IsZero() && !l.has[colError]:
		return clientLeftText(s, m.now), common.SevNone, true
	case s.State == reflector.StateFailed:
		if s.LastError == "" {
			return "failed, with no error recorded", common.SevBad, true
		}
		return s.LastError, common.SevBad, true
	case s.State == reflector.StateBackoff && s.LastError != "" && !l.has[colError]:
		text := s.LastError
		if !s.BackoffUntil.IsZero() {
			text = "retry in " + format.Age(s.BackoffUntil.Sub(m.now)) + ": " + text
		}
		return text, common.SevWarn, true
	}
	return "", common.SevNone, false
}

// View renders the overview, the help, or the open resource's dashboard.
func (o Overview) View() tea.View {
	if i := o.shown; i >= 0 && i < len(o.subs) {
		return o.subs[i].View()
	}
	return o.view(&o, o.rowName, o.now(), func() []string { return o.table(o.tableLayout()) })
}

// now is the overview's clock: the latest of its resources'.
func (o *Overview) now() time.Time {
	now := o.clock
	for i := range o.subs {
		if o.subs[i].now.After(now) {
			now = o.subs[i].now
		}
	}
	if now.IsZero() {
		now = o.opts.Start
	}
	return now
}

// header is the run's identity, what the resources share, their states, and live or replay.
func (o *Overview) header(width int) []string {
	parts := []string{o.st.Value.Render(format.Plural(len(o.subs), cmp.Or(o.opts.Kind.Noun, "resource")))}
	switch ns, ok := shared(o.resources, namespaceOf); {
	case len(o.subs) == 0:
	case !ok:
		parts = append(parts, "several namespaces")
	case ns == "":
		parts = append(parts, "all namespaces")
	default:
		parts = append(parts, "namespace "+ns)
	}
	parts = append(parts, watchedParts(o.resources, !o.opts.Kind.OwnLists, "")...)
	return o.chrome.header(width, o.now(), parts, o.stateCounts(), o.findingsBadge(), o.replayPos())
}

// replayPos is where the replay stands across the resources: the furthest
// progress, ended once every resource's is, and the player as last read.
func (o *Overview) replayPos() replayPos {
	r := replayPos{stopped: len(o.subs) > 0, player: o.chrome.replay.player, havePlayer: o.chrome.replay.havePlayer}
	for i := range o.subs {
		p := o.subs[i].replay
		r.done, r.total = max(r.done, p.done), max(r.total, p.total)
		r.stopped = r.stopped && p.stopped
	}
	return r
}

// namespaceOf is the namespace a namespaced resource is watched in ("" for
// all), or "" for a cluster-scoped one, which has none to differ in.
func namespaceOf(r *Resource) string {
	if r.Target.Resource.Kind != "" && !r.Target.Resource.Namespaced {
		return ""
	}
	return r.Target.Namespace
}

// stateCounts is how many resources are in each state, worst colors and all;
// the observed streams whose client left are counted apart, in none.
func (o *Overview) stateCounts() string {
	var counts [reflector.StateStopped + 1]int
	waiting, left := 0, 0
	for i := range o.subs {
		m := &o.subs[i]
		switch {
		case !m.haveStats:
			waiting++
		case !m.stats.ClientLeft.IsZero():
			left++
		case m.stats.State >= 0 && int(m.stats.State) < len(counts):
			counts[m.stats.State]++
		}
	}
	var parts []string
	for s, n := range counts {
		if n > 0 {
			state := reflector.State(s)
			parts = append(parts, o.st.Sev(common.StateSeverity(state), fmt.Sprintf("● %d %s", n, state)))
		}
	}
	if left > 0 {
		parts = append(parts, o.st.Faint.Render("○ "+format.Plural(left, "client")+" left"))
	}
	if waiting > 0 {
		parts = append(parts, o.st.Faint.Render(fmt.Sprintf("○ %d waiting for stats", waiting)))
	}
	return strings.Join(parts, "  ")
}

// rowName names resource i in its row: resource.group, with what sets it
// apart from the others (namespace, selectors) when they differ.
func (o *Overview) rowName(i int) string {
	n := o.names[i]
	if n.client != "" {
		return n.base + n.apart + "  " + n.client
	}
	return n.base + n.apart
}

// clientLabel is an observed stream's client as its row shows it, in two
// parts: the program, and what follows it (the rest of the User-Agent that
// tells two reflectors of one program apart, as shortClient keeps it, and
// what it asked for when it is not full objects), which a cut keeps.
func clientLabel(r *Resource) (program, tail string) {
	program, tail = shortClient(r.Client)
	switch {
	case r.Table:
		tail += " (tables)"
	case r.MetadataOnly:
		tail += " (metadata)"
	}
	return program, tail
}

// shortClient keeps of a User-Agent what tells clients apart: the
// program's name, and the last /-segment when something was added to
// client-go's own "NAME/VERSION (OS/ARCH) kubernetes/COMMIT" (as
// kube-controller-manager adds "/shared-informers" and "/metadata-informers"):
// "kube-controller-manager" and " …/shared-informers". A User-Agent of one
// "/" at most is short already and kept whole; of client-go's own form, the
// program is kept.
func shortClient(ua string) (program, tail string) {
	ua = strings.TrimSpace(ua)
	if strings.Count(ua, "/") <= 1 {
		return ua, ""
	}
	program = ua[:strings.IndexAny(ua, "/ ")]
	fields := strings.Fields(ua)
	if last := fields[len(fields)-1]; len(fields) > 1 && strings.HasPrefix(last, "kubernetes/") && strings.Count(last, "/") == 1 {
		return program, ""
	}
	last := strings.TrimSpace(ua[strings.LastIndex(ua, "/")+1:])
	if last == "" {
		return program, ""
	}
	return program, " …/" + last
}

// fitClient fits resource i's client in width cells, cutting the program's
// name before what follows it ("kube-con…/shared-informers"), then the start
// of what follows ("…-informers (metadata)").
func (o *Overview) fitClient(i, width int) string {
	n := o.names[i]
	if ansi.StringWidth(n.client) <= width {
		return n.client
	}
	if n.tail == "" || width < 2 {
		return common.Clip(n.client, width)
	}
	rest := strings.TrimPrefix(n.tail, " …")
	switch avail := width - ansi.StringWidth(rest); {
	case avail >= 2:
		return common.Clip(n.program, avail) + rest
	case avail == 1:
		return format.Ellipsis + rest
	}
	return ansi.TruncateLeft(rest, ansi.StringWidth(rest)-(width-1), format.Ellipsis)
}

// rowNames names every row, once: resource.group (resource.version.group
// when two versions of it are shown), and what sets it apart from the others
// (" -n prod", selectors), which a cut keeps.
func rowNames(resources []Resource) []rowLabel {
	names := make([]rowLabel, len(resources))
	for i := range resources {
		t := resources[i].Target
		gvr := t.Resource.GVR
		base := gvr.Resource
		if gvr.Group != "" {
			base += "." + gvr.Group
		}
		differs := func(f func(r *Resource) string) bool { _, same := shared(resources, f); return !same }
		if differs(func(r *Resource) string {
			u := r.Target.Resource.GVR
			if u.Resource == gvr.Resource && u.Group == gvr.Group {
				return u.Version
			}
			return gvr.Version
		}) {
			base = t.Resource.String()
		}
		var apart string
		if differs(namespaceOf) && namespaceOf(&resources[i]) != "" {
			apart += " -n " + t.Namespace
		}
		if differs(func(r *Resource) string { return r.Target.LabelSelector }) && t.LabelSelector != "" {
			apart += " -l " + t.LabelSelector
		}
		if differs(func(r *Resource) string { return r.Target.FieldSelector }) && t.FieldSelector != "" {
			apart += " --field-selector " + t.FieldSelector
		}
		names[i] = rowLabel{base: base, apart: apart}
		if r := &resources[i]; r.Client != "" {
			names[i].program, names[i].tail = clientLabel(r)
		}
	}
	// Two processes of one program (one User-Agent) watching the same are
	// told apart by their connection's port.
	same := append([]rowLabel(nil), names...)
	for i := range names {
		r := &resources[i]
		for j := range same {
			if j != i && r.Client != "" && same[j] == same[i] && resources[j].ClientAddr != r.ClientAddr {
				if _, port, err := net.SplitHostPort(r.ClientAddr); err == nil {
					names[i].tail += " :" + port
				}
				break
			}
		}
	}
	for i := range names {
		if resources[i].Client != "" {
			names[i].client = names[i].program + names[i].tail
		}
	}
	return names
}

// fitName fits resource i's name in width cells, cutting the resource's
// name before what sets it apart from the others.
func (o *Overview) fitName(i, width int) string {
	base, apart := o.names[i].base, o.names[i].apart
	if ansi.StringWidth(base+apart) <= width || apart == "" {
		return base + apart
	}
	return common.Clip(common.Clip(base, max(width-ansi.StringWidth(apart), 4))+apart, width)
}

// table is the overview's body: an alert banner, the rows from the window's
// top, the totals, and a glimpse of the selected resource's log.
func (o *Overview) table(l overviewLayout) []string {
	var out []string
	if a, ok := o.banner(); ok {
		out = append(out, alertBanner(o.st, a, l.width))
	}
	n := len(o.subs)
	var rows []string
	last := o.top - 1
	for i := o.top; i < n; i++ {
		row := []string{o.row(l, i)}
		if text, sev, ok := l.reason(o, i); ok {
			row = append(row, common.Clip(o.st.Sev(sev, "    └ "+text), l.width))
		}
		if len(rows)+len(row) > l.rowLines {
			break
		}
		rows = append(rows, row...)
		last = i
	}
	title := "resources"
	if n > 0 && (o.top > 0 || last < n-1) {
		title += fmt.Sprintf(" · %d-%d of %d", o.top+1, last+1, n)
	}
	out = append(out, common.SectionRule(o.st, title, l.width), o.headRow(l))
	if n == 0 {
		rows = o.emptyRows()
	}
	out = append(out, common.FitLines(rows, l.width, l.rowLines)...)
	out = append(out, o.totalsRow(l))
	if l.preview > 0 && n > 0 {
		m := &o.subs[o.cur]
		out = append(out, common.SectionRule(o.st, "recent · "+o.rowName(o.cur), l.width))
		out = append(out, m.log.Tail(o.st, l.width, l.preview-1)...)
	}
	return out
}

// emptyRows is the table with no row: how to connect (Options.Connect), or
// that there is nothing.
func (o *Overview) emptyRows() []string {
	if len(o.opts.Connect) == 0 {
		return []string{o.st.Faint.Render("  no resources")}
	}
	rows := make([]string, 0, len(o.opts.Connect))
	for _, c := range o.opts.Connect {
		rows = append(rows, "  "+c)
	}
	return rows
}

// banner is the first alert banner of the resources, if any.
func (o *Overview) banner() (Alerts, bool) {
	for i := range o.subs {
		if a := o.subs[i].alerts; a.Banner != "" {
			return a, true
		}
	}
	return Alerts{}, false
}

// joinCells lays the cells out in the columns, after the marker.
func joinCells(marker string, cols []ovColumn, cells *[numOvCols]string) string {
	var b strings.Builder
	b.WriteString(marker)
	for k, c := range cols {
		if k > 0 {
			b.WriteByte(' ')
		}
		s := common.Clip(cells[c.id], c.width)
		gap := strings.Repeat(" ", max(c.width-ansi.StringWidth(s), 0))
		if c.right {
			b.WriteString(gap + s)
		} else {
			b.WriteString(s + gap)
		}
	}
	return strings.TrimRight(b.String(), " ")
}

// headRow is the column heads.
func (o *Overview) headRow(l overviewLayout) string {
	var cells [numOvCols]string
	for _, c := range l.cols {
		cells[c.id] = c.head
	}
	return o.st.Label.Render(joinCells(strings.Repeat(" ", markerWidth), l.cols, &cells))
}

// row is resource i's line of the table.
func (o *Overview) row(l overviewLayout, i int) string {
	st, m := o.st, &o.subs[i]
	s, c := m.stats, m.stats.Counters
	now := o.now()
	dash := st.Faint.Render("-")
	var cells [numOvCols]string
	for k := range cells {
		cells[k] = dash
	}
	name := o.fitName(i, l.cols[0].width) // the resource's column is always the first
	cells[colResource] = st.Value.Render(name)
	for _, c := range l.cols {
		if c.id == colClient {
			cells[colClient] = st.Label.Render(o.fitClient(i, c.width))
		}
	}
	marker := "  "
	if i == o.cur {
		marker = st.Accent.Render("▸ ")
		cells[colResource] = st.TabActive.Render(name)
	}
	if m.storeReady {
		cells[colObjects] = st.Value.Render(format.Count(m.counters.Objects))
		cells[colMemory] = format.Bytes(m.counters.BytesHeld)
	}
	if m.haveStats {
		cells[colState] = st.Sev(common.StateSeverity(s.State), "● "+s.State.String())
		if !s.StateSince.IsZero() {
			cells[colFor] = format.Age(now.Sub(s.StateSince))
		}
		if !s.ClientLeft.IsZero() {
			cells[colState] = st.Faint.Render("○ left")
			cells[colFor] = format.Age(now.Sub(s.ClientLeft))
		}
		cells[colLastRV] = st.Value.Render(common.OrDash(s.ResourceVersion))
		cells[colBookmark] = o.bookmarkCell(m, now)
		cells[colGone] = st.Counter(c.Gone, true)
		cells[colRelists] = st.Counter(c.Relists, true)
		if m.haveFindings {
			cells[colFindings] = findingspane.TallyOf(m.findings).Cell(st)
		}
		cells[colLag] = lagCell(st, s.Lag.Counts)
		switch {
		case !s.ClientLeft.IsZero(): // since when is in FOR
			cells[colError] = st.Faint.Render("was " + s.ClientLeftWas)
		case s.LastError == "", s.State == reflector.StateFailed: // a failure has its reason line
			cells[colError] = ""
		case s.State == reflector.StateWatching: // an error it got past
			cells[colError] = st.Faint.Render(s.LastError)
		default:
			cells[colError] = st.Warn.Render(s.LastError)
		}
	} else {
		cells[colState] = st.Faint.Render("○ waiting")
	}
	var series [rates.Seconds]int64
	m.rates.AddEvents(series[:], now)
	cells[colEvents] = o.eventsCell(l, series[:])
	return joinCells(marker, l.cols, &cells)
}

// lagTotal is the passive delivery estimate's buckets over every row.
func (o *Overview) lagTotal() reflector.LagCounts {
	var total reflector.LagCounts
	for i := range o.subs {
		if m := &o.subs[i]; m.haveStats {
			for b, n := range m.stats.Lag.Counts {
				total[b] += n
			}
		}
	}
	return total
}

// hasLag says whether a row's passive delivery estimate counted an event:
// the LAG P99 column shows from then on.
func (o *Overview) hasLag() bool { return o.lagTotal().Total() > 0 }

// bookmarkCell is the age of the last bookmark, graded like the dashboard's gauge.
func (o *Overview) bookmarkCell(m *Model, now time.Time) string {
	st, s := o.st, m.stats
	if s.BookmarkAt.IsZero() {
		waited := now.Sub(o.opts.Start)
		if sev := bookmarkSeverity(waited); sev != common.SevGood {
			return st.Sev(sev, "none")
		}
		return st.Faint.Render("none yet")
	}
	d := now.Sub(s.BookmarkAt)
	return st.Sev(bookmarkSeverity(d), format.Age(d)+" ago")
}

// eventsCell is a minute of watch events as a sparkline, and their count.
func (o *Overview) eventsCell(l overviewLayout, series []int64) string {
	var total int64
	for _, v := range series {
		total += v
	}
	width := headEventsWidth(l)
	n := format.Count(total)
	sw := width - max(len(n), 5) - 1
	return o.st.Spark.Render(rates.Sparkline(series, sw)) + " " + o.st.Value.Render(fmt.Sprintf("%*s", width-sw-1, n))
}

// headEventsWidth is the events column's width.
func headEventsWidth(l overviewLayout) int {
	for _, c := range l.cols {
		if c.id == colEvents {
			return c.width
		}
	}
	return 0
}

// totalsRow sums the rows: objects and memory of every cache, requests in
// flight, 410s, relists and events.
func (o *Overview) totalsRow(l overviewLayout) string {
	st := o.st
	var objects, bytes, gone, relists int64
	inFlight := 0
	var series [rates.Seconds]int64
	now := o.now()
	for i := range o.subs {
		m := &o.subs[i]
		if m.storeReady {
			objects += int64(m.counters.Objects)
			bytes += m.counters.BytesHeld
		}
		if m.haveStats {
			gone += m.stats.Counters.Gone
			relists += m.stats.Counters.Relists
			if m.stats.Current != nil {
				inFlight++
			}
		}
		m.rates.AddEvents(series[:], now)
	}
	var cells [numOvCols]string
	cells[colResource] = st.Value.Render("total")
	cells[colState] = st.Label.Render(fmt.Sprintf("%d in flight", inFlight))
	cells[colObjects] = st.Value.Render(format.Count(objects))
	cells[colMemory] = st.Value.Render(format.Bytes(bytes))
	cells[colGone] = st.Counter(gone, true)
	cells[colRelists] = st.Counter(relists, true)
	cells[colFindings] = o.findingsTally().Cell(st)
	cells[colLag] = lagCell(st, o.lagTotal())
	cells[colEvents] = o.eventsCell(l, series[:])
	return joinCells("  ", l.cols, &cells)
}

// footer is the latest action's status (a resource's, named, but not over
// the help, the findings or a detail; or the player's), or the key help;
// with the count of notes dropped on the way to the screen.
func (o *Overview) footer(width int) string {
	lost, latest, from := int64(0), status{}, -1
	for i := range o.subs {
		lost += o.subs[i].notesLost
		if s := o.subs[i].status; s.text != "" && (from < 0 || s.at.After(latest.at)) {
			latest, from = s, i
		}
	}
	over := ""
	hint, overlay := o.overlayHint(o)
	if !overlay && from >= 0 && (o.chrome.status.text == "" || latest.at.After(o.chrome.status.at)) {
		over = o.st.Value.Render(o.rowName(from)+": ") + o.st.Sev(latest.sev, latest.text)
	}
	return o.chrome.footer(width, over, o.chrome.status, hint, o.shownKeys(), lost)
}

// helpLines is the overview's key help, what one resource's dashboard adds,
// and how to read the table.
func (o *Overview) helpLines(width int) []string {
	st := o.st
	legend := [][2]string{
		{"state", st.Good.Render("green") + " watching, " + st.Warn.Render("yellow") + " listing or relisting, " +
			st.Bad.Render("red") + " backoff or failed; a failure's reason shows under its row"},
		{"memory", "what the resource's cache holds, estimated"},
		{"bookmark", "since the last one: " + st.Warn.Render("yellow") + " after " + format.Age(bookmarkLate) + ", " + st.Bad.Render("red") + " after " + format.Age(bookmarkStale)},
		{"events", "ADDED, MODIFIED and DELETED watch events in the last minute"},
		{"total", "every cache's objects and memory; LIST and WATCH requests open now"},
		{"enter", "opens the selected resource's dashboard (? there for its keys); esc comes back"},
	}
	legend = append(append(legend[:len(legend)-1:len(legend)-1], o.opts.Kind.Legend...), legend[len(legend)-1])
	if o.acts() {
		legend[len(legend)-1][1] += "; r and a act on the selected resource here too"
	}
	keys := o.shownKeys()
	if keys.Findings.Enabled() {
		legend = append(legend, [2]string{"findings", "the column counts each resource's findings, those not ignored, with the worst severity; f lists every resource's, newest first, " +
			"and enter shows one's evidence, cause and what to do"})
	}
	return o.chrome.helpLines(width, "Overview keys", "Reading the overview", keys, legend)
}
