package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// entryKind is what an event log entry is about; the type filter picks kinds.
type entryKind int

const (
	kindAdded entryKind = iota
	kindModified
	kindReplaced
	kindDeleted
	kindList   // the first list installed
	kindRelist // a relist installed, with its diff
	kindRequest
	kindNote
	kindAudit
)

// String is the kind's word in the log.
func (k entryKind) String() string {
	switch k {
	case kindAdded:
		return "ADDED"
	case kindModified:
		return "MODIFIED"
	case kindReplaced:
		return "REPLACED"
	case kindDeleted:
		return "DELETED"
	case kindList:
		return "LIST"
	case kindRelist:
		return "RELIST"
	case kindRequest:
		return "REQUEST"
	case kindNote:
		return "NOTE"
	case kindAudit:
		return "AUDIT"
	}
	return "?"
}

// numTypeFilters is how many choices the t key cycles through.
const numTypeFilters = 8

// typeFilter is choice i of the type filter: its name and whether it keeps kind k.
// Choice 0 keeps everything.
func typeFilter(i int, k entryKind) (name string, keep bool) {
	switch i {
	case 1:
		return "ADDED", k == kindAdded
	case 2:
		return "MODIFIED", k == kindModified
	case 3:
		return "REPLACED", k == kindReplaced
	case 4:
		return "DELETED", k == kindDeleted
	case 5:
		return "LIST/RELIST", k == kindList || k == kindRelist
	case 6:
		return "REQUEST", k == kindRequest
	case 7:
		return "NOTE/AUDIT", k == kindNote || k == kindAudit
	}
	return "all", true
}

// logEntry is one line of the event log: a reflector note (a request, a
// store change, a decision, an audit) or where notes were dropped. Text is
// formatted only when the entry is shown.
type logEntry struct {
	at      time.Time
	kind    entryKind
	seq     uint64 // the note's sequence number (of the first dropped, for a drop)
	req     int64  // the request the note is about or was caused by
	dropped uint64 // how many notes are missing here (a drop)
	hasRef  bool
	ref     store.Ref
	uid     string
	rv      string
	prev    *store.Object // the replaced or removed object, for REPLACED/DELETED
	note    *reflector.Note
	diff    *store.RelistDiff
	audit   *reflector.AuditReport
	text    string // for entries without a note: the message
}

// entryFromResult turns the store change an applied note carries into a log
// entry; ok is false for outcomes the log does not show.
func entryFromResult(n reflector.Note, res store.Result) (logEntry, bool) {
	e := logEntry{at: n.At, seq: n.Seq, req: n.RequestID}
	switch res.Outcome {
	case store.Added:
		e.kind = kindAdded
	case store.Modified:
		e.kind = kindModified
	case store.Replaced:
		e.kind = kindReplaced
	case store.Deleted:
		e.kind = kindDeleted
	default:
		return e, false
	}
	if res.Object == nil {
		return e, false
	}
	e.hasRef, e.ref = true, res.Object.Ref()
	e.uid, e.rv, e.prev = res.Object.UID, res.Object.ResourceVersion, res.Previous
	return e, true
}

// entryFromNote turns a reflector note into a log entry.
func entryFromNote(n reflector.Note) logEntry {
	e := logEntry{at: n.At, kind: kindNote, seq: n.Seq, req: n.RequestID, note: &n}
	if n.Kind == reflector.NoteRequestStarted || n.Kind == reflector.NoteRequestEnded {
		e.kind = kindRequest
	}
	return e
}

// message is the entry's text after its time and kind.
func (e *logEntry) message() string {
	switch {
	case e.hasRef:
		s := e.ref.String() + "  rv " + common.OrDash(e.rv) + "  uid " + store.ShortUID(e.uid)
		if e.kind == kindReplaced && e.prev != nil {
			s += fmt.Sprintf("  (was uid %s rv %s: missed delete+create)", store.ShortUID(e.prev.UID), common.OrDash(e.prev.ResourceVersion))
		}
		return s
	case e.diff != nil:
		return "at rv " + common.OrDash(e.diff.ResourceVersion) + ": " + common.DiffSummary(e.diff)
	case e.note != nil:
		return noteText(e.note)
	}
	return e.text
}

// noteText is one line about a reflector note.
func noteText(n *reflector.Note) string {
	if r := n.Request; r != nil {
		switch n.Kind {
		case reflector.NoteRequestStarted:
			return fmt.Sprintf("%s #%d started  %s", r.Verb, r.ID, r.Opts.Format(true))
		case reflector.NoteRequestEnded:
			return fmt.Sprintf("%s #%d ended %s after %s, %s", r.Verb, r.ID, r.End.Format(false), format.Age(r.Duration), common.RequestCount(r))
		}
	}
	var b strings.Builder
	b.WriteString(string(n.Reason()))
	if d := n.Decision; d != nil {
		if d.Wait > 0 && d.Reason == reflector.ReasonBackoff {
			b.WriteString(" " + format.Latency(d.Wait))
		}
		b.WriteString(": " + d.String())
	}
	b.WriteString(" → " + n.State.String())
	return b.String()
}

// logPane is the scrollable event log: a bounded ring of entries, a
// snapshot of it while paused, and the text and type filters.
type logPane struct {
	entries common.Ring[logEntry]
	added   int64 // entries ever added

	paused      bool
	frozen      []logEntry // what the pane shows while paused
	addedAtStop int64

	text    string // filter, lower case
	typeIdx int
	scroll  common.Scroller
}

func newLogPane(size int) logPane {
	return logPane{entries: common.NewRing[logEntry](size), scroll: common.NewScroller()}
}

func (l *logPane) add(e logEntry) {
	l.entries.Push(e)
	l.added++
}

// setPaused freezes (or thaws) what the pane shows; entries keep arriving.
func (l *logPane) setPaused(p bool) {
	if p == l.paused {
		return
	}
	l.paused = p
	if !p {
		l.frozen = nil
		l.scroll.Follow = true
		return
	}
	l.frozen = make([]logEntry, l.entries.Len())
	for i := range l.frozen {
		l.frozen[i] = *l.entries.At(i)
	}
	l.addedAtStop = l.added
	l.scroll.Follow = false
}

// newWhilePaused is how many entries arrived since the pause.
func (l *logPane) newWhilePaused() int64 {
	if !l.paused {
		return 0
	}
	return l.added - l.addedAtStop
}

func (l *logPane) source(i int) *logEntry {
	if l.paused {
		return &l.frozen[i]
	}
	return l.entries.At(i)
}

func (l *logPane) sourceLen() int {
	if l.paused {
		return len(l.frozen)
	}
	return l.entries.Len()
}

// filtering reports whether a filter hides entries.
func (l *logPane) filtering() bool { return l.text != "" || l.typeIdx != 0 }

// visible returns the indexes of the entries that pass the filters; nil
// means all of them, so the common case allocates nothing.
func (l *logPane) visible() []int {
	if !l.filtering() {
		return nil
	}
	n := l.sourceLen()
	out := make([]int, 0, n)
	for i := range n {
		if l.matches(l.source(i)) {
			out = append(out, i)
		}
	}
	return out
}

func (l *logPane) matches(e *logEntry) bool {
	if _, keep := typeFilter(l.typeIdx, e.kind); !keep {
		return false
	}
	if l.text == "" {
		return true
	}
	return strings.Contains(strings.ToLower(e.kind.String()+" "+e.message()), l.text)
}

// rows is how many entries pass the filters, with the visible indexes.
func (l *logPane) rows() (int, []int) {
	idx := l.visible()
	if idx == nil {
		return l.sourceLen(), nil
	}
	return len(idx), idx
}

// row returns the entry shown as row i.
func (l *logPane) row(i int, idx []int) *logEntry {
	if idx != nil {
		return l.source(idx[i])
	}
	return l.source(i)
}

// selected is the entry under the cursor, if any.
func (l *logPane) selected() (*logEntry, bool) {
	n, idx := l.rows()
	if n == 0 {
		return nil, false
	}
	return l.row(min(l.scroll.Cursor, n-1), idx), true
}

// title is the pane's name with its counters and filter state.
func (l *logPane) title(st common.Styles) string {
	var parts []string
	if l.filtering() {
		n, _ := l.rows()
		parts = append(parts, format.Count(n)+" of "+format.Count(l.sourceLen())+" entries match")
	} else {
		parts = append(parts, format.Count(l.entries.Len())+" entries")
	}
	if l.paused {
		parts = append(parts, st.Badge.Render(" PAUSED ")+" "+st.Warn.Render("+"+format.Count(l.newWhilePaused())+" new"))
	}
	if l.text != "" {
		parts = append(parts, st.Accent.Render(`filter "`+l.text+`"`))
	}
	if l.typeIdx != 0 {
		name, _ := typeFilter(l.typeIdx, kindNote)
		parts = append(parts, st.Accent.Render("type "+name))
	}
	return strings.Join(parts, "  ")
}

// lines renders h rows of the log in width cells.
func (l logPane) lines(st common.Styles, width, h int, focused bool) []string {
	n, idx := l.rows()
	l.scroll.Clamp(n, h)
	if n == 0 {
		msg := "no events yet"
		if l.filtering() {
			msg = "no entry matches the filter (esc clears it)"
		}
		return []string{st.Faint.Render(msg)}
	}
	out := make([]string, 0, h)
	for i := l.scroll.Top; i < n && len(out) < h; i++ {
		e := l.row(i, idx)
		ts := "--:--:--"
		if !e.at.IsZero() {
			ts = e.at.Format("15:04:05")
		}
		plain := ts + " " + fmt.Sprintf("%-8s", e.kind) + " " + e.message()
		if i == l.scroll.Cursor {
			out = append(out, cursorRow(st, focused, common.Pad(plain, width)))
			continue
		}
		out = append(out, l.entryLine(st, e, width))
	}
	return out
}

// tail renders the newest h entries, unfiltered and without a cursor, for
// the overview's glimpse of a resource: it reads h entries, whatever the log holds.
func (l *logPane) tail(st common.Styles, width, h int) []string {
	n := l.entries.Len()
	if n == 0 || h <= 0 {
		return []string{st.Faint.Render("no events yet")}
	}
	out := make([]string, 0, h)
	for i := max(n-h, 0); i < n; i++ {
		out = append(out, l.entryLine(st, l.entries.At(i), width))
	}
	return out
}

// entryLine is one entry as the log shows it: time, kind, message.
func (l *logPane) entryLine(st common.Styles, e *logEntry, width int) string {
	ts := "--:--:--"
	if !e.at.IsZero() {
		ts = e.at.Format("15:04:05")
	}
	return st.Faint.Render(ts) + " " + kindStyle(st, e.kind).Render(fmt.Sprintf("%-8s", e.kind)) + " " + common.Clip(e.message(), width-18)
}

// cursorRow highlights the cursor row: reversed in the focused pane,
// underlined in the others.
func cursorRow(st common.Styles, focused bool, s string) string {
	if focused {
		return st.Selected.Render(s)
	}
	return st.Cursor.Render(s)
}

// kindStyle colors an event log entry by its kind.
func kindStyle(s common.Styles, k entryKind) lipgloss.Style {
	switch k {
	case kindAdded:
		return s.Good
	case kindModified:
		return s.Accent
	case kindDeleted:
		return s.Warn
	case kindReplaced, kindRelist:
		return s.Bad
	case kindList:
		return s.Good
	case kindRequest:
		return s.Request
	case kindAudit:
		return s.Audit
	}
	return s.Label
}
