package table

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// TestTheWindowKeepsTheSelectedRowAndItsReasonInView lays five rows out in
// room for four lines; the fourth row failed, and its reason takes a line.
func TestTheWindowKeepsTheSelectedRowAndItsReasonInView(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	rows := make([]Row, 5)
	for i := range rows {
		s := &reflector.Stats{State: reflector.StateWatching, StateSince: now.Add(-time.Minute), BookmarkAt: now.Add(-10 * time.Second)}
		if i == 3 {
			s.State, s.LastError = reflector.StateFailed, "forbidden: cannot list"
		}
		rows[i] = Row{
			Label: NewLabel(fmt.Sprintf("res-%d", i), "", "", ""), Stats: s, Now: now,
			Counters: store.Counters{Objects: 10 * (i + 1), BytesHeld: 1 << 10}, StoreReady: true,
			Events: make([]int64, 60),
		}
	}
	st := common.NewStyles()
	l := Fit(100, 7, rows, nil, false) // 4 lines for rows under the rule and the heads, over the totals
	if l.Height() != 7 || l.Page() != 3 {
		t.Fatalf("height %d, page %d; want 7 and 3", l.Height(), l.Page())
	}
	var tb Table
	tb.Select(3, len(rows))
	tb.Clamp(l)
	screen := func() []string {
		lines := tb.Lines(st, l, now, now.Add(-time.Hour))
		for i := range lines {
			lines[i] = ansi.Strip(lines[i])
		}
		return lines
	}
	lines := screen()
	if len(lines) != 7 {
		t.Fatalf("%d lines, want 7:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if !strings.Contains(lines[0], "resources · 2-4 of 5") || !strings.HasPrefix(lines[4], "▸ res-3") ||
		!strings.Contains(lines[5], "└ forbidden: cannot list") || !strings.Contains(lines[6], "150") {
		t.Fatalf("row 3 selected: want rows 2-4, the selected one's reason and the totals:\n%s", strings.Join(lines, "\n"))
	}
	tb.Move(10, len(rows))
	tb.Clamp(l)
	if lines = screen(); tb.Selected() != 4 || !strings.Contains(lines[0], "3-5 of 5") || !strings.HasPrefix(lines[5], "▸ res-4") {
		t.Fatalf("moved past the last row: cursor %d\n%s", tb.Selected(), strings.Join(lines, "\n"))
	}
	// At the top, the window shows what fits whole: row 3 and its reason do not.
	tb.Select(-3, len(rows))
	tb.Clamp(l)
	if lines = screen(); tb.Selected() != 0 || !strings.Contains(lines[0], "1-3 of 5") || !strings.HasPrefix(lines[2], "▸ res-0") {
		t.Fatalf("moved before the first row: cursor %d\n%s", tb.Selected(), strings.Join(lines, "\n"))
	}
}
