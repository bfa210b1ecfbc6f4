package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// orDash shows "-" for an empty value.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clip cuts s (which may hold ANSI styles) to width cells, marking the cut.
func clip(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, format.Ellipsis)
}

// pad cuts or right-pads s to exactly width cells.
func pad(s string, width int) string {
	s = clip(s, width)
	if w := ansi.StringWidth(s); w < width {
		s += strings.Repeat(" ", width-w)
	}
	return s
}

// spread puts left and right on one line of width cells, right-aligned,
// cutting left first when both do not fit.
func spread(left, right string, width int) string {
	rw := ansi.StringWidth(right)
	if rw >= width {
		return clip(right, width)
	}
	left = clip(left, width-rw-1)
	gap := width - ansi.StringWidth(left) - rw
	return left + strings.Repeat(" ", gap) + right
}

// fitLines cuts or pads lines to exactly height lines of at most width cells.
func fitLines(lines []string, width, height int) []string {
	if height < 0 {
		height = 0
	}
	out := make([]string, height)
	for i := range out {
		if i < len(lines) {
			out[i] = clip(lines[i], width)
		}
	}
	return out
}

// sideBySide joins two blocks of lines with a separator column.
func sideBySide(left []string, leftWidth int, sep string, right []string) []string {
	n := max(len(left), len(right))
	out := make([]string, n)
	for i := range out {
		var l, r string
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out[i] = pad(l, leftWidth) + sep + r
	}
	return out
}

// requestCount is what a request received: "500 items" or "812 events".
func requestCount(r *reflector.RequestInfo) string {
	if r.Verb == reflector.VerbList {
		return format.Count(r.Items) + " items"
	}
	if r.Items > 0 {
		return format.Count(r.Items) + " items+" + format.Count(r.Events) + " ev"
	}
	return format.Count(r.Events) + " events"
}

// missedBreakdown is what a relist made up for, by category.
func missedBreakdown(d *store.RelistDiff) string {
	return format.Plural(len(d.Deleted), "delete") + " · " + format.Plural(len(d.Recreated), "recreate") + " · " +
		format.Plural(len(d.Updated), "update") + " · " + format.Plural(len(d.Added), "add") + " · " + format.Count(d.Unchanged) + " unchanged"
}

// diffSummary is one line about a relist diff.
func diffSummary(d *store.RelistDiff) string {
	return format.Count(d.Before) + " → " + format.Count(d.After) + " objects · missed " + format.Count(d.Missed()) + ": " + missedBreakdown(d)
}
