// Package churn is the dashboard's churn component: what a resource's
// MODIFIED events changed (with --diff), by path, writer and object, as the
// pane over the dashboard (c) shows it.
package churn

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// Top is how many paths and objects the churn pane lists.
const Top = 20

// Every is how often the churn pane reads tui.Feed.Churn while it is open:
// a read sums up the reflector's counts under its lock, so it is not taken
// at every poll.
const Every = time.Second

// Msg is one read of tui.Feed.Churn, taken when the churn pane opens.
type Msg struct{ Sum diff.Summary }

// Cmd reads f off the screen's goroutine.
func Cmd(f func(top int) diff.Summary) tea.Cmd {
	return func() tea.Msg { return Msg{Sum: f(Top)} }
}

// Pane is what the resource's MODIFIED events changed, over the
// dashboard (c): how many were diffed, how many changed only times, how
// many were not diffed, the paths that change most with their top writer,
// and the objects that take most events. It scrolls by lines.
type Pane struct {
	sum    diff.Summary
	have   bool      // sum was read at least once
	readAt time.Time // when sum came (the model's clock)
	Offset int       // the first line shown
	// Off says why no MODIFIED event is diffed ("" when they are: Feed.Diffing).
	Off string
}

// Set takes a read of tui.Feed.Churn that came at at.
func (p *Pane) Set(sum diff.Summary, at time.Time) {
	p.sum, p.have, p.readAt = sum, true, at
}

// Due says the pane, open, should read tui.Feed.Churn again at now.
func (p *Pane) Due(now time.Time) bool {
	return !p.have || now.Sub(p.readAt) >= Every || now.Before(p.readAt)
}

// Hint is the footer under the churn pane.
const Hint = "↑/↓ pgup/pgdn scroll · esc or c close · ? help · q quit"

// Legend explains the churn pane on the help screen.
const Legend = "c shows what the MODIFIED events changed, with --diff: how many were diffed, how many changed only " +
	"times (resourceVersion, managedFields, timestamps), how many could not be diffed, the paths that change most with " +
	"their share of the events and the field manager that writes them most, and the objects that take most events; " +
	"enter on an object in the log shows each version's changed paths"

// Lines renders the whole pane at width (the caller windows it).
func (p *Pane) Lines(st common.Styles, width int) []string {
	s := p.sum
	title := common.SectionRule(st, "churn · what the MODIFIED events changed", width)
	if !p.have {
		return []string{title, "", st.Faint.Render("  reading…")}
	}
	if s.Events == 0 {
		// Wrapped, not cut: this is all the pane says.
		out := []string{title}
		add := func(text string) {
			out = append(out, "")
			for _, l := range strings.Split(common.Wrap(text, max(width-2, 20), " "), "\n") {
				out = append(out, "  "+l)
			}
		}
		switch {
		case p.Off != "":
			add(st.Value.Render("no MODIFIED event is diffed") + ": " + p.Off)
		case s.Skipped == 0:
			add(st.Value.Render("no MODIFIED event diffed yet") + ": none has come since the watch began")
		default:
			add(st.Value.Render("no MODIFIED event diffed yet"))
		}
		if s.Skipped > 0 {
			add(st.Warn.Render(format.Plural(s.Skipped, "MODIFIED event")) + " not diffed: no earlier version held, " +
				"a recreate, over --diff's cap on objects held, or a body not JSON")
		}
		add(st.Faint.Render("With --diff each MODIFIED event is compared with the object's previous version: " +
			"the changed paths and the field managers that wrote them."))
		return out
	}
	const labelW = 13
	fact := func(label, text string) string {
		return common.Clip(" "+st.Label.Render(fmt.Sprintf("%-*s", labelW, label))+text, width)
	}
	out := []string{title, "",
		fact("diffed", st.Value.Render(format.Plural(s.Events, "MODIFIED event"))),
		fact("times only", st.Value.Render(format.Count(s.TimestampOnly))+fmt.Sprintf(" (%s) changed only times, resourceVersion, managedFields", percent(s.TimestampOnly, s.Events))),
	}
	if s.Skipped > 0 {
		out = append(out, fact("not diffed", st.Warn.Render(format.Count(s.Skipped))+" (no earlier version held, a recreate, over the cap, or not JSON)"))
	}
	out = append(out, "")
	const countW, shareW = 7, 6
	writerW := min(max(width/4, 12), 32)
	pathW := max(width-5-countW-shareW-writerW, 16) // " path count share  writer"
	out = append(out, st.Label.Render(common.Clip(fmt.Sprintf(" %-*s %*s %*s  %s", pathW, "PATH (most changed)", countW, "COUNT", shareW, "SHARE", "TOP WRITER"), width)))
	if len(s.Paths) == 0 {
		out = append(out, st.Faint.Render("  no path but the meta ones (resourceVersion, managedFields) changed"))
	}
	for _, pc := range s.Paths {
		out = append(out, common.Clip(" "+st.Value.Render(common.Pad(pc.Path, pathW))+fmt.Sprintf(" %*s %*s  ", countW, format.Count(pc.Count), shareW, share(pc.Share))+
			st.Accent.Render(common.OrDash(pc.Manager)), width))
	}
	out = append(out, "")
	out = append(out, st.Label.Render(common.Clip(fmt.Sprintf(" %-*s %*s %*s", pathW, "OBJECT (most events)", countW, "EVENTS", shareW, "SHARE"), width)))
	for _, o := range s.Objects {
		out = append(out, common.Clip(" "+common.Pad(o.Name, pathW)+fmt.Sprintf(" %*s %*s", countW, format.Count(o.Count), shareW, percent(o.Count, s.Events+s.Skipped)), width))
	}
	return out
}

// Window is the pane's lines from its offset, in h lines.
func (p *Pane) Window(st common.Styles, width, h int) []string {
	all := p.Lines(st, width)
	p.Offset = min(max(p.Offset, 0), max(len(all)-h, 0))
	return all[p.Offset:]
}

// percent is n of total as a whole percentage: "71%".
func percent(n, total int64) string {
	if total <= 0 {
		return "-"
	}
	return share(float64(n) / float64(total))
}

// share is a fraction as a whole percentage, "<1%" for a small one.
func share(f float64) string {
	switch {
	case f <= 0:
		return "0%"
	case f < 0.01:
		return "<1%"
	}
	return fmt.Sprintf("%.0f%%", f*100)
}
