package table

import (
	"strings"
	"testing"
)

func TestNarrowTerminalsDropColumnsInPriorityOrder(t *testing.T) {
	names := func(width int) string {
		cols, _ := columns(width, 16, 0, false, false)
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
	cols, _ := columns(158, 16, 0, false, false)
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
