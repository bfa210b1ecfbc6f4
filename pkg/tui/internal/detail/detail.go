// Package detail is the dashboard's detail component: the full-screen
// frame of a detail (its title, its lines from an offset), and the texts of
// what a detail shows that depend on no model: an object's facts and each
// version's diffed changes, a request, a reflector's note, a relist's diff
// and an audit.
package detail

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/redact"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// maxEntries bounds the object lists of a relist or audit detail.
const maxEntries = 500

// Frame is a detail screen of h lines: its title line, then the
// wrapped lines from offset.
func Frame(st common.Styles, title string, wrapped []string, offset, width, h int) []string {
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

// ObjectFacts are an object's identity and metadata, one fact a line.
func ObjectFacts(o *store.Object) []string {
	gen := "-" // unset: ConfigMaps and Secrets, say, have no spec to count
	if o.Generation != 0 {
		gen = strconv.FormatInt(o.Generation, 10)
	}
	out := []string{
		"  uid          " + common.OrDash(o.UID),
		"  rv           " + common.OrDash(o.ResourceVersion),
		"  generation   " + gen,
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
		out = append(out, "  owners       "+common.Owners(o))
	}
	if len(o.Body) > 0 {
		out = append(out, "  body         "+format.Bytes(int64(len(o.Body)))+" of JSON kept (below)")
	}
	return out
}

// Body is an object's kept JSON (--keep-objects), indented, one line a
// line. A Secret's (secret: the resource is secrets) has its data,
// stringData and last applied configuration's values REDACTED, as a trace
// has: the screen may be shared, or captured.
func Body(body []byte, secret bool) []string {
	if secret {
		b, err := redact.Secret(body)
		if err != nil {
			return []string{"(a Secret's JSON that could not be read, not shown)"}
		}
		body = b
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		return []string{"(JSON that could not be read: " + err.Error() + ")"}
	}
	return strings.Split(buf.String(), "\n")
}

// Request is everything about one request.
func Request(r *reflector.RequestInfo, now time.Time) []string {
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
	if r.End == nil {
		return out // running: nothing ended
	}
	out = append(out, "ended        "+r.End.Format(false))
	if r.End.Err != nil {
		// What ended it: an error only when it ended in one (a forced
		// relist or a client's leaving is a cause, not an error).
		label := "cause        "
		if r.End.Reason == reflector.EndError {
			label = "error        "
		}
		out = append(out, label+r.End.Err.Error())
	}
	return out
}

// Note is everything about one reflector note.
func Note(n *reflector.Note) []string {
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
		out = append(out, Diff(d.Diff)...)
	}
	return out
}

// Diff lists a relist diff with names.
func Diff(d *store.RelistDiff) []string {
	out := []string{common.DiffSummary(d), ""}
	n := 0
	for _, r := range common.DiffRows(d) {
		if n == maxEntries {
			out = append(out, fmt.Sprintf("… and %d more", d.Missed()-n))
			break
		}
		out = append(out, fmt.Sprintf("%-13s %s", r.What, r.Text()))
		n++
	}
	return out
}

// Audit lists an audit report with names.
func Audit(a *reflector.AuditReport) []string {
	out := []string{a.String(), ""}
	groups := []struct {
		what    string
		entries []store.DiffEntry
	}{{"missing", a.Missing}, {"extra", a.Extra}, {"different", a.Different}}
	n := 0
	for _, g := range groups {
		for _, e := range g.entries {
			if n == maxEntries {
				return append(out, "… and more")
			}
			out = append(out, fmt.Sprintf("%-10s %s  cached uid %s rv %s · listed uid %s rv %s", g.what, e.Ref,
				store.ShortUID(e.OldUID), common.OrDash(e.OldResourceVersion), store.ShortUID(e.NewUID), common.OrDash(e.NewResourceVersion)))
			n++
		}
	}
	if left := a.Omitted[0] + a.Omitted[1] + a.Omitted[2]; left > 0 {
		out = append(out, fmt.Sprintf("… and %d more, which the trace did not keep", left))
	}
	return out
}

// ObjectDiffHint is the footer under an object's detail whose versions
// were diffed: m shows or hides the meta paths.
func ObjectDiffHint(meta bool) string {
	if meta {
		return "esc back · m hide meta paths · ↑/↓ pgup/pgdn scroll · ? help · q quit"
	}
	return "esc back · m show meta paths · ↑/↓ pgup/pgdn scroll · ? help · q quit"
}

// maxVersionPaths bounds the changed paths listed for one version, so a
// frame stays cheap: the view scrolls, and the lines without the dashboard
// (--no-tui --diff) list every path.
const maxVersionPaths = 200

// ChangeLines are one version's diffed changes as the object detail lists
// them: `path old → new  by writer`, meta paths only with meta, and a line
// that says how many meta paths are hidden.
func ChangeLines(st common.Styles, ch *diff.Changes, meta bool) []string {
	if ch.Skipped != "" {
		return []string{st.Warn.Render("not diffed: ") + ch.Skipped}
	}
	var out []string
	if ch.TimestampOnly {
		out = append(out, st.Faint.Render("timestamps only: nothing changed but resourceVersion, managedFields and times"))
	}
	shown, hidden := 0, 0
	for _, c := range ch.Paths {
		if c.Meta && !meta {
			hidden++
			continue
		}
		// shown counts the paths not hidden; the first maxVersionPaths are listed.
		if shown++; shown <= maxVersionPaths {
			out = append(out, changeLine(st, c))
		}
	}
	if shown > maxVersionPaths {
		out = append(out, st.Faint.Render(fmt.Sprintf("… and %d more paths (--no-tui --diff lists them all)", shown-maxVersionPaths)))
	}
	if hidden > 0 {
		out = append(out, st.Faint.Render(fmt.Sprintf("+%s (resourceVersion, managedFields): m shows them", format.Plural(hidden, "meta path"))))
	}
	if len(out) == 0 {
		out = append(out, st.Faint.Render("no path changed"))
	}
	return out
}

// changeLine is one changed path: `.data.k: "a" → "b"  by writer`; without
// values kept, `.data.k changed  by writer`.
func changeLine(st common.Styles, c diff.Change) string {
	line := st.Value.Render(c.Path)
	switch {
	case len(c.Old) == 0 && len(c.New) == 0:
		line += " " + string(c.Op)
	case c.Op == diff.Added:
		line += ": (none) → " + common.RawValue(c.New)
	case c.Op == diff.Removed:
		line += ": " + common.RawValue(c.Old) + " → (removed)"
	default:
		line += ": " + common.RawValue(c.Old) + " → " + common.RawValue(c.New)
	}
	switch w := c.Writer(); {
	case w == "":
	case c.Op == diff.Removed: // who removed it, the object no longer says
		line += st.Label.Render("  last set by ") + st.Accent.Render(w)
	default:
		line += st.Label.Render("  by ") + st.Accent.Render(w)
	}
	return line
}
