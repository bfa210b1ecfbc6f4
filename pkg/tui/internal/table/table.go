// Package table is the overview's table, a component of the dashboard: one
// row per resource (its state, objects, memory, last resourceVersion,
// bookmark age, 410s, relists, findings, delivery lag, events per minute
// and last error), a reason line under a row in trouble, and the totals;
// the columns that fit the width, in priority order, and a selected row
// with a window of rows that keeps it in view.
//
// The table keeps its selection and its window only. What a row shows is a
// Row, which the caller reads from the resource's dashboard for one frame
// or one message: Fit lays those rows out, and the Layout it returns is
// theirs alone.
package table

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/rates"
)

// Row is what a row shows of one resource.
type Row struct {
	Label Label
	// Stats are the resource's, as last polled; nil before the first poll.
	// They may be the caller's own, not a copy: keep a Row, and its Layout,
	// no longer than the frame or the message they were read for.
	Stats *reflector.Stats
	// Counters are its cache's, as last read (StoreReady: read once).
	Counters   store.Counters
	StoreReady bool
	// Findings tallies its findings (HaveFindings: it has an engine).
	Findings     findingspane.Tally
	HaveFindings bool
	// Events are its watch events of the last minute, a second each
	// (rates.Seconds of them), which Lines shows and Clamp does not read:
	// nil draws a minute of none.
	Events []int64
	// Now is the resource's own clock, which its reason line reads.
	Now time.Time
	// Hidden keeps the row out of the table: the totals count it, and the
	// section rule says how many are hidden.
	Hidden bool
}

// Table is the table's selection and window: the selected row, and the
// first row shown. Its zero value selects the first row.
type Table struct {
	cur, top int
}

// Selected is the selected row.
func (t *Table) Selected() int { return t.cur }

// Select selects row i of the n rows there are now, the first or the last
// when i is out of range. Clamp then moves the window to it.
func (t *Table) Select(i, n int) { t.cur = min(max(i, 0), max(n-1, 0)) }

// Move moves the selection by d rows of the n there are now, no further
// than the first or the last.
func (t *Table) Move(d, n int) { t.Select(t.cur+d, n) }

// Clamp keeps the selection on one of l's rows and the window on the
// selection: the selected row, with its reason line, is always shown.
func (t *Table) Clamp(l Layout) {
	rows := l.rows
	n := len(rows)
	t.cur = min(max(t.cur, 0), max(n-1, 0))
	if n == 0 {
		t.top = 0
		return
	}
	avail := max(l.rowLines, 1)
	t.top = min(max(t.top, 0), t.cur)
	for t.top < t.cur && l.linesFrom(t.top, t.cur) > avail {
		t.top++
	}
	// Scrolled, the window stays full: no blank rows under the last one.
	for t.top > 0 && l.linesFrom(t.top-1, n-1) <= avail {
		t.top--
	}
}

// Layout is what fits of the table of some rows: its columns in the width,
// and the lines of its rows.
type Layout struct {
	rows     []Row    // the rows shown
	all      []Row    // every row, the hidden ones too: the totals'
	empty    []string // the lines shown for no row
	width    int
	cols     []column
	has      [numCols]bool
	rowLines int // lines for the rows (a row and its reason line)
	// lag is the rows' delivery estimate, summed: it decides the LAG P99
	// column and fills its total.
	lag     reflector.LagCounts
	eventsW int      // the events column's width, 0 when it does not fit
	left    []string // the heads of the columns that do not fit, in priority order
}

// Left are the heads of the columns the width leaves out, in the order a
// wider terminal brings them back.
func (l Layout) Left() []string { return l.left }

// Fit lays rows out in width cells and height lines: the columns that
// fit, with a FINDINGS column when findings (the resources have engines) and
// a LAG P99 column once a row's delivery estimate counted an event; then the
// lines the rows not Hidden need, reason lines included, or, with no such
// row, the empty lines, up to what height leaves after the section rule,
// the column heads and the totals. The selection and the window count the
// rows shown only.
func Fit(width, height int, all []Row, empty []string, findings bool) Layout {
	rows := all
	for i := range all {
		if all[i].Hidden {
			rows = slices.DeleteFunc(slices.Clone(all), func(r Row) bool { return r.Hidden })
			break
		}
	}
	nameW, clientW := 0, 0
	for i := range rows {
		nameW, clientW = max(nameW, rows[i].Label.nameW), max(clientW, rows[i].Label.clientW)
	}
	l := Layout{rows: rows, all: all, empty: empty, width: width, lag: lagTotal(all)}
	l.cols, l.has, l.left = columns(width-markerWidth, nameW, clientW, findings, l.lag.Total() > 0)
	for _, c := range l.cols {
		if c.id == colEvents {
			l.eventsW = c.width
		}
	}
	needed := max(l.linesFrom(0, len(rows)-1), 1)
	if len(rows) == 0 {
		needed = len(empty)
	}
	l.rowLines = min(needed, max(height-3, 1))
	return l
}

// Height is how many lines the table takes.
func (l Layout) Height() int { return l.rowLines + 3 }

// Page is how far a page key moves the selection: a window less one line.
func (l Layout) Page() int { return max(l.rowLines-1, 1) }

// linesFrom is how many lines rows a to b take, reason lines included.
func (l Layout) linesFrom(a, b int) int {
	rows := l.rows
	n := 0
	for i := max(a, 0); i <= b && i < len(rows); i++ {
		n++
		if _, _, ok := l.reason(&rows[i]); ok {
			n++
		}
	}
	return n
}

// reason is the line under a row that says why a resource is in trouble: a
// Failed resource's error always, a resource in Backoff's when the table has
// no room for the last error; or that an observed stream's client left, when
// the table has no room for it.
func (l Layout) reason(r *Row) (string, common.Severity, bool) {
	if r.Stats == nil {
		return "", common.SevNone, false
	}
	s := r.Stats
	switch {
	case !s.ClientLeft.IsZero() && !l.has[colError]:
		return common.ClientLeftText(s, r.Now), common.SevNone, true
	case s.State == reflector.StateFailed:
		if s.LastError == "" {
			return "failed, with no error recorded", common.SevBad, true
		}
		return s.LastError, common.SevBad, true
	case s.State == reflector.StateBackoff && s.LastError != "" && !l.has[colError]:
		text := s.LastError
		if !s.BackoffUntil.IsZero() {
			text = "retry in " + format.Age(s.BackoffUntil.Sub(r.Now)) + ": " + text
		}
		return text, common.SevWarn, true
	}
	return "", common.SevNone, false
}

// Lines is the table as l lays it out: the section rule (with the window's
// place among the rows when it does not show them all), the column heads,
// the rows from the window's top with their reason lines, or the empty
// lines when there is no row, and the totals. now is the overview's clock
// (FOR and BOOKMARK), and start the run's, from which a bookmark not yet
// seen is late; a reason line reads its row's own clock, and the events
// are the rows' as the caller read them.
func (t *Table) Lines(st common.Styles, l Layout, now, start time.Time) []string {
	rows := l.rows
	n := len(rows)
	var lines []string
	last := t.top - 1
	for i := t.top; i < n; i++ {
		row := []string{l.row(st, &rows[i], i == t.cur, now, start)}
		if text, sev, ok := l.reason(&rows[i]); ok {
			row = append(row, common.Clip(st.Sev(sev, "    └ "+text), l.width))
		}
		if len(lines)+len(row) > l.rowLines {
			break
		}
		lines = append(lines, row...)
		last = i
	}
	title := "resources"
	if n > 0 && (t.top > 0 || last < n-1) {
		title += fmt.Sprintf(" · %d-%d of %d", t.top+1, last+1, n)
	}
	if hidden := len(l.all) - n; hidden > 0 {
		title += fmt.Sprintf(" · %s hidden", format.Count(hidden))
	}
	out := []string{common.SectionRule(st, title, l.width), l.headRow(st)}
	if n == 0 {
		lines = l.empty
	}
	out = append(out, common.FitLines(lines, l.width, l.rowLines)...)
	return append(out, l.totalsRow(st))
}

// headRow is the column heads.
func (l Layout) headRow(st common.Styles) string {
	var cells [numCols]string
	for _, c := range l.cols {
		cells[c.id] = c.head
	}
	return st.Label.Render(joinCells(strings.Repeat(" ", markerWidth), l.cols, &cells))
}

// row is r's line of the table, marked when selected.
func (l Layout) row(st common.Styles, r *Row, selected bool, now, start time.Time) string {
	dash := st.Faint.Render("-")
	var cells [numCols]string
	for k := range cells {
		cells[k] = dash
	}
	name := r.Label.fit(l.cols[0].width) // the resource's column is always the first
	cells[colResource] = st.Value.Render(name)
	for _, c := range l.cols {
		if c.id == colClient {
			cells[colClient] = st.Label.Render(r.Label.fitClient(c.width))
		}
	}
	marker := "  "
	if selected {
		marker = st.Accent.Render("▸ ")
		cells[colResource] = st.TabActive.Render(name)
	}
	if r.StoreReady {
		cells[colObjects] = st.Value.Render(format.Count(r.Counters.Objects))
		cells[colMemory] = format.Bytes(r.Counters.BytesHeld)
	}
	if s := r.Stats; s != nil {
		c := s.Counters
		cells[colState] = st.Sev(common.StateSeverity(s.State), "● "+s.State.String())
		if !s.StateSince.IsZero() {
			cells[colFor] = format.Age(now.Sub(s.StateSince))
		}
		if !s.ClientLeft.IsZero() {
			cells[colState] = st.Faint.Render("○ left")
			cells[colFor] = format.Age(now.Sub(s.ClientLeft))
		}
		cells[colLastRV] = st.Value.Render(common.OrDash(s.ResourceVersion))
		cells[colBookmark] = bookmarkCell(st, s, now, start)
		cells[colGone] = st.Counter(c.Gone, true)
		cells[colRelists] = st.Counter(c.Relists, true)
		if r.HaveFindings {
			cells[colFindings] = r.Findings.Cell(st)
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
	cells[colEvents] = l.eventsCell(st, r.Events)
	return joinCells(marker, l.cols, &cells)
}

// totalsRow sums every row, the hidden ones too: objects and memory of
// every cache, requests in flight, 410s, relists, findings, the delivery
// estimate and events.
func (l Layout) totalsRow(st common.Styles) string {
	rows := l.all
	var objects, bytes, gone, relists int64
	inFlight := 0
	var series [rates.Seconds]int64
	tally := findingspane.Tally{}
	for i := range rows {
		r := &rows[i]
		if r.StoreReady {
			objects += int64(r.Counters.Objects)
			bytes += r.Counters.BytesHeld
		}
		if r.Stats != nil {
			gone += r.Stats.Counters.Gone
			relists += r.Stats.Counters.Relists
			if r.Stats.Current != nil {
				inFlight++
			}
		}
		tally.Add(r.Findings)
		for k := range min(len(r.Events), len(series)) {
			series[k] += r.Events[k]
		}
	}
	var cells [numCols]string
	cells[colResource] = st.Value.Render("total")
	cells[colState] = st.Label.Render(fmt.Sprintf("%d in flight", inFlight))
	cells[colObjects] = st.Value.Render(format.Count(objects))
	cells[colMemory] = st.Value.Render(format.Bytes(bytes))
	cells[colGone] = st.Counter(gone, true)
	cells[colRelists] = st.Counter(relists, true)
	cells[colFindings] = tally.Cell(st)
	cells[colLag] = lagCell(st, l.lag)
	cells[colEvents] = l.eventsCell(st, series[:])
	return joinCells("  ", l.cols, &cells)
}

// lagTotal is the passive delivery estimate's buckets over every row.
func lagTotal(rows []Row) reflector.LagCounts {
	var total reflector.LagCounts
	for i := range rows {
		if r := &rows[i]; r.Stats != nil {
			for b, n := range r.Stats.Lag.Counts {
				total[b] += n
			}
		}
	}
	return total
}

// lagCell is the LAG P99 cell: the bucket of the passive estimate's 99th
// percentile, graded; "-" before an event was counted.
func lagCell(st common.Styles, c reflector.LagCounts) string {
	b := c.P99Bucket()
	if b < 0 {
		return st.Faint.Render("-")
	}
	sev := common.SevGood
	switch {
	case b >= 3:
		sev = common.SevBad
	case b == 2:
		sev = common.SevWarn
	}
	return st.Sev(sev, reflector.LagBucketName(b))
}

// bookmarkCell is the age of the last bookmark, graded like the dashboard's gauge.
func bookmarkCell(st common.Styles, s *reflector.Stats, now, start time.Time) string {
	if s.BookmarkAt.IsZero() {
		if sev := common.BookmarkSeverity(now.Sub(start)); sev != common.SevGood {
			return st.Sev(sev, "none")
		}
		return st.Faint.Render("none yet")
	}
	d := now.Sub(s.BookmarkAt)
	return st.Sev(common.BookmarkSeverity(d), format.Age(d)+" ago")
}

// eventsCell is a minute of watch events as a sparkline, and their count.
func (l Layout) eventsCell(st common.Styles, series []int64) string {
	var total int64
	for _, v := range series {
		total += v
	}
	width := l.eventsW
	n := format.Count(total)
	sw := width - max(len(n), 5) - 1
	return st.Spark.Render(rates.Sparkline(series, sw)) + " " + st.Value.Render(fmt.Sprintf("%*s", width-sw-1, n))
}

// joinCells lays the cells out in the columns, after the marker.
func joinCells(marker string, cols []column, cells *[numCols]string) string {
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
