package dashboard

import (
	"fmt"
	"strings"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// labelFaults heads the health section's faults line.
const labelFaults = "faults"

// showsFaults says whether the health section has a faults line: on a
// stream the observing proxy injected faults into (proxy --fault), once
// one was noted.
func (m *Model) showsFaults() bool { return len(m.Stats.Faults) > 0 }

// faultsLine is the health section's faults line: each --fault that acted
// on the stream, with how many times it acted and since when, in the
// order they first acted. What each did is in the log, next to its effect.
func (m *Model) faultsLine(width int) string {
	st := m.St
	parts := make([]string, 0, len(m.Stats.Faults))
	for _, f := range m.Stats.Faults {
		count := st.Faint.Render("armed")
		if f.Count > 0 {
			count = st.Warn.Render("×" + format.Count(f.Count))
		}
		part := st.Value.Render(f.Fault) + " " + count
		if !f.First.IsZero() {
			part += st.Label.Render(" since " + format.Age(m.Now.Sub(f.First)) + " ago")
		}
		parts = append(parts, part)
	}
	return common.Clip(" "+st.Label.Render(fmt.Sprintf("%-*s", gaugeLabelCols-1, labelFaults))+strings.Join(parts, st.Label.Render(" · ")), width)
}
