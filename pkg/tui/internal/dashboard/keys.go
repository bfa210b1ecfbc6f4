package dashboard

import (
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// keyMap is the key bindings of one resource's dashboard besides the
// chrome's; the help screen and the footer are generated from them.
type keyMap struct {
	// Pause pauses the log; disabled with a Player, whose space pauses the
	// replay (so the log is still while it is paused).
	Pause      key.Binding
	Filter     key.Binding
	TypeFilter key.Binding
	Relist     key.Binding
	Audit      key.Binding
	// Findings opens the findings pane; disabled where the feed has none.
	Findings key.Binding
	// Churn opens the churn pane; disabled where the feed has no Churn.
	Churn    key.Binding
	NextPane key.Binding
	PrevPane key.Binding
	common.Moves
	Select key.Binding
	Back   key.Binding
	// ToOverview is esc seen from one resource of several: back to the
	// overview. Disabled (and so out of the help) for a single resource.
	ToOverview key.Binding
	// Meta shows and hides, in an object's detail, the meta paths of each
	// version's changes (resourceVersion, managedFields).
	Meta key.Binding
}

func newKeyMap() keyMap {
	return keyMap{
		Pause:      key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "pause log")),
		Filter:     key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		TypeFilter: key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "filter by type")),
		Relist:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "force relist")),
		Audit:      key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "audit now")),
		Findings:   key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "findings")),
		Churn:      key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "churn (--diff)")),
		NextPane:   key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevPane:   key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Moves:      common.NewMoves("up", "down", "oldest", "newest, follow"),
		Select:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details")),
		Back:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back, unfilter")),
		ToOverview: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "overview"), key.WithDisabled()),
		Meta:       key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "meta paths")),
	}
}

// SetMulti makes the keys of one resource among several: esc, once there is
// nothing left to close or clear, goes back to the overview.
func (k *keyMap) SetMulti() {
	k.Back.SetHelp("esc", "back, unfilter, overview")
	k.ToOverview.SetEnabled(true)
}

// withoutActions is k without r and a, for where they do not act.
func (k keyMap) withoutActions() keyMap {
	k.Relist.SetEnabled(false)
	k.Audit.SetEnabled(false)
	return k
}

// FooterKeys are the footer's (screenKeys).
// Their words are shorter than the help screen's, so that all of them fit
// 120 columns.
func (k keyMap) FooterKeys() (first, rest []key.Binding) {
	short := func(b key.Binding, desc string) key.Binding {
		b.SetHelp(b.Help().Key, desc)
		return b
	}
	return []key.Binding{k.ToOverview}, []key.Binding{k.Findings, short(k.Churn, "churn"),
		short(k.Pause, strings.TrimSuffix(k.Pause.Help().Desc, " log")), k.Filter, short(k.TypeFilter, "type"),
		short(k.NextPane, "pane"), short(k.Select, "open"), short(k.Relist, "relist"), short(k.Audit, "audit")}
}

// HelpGroups are the help screen's columns (screenKeys).
func (k keyMap) HelpGroups() (nav, moves, actions []key.Binding) {
	return k.Bindings(),
		[]key.Binding{k.NextPane, k.PrevPane, k.Select, k.Back},
		[]key.Binding{k.Findings, k.Churn, k.Pause, k.Filter, k.TypeFilter, k.Relist, k.Audit}
}
