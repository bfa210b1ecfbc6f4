package program

import (
	"charm.land/bubbles/v2/key"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/player"
)

// ChromeKeys are the keys of every screen, which the chrome handles: help,
// quit, and the replay's player.
type ChromeKeys struct {
	Help, Quit, Close key.Binding // Close: esc closes the help screen too, unlisted
	Player            player.Keys // enabled with a Player
}

func newChromeKeys() ChromeKeys {
	return ChromeKeys{
		Help:   key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:   key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Close:  key.NewBinding(key.WithKeys("esc")),
		Player: player.NewKeys(),
	}
}
