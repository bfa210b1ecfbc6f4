package helpscreen

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// TestTheListKeysAndSpaceScrollTheHelp scrolls 50 lines in a body of 10.
func TestTheListKeysAndSpaceScrollTheHelp(t *testing.T) {
	quit, toggle, closeKey := key.NewBinding(key.WithKeys("q")), key.NewBinding(key.WithKeys("?")), key.NewBinding(key.WithKeys("esc"))
	runes := func(s string) tea.KeyPressMsg { return tea.KeyPressMsg{Code: []rune(s)[0], Text: s} }
	var s Screen
	for _, step := range []struct {
		name string
		k    tea.KeyPressMsg
		top  int
	}{
		{"j", runes("j"), 1},
		{"down", tea.KeyPressMsg{Code: tea.KeyDown}, 2},
		{"space", tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}, 11},
		{"pgup", tea.KeyPressMsg{Code: tea.KeyPgUp}, 2},
		{"G", runes("G"), 40},
		{"pgdown past the end", tea.KeyPressMsg{Code: tea.KeyPgDown}, 40},
		{"k", runes("k"), 39},
		{"g", runes("g"), 0},
		{"up before the start", tea.KeyPressMsg{Code: tea.KeyUp}, 0},
	} {
		if _, closed := s.Key(step.k, quit, toggle, closeKey, 50, 10); closed || s.top != step.top {
			t.Fatalf("%s: top %d (closed %v), want %d", step.name, s.top, closed, step.top)
		}
	}
	if got, want := s.Hint(50, 10), "lines 1-10 of 50 · ↑/↓ pgup/pgdn scroll · "+hint; got != want {
		t.Errorf("hint at the top: %q, want %q", got, want)
	}
	s.Key(runes("G"), quit, toggle, closeKey, 50, 10)
	if got := s.Hint(50, 10); !strings.HasPrefix(got, "lines 41-50 of 50 · ") {
		t.Errorf("hint at the end: %q, want it to say lines 41-50 of 50", got)
	}
	// A terminal made taller after the scroll: the lines Window still shows.
	if got := s.Hint(50, 20); !strings.HasPrefix(got, "lines 41-50 of 50 · ") {
		t.Errorf("hint after a resize: %q, want it to say lines 41-50 of 50, as shown", got)
	}
	// Made wider, the help wraps to fewer lines than the scroll: the last
	// one shows, and the hint says so.
	lines := make([]string, 30)
	lines[29] = "last"
	if w := s.Window(lines); len(w) != 1 || w[0] != "last" || !strings.HasPrefix(s.Hint(30, 10), "lines 30-30 of 30 · ") {
		t.Errorf("after a resize to 30 lines: window %q, hint %q; want the last line, and the hint to say so", w, s.Hint(30, 10))
	}
	if got := s.Hint(10, 10); got != hint {
		t.Errorf("hint of a help that fits: %q, want %q", got, hint)
	}
	if _, closed := s.Key(runes("?"), quit, toggle, closeKey, 50, 10); !closed || s.top != 0 {
		t.Fatalf("?: closed %v, top %d; want closed, back to the top", closed, s.top)
	}
}

// TestTheLegendDoesNotBreakAFlagAtItsHyphens: a legend's text wraps at its
// spaces, never inside a flag's name.
func TestTheLegendDoesNotBreakAFlagAtItsHyphens(t *testing.T) {
	text := "f lists every resource's findings, and enter shows one's evidence, cause and what to do; --ignore-finding ID keeps one listed"
	for width := 40; width <= 90; width++ { // 40: the least the dashboard draws
		lines := Legend(common.NewStyles(), [][2]string{{"findings", text}}, width)
		joined := ansi.Strip(strings.Join(lines, "\n"))
		if !strings.Contains(joined, "--ignore-finding") {
			t.Fatalf("at width %d the flag is cut:\n%s", width, joined)
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > width {
				t.Fatalf("at width %d a line is %d wide: %q", width, w, ansi.Strip(l))
			}
		}
	}
}

// TestKeysAreNeverCut: at any width the dashboard draws, every key and its
// description show whole (a third column of "…" at 60 columns hid what f,
// c and space do), no line is wider than the screen, and two columns never
// touch.
func TestKeysAreNeverCut(t *testing.T) {
	b := func(k, desc string) key.Binding { return key.NewBinding(key.WithKeys(k), key.WithHelp(k, desc)) }
	groups := [][]key.Binding{
		{b("↑/k", "up"), b("↓/j", "down"), b("pgup", "page up"), b("g/home", "oldest"), b("G/end", "newest, follow")},
		{b("tab", "next pane"), b("shift+tab", "previous pane"), b("enter", "details"), b("esc", "back, unfilter, overview"), b("?", "help")},
		{b("f", "findings"), b("c", "field churn"), b("space", "pause, resume"), b("/", "filter"), b("t", "filter by type"), b("r", "force relist")},
	}
	for width := 40; width <= 200; width++ {
		lines := Keys(common.NewStyles(), groups, width)
		text := ansi.Strip(strings.Join(lines, "\n"))
		if strings.Contains(text, "…") {
			t.Fatalf("at width %d a key is cut:\n%s", width, text)
		}
		for _, g := range groups {
			for _, k := range g {
				h := k.Help()
				if !strings.Contains(text, h.Key) || !strings.Contains(text, h.Desc+" ") && !strings.Contains(text, h.Desc+"\n") && !strings.HasSuffix(text, h.Desc) {
					t.Fatalf("at width %d %q (%s) is not whole:\n%s", width, h.Key, h.Desc, text)
				}
			}
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > width {
				t.Fatalf("at width %d a line is %d wide: %q", width, w, ansi.Strip(l))
			}
		}
		if strings.Contains(text, "follow ?") || strings.Contains(text, "overview f") {
			t.Fatalf("at width %d two columns touch:\n%s", width, text)
		}
	}
}

// A term as wide as the legend's column stays apart from its text.
func TestALegendsLongTermStaysApartFromItsText(t *testing.T) {
	lines := Legend(common.NewStyles(), [][2]string{{"last error", "the last request's error"}, {"for", "how long"}}, 80)
	if got := ansi.Strip(lines[0]); !strings.HasPrefix(got, " last error the last") {
		t.Errorf("%q, want the term and its text a space apart", got)
	}
	if got := ansi.Strip(lines[1]); !strings.HasPrefix(got, " for       how long") {
		t.Errorf("%q, want a short term padded to the column", got)
	}
}
