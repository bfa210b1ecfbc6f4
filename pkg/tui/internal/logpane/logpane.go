// Package logpane is the dashboard's event log component: a bounded ring
// of entries made from the reflector's notes (a request, a store change, a
// decision, an audit, or where notes were dropped), shown a window at a
// time, paused and filtered by text and by kind. Text is formatted only
// when an entry is shown.
package logpane

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/ring"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// EntryKind is what an event log entry is about; the type filter picks kinds.
type EntryKind int

// The kinds of entries, in the order the type filter names them.
const (
	KindAdded EntryKind = iota
	KindModified
	KindReplaced
	KindDeleted
	KindList   // the first list installed
	KindRelist // a relist installed, with its diff
	KindRequest
	KindNote
	KindAudit
)

// String is the kind's word in the log.
func (k EntryKind) String() string {
	words := [...]string{KindAdded: "ADDED", KindModified: "MODIFIED", KindReplaced: "REPLACED", KindDeleted: "DELETED",
		KindList: "LIST", KindRelist: "RELIST", KindRequest: "REQUEST", KindNote: "NOTE", KindAudit: "AUDIT"}
	if k < 0 || int(k) >= len(words) || words[k] == "" {
		return "?"
	}
	return words[k]
}

// NumTypeFilters is how many choices the t key cycles through.
const NumTypeFilters = 8

// typeFilter is choice i of the type filter: its name and whether it keeps kind k.
// Choice 0 keeps everything.
func typeFilter(i int, k EntryKind) (name string, keep bool) {
	switch i {
	case 1:
		return "ADDED", k == KindAdded
	case 2:
		return "MODIFIED", k == KindModified
	case 3:
		return "REPLACED", k == KindReplaced
	case 4:
		return "DELETED", k == KindDeleted
	case 5:
		return "LIST/RELIST", k == KindList || k == KindRelist
	case 6:
		return "REQUEST", k == KindRequest
	case 7:
		return "NOTE/AUDIT", k == KindNote || k == KindAudit
	}
	return "all", true
}

// Entry is one line of the event log: a reflector note (a request, a
// store change, a decision, an audit) or where notes were dropped. Text is
// formatted only when the entry is shown.
type Entry struct {
	At      time.Time
	Kind    EntryKind
	Seq     uint64 // the note's sequence number (of the first dropped, for a drop)
	Req     int64  // the request the note is about or was caused by
	Dropped uint64 // how many notes are missing here (a drop)
	HasRef  bool
	Ref     store.Ref
	UID     string
	RV      string
	Prev    *store.Object // the replaced or removed object, for REPLACED/DELETED
	Note    *reflector.Note
	Diff    *store.RelistDiff
	Audit   *reflector.AuditReport
	Text    string // for entries without a note: the message
}

// FromResult turns the store change an applied note carries into a log
// entry; ok is false for outcomes the log does not show.
func FromResult(n reflector.Note, res store.Result) (Entry, bool) {
	e := Entry{At: n.At, Seq: n.Seq, Req: n.RequestID}
	switch res.Outcome {
	case store.Added:
		e.Kind = KindAdded
	case store.Modified:
		e.Kind = KindModified
	case store.Replaced:
		e.Kind = KindReplaced
	case store.Deleted:
		e.Kind = KindDeleted
	default:
		return e, false
	}
	if res.Object == nil {
		return e, false
	}
	e.HasRef, e.Ref = true, res.Object.Ref()
	e.UID, e.RV, e.Prev = res.Object.UID, res.Object.ResourceVersion, res.Previous
	return e, true
}

// FromNote turns a reflector note into a log entry.
func FromNote(n reflector.Note) Entry {
	e := Entry{At: n.At, Kind: KindNote, Seq: n.Seq, Req: n.RequestID, Note: &n}
	if n.Kind == reflector.NoteRequestStarted || n.Kind == reflector.NoteRequestEnded {
		e.Kind = KindRequest
	}
	return e
}

// Message is the entry's text after its time and kind.
func (e *Entry) Message() string {
	switch {
	case e.HasRef:
		s := e.Ref.String() + "  rv " + common.OrDash(e.RV) + "  uid " + store.ShortUID(e.UID)
		if e.Kind == KindReplaced && e.Prev != nil {
			s += fmt.Sprintf("  (was uid %s rv %s: missed delete+create)", store.ShortUID(e.Prev.UID), common.OrDash(e.Prev.ResourceVersion))
		}
		return s
	case e.Diff != nil:
		return "at rv " + common.OrDash(e.Diff.ResourceVersion) + ": " + common.DiffSummary(e.Diff)
	case e.Note != nil:
		return noteText(e.Note)
	}
	return e.Text
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
	if r := n.Reason(); r != reflector.ReasonClientLeft && r != reflector.ReasonClientGone {
		// A stream whose client left, or was forgotten, keeps its state;
		// the sentence says what it was, and an arrow to the same state
		// read as a change.
		b.WriteString(" → " + n.State.String())
	}
	return b.String()
}

// Pane is the scrollable event log: a bounded ring of entries, a
// snapshot of it while paused, and the text and type filters.
type Pane struct {
	Entries ring.Ring[Entry]
	added   int64 // entries ever added

	Paused      bool
	frozen      []Entry // what the pane shows while paused
	addedAtStop int64

	Filter  string // the text filter, lower case
	TypeIdx int    // the type filter's choice (0: every kind)
	Scroll  common.Scroller
}

// NewPane is an empty pane that keeps the last size entries.
func NewPane(size int) Pane {
	return Pane{Entries: ring.New[Entry](size), Scroll: common.NewScroller()}
}

// Add appends e, dropping the oldest entry when the pane is full.
func (l *Pane) Add(e Entry) {
	l.Entries.Push(e)
	l.added++
}

// SetPaused freezes (or thaws) what the pane shows; entries keep arriving.
func (l *Pane) SetPaused(p bool) {
	if p == l.Paused {
		return
	}
	l.Paused = p
	if !p {
		l.frozen = nil
		l.Scroll.Follow = true
		return
	}
	l.frozen = make([]Entry, l.Entries.Len())
	for i := range l.frozen {
		l.frozen[i] = *l.Entries.At(i)
	}
	l.addedAtStop = l.added
	l.Scroll.Follow = false
}

// newWhilePaused is how many entries arrived since the pause.
func (l *Pane) newWhilePaused() int64 {
	if !l.Paused {
		return 0
	}
	return l.added - l.addedAtStop
}

func (l *Pane) source(i int) *Entry {
	if l.Paused {
		return &l.frozen[i]
	}
	return l.Entries.At(i)
}

func (l *Pane) sourceLen() int {
	if l.Paused {
		return len(l.frozen)
	}
	return l.Entries.Len()
}

// Filtering reports whether a filter hides entries.
func (l *Pane) Filtering() bool { return l.Filter != "" || l.TypeIdx != 0 }

// visible returns the indexes of the entries that pass the filters; nil
// means all of them, so the common case allocates nothing.
func (l *Pane) visible() []int {
	if !l.Filtering() {
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

func (l *Pane) matches(e *Entry) bool {
	if _, keep := typeFilter(l.TypeIdx, e.Kind); !keep {
		return false
	}
	if l.Filter == "" {
		return true
	}
	return strings.Contains(strings.ToLower(e.Kind.String()+" "+e.Message()), l.Filter)
}

// Rows is how many entries pass the filters, with the visible indexes.
func (l *Pane) Rows() (int, []int) {
	idx := l.visible()
	if idx == nil {
		return l.sourceLen(), nil
	}
	return len(idx), idx
}

// row returns the entry shown as row i.
func (l *Pane) row(i int, idx []int) *Entry {
	if idx != nil {
		return l.source(idx[i])
	}
	return l.source(i)
}

// Selected is the entry under the cursor, if any.
func (l *Pane) Selected() (*Entry, bool) {
	n, idx := l.Rows()
	if n == 0 {
		return nil, false
	}
	return l.row(min(l.Scroll.Cursor, n-1), idx), true
}

// Title is the pane's name with its counters and filter state.
func (l *Pane) Title(st common.Styles) string {
	var parts []string
	if l.Filtering() {
		n, _ := l.Rows()
		parts = append(parts, format.Count(n)+" of "+format.Count(l.sourceLen())+" entries match")
	} else {
		parts = append(parts, format.Count(l.Entries.Len())+" entries")
	}
	if l.Paused {
		parts = append(parts, st.Badge.Render(" PAUSED ")+" "+st.Warn.Render("+"+format.Count(l.newWhilePaused())+" new"))
	}
	if l.Filter != "" {
		parts = append(parts, st.Accent.Render(`filter "`+l.Filter+`"`))
	}
	if l.TypeIdx != 0 {
		name, _ := typeFilter(l.TypeIdx, KindNote)
		parts = append(parts, st.Accent.Render("type "+name))
	}
	return strings.Join(parts, "  ")
}

// Lines renders h rows of the log in width cells.
func (l Pane) Lines(st common.Styles, width, h int, focused bool) []string {
	n, idx := l.Rows()
	l.Scroll.Clamp(n, h)
	if n == 0 {
		msg := "no events yet"
		if l.Filtering() {
			msg = "no entry matches the filter (esc clears it)"
		}
		return []string{st.Faint.Render(msg)}
	}
	out := make([]string, 0, h)
	for i := l.Scroll.Top; i < n && len(out) < h; i++ {
		e := l.row(i, idx)
		plain := stamp(e.At) + " " + fmt.Sprintf("%-8s", e.Kind) + " " + e.Message()
		if i == l.Scroll.Cursor {
			out = append(out, st.CursorRow(focused, common.Pad(plain, width)))
			continue
		}
		out = append(out, l.entryLine(st, e, width))
	}
	return out
}

// Tail renders the newest h entries, unfiltered and without a cursor, for
// the overview's glimpse of a resource: it reads h entries, whatever the log holds.
func (l *Pane) Tail(st common.Styles, width, h int) []string {
	n := l.Entries.Len()
	if n == 0 || h <= 0 {
		return []string{st.Faint.Render("no events yet")}
	}
	out := make([]string, 0, h)
	for i := max(n-h, 0); i < n; i++ {
		out = append(out, l.entryLine(st, l.Entries.At(i), width))
	}
	return out
}

// entryLine is one entry as the log shows it: time, kind, message.
func (l *Pane) entryLine(st common.Styles, e *Entry, width int) string {
	// A message may carry what a proxied client chose: no control character reaches the screen.
	return st.Faint.Render(stamp(e.At)) + " " + kindStyle(st, e.Kind).Render(fmt.Sprintf("%-8s", e.Kind)) + " " + common.Clip(format.PrintableString(e.Message()), width-18)
}

// stamp is an entry's time of day, dashes when it is not known.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "--:--:--"
	}
	return t.Format("15:04:05")
}

// kindStyle colors an event log entry by its kind.
func kindStyle(s common.Styles, k EntryKind) lipgloss.Style {
	switch k {
	case KindAdded, KindList:
		return s.Good
	case KindModified:
		return s.Accent
	case KindDeleted:
		return s.Warn
	case KindReplaced, KindRelist:
		return s.Bad
	case KindRequest:
		return s.Request
	case KindAudit:
		return s.Audit
	}
	return s.Label
}
