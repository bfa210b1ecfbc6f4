package dashboard

import (
	"fmt"
	"strings"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// alertLines is the banner (when set) and the rules section.
func (m *Model) alertLines(width int) []string {
	a := m.Alerts
	var out []string
	if a.Banner != "" {
		out = append(out, program.AlertBanner(m.St, a, width))
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
		status := m.St.Faint.Render("ok")
		switch {
		case r.Tripped:
			status = m.St.Bad.Render("TRIPPED")
		case r.Fraction >= 0.75:
			status = m.St.Warn.Render(fmt.Sprintf("%3.0f%%", r.Fraction*100))
		case r.Fraction > 0:
			status = m.St.Label.Render(fmt.Sprintf("%3.0f%%", r.Fraction*100))
		}
		line := fmt.Sprintf(" %-*s %-*s %s %s  %s", ruleW, common.Clip(r.Rule, ruleW), resW, common.Clip(r.Resource, resW),
			m.St.Label.Render("now"), m.St.Value.Render(fmt.Sprintf("%-8s", r.Value)),
			m.St.Label.Render(fmt.Sprintf("%-10s", r.Threshold)))
		out = append(out, common.Clip(strings.TrimRight(line, " ")+"  "+status, width))
	}
	return out
}

// alertLineCount is how many lines alertLines takes.
func (m *Model) alertLineCount() int {
	n := 0
	if m.Alerts.Banner != "" {
		n++
	}
	if len(m.Alerts.Rows) > 0 {
		n += 1 + len(m.Alerts.Rows)
	}
	return n
}
