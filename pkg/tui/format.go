package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// ellipsis marks text cut to fit.
const ellipsis = "…"

// age is a compact human duration: 850ms, 4.2s, 42s, 2m10s, 3h02m, 2d03h.
// Negative durations (clock skew) read as 0s.
func age(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < 10*time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%02dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// latency is a compact duration for short times: 12µs, 1.2ms, 340ms, 2.5s.
func latency(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d < time.Microsecond:
		return strconv.FormatInt(d.Nanoseconds(), 10) + "ns"
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + "µs"
	case d < 10*time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return age(d)
}

// bytesIEC renders a byte count: 512 B, 2.3 KiB, 1.1 GiB.
func bytesIEC(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + string("KMGTP"[exp]) + "iB"
}

// count renders an integer with thousands separators: 1,234,567.
func count[T ~int | ~int64](v T) string {
	n := int64(v)
	if n < 0 {
		return "-" + count(-n)
	}
	s := strconv.FormatInt(n, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	head := len(s) % 3
	if head > 0 {
		b.WriteString(s[:head])
	}
	for i := head; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

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
	return ansi.Truncate(s, width, ellipsis)
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
		return count(r.Items) + " items"
	}
	if r.Items > 0 {
		return count(r.Items) + " items+" + count(r.Events) + " ev"
	}
	return count(r.Events) + " events"
}

// plural is "1 delete" or "2 deletes".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return count(n) + " " + word + "s"
}

// missedBreakdown is what a relist made up for, by category.
func missedBreakdown(d *store.RelistDiff) string {
	return plural(len(d.Deleted), "delete") + " · " + plural(len(d.Recreated), "recreate") + " · " +
		plural(len(d.Updated), "update") + " · " + plural(len(d.Added), "add") + " · " + count(d.Unchanged) + " unchanged"
}

// diffSummary is one line about a relist diff.
func diffSummary(d *store.RelistDiff) string {
	return count(d.Before) + " → " + count(d.After) + " objects · missed " + count(d.Missed()) + ": " + missedBreakdown(d)
}
