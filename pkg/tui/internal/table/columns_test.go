package table

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestNarrowTerminalsDropColumnsInPriorityOrder(t *testing.T) {
	names := func(width int) string {
		cols, _, _ := columns(width, 16, 0, false, false)
		var out []string
		for _, c := range cols {
			out = append(out, c.head)
		}
		return strings.Join(out, ",")
	}
	for _, tt := range []struct {
		width int
		want  string
	}{
		{158, "RESOURCE,STATE,FOR,OBJECTS,MEMORY,LAST RV,BOOKMARK,410s,RELISTS,EVENTS/MIN,LAST ERROR"},
		{118, "RESOURCE,STATE,OBJECTS,MEMORY,LAST RV,BOOKMARK,410s,RELISTS,EVENTS/MIN,LAST ERROR"},
		{78, "RESOURCE,STATE,OBJECTS,MEMORY,410s,RELISTS,EVENTS/MIN"},
		{30, "RESOURCE,STATE"},
	} {
		if got := names(tt.width); got != tt.want {
			t.Errorf("width %d: columns %s, want %s", tt.width, got, tt.want)
		}
	}
	// What is left goes to the names, then the sparkline, then the last error.
	cols, _, _ := columns(158, 16, 0, false, false)
	used := -1
	for _, c := range cols {
		used += c.width + 1
		if c.id == colResource && c.width != 16 {
			t.Errorf("the resource column is %d wide, want its longest name's 16", c.width)
		}
		if c.id == colEvents && c.width != maxEventsWidth {
			t.Errorf("the events column is %d wide, want %d", c.width, maxEventsWidth)
		}
	}
	if used != 158 {
		t.Errorf("the columns take %d cells of 158", used)
	}
}

// Two streams of one client in two namespaces whose names share a long
// start stay apart in a narrow resource column: the cut takes the middle
// of the namespace, not its end.
func TestACutNameKeepsWhatSetsTheRowsApart(t *testing.T) {
	prod := NewLabel("deployments.apps", " -n team-payments-prod", "kubectl", " (tables)")
	stage := NewLabel("deployments.apps", " -n team-payments-stage", "kubectl", " (tables)")
	first := NewLabel("deployments.apps", " -n prod-team-payments", "", "")
	for width := 10; width <= 26; width++ {
		a, b, c := prod.fit(width), stage.fit(width), first.fit(width)
		for _, s := range []string{a, b, c} {
			if w := ansi.StringWidth(s); w > width {
				t.Errorf("width %d: %q is %d cells", width, s, w)
			}
		}
		if a == b || a == c || b == c {
			t.Errorf("width %d: the rows read %q, %q and %q", width, a, b, c)
		}
	}
	if got, want := prod.fit(18), "dep… -n te…ts-prod"; got != want {
		t.Errorf("fit(18) = %q, want %q", got, want)
	}
	if got, want := stage.fit(40), "deployments.apps -n team-payments-stage"; got != want {
		t.Errorf("fit(40) = %q, want %q (nothing cut where it fits)", got, want)
	}
}
