package format_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
)

// check fails t for each of got that is not its want.
func check[T comparable](t *testing.T, name string, f func(T) string, cases map[T]string) {
	t.Helper()
	for in, want := range cases {
		if got := f(in); got != want {
			t.Errorf("%s(%v) = %q, want %q", name, in, got, want)
		}
	}
}

func TestDurations(t *testing.T) {
	check(t, "Age", format.Age, map[time.Duration]string{
		-time.Second: "0s", 0: "0s", 400 * time.Microsecond: "0s", time.Millisecond: "1ms", 850 * time.Millisecond: "850ms", 4200 * time.Millisecond: "4.2s", 42 * time.Second: "42s",
		130 * time.Second: "2m10s", 3*time.Hour + 2*time.Minute: "3h02m", 51 * time.Hour: "2d03h",
	})
	check(t, "Latency", format.Latency, map[time.Duration]string{
		0: "0", 500: "500ns", 12 * time.Microsecond: "12µs", 1200 * time.Microsecond: "1.2ms", 340 * time.Millisecond: "340ms",
		2500 * time.Millisecond: "2.5s",
	})
	check(t, "Duration", format.Duration, map[time.Duration]string{
		0: "0s", 500: "500ns", 1500: "1.5µs", 350 * time.Millisecond: "350ms", 1250 * time.Millisecond: "1.25s", time.Second: "1s",
		123 * time.Second: "2m03s", 62 * time.Minute: "1h02m", -1500 * time.Millisecond: "-1.5s",
		math.MinInt64: "-2562047h47m", math.MaxInt64: "2562047h47m",
	})
}

func TestSizesAndCounts(t *testing.T) {
	check(t, "Bytes", format.Bytes, map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 3 << 20: "3.0 MiB", 5 << 30: "5.0 GiB", 1 << 60: "1024.0 PiB"})
	check(t, "Count", format.Count[int64], map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234",
		-123: "-123", -1000: "-1,000", -999999: "-999,999", 100000: "100,000", math.MinInt64: "-9,223,372,036,854,775,808", math.MaxInt64: "9,223,372,036,854,775,807"})
	if got := format.MiB(3 << 19); got != 1.5 {
		t.Errorf("MiB(3<<19) = %v, want 1.5", got)
	}
}

func TestPlurals(t *testing.T) {
	for n, want := range map[int][2]string{0: {"0 deletes", "0 deletes"}, 1: {"1 delete", "1 delete"}, 1234: {"1,234 deletes", "1234 deletes"}} {
		if got := format.Plural(n, "delete"); got != want[0] {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want[0])
		}
		if got := format.PluralUngrouped(int64(n), "delete"); got != want[1] {
			t.Errorf("PluralUngrouped(%d) = %q, want %q", n, got, want[1])
		}
	}
}

func TestClips(t *testing.T) {
	const s = "abcdé" // é is 2 bytes: 6 in all
	for _, tc := range []struct {
		n                         int
		clip, withLength, asBytes string
	}{
		{6, s, s, s},
		{5, "abcd…", "abcd… (6 bytes)", "abcd\xc3…"},
		{4, "abcd…", "abcd… (6 bytes)", "abcd…"},
		{0, "…", "… (6 bytes)", "…"},
	} {
		got := [3]string{format.Clip(s, tc.n), format.ClipWithLength(s, tc.n), format.ClipBytes(s, tc.n)}
		if want := [3]string{tc.clip, tc.withLength, tc.asBytes}; got != want {
			t.Errorf("cut at %d: %q, want %q", tc.n, got, want)
		}
	}
	if got := format.ClipWithLength(fmt.Sprintf("%01234d", 0), 2); got != "00… (1,234 bytes)" {
		t.Errorf("ClipWithLength of 1234 bytes: %q", got)
	}
}

func TestPrintableEscapesTheTerminalsControlCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"request #1 LIST limit=1: started\n":          "request #1 LIST limit=1: started\n",
		"a\tb\n":                                      "a\tb\n",
		"continue=\x1b]0;PWNED\a\x1b[31mCONT\n":       `continue=\x1b]0;PWNED\x07\x1b[31mCONT` + "\n",
		"csi \u009b2J, del \x7f, cr \r, é ok, ü ok\n": `csi \u009b2J, del \x7f, cr \x0d, é ok, ü ok` + "\n",
		"a lone \xc2":                                 "a lone \xc2",
	} {
		var b strings.Builder
		n, err := format.Printable(&b).Write([]byte(in))
		if err != nil || n != len(in) || b.String() != want {
			t.Errorf("Printable(%q) wrote %q (%d, %v), want %q (%d)", in, b.String(), n, err, want, len(in))
		}
		if got := format.PrintableString(in); got != want {
			t.Errorf("PrintableString(%q) = %q, want %q", in, got, want)
		}
	}
}
