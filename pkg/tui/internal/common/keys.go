package common

import "charm.land/bubbles/v2/key"

// ListKeys move the findings pane, a detail, the churn pane and the help
// screen; on the findings pane, enter opens the selected finding, esc or f
// closes it.
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
