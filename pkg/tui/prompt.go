package tui

import (
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// prompt is the one-line editor of the log filter: typing appends,
// backspace deletes, ctrl+u clears. (bubbles' textinput would pull in a
// clipboard module this project does not carry.)
type prompt struct {
	value string
}

// update applies one key; it reports whether the key was an edit.
func (p *prompt) update(k tea.KeyPressMsg) bool {
	switch k.String() {
	case "backspace", "ctrl+h":
		if p.value != "" {
			_, size := utf8.DecodeLastRuneInString(p.value)
			p.value = p.value[:len(p.value)-size]
		}
		return true
	case "ctrl+u", "ctrl+w":
		p.value = ""
		return true
	}
	if k.Text != "" && k.Mod&^tea.ModShift == 0 {
		if utf8.RuneCountInString(p.value) < maxFilterLen {
			p.value += k.Text
		}
		return true
	}
	return false
}

// maxFilterLen bounds the filter text.
const maxFilterLen = 120

// view renders the prompt with a block cursor.
func (p prompt) view(st common.Styles) string {
	return st.Accent.Render("/") + p.value + st.Selected.Render(" ")
}
