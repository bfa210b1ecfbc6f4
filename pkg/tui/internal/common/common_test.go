package common

import (
	"slices"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

func TestClipPadAndSpreadKeepToTheirWidthInCells(t *testing.T) {
	styled := lipgloss.NewStyle().Bold(true).Render("watching") // ANSI codes take no cells
	for _, tt := range []struct {
		name, got, want string
	}{
		{"clip leaves what fits", Clip("abc", 3), "abc"},
		{"clip marks the cut", Clip("abcdef", 4), "abc…"},
		{"clip to nothing", Clip("abc", 0), ""},
		{"clip counts wide runes as two cells", Clip("日本語", 4), "日…"},
		{"pad fills with spaces", Pad("ab", 4), "ab  "},
		{"pad cuts", Pad("abcdef", 4), "abc…"},
		{"spread puts right at the edge", Spread("left", "right", 12), "left   right"},
		{"spread cuts left first", Spread("a long left side", "right", 12), "a lon… right"},
		{"spread keeps what of right fits", Spread("left", "a long right", 5), "a lo…"},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	if got := Clip(styled, 5); ansi.StringWidth(got) != 5 || ansi.Strip(got) != "watc…" {
		t.Errorf("clip of a styled word: %q (%d cells), want watc… in 5 cells", got, ansi.StringWidth(got))
	}
	if got := Pad(styled, 10); ansi.StringWidth(got) != 10 || !strings.HasPrefix(got, styled) {
		t.Errorf("pad of a styled word: %q (%d cells), want it whole and 10 cells", got, ansi.StringWidth(got))
	}
}

func TestFitLinesAndSideBySideMakeExactBlocks(t *testing.T) {
	got := FitLines([]string{"one", "a line too long"}, 6, 3)
	if want := []string{"one", "a lin…", ""}; !slices.Equal(got, want) {
		t.Errorf("FitLines = %q, want %q", got, want)
	}
	if got := FitLines([]string{"x"}, 5, -1); len(got) != 0 {
		t.Errorf("FitLines to a negative height = %q, want no line", got)
	}
	got = SideBySide([]string{"a", "bb", "ccc"}, 2, "|", []string{"1"})
	if want := []string{"a |1", "bb|", "c…|"}; !slices.Equal(got, want) {
		t.Errorf("SideBySide = %q, want %q", got, want)
	}
}

func TestTheScrollerFollowsTheNewestUntilMovedAndStaysInItsWindow(t *testing.T) {
	s := NewScroller()
	s.Clamp(10, 4)
	if s.Cursor != 9 || s.Top != 6 || !s.Follow {
		t.Fatalf("following: cursor %d top %d follow %v, want 9, 6, true", s.Cursor, s.Top, s.Follow)
	}
	s.Move(-5, 10)
	s.Clamp(12, 4) // two more rows came: a cursor that stopped following stays put
	if s.Cursor != 4 || s.Top != 4 || s.Follow {
		t.Fatalf("moved up: cursor %d top %d follow %v, want 4, 4, false", s.Cursor, s.Top, s.Follow)
	}
	s.Move(100, 12)
	if s.Cursor != 11 || !s.Follow {
		t.Fatalf("moved to the last row: cursor %d follow %v, want 11 and following again", s.Cursor, s.Follow)
	}
	s.Home(12)
	s.Clamp(12, 4)
	if s.Cursor != 0 || s.Top != 0 || s.Follow {
		t.Fatalf("home: cursor %d top %d follow %v, want 0, 0, false", s.Cursor, s.Top, s.Follow)
	}
	s.End(12)
	s.Clamp(0, 4)
	if s.Cursor != 0 || s.Top != 0 {
		t.Fatalf("no rows: cursor %d top %d, want 0, 0", s.Cursor, s.Top)
	}
}

// TestWrapNeverBreaksAfterAHyphen: every pane wraps with Wrap, which
// breaks at spaces (and the breakpoints given) but never inside a flag's or
// a finding's name, as ansi.Wrap does after any hyphen.
func TestWrapNeverBreaksAfterAHyphen(t *testing.T) {
	text := "relisted 3 times in 10m, each a 410 Gone; run with --fail-on 'relists>2' or --ignore-finding relist-storm, see noisy-updates"
	for width := 24; width <= 90; width++ {
		for _, bp := range []string{" ", " ,"} {
			wrapped := Wrap(text, width, bp)
			if got := strings.ReplaceAll(wrapped, "\n", " "); got != text {
				t.Fatalf("width %d, breakpoints %q: the words changed:\n%s", width, bp, wrapped)
			}
			for _, l := range strings.Split(wrapped, "\n") {
				if w := ansi.StringWidth(l); w > width {
					t.Fatalf("width %d: a line is %d wide: %q", width, w, l)
				}
				if strings.HasSuffix(l, "-") {
					t.Fatalf("width %d: a line ends in a hyphen: %q", width, l)
				}
			}
		}
	}
}

// A narrow state line keeps its state and cuts the right side's end; where
// both fit, it is Spread.
func TestSpreadKeepingKeepsTheLeftsStart(t *testing.T) {
	left, right := "● Stopped for 0s", "1 finding (warning)   REPLAY  ×max ██████████ 03:43:16 / 03:43:16 · 100% ended"
	got := SpreadKeeping(left, right, 80, 24)
	if !strings.HasPrefix(got, left+" ") || ansi.StringWidth(got) != 80 || !strings.HasSuffix(got, "…") {
		t.Errorf("at 80: %q", got)
	}
	if got, want := SpreadKeeping(left, right, 120, 24), Spread(left, right, 120); got != want {
		t.Errorf("at 120: %q, want Spread's %q", got, want)
	}
	if got := SpreadKeeping(left, right, 10, 24); ansi.StringWidth(got) > 10 {
		t.Errorf("at 10: %q is wider than 10", got)
	}
}
