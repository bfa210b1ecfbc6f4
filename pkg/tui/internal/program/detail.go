package program

import (
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
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

const (
	DetailObject  DetailKind = iota // one object's identity and history, live
	DetailRequest                   // one request with all its options
	DetailText                      // a note, a relist or an audit, fixed text
	DetailFinding                   // one finding's evidence, as the engine updates it
)
