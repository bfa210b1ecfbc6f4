// Package prompt is the dashboard's one-line editor, the log filter's.
package prompt

import (
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// Prompt is the one-line editor of the log filter: typing appends,
// backspace deletes, ctrl+u clears. (bubbles' textinput would pull in a
// clipboard module this project does not carry.)
type Prompt struct {
	Value string
}

// Update applies one key; it reports whether the key was an edit.
func (p *Prompt) Update(k tea.KeyPressMsg) bool {
	switch k.String() {
	case "backspace", "ctrl+h":
		if p.Value != "" {
			_, size := utf8.DecodeLastRuneInString(p.Value)
			p.Value = p.Value[:len(p.Value)-size]
		}
		return true
	case "ctrl+u", "ctrl+w":
		p.Value = ""
		return true
	}
	if k.Text != "" && k.Mod&^tea.ModShift == 0 {
		if utf8.RuneCountInString(p.Value) < maxLen {
			p.Value += k.Text
		}
		return true
	}
	return false
}

// maxLen bounds the filter text.
const maxLen = 120

// View renders the prompt with a block cursor.
func (p Prompt) View(st common.Styles) string {
	return st.Accent.Render("/") + p.Value + st.Selected.Render(" ")
}
