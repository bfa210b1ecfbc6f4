package tui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// severity orders how worrying a value is; it picks a color, and a word where
// color alone would carry the meaning (NO_COLOR).
type severity int

const (
	sevNone severity = iota
	sevGood
	sevWarn
	sevBad
)

// styles are every style the dashboard uses, built once per model.
type styles struct {
	app       lipgloss.Style // the tool's name
	label     lipgloss.Style // gauge labels, column heads
	value     lipgloss.Style
	faint     lipgloss.Style
	good      lipgloss.Style
	warn      lipgloss.Style
	bad       lipgloss.Style
	accent    lipgloss.Style
	section   lipgloss.Style // section rules
	tab       lipgloss.Style
	tabActive lipgloss.Style
	selected  lipgloss.Style // the cursor row of the focused pane
	cursor    lipgloss.Style // the cursor row of an unfocused pane
	badge     lipgloss.Style // REPLAY / LIVE / PAUSED
	spark     lipgloss.Style
	request   lipgloss.Style
	audit     lipgloss.Style
	help      help.Styles
}

// newStyles uses the 16 ANSI colors only, so the dashboard follows the
// user's terminal theme; the renderer drops them under NO_COLOR.
func newStyles() styles {
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
	s := styles{
		app:       base.Bold(true).Foreground(colorCyan),
		label:     base.Foreground(colorGray),
		value:     base.Bold(true),
		faint:     base.Faint(true),
		good:      base.Foreground(colorGreen),
		warn:      base.Foreground(colorYellow),
		bad:       base.Foreground(colorRed).Bold(true),
		accent:    base.Foreground(colorCyan),
		section:   base.Foreground(colorGray),
		tab:       base.Foreground(colorGray),
		tabActive: base.Bold(true).Reverse(true),
		selected:  base.Reverse(true),
		cursor:    base.Underline(true),
		badge:     base.Bold(true).Reverse(true),
		spark:     base.Foreground(colorBlue),
		request:   base.Foreground(colorBlue),
		audit:     base.Foreground(colorPurple),
	}
	s.help = help.Styles{
		Ellipsis:       s.faint,
		ShortKey:       base.Bold(true),
		ShortDesc:      s.label,
		ShortSeparator: s.faint,
		FullKey:        base.Bold(true),
		FullDesc:       s.label,
		FullSeparator:  s.faint,
	}
	return s
}

// sev renders text with the style of a severity.
func (s styles) sev(v severity, text string) string {
	switch v {
	case sevGood:
		return s.good.Render(text)
	case sevWarn:
		return s.warn.Render(text)
	case sevBad:
		return s.bad.Render(text)
	}
	return s.value.Render(text)
}

// counter shows a count, which is worrying when not zero if worrying says so.
func (s styles) counter(n int64, worrying bool) string {
	switch {
	case n == 0:
		return s.faint.Render("0")
	case worrying:
		return s.warn.Render(format.Count(n))
	}
	return s.value.Render(format.Count(n))
}

// stateSeverity colors the reflector's state: watching is healthy, listing is
// work in progress, backoff and failure are trouble.
func stateSeverity(st reflector.State) severity {
	switch st {
	case reflector.StateWatching:
		return sevGood
	case reflector.StateListing, reflector.StateStreamingList, reflector.StateRelisting:
		return sevWarn
	case reflector.StateBackoff, reflector.StateFailed:
		return sevBad
	}
	return sevNone
}

// kindStyle colors an event log entry by its kind.
func (s styles) kind(k entryKind) lipgloss.Style {
	switch k {
	case kindAdded:
		return s.good
	case kindModified:
		return s.accent
	case kindDeleted:
		return s.warn
	case kindReplaced, kindRelist:
		return s.bad
	case kindList:
		return s.good
	case kindRequest:
		return s.request
	case kindAudit:
		return s.audit
	}
	return s.label
}
