package common

import (
	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// Severity orders how worrying a value is; it picks a color, and a word where
// color alone would carry the meaning (NO_COLOR).
type Severity int

// The severities, from none to bad.
const (
	SevNone Severity = iota
	SevGood
	SevWarn
	SevBad
)

// Styles are every style the dashboard uses, built once per model.
type Styles struct {
	App       lipgloss.Style // the tool's name
	Label     lipgloss.Style // gauge labels, column heads
	Value     lipgloss.Style
	Faint     lipgloss.Style
	Good      lipgloss.Style
	Warn      lipgloss.Style
	Bad       lipgloss.Style
	Accent    lipgloss.Style
	Section   lipgloss.Style // section rules
	Tab       lipgloss.Style
	TabActive lipgloss.Style
	Selected  lipgloss.Style // the cursor row of the focused pane
	Cursor    lipgloss.Style // the cursor row of an unfocused pane
	Badge     lipgloss.Style // REPLAY / LIVE / PAUSED
	Spark     lipgloss.Style
	Request   lipgloss.Style
	Audit     lipgloss.Style
	Help      help.Styles
}

// NewStyles uses the 16 ANSI colors only, so the dashboard follows the
// user's terminal theme; the renderer drops them under NO_COLOR.
func NewStyles() Styles {
	var (
		colorGreen  = lipgloss.Color("2")
		colorYellow = lipgloss.Color("3")
		colorRed    = lipgloss.Color("1")
		colorBlue   = lipgloss.Color("4")
		colorPurple = lipgloss.Color("5")
		colorCyan   = lipgloss.Color("6")
		colorGray   = lipgloss.Color("8")
	)
	base := lipgloss.NewStyle()
	s := Styles{
		App:       base.Bold(true).Foreground(colorCyan),
		Label:     base.Foreground(colorGray),
		Value:     base.Bold(true),
		Faint:     base.Faint(true),
		Good:      base.Foreground(colorGreen),
		Warn:      base.Foreground(colorYellow),
		Bad:       base.Foreground(colorRed).Bold(true),
		Accent:    base.Foreground(colorCyan),
		Section:   base.Foreground(colorGray),
		Tab:       base.Foreground(colorGray),
		TabActive: base.Bold(true).Reverse(true),
		Selected:  base.Reverse(true),
		Cursor:    base.Underline(true),
		Badge:     base.Bold(true).Reverse(true),
		Spark:     base.Foreground(colorBlue),
		Request:   base.Foreground(colorBlue),
		Audit:     base.Foreground(colorPurple),
	}
	s.Help = help.Styles{
		Ellipsis:       s.Faint,
		ShortKey:       base.Bold(true),
		ShortDesc:      s.Label,
		ShortSeparator: s.Faint,
		FullKey:        base.Bold(true),
		FullDesc:       s.Label,
		FullSeparator:  s.Faint,
	}
	return s
}

// Sev renders text with the style of a severity.
func (s Styles) Sev(v Severity, text string) string {
	switch v {
	case SevGood:
		return s.Good.Render(text)
	case SevWarn:
		return s.Warn.Render(text)
	case SevBad:
		return s.Bad.Render(text)
	}
	return s.Value.Render(text)
}

// Counter shows a count, which is worrying when not zero if worrying says so.
func (s Styles) Counter(n int64, worrying bool) string {
	switch {
	case n == 0:
		return s.Faint.Render("0")
	case worrying:
		return s.Warn.Render(format.Count(n))
	}
	return s.Value.Render(format.Count(n))
}

// StateSeverity colors the reflector's state: watching (or an observed
// client's complete list) is healthy, listing is work in progress, backoff
// and failure are trouble.
func StateSeverity(st reflector.State) Severity {
	switch st {
	case reflector.StateWatching, reflector.StateListed:
		return SevGood
	case reflector.StateListing, reflector.StateStreamingList, reflector.StateRelisting:
		return SevWarn
	case reflector.StateBackoff, reflector.StateFailed:
		return SevBad
	}
	return SevNone
}

// CursorRow highlights the cursor row: reversed in the focused pane,
// underlined in the others.
func (s Styles) CursorRow(focused bool, row string) string {
	if focused {
		return s.Selected.Render(row)
	}
	return s.Cursor.Render(row)
}
