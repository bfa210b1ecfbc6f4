package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/detail"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/history"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/logpane"
)

// detailKind is what the detail view shows.
type detailKind int

const (
	detailObject  detailKind = iota // one object's identity and history, live
	detailRequest                   // one request with all its options
	detailText                      // a note, a relist or an audit, fixed text
	detailFinding                   // one finding's evidence, as the engine updates it
)

// detailView is the full-screen detail of the selected entry.
type detailView struct {
	kind   detailKind
	ref    store.Ref
	req    reflector.RequestInfo
	title  string
	text   []string
	offset int
	// finding is the finding shown (detailFinding), as when it was opened;
	// res is its resource's row on the overview (0 on a dashboard).
	finding findings.Finding
	res     int
	// back is where esc goes: the dashboard, or the findings pane.
	back viewState
	// meta shows, in an object's versions, the meta paths of their diffed
	// changes (resourceVersion, managedFields); m toggles it.
	meta bool
}

// detailFor builds the detail of a log entry.
func detailFor(e *logpane.Entry) detailView {
	switch {
	case e.HasRef:
		return detailView{kind: detailObject, ref: e.Ref}
	case e.Note != nil && e.Note.Request != nil:
		return detailView{kind: detailRequest, req: *e.Note.Request}
	case e.Diff != nil:
		return detailView{kind: detailText, title: e.Kind.String() + " at rv " + common.OrDash(e.Diff.ResourceVersion), text: detail.Diff(e.Diff)}
	case e.Audit != nil:
		return detailView{kind: detailText, title: "Audit", text: detail.Audit(e.Audit)}
	case e.Note != nil:
		return detailView{kind: detailText, title: "Note: " + string(e.Note.Reason()), text: detail.Note(e.Note)}
	}
	return detailView{kind: detailText, title: e.Kind.String(), text: []string{e.Message()}}
}

// content is the detail's title and its lines at now, wrapped to width;
// m is the dashboard of the resource it is about.
func (d detailView) content(m *Model, now time.Time, width int) (string, []string) {
	var title string
	var body []string
	switch d.kind {
	case detailObject:
		title = "Object " + d.ref.String() + "  (" + m.res.Target.Resource.String() + ")"
		body = m.objectDetail(d.ref, width)
	case detailRequest:
		title = fmt.Sprintf("Request #%d  %s", d.req.ID, d.req.Verb)
		body = detail.Request(&d.req, now)
	case detailFinding:
		f := d.finding
		for _, g := range m.findings {
			if g.ID == f.ID {
				f = g // its evidence as it stands now
			}
		}
		title, body = findingspane.Title(f), findingspane.Detail(m.st, f, now, width)
	default:
		title, body = d.title, d.text
	}
	var wrapped []string
	for _, l := range body {
		wrapped = append(wrapped, strings.Split(common.Wrap(l, max(width-2, 10), " ,"), "\n")...)
	}
	return title, wrapped
}

// scroll moves the detail on a key of common.ListKeys: by a line, by a page of
// body-1 lines, to the top or to the bottom of its total lines (total is
// called only for a scroll key).
func (d *detailView) scroll(k tea.KeyPressMsg, body int, total func() int) {
	scrollOffset(&d.offset, k, body, total)
}

// objectDetail is what the dashboard knows of one object: its state in the
// cache now, and the versions it saw with what each changed.
func (m *Model) objectDetail(ref store.Ref, width int) []string {
	st := m.st
	var out []string
	if m.feed.Store != nil {
		if o, ok := m.feed.Store.Get(ref); ok {
			out = append(out, st.Label.Render("in cache now"))
			out = append(out, detail.ObjectFacts(o)...)
		} else {
			out = append(out, st.Warn.Render("not in the cache now")+st.Faint.Render(" (deleted, or not listed yet)"))
		}
		out = append(out, "")
	}
	r, ok := m.history.Get(ref)
	if !ok {
		return append(out, st.Faint.Render(fmt.Sprintf(
			"no versions recorded: the dashboard keeps the last %d versions of the %s most recently changed objects",
			history.VersionsPerObject, format.Count(m.opts.TrackedObjects))))
	}
	head := "versions seen, oldest first"
	if r.Forgotten > 0 {
		head += fmt.Sprintf(" (%d older forgotten)", r.Forgotten)
	}
	out = append(out, st.Label.Render(head))
	for i := range r.Len() {
		v := r.At(i)
		ts := "before   "
		if !v.At.IsZero() {
			ts = v.At.Format("15:04:05") + " "
		}
		out = append(out, ts+st.Value.Render(fmt.Sprintf("%-22s", v.What))+" uid "+store.ShortUID(v.UID)+"  rv "+common.OrDash(v.RV))
		const indent = "           "
		if v.Delta != nil {
			// The event's diff: each changed path, old → new, and who wrote
			// it, a long one wrapped under itself.
			for _, c := range detail.ChangeLines(st, v.Delta, m.detail.meta) {
				for j, l := range strings.Split(common.Wrap(c, max(width-2-len(indent)-2, 20), " ,"), "\n") {
					if j == 0 {
						out = append(out, indent+st.Accent.Render("· ")+l)
					} else {
						out = append(out, indent+"  "+l)
					}
				}
			}
			if v.Delta.Skipped == "" {
				continue
			}
		}
		for _, c := range r.ChangesOf(i) {
			out = append(out, indent+st.Accent.Render("· ")+c)
		}
	}
	return out
}

// hasDiffs says the history of ref holds a diffed version: its detail
// lists changed paths, and m shows their meta paths.
func (m *Model) hasDiffs(ref store.Ref) bool {
	r, ok := m.history.Get(ref)
	if !ok {
		return false
	}
	for i := range r.Len() {
		if d := r.At(i).Delta; d != nil && d.Skipped == "" {
			return true
		}
	}
	return false
}

// scrollOffset moves offset, the first of total lines shown in a body of
// body lines, on a key of common.ListKeys (total is called only for a scroll key).
func scrollOffset(offset *int, k tea.KeyPressMsg, body int, total func() int) {
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
