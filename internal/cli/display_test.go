package cli

import (
	"strings"
	"testing"
)

// -o json on the dashboard without --summary shapes nothing the run prints:
// the run says so (on stderr and in the dashboard's footer).
func TestTheDashboardSaysWhenOutputJSONShapesNothing(t *testing.T) {
	for _, c := range []struct {
		output       string
		summary, tui bool
		warns        bool
	}{
		{"json", false, true, true},
		{"json", true, true, false},   // the summary at exit is JSON
		{"json", false, false, false}, // the lines are JSON
		{"text", false, true, false},
	} {
		d := DisplayOptions{Output: c.output, Summary: c.summary}
		w := d.dashboardIgnores(c.tui)
		if (w != "") != c.warns || (c.warns && !strings.Contains(w, "the dashboard shows neither")) {
			t.Errorf("-o %s, summary %v, dashboard %v: warning %q, want one: %v", c.output, c.summary, c.tui, w, c.warns)
		}
	}
}
