package findingspane

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// TestAFactAsWideAsItsLabelColumnKeepsAGap: a fact's name as wide as the
// label column ("resourceVersion") has a line of its own, its value under
// it, aligned with the others' values, where the two ran together
// ("resourceVersion368").
func TestAFactAsWideAsItsLabelColumnKeepsAGap(t *testing.T) {
	f := findings.Finding{ID: "cache-drift", Severity: findings.Warning, Title: "drift",
		Evidence: findings.Evidence{Facts: map[string]string{"listed": "3", "resourceVersion": "368"}}}
	var lines []string
	for _, l := range Detail(common.NewStyles(), f, time.Time{}, 80) {
		lines = append(lines, ansi.Strip(l))
	}
	text := strings.Join(lines, "\n")
	if strings.Contains(text, "resourceVersion368") {
		t.Fatalf("the fact's name runs into its value:\n%s", text)
	}
	want := []string{"listed      3", "resourceVersion", "            368"}
	for _, w := range want {
		found := false
		for _, l := range lines {
			found = found || l == w
		}
		if !found {
			t.Errorf("no line %q in:\n%s", w, text)
		}
	}
}

// The window's length reads as explain and the report say it (36.9s), not
// rounded to the second (a reviewer compared the dashboard's 36s with it).
func TestTheWindowsLengthIsExplainsToo(t *testing.T) {
	from := time.Date(2026, 12, 6, 9, 50, 0, 0, time.UTC)
	w := &findings.Window{From: from, To: from.Add(36900 * time.Millisecond), Seconds: 36.9}
	f := findings.Finding{ID: "relist-storm", Severity: findings.Error, Title: "storm", Evidence: findings.Evidence{Window: w}}
	text := ansi.Strip(strings.Join(Detail(common.NewStyles(), f, from, 120), "\n"))
	if !strings.Contains(text, "(36.9s)") || !strings.Contains(f.Detail(), "(36.9s)") {
		t.Errorf("the pane's window:\n%s\nwant 36.9s, as explain says", text)
	}
}
