package dashboard

import (
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/detail"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/history"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/logpane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// detailFor builds the detail of a log entry.
func detailFor(e *logpane.Entry) program.DetailView {
	switch {
	case e.HasRef:
		return program.DetailView{Kind: program.DetailObject, Ref: e.Ref}
	case e.Note != nil && e.Note.Request != nil:
		return program.DetailView{Kind: program.DetailRequest, Req: *e.Note.Request}
	case e.Diff != nil:
		return program.DetailView{Kind: program.DetailText, Title: e.Kind.String() + " at rv " + common.OrDash(e.Diff.ResourceVersion), Text: detail.Diff(e.Diff)}
	case e.Audit != nil:
		return program.DetailView{Kind: program.DetailText, Title: "Audit", Text: detail.Audit(e.Audit)}
	case e.Note != nil:
		return program.DetailView{Kind: program.DetailText, Title: "Note: " + string(e.Note.Reason()), Text: detail.Note(e.Note)}
	}
	return program.DetailView{Kind: program.DetailText, Title: e.Kind.String(), Text: []string{e.Message()}}
}

// DetailContent is d's title and its lines at now, wrapped to width;
// m is the dashboard of the resource it is about.
func DetailContent(d program.DetailView, m *Model, now time.Time, width int) (string, []string) {
	var title string
	var body []string
	switch d.Kind {
	case program.DetailObject:
		title = "Object " + d.Ref.String() + "  (" + m.res.Target.Resource.String() + ")"
		body = m.objectDetail(d.Ref, width)
	case program.DetailRequest:
		title = fmt.Sprintf("Request #%d  %s", d.Req.ID, d.Req.Verb)
		body = detail.Request(&d.Req, now)
	case program.DetailFinding:
		f := d.Finding
		for _, g := range m.Findings {
			if g.ID == f.ID {
				f = g // its evidence as it stands now
			}
		}
		title, body = findingspane.Title(f), findingspane.Detail(m.St, f, now, width)
	default:
		title, body = d.Title, d.Text
	}
	var wrapped []string
	for _, l := range body {
		wrapped = append(wrapped, strings.Split(common.Wrap(l, max(width-2, 10), " ,"), "\n")...)
	}
	return title, wrapped
}

// objectDetail is what the dashboard knows of one object: its state in the
// cache now, and the versions it saw with what each changed.
func (m *Model) objectDetail(ref store.Ref, width int) []string {
	out := m.objectVersions(ref, width)
	if m.Feed.Store == nil {
		return out
	}
	if o, ok := m.Feed.Store.Get(ref); ok && len(o.Body) > 0 {
		out = append(out, "", m.St.Label.Render("its JSON in the cache (--keep-objects)"))
		out = append(out, detail.Body(o.Body, m.res.Target.Resource.Secrets())...)
	}
	return out
}

// objectVersions is objectDetail but the object's JSON.
func (m *Model) objectVersions(ref store.Ref, width int) []string {
	st := m.St
	var out []string
	if m.Feed.Store != nil {
		if o, ok := m.Feed.Store.Get(ref); ok {
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
			history.VersionsPerObject, format.Count(m.Opts.TrackedObjects))))
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
			for _, c := range detail.ChangeLines(st, v.Delta, m.Detail.Meta) {
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
		for _, c := range r.ChangesOf(i, m.res.Target.Resource.Secrets()) {
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
