package program

import "github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"

// AlertRow is one alert rule (--fail-on) on one resource, as the dashboard shows it.
type AlertRow struct {
	// Rule is the rule as written canonically, e.g. "relists>0".
	Rule string
	// Resource names the resource the rule is evaluated on.
	Resource string
	// Value is the measure's current value and Threshold the comparison with
	// its threshold ("> 3m0s"), both formatted.
	Value     string
	Threshold string
	// Fraction is value/threshold (1 or more is at or past it; 0 for a zero
	// threshold not reached).
	Fraction float64
	// Tripped says the rule has tripped on the resource.
	Tripped bool
}

// Alerts is what Feed.Alerts reports: every rule's row, and a banner once a rule tripped.
type Alerts struct {
	Rows []AlertRow
	// Banner announces what tripped; empty until something did.
	Banner string
	// Fatal says the trip ended the run (red); otherwise it is a warning (yellow) and the run goes on.
	Fatal bool
}

// AlertBanner announces what tripped: red when it ended the run, yellow otherwise.
func AlertBanner(st common.Styles, a Alerts, width int) string {
	style := st.Warn
	if a.Fatal {
		style = st.Bad
	}
	return common.Clip(style.Reverse(true).Render(" ALERT ")+" "+style.Render(a.Banner), width)
}
