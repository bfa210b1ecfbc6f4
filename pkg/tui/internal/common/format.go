package common

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// OrDash shows "-" for an empty value.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Clip cuts s (which may hold ANSI styles) to width cells, marking the cut.
func Clip(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, format.Ellipsis)
}

// keptHyphen stands for a hyphen while Wrap wraps: a private-use rune,
// one cell wide, that ansi.Wrap does not break after.
const keptHyphen = "\ue000"

// Wrap wraps s (which may hold ANSI styles) to width cells at its spaces
// and at the other breakpoints given, never after a hyphen: ansi.Wrap
// breaks after any hyphen, which cut a flag's name ("--" at the end of a
// line, "ignore-finding" on the next), so the hyphens are kept out of its
// sight. A word wider than width is still cut.
func Wrap(s string, width int, breakpoints string) string {
	lines := strings.Split(ansi.Wrap(strings.ReplaceAll(s, "-", keptHyphen), width, breakpoints), "\n")
	for i, l := range lines {
		// ansi.Wrap (v0.12.0 too) can leave a word and the comma it broke
		// after one cell over width: wrap that line again at its spaces.
		if ansi.StringWidth(l) > width {
			lines[i] = ansi.Wrap(l, width, " ")
		}
	}
	return strings.ReplaceAll(strings.Join(lines, "\n"), keptHyphen, "-")
}

// Pad cuts or right-pads s to exactly width cells.
func Pad(s string, width int) string {
	s = Clip(s, width)
	if w := ansi.StringWidth(s); w < width {
		s += strings.Repeat(" ", width-w)
	}
	return s
}

// Spread puts left and right on one line of width cells, right-aligned,
// cutting left first when both do not fit.
func Spread(left, right string, width int) string {
	rw := ansi.StringWidth(right)
	if rw >= width {
		return Clip(right, width)
	}
	left = Clip(left, width-rw-1)
	gap := width - ansi.StringWidth(left) - rw
	return left + strings.Repeat(" ", gap) + right
}

// SpreadKeeping is Spread, but where both do not fit it keeps at least
// keep cells of left (all of it when shorter), cutting the end of right
// first: a state line keeps its state on a narrow screen.
func SpreadKeeping(left, right string, width, keep int) string {
	keep = min(keep, ansi.StringWidth(left), width)
	return Spread(left, Clip(right, max(width-keep-1, 0)), width)
}

// FitLines cuts or pads lines to exactly height lines of at most width cells.
func FitLines(lines []string, width, height int) []string {
	out := make([]string, max(height, 0))
	for i := range out {
		if i < len(lines) {
			out[i] = Clip(lines[i], width)
		}
	}
	return out
}

// SideBySide joins two blocks of lines with a separator column.
func SideBySide(left []string, leftWidth int, sep string, right []string) []string {
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
		out[i] = Pad(l, leftWidth) + sep + r
	}
	return out
}

// RequestCount is what a request received: "500 items" or "812 events".
func RequestCount(r *reflector.RequestInfo) string {
	if r.Verb == reflector.VerbList {
		return format.Plural(r.Items, "item")
	}
	if r.Items > 0 {
		return format.Plural(r.Items, "item") + "+" + format.Count(r.Events) + " ev"
	}
	return format.Plural(r.Events, "event")
}

// MissedBreakdown is what a relist made up for, by category.
func MissedBreakdown(d *store.RelistDiff) string {
	return format.Plural(len(d.Deleted), "delete") + " · " + format.Plural(len(d.Recreated), "recreate") + " · " +
		format.Plural(len(d.Updated), "update") + " · " + format.Plural(len(d.Added), "add") + " · " + format.Count(d.Unchanged) + " unchanged"
}

// DiffSummary is one line about a relist diff.
func DiffSummary(d *store.RelistDiff) string {
	return format.Count(d.Before) + " → " + format.Count(d.After) + " objects · missed " + format.Count(d.Missed()) + ": " + MissedBreakdown(d)
}

// WideWidth is the width from which a screen shows its wide layout;
// the dashboard also needs WideHeight lines for it.
const WideWidth, WideHeight = 120, 32

// SectionRule is a rule with a title: "── resources ─────".
func SectionRule(st Styles, title string, width int) string {
	head := "── " + title + " "
	return st.Section.Render(Clip(head+strings.Repeat("─", max(width-ansi.StringWidth(head), 0)), width))
}

// RawValue renders a JSON value briefly, on one line.
func RawValue(raw json.RawMessage) string {
	var b bytes.Buffer
	s := string(raw)
	if json.Compact(&b, raw) == nil {
		s = b.String()
	}
	if ansi.StringWidth(s) > 40 {
		s = ansi.Truncate(s, 40, format.Ellipsis)
	}
	return s
}

// Owners renders owner references as Kind/name, the controller marked with *.
func Owners(o *store.Object) string {
	if len(o.OwnerReferences) == 0 {
		return "none"
	}
	parts := make([]string, len(o.OwnerReferences))
	for i, r := range o.OwnerReferences {
		parts[i] = r.Kind + "/" + r.Name
		if r.Controller {
			parts[i] += "*"
		}
	}
	return strings.Join(parts, ",")
}

// ProgressBar draws done/total in width cells.
func ProgressBar(done, total int64, width int) string {
	filled := int(min(max(done*int64(width)/max(total, 1), 0), int64(width)))
	return strings.Repeat("█", filled) + strings.Repeat("░", width-filled)
}
