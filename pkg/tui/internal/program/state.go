package program

// ViewState is what the screen shows; the root and the component shown
// route keys on it. On the overview's table, the dashboard state is the
// table, and the filter and churn states do not occur.
type ViewState int

// String names the state.
func (s ViewState) String() string {
	names := [...]string{StateDashboard: "dashboard", StateFilter: "filter", StateDetail: "detail",
		StateHelp: "help", StateFindings: "findings", StateChurn: "churn"}
	if s < 0 || int(s) >= len(names) || names[s] == "" {
		return "unknown"
	}
	return names[s]
}

const (
	// StateDashboard: header, gauges, rates and the panes; keys act on the focused pane.
	StateDashboard ViewState = iota
	// StateFilter: the dashboard with the filter prompt taking the keys.
	StateFilter
	// StateDetail: the selected object, request or note, full screen.
	StateDetail
	// StateHelp: the key help overlay.
	StateHelp
	// StateFindings: the findings pane (f), newest first.
	StateFindings
	// StateChurn: the churn pane (c): what the MODIFIED events changed.
	StateChurn
)
