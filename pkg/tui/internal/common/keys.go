package common

import "charm.land/bubbles/v2/key"

// Moves are the six keys that move through a list, a log or a table:
// ↑/k ↓/j pgup pgdn home/g end/G.
type Moves struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
}

// NewMoves are the moves, with the help that says what up, down, top and
// bottom are where they move (pgup and pgdn are pages everywhere).
func NewMoves(up, down, top, bottom string) Moves {
	return Moves{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", up)),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", down)),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", top)),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", bottom)),
	}
}

// Bindings are the moves in the help screen's order.
func (m Moves) Bindings() []key.Binding {
	return []key.Binding{m.Up, m.Down, m.PageUp, m.PageDown, m.Top, m.Bottom}
}

// ListKeys move the findings pane, a detail, the churn pane and the help
// screen; on the findings pane, enter opens the selected finding, esc or f
// closes it.
type ListKeys struct {
	Moves
	Select, Close key.Binding
}

// NewListKeys are the list keys: the moves, enter, esc/f.
func NewListKeys() ListKeys {
	return ListKeys{
		Moves:  NewMoves("up", "down", "top", "bottom"),
		Select: key.NewBinding(key.WithKeys("enter")),
		Close:  key.NewBinding(key.WithKeys("esc", "f")),
	}
}
