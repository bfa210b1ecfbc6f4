package tui

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// pane is one of the switchable panes of the dashboard's lower half.
type pane int

const (
	paneLog pane = iota
	paneRequests
	paneDiff
	numPanes
)

// String is the pane's title.
func (p pane) String() string {
	switch p {
	case paneLog:
		return "Log"
	case paneRequests:
		return "Requests"
	case paneDiff:
		return "Relist diff"
	}
	return "?"
}

// requestRows are the finished requests, oldest first, then the one in flight.
func requestRows(s *reflector.Stats) []reflector.RequestInfo {
	rows := s.Requests
	if s.Current != nil {
		rows = append(rows[:len(rows):len(rows)], *s.Current)
	}
	return rows
}

// requestsPane is the request timeline: every recent LIST and WATCH with its
// exact options, how long it took, what it received and why it ended.
type requestsPane struct {
	scroll scroller
}

func endSeverity(end *reflector.RequestEnd) severity {
	switch {
	case end == nil:
		return sevGood
	case end.Reason == reflector.EndError || end.Reason == reflector.EndTimeout:
		return sevBad
	case end.Reason == reflector.EndCanceled:
		return sevWarn
	}
	// EndStopped, EndClosed: nothing went wrong.
	return sevNone
}

// requestLine is one row of the timeline, unstyled parts first.
func requestLine(r *reflector.RequestInfo, now time.Time) (head, end, opts string) {
	took := r.Duration
	if !r.Ended() && !r.Started.IsZero() {
		took = now.Sub(r.Started)
	}
	head = fmt.Sprintf("%5s %-5s %7s %13s ", "#"+strconv.FormatInt(r.ID, 10), r.Verb, format.Age(took), requestCount(r))
	return head, fmt.Sprintf("%-9s", r.End.Format(true)), r.Opts.Format(true)
}

func (p requestsPane) lines(st styles, rows []reflector.RequestInfo, now time.Time, width, h int, focused bool) []string {
	if len(rows) == 0 {
		return []string{st.faint.Render("no request yet")}
	}
	out := []string{st.label.Render(clip(fmt.Sprintf("%5s %-5s %7s %13s %-9s %s", "ID", "VERB", "TOOK", "RECEIVED", "END", "OPTIONS (as sent)"), width))}
	h--
	p.scroll.clamp(len(rows), h)
	for i := p.scroll.top; i < len(rows) && len(out) <= h; i++ {
		r := &rows[i]
		head, end, opts := requestLine(r, now)
		if i == p.scroll.cursor {
			out = append(out, cursorRow(st, focused, pad(head+end+" "+opts, width)))
			continue
		}
		out = append(out, clip(head+st.sev(endSeverity(r.End), end)+" "+st.label.Render(opts), width))
	}
	return out
}

// diffRow is one object a relist diff names.
type diffRow struct {
	what string
	sev  severity
	e    store.DiffEntry
}

// diffRows lists a diff's entries by category, in the diff's order.
func diffRows(d *store.RelistDiff) []diffRow {
	if d == nil {
		return nil
	}
	rows := make([]diffRow, 0, d.Missed())
	for _, e := range d.Deleted {
		rows = append(rows, diffRow{"missed delete", sevBad, e})
	}
	for _, e := range d.Recreated {
		rows = append(rows, diffRow{"recreated", sevBad, e})
	}
	for _, e := range d.Updated {
		rows = append(rows, diffRow{"missed update", sevWarn, e})
	}
	for _, e := range d.Added {
		rows = append(rows, diffRow{"missed add", sevWarn, e})
	}
	return rows
}

// text is the row's description after its category.
func (r diffRow) text() string {
	e := r.e
	switch r.what {
	case "missed delete":
		return fmt.Sprintf("%s  uid %s  rv %s", e.Ref, store.ShortUID(e.OldUID), orDash(e.OldResourceVersion))
	case "recreated":
		return fmt.Sprintf("%s  uid %s → %s  rv %s → %s", e.Ref, store.ShortUID(e.OldUID), store.ShortUID(e.NewUID), orDash(e.OldResourceVersion), orDash(e.NewResourceVersion))
	case "missed update":
		return fmt.Sprintf("%s  rv %s → %s", e.Ref, orDash(e.OldResourceVersion), orDash(e.NewResourceVersion))
	}
	return fmt.Sprintf("%s  uid %s  rv %s", e.Ref, store.ShortUID(e.NewUID), orDash(e.NewResourceVersion))
}

// diffPane shows the last relist's diff: what the watch had missed, by name.
type diffPane struct {
	diff   *store.RelistDiff
	rows   []diffRow // built once per diff
	seenAt time.Time // when the dashboard first saw this diff
	scroll scroller
}

// setDiff installs a new diff (a no-op for the one already shown).
func (p *diffPane) setDiff(d *store.RelistDiff, now time.Time) {
	if d == p.diff {
		return
	}
	p.diff, p.rows, p.seenAt = d, diffRows(d), now
	p.scroll = scroller{}
}

// selected is the diff entry under the cursor, if any.
func (p *diffPane) selected() (diffRow, bool) {
	if len(p.rows) == 0 {
		return diffRow{}, false
	}
	return p.rows[min(p.scroll.cursor, len(p.rows)-1)], true
}

func (p diffPane) lines(st styles, now time.Time, width, h int, focused bool) []string {
	d := p.diff
	if d == nil {
		return []string{st.faint.Render("no relist yet: the watch has not lost its history since the first list")}
	}
	head := "relist at rv " + orDash(d.ResourceVersion)
	if !p.seenAt.IsZero() {
		head += " (" + format.Age(now.Sub(p.seenAt)) + " ago)"
	}
	missed := st.good.Render("nothing missed")
	if d.Missed() > 0 {
		missed = st.bad.Render("missed " + format.Count(d.Missed()))
	}
	out := []string{
		clip(st.value.Render(head)+": "+format.Count(d.Before)+" → "+format.Count(d.After)+" objects", width),
		clip(missed+st.label.Render(" · "+missedBreakdown(d)), width),
	}
	h -= len(out)
	p.scroll.clamp(len(p.rows), h)
	for i := p.scroll.top; i < len(p.rows) && h > 0; i++ {
		r := p.rows[i]
		if i == p.scroll.cursor {
			out = append(out, cursorRow(st, focused, pad(fmt.Sprintf("%-13s ", r.what)+r.text(), width)))
		} else {
			out = append(out, clip(st.sev(r.sev, fmt.Sprintf("%-13s", r.what))+" "+r.text(), width))
		}
		h--
	}
	return out
}
