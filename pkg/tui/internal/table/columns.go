package table

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// col is a column of the table.
type col int

// The columns, in the order they show from left to right.
const (
	colResource col = iota
	colClient       // an observed stream's program: only on the overview of a proxy's streams
	colState
	colFor
	colObjects
	colMemory
	colLastRV
	colBookmark
	colGone
	colRelists
	colFindings // only when the resources have findings engines
	colLag      // the passive delivery estimate's p99 bucket: only once a row has one
	colEvents
	colError
	numCols
)

// Column heads: HeadEvents is how a test tells the overview on a screen.
const (
	headResource = "RESOURCE"
	// HeadEvents is the events column's head.
	HeadEvents = "EVENTS/MIN"
)

// spec is a column's head, its narrowest width, and whether its values are
// right-aligned.
func spec(c col) (head string, width int, right bool) {
	type spec struct {
		head  string
		width int
		right bool
	}
	specs := [...]spec{colResource: {headResource, 14, false}, colClient: {"CLIENT", 12, false},
		colState: {"STATE", 12, false}, colFor: {"FOR", 6, false}, colObjects: {"OBJECTS", 8, true},
		colMemory: {"MEMORY", 9, true}, colLastRV: {"LAST RV", 10, false}, colBookmark: {"BOOKMARK", 9, false},
		colGone: {"410s", 4, true}, colRelists: {"RELISTS", 7, true}, colFindings: {"FINDINGS", 9, false},
		colEvents: {HeadEvents, 14, false}, colLag: {"LAG P99", 7, false}, colError: {"LAST ERROR", 16, false}}
	s := specs[colError]
	if c >= 0 && int(c) < len(specs) {
		s = specs[c]
	}
	return s.head, s.width, s.right
}

// priority is the order in which columns get room: what a narrow terminal
// keeps first. The totals' columns come early so the totals row always has them.
func priority() [numCols]col {
	return [numCols]col{colResource, colClient, colState, colObjects, colMemory, colGone, colRelists, colFindings, colEvents,
		colLag, colBookmark, colError, colLastRV, colFor}
}

// Growth limits of the flexible columns.
const (
	maxResourceWidth = 40
	maxClientWidth   = 48
	minClientWidth   = 24 // room for "kube-co…/shared-informers"
	maxEventsWidth   = 26 // a sparkline of 20 cells and the count
	markerWidth      = 2  // "▸ " before the selected row
)

// column is a column that fits, with its width.
type column struct {
	id    col
	head  string
	width int
	right bool
}

// columns picks the columns that fit in width, in priority order: a client
// column as wide as clientW (up to 48) when the rows have clients
// (clientW > 0), right after the resources and before their growth; a
// FINDINGS column when withFindings, and a LAG P99 column when lag. What is
// left goes to the resource names (up to nameW), the clients, the
// sparkline and the last error. left are the heads of the columns that do
// not fit, in priority order.
func columns(width, nameW, clientW int, withFindings, lag bool) (cols []column, has [numCols]bool, left []string) {
	var widths [numCols]int
	used := 0
	for _, c := range priority() {
		if c == colClient && clientW == 0 || c == colFindings && !withFindings || c == colLag && !lag {
			continue
		}
		head, w, _ := spec(c)
		if c == colClient {
			w = max(w, min(clientW, minClientWidth))
		}
		need := w
		if used > 0 {
			need++ // the gap before it
		}
		if left != nil || used+need > width {
			// A column that does not fit drops every one after it, so what shows is predictable.
			left = append(left, head)
			continue
		}
		has[c], widths[c], used = true, w, used+need
	}
	extra := width - used
	grow := func(c col, limit int) {
		if !has[c] || extra <= 0 {
			return
		}
		add := min(extra, max(limit-widths[c], 0))
		widths[c] += add
		extra -= add
	}
	grow(colResource, min(nameW, maxResourceWidth))
	grow(colClient, min(clientW, maxClientWidth))
	grow(colEvents, maxEventsWidth)
	grow(colError, 1<<30)
	for c := range numCols {
		if has[c] {
			head, _, right := spec(c)
			cols = append(cols, column{id: c, head: head, width: widths[c], right: right})
		}
	}
	return cols, has, left
}

// Label is how a row names its resource: what it is, and what sets it
// apart from the others when they watch the same in several places,
// and the client of an observed one. NewLabel builds it, and measures it
// once: a frame lays the columns out without measuring the names again.
type Label struct {
	base, apart, program, tail string
	nameW, clientW             int // the cells of base+apart, and of the client
}

// NewLabel is the label of a resource named base, set apart from the
// others by apart (" -n prod", selectors), which a cut keeps. program and
// tail name an observed resource's client, in a column of its own: the
// program, then what follows it, which a cut keeps (both "" when the
// resource is not observed).
func NewLabel(base, apart, program, tail string) Label {
	return Label{
		base: base, apart: apart, program: program, tail: tail,
		nameW: ansi.StringWidth(base + apart), clientW: ansi.StringWidth(program + tail),
	}
}

// Name is the label whole: the resource, what sets it apart, and its client.
func (n Label) Name() string {
	if c := n.program + n.tail; c != "" {
		return n.base + n.apart + "  " + c
	}
	return n.base + n.apart
}

// minBase is the fewest cells a cut leaves the resource's name ("dep…").
const minBase = 4

// fit fits the resource's name in width cells, cutting the resource's name
// before what sets it apart from the others. What sets it apart, cut too,
// loses its middle, not its end: " -n team-payments-prod" and
// " -n team-payments-stage" become " -n te…ts-prod" and " -n te…s-stage",
// which still tell the rows apart whether the names differ at the start or
// at the end.
func (n Label) fit(width int) string {
	if n.nameW <= width || n.apart == "" {
		return n.base + n.apart
	}
	apartW := ansi.StringWidth(n.apart)
	if width-apartW >= minBase {
		return common.Clip(n.base, width-apartW) + n.apart
	}
	base := common.Clip(n.base, minBase)
	return base + clipMiddle(n.apart, width-ansi.StringWidth(base))
}

// clipMiddle fits plain text s in width cells by putting an ellipsis in
// place of its middle: its start and its end are kept, the end a cell more.
func clipMiddle(s string, width int) string {
	w := ansi.StringWidth(s)
	if w <= width {
		return s
	}
	if width < 3 {
		return common.Clip(s, width)
	}
	head := (width - 1) / 2
	return ansi.Truncate(s, head, "") + format.Ellipsis + ansi.TruncateLeft(s, w-(width-1-head), "")
}

// fitClient fits the client in width cells, cutting the program's name
// before what follows it ("kube-con…/shared-informers"), then the start of
// what follows ("…-informers (metadata)").
func (n Label) fitClient(width int) string {
	client := n.program + n.tail
	if n.clientW <= width {
		return client
	}
	if n.tail == "" || width < 2 {
		return common.Clip(client, width)
	}
	rest := strings.TrimPrefix(n.tail, " …")
	switch avail := width - ansi.StringWidth(rest); {
	case avail >= 2:
		return common.Clip(n.program, avail) + rest
	case avail == 1:
		return format.Ellipsis + rest
	}
	return ansi.TruncateLeft(rest, ansi.StringWidth(rest)-(width-1), format.Ellipsis)
}
