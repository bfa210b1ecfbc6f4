package tui

import (
	"fmt"
	"strings"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

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

// alertLines is the banner (when set) and the rules section.
func (m *Model) alertLines(width int) []string {
	a := m.alerts
	var out []string
	if a.Banner != "" {
		out = append(out, alertBanner(m.st, a, width))
	}
	if len(a.Rows) == 0 {
		return out
	}
	out = append(out, m.section("rules · --fail-on", width))
	ruleW, resW := 4, 8
	for _, r := range a.Rows {
		ruleW, resW = max(ruleW, len(r.Rule)), max(resW, len(r.Resource))
	}
	ruleW, resW = min(ruleW, 28), min(resW, 40)
	for _, r := range a.Rows {
		status := m.st.Faint.Render("ok")
		switch {
		case r.Tripped:
			status = m.st.Bad.Render("TRIPPED")
		case r.Fraction >= 0.75:
			status = m.st.Warn.Render(fmt.Sprintf("%3.0f%%", r.Fraction*100))
		case r.Fraction > 0:
			status = m.st.Label.Render(fmt.Sprintf("%3.0f%%", r.Fraction*100))
		}
		line := fmt.Sprintf(" %-*s %-*s %s %s  %s", ruleW, common.Clip(r.Rule, ruleW), resW, common.Clip(r.Resource, resW),
			m.st.Label.Render("now"), m.st.Value.Render(fmt.Sprintf("%-8s", r.Value)),
			m.st.Label.Render(fmt.Sprintf("%-10s", r.Threshold)))
		out = append(out, common.Clip(strings.TrimRight(line, " ")+"  "+status, width))
	}
	return out
}

// alertBanner announces what tripped: red when it ended the run, yellow otherwise.
func alertBanner(st common.Styles, a Alerts, width int) string {
	style := st.Warn
	if a.Fatal {
		style = st.Bad
	}
	return common.Clip(style.Reverse(true).Render(" ALERT ")+" "+style.Render(a.Banner), width)
}

// alertLineCount is how many lines alertLines takes.
func (m *Model) alertLineCount() int {
	n := 0
	if m.alerts.Banner != "" {
		n++
	}
	if len(m.alerts.Rows) > 0 {
		n += 1 + len(m.alerts.Rows)
	}
	return n
}
