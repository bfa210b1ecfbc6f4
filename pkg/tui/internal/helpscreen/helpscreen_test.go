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
