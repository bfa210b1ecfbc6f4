package program

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// DetailKind is what the detail view shows.
type DetailKind int

// DetailView is the full-screen detail of the selected entry.
type DetailView struct {
	// Kind is what it shows: the object Ref (DetailObject), the request
	// Req (DetailRequest), or Title and Text (DetailText).
	Kind  DetailKind
	Ref   store.Ref
	Req   reflector.RequestInfo
	Title string
	Text  []string
	// Offset is the first line shown.
	Offset int
	// Finding is the finding shown (DetailFinding), as when it was opened;
	// Res is its resource's row on the overview (0 on a dashboard).
	Finding findings.Finding
	Res     int
	// Back is where esc goes: the dashboard, or the findings pane.
	Back ViewState
	// Meta shows, in an object's versions, the meta paths of their diffed
	// changes (resourceVersion, managedFields); m toggles it.
	Meta bool
}

// Scroll moves the detail on a key of common.ListKeys: by a line, by a page of
// body-1 lines, to the top or to the bottom of its total lines (total is
// called only for a scroll key).
func (d *DetailView) Scroll(k tea.KeyPressMsg, body int, total func() int) {
	ScrollOffset(&d.Offset, k, body, total)
}

// ScrollOffset moves offset, the first of total lines shown in a body of
// body lines, on a key of common.ListKeys (total is called only for a scroll key).
func ScrollOffset(offset *int, k tea.KeyPressMsg, body int, total func() int) {
	lk, page, by := common.NewListKeys(), body-1, 0
	switch {
	case key.Matches(k, lk.Up):
		by = -1
	case key.Matches(k, lk.Down):
		by = 1
	case key.Matches(k, lk.PageUp):
		by = -page
	case key.Matches(k, lk.PageDown):
		by = page
	case key.Matches(k, lk.Top):
		by = -1 << 30
	case key.Matches(k, lk.Bottom):
		by = 1 << 30
	default:
		return
	}
	*offset = min(max(*offset+by, 0), max(total()-page, 0))
}

const (
	DetailObject  DetailKind = iota // one object's identity and history, live
	DetailRequest                   // one request with all its options
	DetailText                      // a note, a relist or an audit, fixed text
	DetailFinding                   // one finding's evidence, as the engine updates it
)
