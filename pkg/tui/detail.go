package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// detailKind is what the detail view shows.
type detailKind int

const (
	detailObject  detailKind = iota // one object's identity and history, live
	detailRequest                   // one request with all its options
	detailText                      // a note, a relist or an audit, fixed text
	detailFinding                   // one finding's evidence, as the engine updates it
)

// maxDetailEntries bounds the object lists of a relist or audit detail.
const maxDetailEntries = 500

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
func detailFor(e *logEntry) detailView {
	switch {
	case e.hasRef:
		return detailView{kind: detailObject, ref: e.ref}
	case e.note != nil && e.note.Request != nil:
		return detailView{kind: detailRequest, req: *e.note.Request}
	case e.diff != nil:
		return detailView{kind: detailText, title: e.kind.String() + " at rv " + common.OrDash(e.diff.ResourceVersion), text: diffText(e.diff)}
	case e.audit != nil:
		return detailView{kind: detailText, title: "Audit", text: auditText(e.audit)}
	case e.note != nil:
		return detailView{kind: detailText, title: "Note: " + string(e.note.Reason()), text: noteDetail(e.note)}
	}
	return detailView{kind: detailText, title: e.kind.String(), text: []string{e.message()}}
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
		body = requestDetail(&d.req, now)
	case detailFinding:
		f := d.finding
		for _, g := range m.findings {
			if g.ID == f.ID {
				f = g // its evidence as it stands now
			}
		}
		title, body = findingTitle(f), findingDetail(m.st, f, now, width)
	default:
		title, body = d.title, d.text
	}
	var wrapped []string
	for _, l := range body {
		wrapped = append(wrapped, strings.Split(ansi.Wrap(l, max(width-2, 10), " ,"), "\n")...)
	}
	return title, wrapped
}

// scroll moves the detail on a key of listKeys: by a line, by a page of
// body-1 lines, to the top or to the bottom of its total lines (total is
// called only for a scroll key).
func (d *detailView) scroll(k tea.KeyPressMsg, body int, total func() int) {
	common.ScrollOffset(&d.offset, k, body, total)
}

// detailFrame is a detail screen of h lines: its title line, then the
// wrapped lines from offset.
func detailFrame(st common.Styles, title string, wrapped []string, offset, width, h int) []string {
	h--
	off := min(max(offset, 0), max(len(wrapped)-h, 0))
	more := ""
	if len(wrapped) > h {
		more = fmt.Sprintf("  lines %d-%d of %d", off+1, min(off+h, len(wrapped)), len(wrapped))
	}
	out := []string{common.Spread(st.TabActive.Render(" "+title+" "), st.Faint.Render("esc back"+more), width)}
	for i := off; i < len(wrapped) && len(out) <= h; i++ {
		out = append(out, " "+wrapped[i])
	}
	return out
}

// objectDetail is what the dashboard knows of one object: its state in the
// cache now, and the versions it saw with what each changed.
func (m *Model) objectDetail(ref store.Ref, width int) []string {
	st := m.st
	var out []string
	if m.feed.Store != nil {
		if o, ok := m.feed.Store.Get(ref); ok {
			out = append(out, st.Label.Render("in cache now"))
			out = append(out, objectFacts(o)...)
		} else {
			out = append(out, st.Warn.Render("not in the cache now")+st.Faint.Render(" (deleted, or not listed yet)"))
		}
		out = append(out, "")
	}
	r, ok := m.history.get(ref)
	if !ok {
		return append(out, st.Faint.Render(fmt.Sprintf(
			"no versions recorded: the dashboard keeps the last %d versions of the %s most recently changed objects",
			versionsPerObject, format.Count(m.opts.TrackedObjects))))
	}
	head := "versions seen, oldest first"
	if r.forgotten > 0 {
		head += fmt.Sprintf(" (%d older forgotten)", r.forgotten)
	}
	out = append(out, st.Label.Render(head))
	for i := range r.len() {
		v := r.at(i)
		ts := "before   "
		if !v.at.IsZero() {
			ts = v.at.Format("15:04:05") + " "
		}
		out = append(out, ts+st.Value.Render(fmt.Sprintf("%-22s", v.what))+" uid "+store.ShortUID(v.uid)+"  rv "+common.OrDash(v.rv))
		const indent = "           "
		if v.delta != nil {
			// The event's diff: each changed path, old → new, and who wrote
			// it, a long one wrapped under itself.
			for _, c := range changeLines(st, v.delta, m.detail.meta) {
				for j, l := range strings.Split(ansi.Wrap(c, max(width-2-len(indent)-2, 20), " ,"), "\n") {
					if j == 0 {
						out = append(out, indent+st.Accent.Render("· ")+l)
					} else {
						out = append(out, indent+"  "+l)
					}
				}
			}
			if v.delta.Skipped == "" {
				continue
			}
		}
		for _, c := range r.changesOf(i) {
			out = append(out, indent+st.Accent.Render("· ")+c)
		}
	}
	return out
}

// hasDiffs says the history of ref holds a diffed version: its detail
// lists changed paths, and m shows their meta paths.
func (m *Model) hasDiffs(ref store.Ref) bool {
	r, ok := m.history.get(ref)
	if !ok {
		return false
	}
	for i := range r.len() {
		if d := r.at(i).delta; d != nil && d.Skipped == "" {
			return true
		}
	}
	return false
}

// objectFacts are an object's identity and metadata, one fact a line.
func objectFacts(o *store.Object) []string {
	out := []string{
		"  uid          " + common.OrDash(o.UID),
		"  rv           " + common.OrDash(o.ResourceVersion),
		fmt.Sprintf("  generation   %d", o.Generation),
	}
	if !o.CreationTimestamp.IsZero() {
		out = append(out, "  created      "+o.CreationTimestamp.UTC().Format(time.RFC3339))
	}
	if o.DeletionTimestamp != nil {
		out = append(out, "  deleting     since "+o.DeletionTimestamp.UTC().Format(time.RFC3339))
	}
	if o.Labels.Len() > 0 {
		var l []string
		for k, v := range o.Labels.All() {
			l = append(l, k+"="+v)
		}
		out = append(out, "  labels       "+strings.Join(l, ","))
	}
	if len(o.OwnerReferences) > 0 {
		out = append(out, "  owners       "+owners(o))
	}
	if len(o.Body) > 0 {
		out = append(out, "  body         "+format.Bytes(int64(len(o.Body)))+" of JSON kept")
	}
	return out
}

// requestDetail is everything about one request.
func requestDetail(r *reflector.RequestInfo, now time.Time) []string {
	out := []string{"verb         " + string(r.Verb)}
	if !r.Started.IsZero() {
		out = append(out, "started      "+r.Started.Format("15:04:05.000")+" ("+format.Age(now.Sub(r.Started))+" ago)")
	}
	if r.Ended() {
		out = append(out, "took         "+format.Age(r.Duration))
	} else if !r.Started.IsZero() {
		out = append(out, "running for  "+format.Age(now.Sub(r.Started)))
	}
	out = append(out, "received     "+common.RequestCount(r))
	for i, o := range strings.Split(r.Opts.Format(false), " ") {
		label := "             "
		if i == 0 {
			label = "options      "
		}
		out = append(out, label+o)
	}
	out = append(out, "ended        "+r.End.Format(false))
	if r.End != nil && r.End.Err != nil {
		out = append(out, "error        "+r.End.Err.Error())
	}
	return out
}

// noteDetail is everything about one reflector note.
func noteDetail(n *reflector.Note) []string {
	out := []string{
		"time         " + n.At.Format("15:04:05.000"),
		"kind         " + string(n.Kind),
		"reason       " + string(n.Reason()),
		"state after  " + n.State.String(),
	}
	d := n.Decision
	if d == nil {
		return out
	}
	if d.Wait > 0 {
		out = append(out, "wait         "+format.Latency(d.Wait))
	}
	out = append(out, "detail       "+d.String())
	if d.Diff != nil {
		out = append(out, "")
		out = append(out, diffText(d.Diff)...)
	}
	return out
}

// diffText lists a relist diff with names.
func diffText(d *store.RelistDiff) []string {
	out := []string{common.DiffSummary(d), ""}
	n := 0
	for _, r := range common.DiffRows(d) {
		if n == maxDetailEntries {
			out = append(out, fmt.Sprintf("… and %d more", d.Missed()-n))
			break
		}
		out = append(out, fmt.Sprintf("%-13s %s", r.What, r.Text()))
		n++
	}
	return out
}

// auditText lists an audit report with names.
func auditText(a *reflector.AuditReport) []string {
	out := []string{a.String(), ""}
	groups := []struct {
		what    string
		entries []store.DiffEntry
	}{{"missing", a.Missing}, {"extra", a.Extra}, {"different", a.Different}}
	n := 0
	for _, g := range groups {
		for _, e := range g.entries {
			if n == maxDetailEntries {
				return append(out, "… and more")
			}
			out = append(out, fmt.Sprintf("%-10s %s  cached uid %s rv %s · listed uid %s rv %s", g.what, e.Ref,
				store.ShortUID(e.OldUID), common.OrDash(e.OldResourceVersion), store.ShortUID(e.NewUID), common.OrDash(e.NewResourceVersion)))
			n++
		}
	}
	return out
}
