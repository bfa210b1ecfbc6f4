package common

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// ListKeys move the findings pane, a detail and the churn pane; on the
// findings pane, enter opens the selected finding, esc or f closes it.
type ListKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom, Select, Close key.Binding
}

// NewListKeys are the list keys: ↑/k ↓/j pgup pgdn home/g end/G, enter, esc/f.
func NewListKeys() ListKeys {
	return ListKeys{
		Up:       key.NewBinding(key.WithKeys("up", "k")),
		Down:     key.NewBinding(key.WithKeys("down", "j")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f")),
		Top:      key.NewBinding(key.WithKeys("home", "g")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G")),
		Select:   key.NewBinding(key.WithKeys("enter")),
		Close:    key.NewBinding(key.WithKeys("esc", "f")),
	}
}

// ScrollOffset moves offset, the first of total lines shown in a body of
// body lines, on a key of ListKeys (total is called only for a scroll key).
func ScrollOffset(offset *int, k tea.KeyPressMsg, body int, total func() int) {
	lk, page, by := NewListKeys(), body-1, 0
	switch {
	case key.Matches(k, lk.Up):
		by = -1
	case key.Matches(k, lk.Down):
		by = 1
	case key.Matches(k, lk.PageUp):
		by = -page
	case key.Matches(k, lk.PageDown):
		by = page
	case key.Matches(k, lk.Top):
		by = -1 << 30
	case key.Matches(k, lk.Bottom):
		by = 1 << 30
	default:
		return
	}
	*offset = min(max(*offset+by, 0), max(total()-page, 0))
}

// EnabledOnly drops the disabled bindings of each group, and groups left empty.
func EnabledOnly(groups [][]key.Binding) [][]key.Binding {
	var out [][]key.Binding
	for _, g := range groups {
		var kept []key.Binding
		for _, b := range g {
			if b.Enabled() {
				kept = append(kept, b)
			}
		}
		if len(kept) > 0 {
			out = append(out, kept)
		}
	}
	return out
}
