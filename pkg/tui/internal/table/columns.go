package table

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// Col is a column of the table.
type Col int

// The columns, in the order they show from left to right.
const (
	ColResource Col = iota
	ColClient       // an observed stream's program: only on the overview of a proxy's streams
	ColState
	ColFor
	ColObjects
	ColMemory
	ColLastRV
	ColBookmark
	ColGone
	ColRelists
	ColFindings // only when the resources have findings engines
	ColLag      // the passive delivery estimate's p99 bucket: only once a row has one
	ColEvents
	ColError
	// NumCols counts the columns.
	NumCols
)

// Column heads, also what hack/tui-check.sh looks for to tell the overview.
const (
	HeadResource = "RESOURCE"
	HeadEvents   = "EVENTS/MIN"
)

// spec is a column's head, its narrowest width, and whether its values are
// right-aligned.
func spec(c Col) (head string, width int, right bool) {
	switch c {
	case ColResource:
		return HeadResource, 14, false
	case ColClient:
		return "CLIENT", 12, false
	case ColState:
		return "STATE", 12, false
	case ColFor:
		return "FOR", 6, false
	case ColObjects:
		return "OBJECTS", 8, true
	case ColMemory:
		return "MEMORY", 9, true
	case ColLastRV:
		return "LAST RV", 10, false
	case ColBookmark:
		return "BOOKMARK", 9, false
	case ColGone:
		return "410s", 4, true
	case ColRelists:
		return "RELISTS", 7, true
	case ColFindings:
		return "FINDINGS", 9, false
	case ColEvents:
		return HeadEvents, 14, false
	case ColLag:
		return "LAG P99", 7, false
	}
	return "LAST ERROR", 16, false
}

// priority is the order in which columns get room: what a narrow terminal
// keeps first. The totals' columns come early so the totals row always has them.
func priority() [NumCols]Col {
	return [NumCols]Col{ColResource, ColClient, ColState, ColObjects, ColMemory, ColGone, ColRelists, ColFindings, ColEvents,
		ColLag, ColBookmark, ColError, ColLastRV, ColFor}
}

// Growth limits of the flexible columns.
const (
	maxResourceWidth = 40
	maxClientWidth   = 48
	minClientWidth   = 24 // room for "kube-co…/shared-informers"
	maxEventsWidth   = 26 // a sparkline of 20 cells and the count
	markerWidth      = 2  // "▸ " before the selected row
)

// Column is a column that fits, with its width.
type Column struct {
	ID    Col
	Head  string
	Width int
	Right bool
}

// Columns picks the columns that fit in width, in priority order: a client
// column as wide as clientW (up to 48) when the rows have clients
// (clientW > 0), right after the resources and before their growth; a
// FINDINGS column when withFindings, and a LAG P99 column when lag. What is
// left goes to the resource names (up to nameW), the clients, the
// sparkline and the last error.
func Columns(width, nameW, clientW int, withFindings, lag bool) ([]Column, [NumCols]bool) {
	var has [NumCols]bool
	var widths [NumCols]int
	used := 0
	for _, c := range priority() {
		if c == ColClient && clientW == 0 || c == ColFindings && !withFindings || c == ColLag && !lag {
			continue
		}
		_, w, _ := spec(c)
		if c == ColClient {
			w = max(w, min(clientW, minClientWidth))
		}
		need := w
		if used > 0 {
			need++ // the gap before it
		}
		if used+need > width {
			break // a column that does not fit drops every one after it, so what shows is predictable
		}
		has[c], widths[c], used = true, w, used+need
	}
	extra := width - used
	grow := func(c Col, limit int) {
		if !has[c] || extra <= 0 {
			return
		}
		add := min(extra, max(limit-widths[c], 0))
		widths[c] += add
		extra -= add
	}
	grow(ColResource, min(nameW, maxResourceWidth))
	grow(ColClient, min(clientW, maxClientWidth))
	grow(ColEvents, maxEventsWidth)
	grow(ColError, 1<<30)
	cols := make([]Column, 0, NumCols)
	for c := range NumCols {
		if has[c] {
			head, _, right := spec(c)
			cols = append(cols, Column{ID: c, Head: head, Width: widths[c], Right: right})
		}
	}
	return cols, has
}

// Label is how a row names its resource: what it is (Base), and what sets
// it apart from the others when they watch the same in several places
// (Apart: " -n prod", selectors), which a cut keeps.
type Label struct {
	Base, Apart string
	// Client names an observed resource's program in a column of its own:
	// Program, then Tail, which a cut keeps ("" when it is not observed).
	Client, Program, Tail string
}

// Name is the label whole: the resource, what sets it apart, and its client.
func (n Label) Name() string {
	if n.Client != "" {
		return n.Base + n.Apart + "  " + n.Client
	}
	return n.Base + n.Apart
}

// Fit fits the resource's name in width cells, cutting the resource's name
// before what sets it apart from the others.
func (n Label) Fit(width int) string {
	if ansi.StringWidth(n.Base+n.Apart) <= width || n.Apart == "" {
		return n.Base + n.Apart
	}
	return common.Clip(common.Clip(n.Base, max(width-ansi.StringWidth(n.Apart), 4))+n.Apart, width)
}

// FitClient fits the client in width cells, cutting the program's name
// before what follows it ("kube-con…/shared-informers"), then the start of
// what follows ("…-informers (metadata)").
func (n Label) FitClient(width int) string {
	if ansi.StringWidth(n.Client) <= width {
		return n.Client
	}
	if n.Tail == "" || width < 2 {
		return common.Clip(n.Client, width)
	}
	rest := strings.TrimPrefix(n.Tail, " …")
	switch avail := width - ansi.StringWidth(rest); {
	case avail >= 2:
		return common.Clip(n.Program, avail) + rest
	case avail == 1:
		return format.Ellipsis + rest
	}
	return ansi.TruncateLeft(rest, ansi.StringWidth(rest)-(width-1), format.Ellipsis)
}
