// Package helpscreen is the dashboard's help screen component (?): the keys
// laid out in columns, the legend's terms with their explanations wrapped
// under an indent, and the screen's scrolling when it is taller than the
// body. What the keys and the legend are is the caller's.
package helpscreen

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// hint is the footer's hint under a help screen that fits.
const hint = "esc or ? closes the help · q quit"

// Hint is the hint under the help screen of total lines in a body of body
// lines: when it does not fit, which lines show and how to scroll.
func (s *Screen) Hint(total, body int) string {
	if total > body {
		top := min(s.top, total-1) // as Window shows it, also after a resize made it shorter
		return fmt.Sprintf("lines %d-%d of %d · ↑/↓ pgup/pgdn scroll · %s", top+1, min(top+body, total), total, hint)
	}
	return hint
}

// Screen is where the help screen is scrolled to.
type Screen struct {
	top int // the first line shown
}

// Key handles a key on a help screen of total lines in a body of body
// lines: quit quits, toggle and closeKey close it, and the list keys of
// package common (↑/↓ k/j, pgup/pgdn, home/end g/G), and space as pgdn,
// scroll it when it does not fit.
func (s *Screen) Key(k tea.KeyPressMsg, quit, toggle, closeKey key.Binding, total, body int) (cmd tea.Cmd, closed bool) {
	if key.Matches(k, quit) {
		return tea.Quit, false
	}
	if key.Matches(k, toggle, closeKey) {
		s.top = 0
		return nil, true
	}
	if k.String() == "space" {
		k = tea.KeyPressMsg{Code: tea.KeyPgDown} // as on a pager
	}
	common.ScrollText(&s.top, k, max(body-1, 1), func() int { return total - body })
	return nil, false
}

// Window is the part of the help screen's lines shown.
func (s *Screen) Window(lines []string) []string {
	return lines[min(s.top, max(len(lines)-1, 0)):]
}

// keyWidth is the key's column in a group laid out evenly.
const keyWidth = 10

// Keys lays key bindings out in columns, one per group: side by side in
// columns of an even share of width when every binding fits in its share
// with a space to spare; else each group as wide as its bindings need (its
// keys' column as wide as its widest key), and the groups that do not fit
// beside the ones before them in a band of their own below. A narrow
// terminal gets every description whole, in fewer columns, never cut.
func Keys(st common.Styles, groups [][]key.Binding, width int) []string {
	cell := func(b key.Binding, keyW int) string {
		h := b.Help()
		return " " + st.Value.Render(fmt.Sprintf("%-*s", keyW, h.Key)) + " " + st.Label.Render(h.Desc)
	}
	colW := max(width/len(groups), 24)
	even := colW*len(groups) <= width
	// A cell is " key desc", its key padded to the group's keys' column.
	keyW, need := make([]int, len(groups)), make([]int, len(groups))
	for i, g := range groups {
		descW := 0
		for _, b := range g {
			k, d := ansi.StringWidth(b.Help().Key), ansi.StringWidth(b.Help().Desc)
			keyW[i], descW = max(keyW[i], k), max(descW, d)
			even = even && 2+max(k, keyWidth)+d < colW
		}
		need[i] = 2 + keyW[i] + descW
	}
	if even {
		for i := range groups {
			keyW[i], need[i] = keyWidth, colW
		}
		return band(groups, keyW, need, cell)
	}
	const gap = 2
	var out []string
	for start := 0; start < len(groups); {
		end, used := start+1, need[start]
		for end < len(groups) && used+gap+need[end] <= width {
			used += gap + need[end]
			end++
		}
		widths := make([]int, end-start)
		for i := range widths {
			widths[i] = min(need[start+i]+gap, width)
		}
		if start > 0 {
			out = append(out, "")
		}
		out = append(out, band(groups[start:end], keyW[start:end], widths, cell)...)
		start = end
	}
	return out
}

// band lays groups side by side, group i in widths[i] cells with its keys'
// column keyW[i] wide.
func band(groups [][]key.Binding, keyW, widths []int, cell func(key.Binding, int) string) []string {
	rows := 0
	for _, g := range groups {
		rows = max(rows, len(g))
	}
	out := make([]string, 0, rows)
	for r := range rows {
		var b strings.Builder
		for i, g := range groups {
			c := ""
			if r < len(g) {
				c = cell(g[r], keyW[i])
			}
			b.WriteString(common.Pad(c, widths[i]))
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

// Legend is terms and their explanations, wrapped under an indent.
func Legend(st common.Styles, legend [][2]string, width int) []string {
	const indent = 11
	var out []string
	for _, l := range legend {
		wrapped := strings.Split(common.Wrap(l[1], max(width-indent-1, 20), " "), "\n")
		for i, w := range wrapped {
			head := strings.Repeat(" ", indent)
			if i == 0 {
				head = " " + st.Value.Render(fmt.Sprintf("%-*s", indent-2, l[0])) + " " // a term of 10 cells and more stays apart
			}
			out = append(out, head+w)
		}
	}
	return out
}
