// Package findingspane is the dashboard's findings component: the pane
// that lists a run's findings newest first over any screen (f), a
// finding's evidence as its detail shows it, and the tally the header and
// the overview give of them. Its keys are the list keys of package common;
// what it lists is the caller's, one Row per finding.
package findingspane

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// severity is the dashboard's color of a finding's severity.
func severity(s findings.Severity) common.Severity {
	switch s {
	case findings.Error:
		return common.SevBad
	case findings.Warning:
		return common.SevWarn
	}
	return common.SevNone
}

// Tally is what the header and the overview say of a list of
// findings: how many are not ignored, the worst of them, and how many are
// ignored (shown in the pane, never counted).
type Tally struct {
	n, ignored int
	worst      findings.Severity
}

// TallyOf is the tally of fs.
func TallyOf(fs []findings.Finding) Tally {
	t := Tally{}
	t.worst, _ = findings.Worst(fs)
	for _, f := range fs {
		if f.Ignored {
			t.ignored++
		} else {
			t.n++
		}
	}
	return t
}

// Add counts o's findings in t too.
func (t *Tally) Add(o Tally) {
	if o.n > 0 && (t.n == 0 || o.worst.AtLeast(t.worst)) {
		t.worst = o.worst
	}
	t.n += o.n
	t.ignored += o.ignored
}

// Badge is the header's count: "2 findings (warning)", colored by the
// worst (the word says it without color), and the ignored ones apart.
func (t Tally) Badge(st common.Styles) string {
	ignored := ""
	if t.ignored > 0 {
		ignored = st.Faint.Render(fmt.Sprintf(" +%d ignored", t.ignored))
	}
	if t.n == 0 {
		return st.Faint.Render("no findings") + ignored
	}
	return st.Sev(severity(t.worst), format.Plural(t.n, "finding")+" ("+string(t.worst)+")") + ignored
}

// Cell is the overview's findings column: "2 warning", "0".
func (t Tally) Cell(st common.Styles) string {
	if t.n == 0 {
		if t.ignored > 0 {
			return st.Faint.Render(fmt.Sprintf("0 +%d ign", t.ignored))
		}
		return st.Faint.Render("0")
	}
	return st.Sev(severity(t.worst), fmt.Sprintf("%d %s", t.n, t.worst))
}

// Row is one finding as the pane lists it; Res is its resource's
// row on the overview (0 on one resource's dashboard).
type Row struct {
	Finding findings.Finding
	Res     int
}

// NewestFirst orders rows by when each finding was first raised, newest
// first; among findings raised at the same time, the later raised first.
// rows are in raise order per resource.
func NewestFirst(rows []Row) []Row {
	slices.Reverse(rows)
	slices.SortStableFunc(rows, func(a, b Row) int { return b.Finding.FirstAt.Compare(a.Finding.FirstAt) })
	return rows
}

// Pane is the list of findings, newest first, over the dashboard
// (f): a row per finding with its severity, id, count, age and title;
// enter shows the selected one's evidence.
type Pane struct {
	scroll common.Scroller
}

// Legend explains the findings on the help screens.
const Legend = "what the notes mean: each finding is raised once, on enough evidence, and updated as it grows; " +
	"the header counts those not ignored, colored by the worst (error, warning, info); f lists them newest first, " +
	"enter shows one's evidence, cause and what to do; --ignore-finding ID keeps one listed as ignored, uncounted"

// Hint is the footer under the findings pane.
const Hint = "↑/↓ select · enter evidence · esc or f close · ? help · q quit"

// DetailHint is the footer under a finding's evidence.
const DetailHint = "esc back to the findings · ↑/↓ pgup/pgdn scroll · q quit"

// Action is what a key on the findings pane asks for.
type Action int

// What a key on the pane asks for: nothing more, to close it, or to open
// the selected finding.
const (
	ActionNone Action = iota
	ActionClose
	ActionOpen
)

// Key moves the pane's cursor among n rows with a page of page rows, or says to close or open.
func (p *Pane) Key(k tea.KeyPressMsg, n, page int) Action {
	fk := common.NewListKeys()
	page = max(page, 1)
	switch {
	case key.Matches(k, fk.Close):
		return ActionClose
	case key.Matches(k, fk.Select):
		if n > 0 {
			return ActionOpen
		}
	case key.Matches(k, fk.Up):
		p.scroll.Cursor--
	case key.Matches(k, fk.Down):
		p.scroll.Cursor++
	case key.Matches(k, fk.PageUp):
		p.scroll.Cursor -= page
	case key.Matches(k, fk.PageDown):
		p.scroll.Cursor += page
	case key.Matches(k, fk.Top):
		p.scroll.Cursor = 0
	case key.Matches(k, fk.Bottom):
		p.scroll.Cursor = n - 1
	}
	p.scroll.Follow = false // the newest is at the top: nothing to follow
	p.scroll.Clamp(n, page)
	return ActionNone
}

// Selected is the row under the cursor.
func (p *Pane) Selected(rows []Row) (Row, bool) {
	if len(rows) == 0 {
		return Row{}, false
	}
	return rows[min(max(p.scroll.Cursor, 0), len(rows)-1)], true
}

// Lines renders the pane in h lines: a title, the column heads and the
// rows; where names each row's resource (the overview's), nil for none.
func (p *Pane) Lines(st common.Styles, rows []Row, where func(i int) string, now time.Time, width, h int) []string {
	t := Tally{}
	for _, r := range rows {
		t.Add(TallyOf([]findings.Finding{r.Finding}))
	}
	title := common.SectionRule(st, "findings · "+format.Plural(t.n, "finding")+ignoredSuffix(t.ignored)+" · newest first", width)
	if len(rows) == 0 {
		return []string{title, "", st.Faint.Render("  no findings: nothing in the notes so far says something is wrong"),
			st.Faint.Render("  (a finding is raised once, on enough evidence, and updated as the evidence grows)")}
	}
	const sevW, idW, countW, ageW = 8, 26, 6, 9
	whereW := 0
	if where != nil {
		for i := range rows {
			whereW = max(whereW, ansi.StringWidth(where(rows[i].Res)))
		}
		whereW = min(whereW, max(width/4, 12))
	}
	// On a narrow screen the title keeps the room: no count and age columns.
	wide := width >= common.WideWidth
	cols := func(sev, id, wh, n, ago, title string) string {
		s := " " + sev + " " + id + " "
		if whereW > 0 {
			s += wh + " "
		}
		if wide {
			s += n + " " + ago + "  "
		}
		return s + title
	}
	out := []string{title, st.Label.Render(common.Clip(cols(common.Pad("SEVERITY", sevW), common.Pad("ID", idW), common.Pad("RESOURCE", whereW),
		fmt.Sprintf("%*s", countW, "COUNT"), fmt.Sprintf("%*s", ageW, "LAST"), "TITLE"), width))}
	h -= len(out)
	p.scroll.Clamp(len(rows), h)
	for i := p.scroll.Top; i < len(rows) && h > 0; i++ {
		f := rows[i].Finding
		wh := ""
		if where != nil {
			wh = common.Pad(where(rows[i].Res), whereW)
		}
		n, ago := fmt.Sprintf("%*s", countW, format.Count(f.Count)), fmt.Sprintf("%*s", ageW, format.Age(now.Sub(f.LastAt))+" ago")
		text := f.Title
		if f.Ignored {
			text = "(ignored) " + text
		}
		switch {
		case i == p.scroll.Cursor:
			out = append(out, st.Selected.Render(common.Pad(cols(common.Pad(string(f.Severity), sevW), common.Pad(string(f.ID), idW), wh, n, ago, text), width)))
		case f.Ignored:
			out = append(out, st.Faint.Render(common.Clip(cols(common.Pad(string(f.Severity), sevW), common.Pad(string(f.ID), idW), wh, n, ago, text), width)))
		default:
			out = append(out, common.Clip(cols(st.Sev(severity(f.Severity), common.Pad(string(f.Severity), sevW)), st.Value.Render(common.Pad(string(f.ID), idW)),
				wh, n, st.Label.Render(ago), text), width))
		}
		h--
	}
	return out
}

func ignoredSuffix(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (+%d ignored)", n)
}

// Title is a finding's detail title: severity, id and whose.
func Title(f findings.Finding) string {
	title := "Finding " + string(f.ID) + "  " + string(f.Severity)
	if w := f.Where(); w != "" {
		title += "  " + w
	}
	if f.Ignored {
		title += "  (ignored)"
	}
	return title
}

// Detail is a finding's evidence for people, a labelled fact a
// line (continuations indented under the facts), at width.
func Detail(st common.Styles, f findings.Finding, now time.Time, width int) []string {
	const labelW = 12
	textW := max(width-2-labelW, 20)
	var out []string
	fact := func(label, text string) {
		if text == "" {
			return
		}
		if len(label) >= labelW {
			// A label as wide as the column has a line of its own, its
			// text under it, where the two would run together.
			out, label = append(out, st.Label.Render(label)), ""
		}
		for i, l := range strings.Split(common.Wrap(text, textW, " ,"), "\n") {
			head := strings.Repeat(" ", labelW)
			if i == 0 && label != "" {
				head = st.Label.Render(fmt.Sprintf("%-*s", labelW, label))
			}
			out = append(out, head+l)
		}
	}
	out = append(out, st.Sev(severity(f.Severity), string(f.Severity))+"  "+st.Value.Render(f.Title))
	if f.Ignored {
		out = append(out, st.Faint.Render("ignored (--ignore-finding "+string(f.ID)+"): kept here and in the summary, counted by no rule"))
	}
	out = append(out, "")
	when := f.FirstAt.Format("15:04:05.000") + " (" + format.Age(now.Sub(f.FirstAt)) + " ago)"
	if !f.LastAt.Equal(f.FirstAt) {
		when += ", updated " + f.LastAt.Format("15:04:05.000") + " (" + format.Age(now.Sub(f.LastAt)) + " ago)"
	}
	fact("raised", when)
	fact("count", format.Count(f.Count))
	fact("evidence", f.Evidence.Text)
	if rs := f.Evidence.Requests; len(rs) > 0 {
		ids := make([]string, len(rs))
		for i, id := range rs {
			ids[i] = fmt.Sprintf("#%d", id)
		}
		fact("requests", strings.Join(ids, " ")+"  (the Requests pane's ids)")
	}
	if w := f.Evidence.Window; w != nil {
		fact("window", w.From.Format("15:04:05.000")+" → "+w.To.Format("15:04:05.000")+" ("+w.Length()+")") // as explain says it
	}
	facts := f.Evidence.Facts
	for _, k := range slices.Sorted(maps.Keys(facts)) {
		fact(k, facts[k])
	}
	if os := f.Evidence.Objects; len(os) > 0 {
		total := max(f.Evidence.ObjectsTotal, len(os))
		out = append(out, st.Label.Render(fmt.Sprintf("%-*s", labelW, "objects"))+format.Count(total))
		for _, o := range os {
			line := fmt.Sprintf("%-10s %s", o.What, o.String())
			switch {
			case o.OldUID != "" && o.NewUID != "" && o.OldUID != o.NewUID:
				line += "  uid " + store.ShortUID(o.OldUID) + " → " + store.ShortUID(o.NewUID)
			case o.OldUID != "" || o.NewUID != "":
				line += "  uid " + store.ShortUID(o.OldUID+o.NewUID)
			}
			out = append(out, strings.Repeat(" ", labelW)+line)
		}
		if total > len(os) {
			out = append(out, strings.Repeat(" ", labelW)+st.Faint.Render(fmt.Sprintf("… and %s more", format.Count(total-len(os)))))
		}
	}
	out = append(out, "")
	fact("cause", f.Cause)
	fact("what to do", f.Action)
	fact("docs", f.Docs)
	return out
}
