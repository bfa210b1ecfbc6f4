package tui

import "charm.land/bubbles/v2/key"

// keyMap is every key binding of the dashboard, in one place; the help
// overlay and the footer are generated from it.
type keyMap struct {
	Quit       key.Binding
	Help       key.Binding
	Pause      key.Binding
	Filter     key.Binding
	TypeFilter key.Binding
	Relist     key.Binding
	Audit      key.Binding
	NextPane   key.Binding
	PrevPane   key.Binding
	Up         key.Binding
	Down       key.Binding
	PageUp     key.Binding
	PageDown   key.Binding
	Top        key.Binding
	Bottom     key.Binding
	Select     key.Binding
	Back       key.Binding
	// ToOverview is esc seen from one resource of several: back to the
	// overview. Disabled (and so out of the help) for a single resource.
	ToOverview key.Binding
	// Player are the replay's keys, enabled with a Player (space then
	// pauses the replay, not the log).
	Player playerKeys
}

func newKeyMap() keyMap {
	return keyMap{
		Quit:       key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:       key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Pause:      key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "pause log")),
		Filter:     key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		TypeFilter: key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "filter by type")),
		Relist:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "force relist")),
		Audit:      key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "audit now")),
		NextPane:   key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevPane:   key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Up:         key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:       key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:     key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown:   key.NewBinding(key.WithKeys("pgdown", "ctrl+f"), key.WithHelp("pgdn", "page down")),
		Top:        key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "oldest")),
		Bottom:     key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "newest, follow")),
		Select:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details")),
		Back:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back, unfilter")),
		ToOverview: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "overview"), key.WithDisabled()),
		Player:     newPlayerKeys(),
	}
}

// setPlayer makes the keys of a replay with a Player: the player's keys
// are on, and space pauses the replay (so the log is still while it is paused).
func (k *keyMap) setPlayer() {
	k.Player.enable()
	k.Pause.SetEnabled(false)
}

// setMulti makes the keys of one resource among several: esc, once there is
// nothing left to close or clear, goes back to the overview.
func (k *keyMap) setMulti() {
	k.Back.SetHelp("esc", "back, unfilter, overview")
	k.ToOverview.SetEnabled(true)
}

// ShortHelp is the footer's help (help.KeyMap).
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Help, k.Quit, k.ToOverview, k.Player.PlayPause, k.Player.Step, k.Pause, k.Filter, k.NextPane, k.Select, k.Relist, k.Audit}
}

// FullHelp is the help overlay, one column per group (help.KeyMap).
func (k keyMap) FullHelp() [][]key.Binding {
	return enabledOnly([][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.NextPane, k.PrevPane, k.Select, k.Back, k.Help, k.Quit},
		append([]key.Binding{k.Pause, k.Filter, k.TypeFilter, k.Relist, k.Audit}, k.Player.group()...),
	})
}

// overviewKeyMap is the overview's key bindings; its help and footer are
// generated from it.
type overviewKeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Open, Back, Relist, Audit, Help, Quit   key.Binding
	Player                                  playerKeys
}

func newOverviewKeyMap() overviewKeyMap {
	return overviewKeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "previous")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "next")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
		Open:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open resource")),
		Back:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "overview")),
		Relist:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "force relist")),
		Audit:    key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "audit now")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Player:   newPlayerKeys(),
	}
}

// ShortHelp is the overview's footer (help.KeyMap).
func (k overviewKeyMap) ShortHelp() []key.Binding {
	up, open := k.Up, k.Open
	up.SetHelp("↑/↓", "select")
	open.SetHelp("enter", "open")
	return []key.Binding{k.Help, k.Quit, up, open, k.Player.PlayPause, k.Player.Step, k.Relist, k.Audit}
}

// FullHelp is the overview's help overlay, one column per group (help.KeyMap).
func (k overviewKeyMap) FullHelp() [][]key.Binding {
	return enabledOnly([][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Open, k.Back, k.Help, k.Quit},
		append([]key.Binding{k.Relist, k.Audit}, k.Player.group()...),
	})
}
