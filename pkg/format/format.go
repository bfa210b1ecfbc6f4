// Package format writes numbers, sizes, durations and cut text for people:
// the one set of helpers behind the dashboard, the report, the cost
// command and the messages of the trace reader. Where two screens write a
// thing differently (a dashboard's age and a report's duration), each way
// is a function of its own here, named for what it is, so that what a user
// sees never changes with the caller. It imports the standard library
// alone. (Cutting text to a terminal's cells, ANSI styles kept, is the
// dashboard's own: package tui.)
package format

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Ellipsis marks text cut to fit.
const Ellipsis = "…"

// Age is a compact duration for ages and long spans: 850ms, 4.2s, 42s,
// 2m10s, 3h02m, 2d03h. Under a millisecond, and a negative duration (clock
// skew), reads as 0s, never 0ms.
func Age(d time.Duration) string {
	switch {
	case d < time.Millisecond:
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

// Latency is a compact duration for short times: 12µs, 1.2ms, 340ms, then
// as Age (2.5s). Zero or less reads as 0.
func Latency(d time.Duration) string {
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
	return Age(d)
}

// Duration is a duration short and exact enough to read, trailing zeros
// dropped: 350ms, 1.25s, 2m03s, 1h02m; a negative one has a minus sign.
func Duration(d time.Duration) string {
	switch {
	case d < 0:
		// -math.MinInt64 is itself: the least duration reads as the one
		// after it, which it equals to the minute.
		return "-" + Duration(-max(d, -math.MaxInt64))
	case d == 0:
		return "0s"
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d)
	case d < time.Millisecond:
		return trimFloat(float64(d)/float64(time.Microsecond), 1) + "µs"
	case d < time.Second:
		return trimFloat(float64(d)/float64(time.Millisecond), 1) + "ms"
	case d < time.Minute:
		return trimFloat(d.Seconds(), 2) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// trimFloat is f to prec decimals (prec > 0: the zeros cut are decimals),
// without trailing zeros.
func trimFloat(f float64, prec int) string {
	return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(f, 'f', prec, 64), "0"), ".")
}

// Bytes is a size in binary units, to one decimal: 512 B, 2.3 KiB, 1.1 GiB.
func Bytes(n int64) string {
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

// MiB is a size in mebibytes, for a figure printed as such (%.1f MiB).
func MiB(b uint64) float64 { return float64(b) / (1 << 20) }

// Count is an integer with thousands separators: 1,234,567.
func Count[T ~int | ~int64](v T) string {
	s := strconv.FormatInt(int64(v), 10)
	b := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		// A comma before each group of three digits but the first, never
		// after the sign (v is never negated: -math.MinInt64 is itself).
		if i > 0 && s[i-1] != '-' && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}

// Plural is n word, in the plural but for 1, n with thousands separators:
// "1 delete", "2 deletes", "1,234 deletes".
func Plural[T ~int | ~int64](n T, word string) string {
	return plural(n, Count(n), word)
}

// PluralUngrouped is Plural with n's digits ungrouped: "1234 objects".
func PluralUngrouped[T ~int | ~int64](n T, word string) string {
	return plural(n, strconv.FormatInt(int64(n), 10), word)
}

func plural[T ~int | ~int64](n T, digits, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return digits + " " + word + "s"
}

// Clip cuts s to at most n bytes, at the start of a character, and marks
// the cut with an Ellipsis; s when it fits.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:runeStart(s, n)] + Ellipsis
}

// ClipWithLength is Clip that says how long s was: "abc… (1,234 bytes)".
func ClipWithLength(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:runeStart(s, n)] + fmt.Sprintf("… (%s bytes)", Count(len(s)))
}

// ClipBytes cuts s to n bytes, even inside a character, and marks the cut
// with an Ellipsis; s when it fits. It is for a value quoted (%q) after,
// where a character cut shows as its escaped bytes.
func ClipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + Ellipsis
}

// runeStart is the last start of a character in s at or before i (i < len(s)).
func runeStart(s string, i int) int {
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// Printable writes to w what it is given with the terminal's control
// characters escaped (ESC as \x1b, a C1 control as \u009b): a text line
// or message that carries what another program chose (a proxied client's
// selectors, continue token, User-Agent) can then neither move the cursor,
// retitle the window nor forge lines. Tab and newline pass.
func Printable(w io.Writer) io.Writer { return printable{w} }

type printable struct{ w io.Writer }

func (p printable) Write(b []byte) (int, error) {
	if clean(b) {
		return p.w.Write(b)
	}
	if _, err := p.w.Write(escapeControls(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// PrintableString is s with the terminal's control characters escaped,
// as Printable writes it: for what a screen shows.
func PrintableString(s string) string {
	if clean(s) {
		return s
	}
	return string(escapeControls([]byte(s)))
}

// clean reports whether b has no control character but tab and newline.
func clean[T string | []byte](b T) bool {
	for i := 0; i < len(b); i++ {
		// Most bytes are none of these: the full test only for those that are.
		if c := b[i]; (c < 0x20 || c == 0x7f || c == 0xc2) && control(c, next(b, i)) {
			return false
		}
	}
	return true
}

// escapeControls is b with its control characters escaped: ESC as \x1b,
// a C1 control as \u009b.
func escapeControls(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == 0xc2 && control(c, next(b, i)):
			out = fmt.Appendf(out, `\u%04x`, b[i+1])
			i++
		case control(c, -1):
			out = fmt.Appendf(out, `\x%02x`, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

// next is the byte after b[i], -1 at the end.
func next[T string | []byte](b T, i int) int {
	if i+1 < len(b) {
		return int(b[i+1])
	}
	return -1
}

// control reports whether c, followed by the byte next (-1: none), starts
// a control character other than tab and newline: C0, DEL, or C1
// (U+0080–U+009F, 0xc2 then 0x80–0x9f in UTF-8).
func control(c byte, next int) bool {
	return c < 0x20 && c != '\t' && c != '\n' || c == 0x7f || c == 0xc2 && next >= 0x80 && next <= 0x9f
}
