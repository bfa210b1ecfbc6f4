// Package panes is the dashboard's lower half besides the log: which pane
// is which, the request timeline (every recent LIST and WATCH with its
// options, what it received and why it ended) and the last relist's diff
// (what the watch had missed, by name).
package panes

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// Pane is one of the switchable panes of the dashboard's lower half.
type Pane int

// The panes, in the order tab cycles through them; Num counts them.
const (
	Log Pane = iota
	Requests
	Diff
	Num
)

// String is the pane's title.
func (p Pane) String() string {
	switch p {
	case Log:
		return "Log"
	case Requests:
		return "Requests"
	case Diff:
		return "Relist diff"
	}
	return "?"
}

// RequestRows are the finished requests, oldest first, then the one in flight.
func RequestRows(s *reflector.Stats) []reflector.RequestInfo {
	rows := s.Requests
	if s.Current != nil {
		rows = append(rows[:len(rows):len(rows)], *s.Current)
	}
	return rows
}

// RequestsPane is the request timeline: every recent LIST and WATCH with its
// exact options, how long it took, what it received and why it ended.
type RequestsPane struct {
	Scroll common.Scroller
}

func endSeverity(end *reflector.RequestEnd) common.Severity {
	switch {
	case end == nil:
		return common.SevGood
	case end.Reason == reflector.EndError || end.Reason == reflector.EndTimeout:
		return common.SevBad
	case end.Reason == reflector.EndCanceled:
		return common.SevWarn
	}
	// EndStopped, EndClosed: nothing went wrong.
	return common.SevNone
}

// requestLine is one row of the timeline, unstyled parts first.
func requestLine(r *reflector.RequestInfo, now time.Time) (head, end, opts string) {
	took := r.Duration
	if !r.Ended() && !r.Started.IsZero() {
		took = now.Sub(r.Started)
	}
	head = fmt.Sprintf("%5s %-5s %7s %13s ", "#"+strconv.FormatInt(r.ID, 10), r.Verb, format.Age(took), common.RequestCount(r))
	return head, fmt.Sprintf("%-9s", r.End.Format(true)), r.Opts.Format(true)
}

// Lines renders the timeline of rows in h lines of width cells: a head,
// then the rows around the cursor, highlighted where the pane is focused.
func (p RequestsPane) Lines(st common.Styles, rows []reflector.RequestInfo, now time.Time, width, h int, focused bool) []string {
	if len(rows) == 0 {
		return []string{st.Faint.Render("no request yet")}
	}
	out := []string{st.Label.Render(common.Clip(fmt.Sprintf("%5s %-5s %7s %13s %-9s %s", "ID", "VERB", "TOOK", "RECEIVED", "END", "OPTIONS (as sent)"), width))}
	h--
	p.Scroll.Clamp(len(rows), h)
	for i := p.Scroll.Top; i < len(rows) && len(out) <= h; i++ {
		r := &rows[i]
		head, end, opts := requestLine(r, now)
		if i == p.Scroll.Cursor {
			out = append(out, st.CursorRow(focused, common.Pad(head+end+" "+opts, width)))
			continue
		}
		out = append(out, common.Clip(head+st.Sev(endSeverity(r.End), end)+" "+st.Label.Render(opts), width))
	}
	return out
}

// DiffPane shows the last relist's diff: what the watch had missed, by name.
type DiffPane struct {
	Diff   *store.RelistDiff // the diff shown (nil: none yet)
	Rows   []common.DiffRow  // built once per diff
	seenAt time.Time         // when its relist completed (zero: not known)
	Scroll common.Scroller
}

// SetDiff installs a new diff (a no-op for the one already shown), whose
// relist completed at.
func (p *DiffPane) SetDiff(d *store.RelistDiff, at time.Time) {
	if d == p.Diff {
		return
	}
	p.Diff, p.Rows, p.seenAt = d, common.DiffRows(d), at
	p.Scroll = common.Scroller{}
}

// Selected is the diff entry under the cursor, if any.
func (p *DiffPane) Selected() (common.DiffRow, bool) {
	if len(p.Rows) == 0 {
		return common.DiffRow{}, false
	}
	return p.Rows[min(p.Scroll.Cursor, len(p.Rows)-1)], true
}

// Lines renders the diff in h lines of width cells, at now.
func (p DiffPane) Lines(st common.Styles, now time.Time, width, h int, focused bool) []string {
	d := p.Diff
	if d == nil {
		return []string{st.Faint.Render("no relist yet: the watch has not lost its history since the first list")}
	}
	head := "relist at rv " + common.OrDash(d.ResourceVersion)
	if !p.seenAt.IsZero() {
		head += " (" + format.Age(now.Sub(p.seenAt)) + " ago)"
	}
	missed := st.Good.Render("nothing missed")
	if d.Missed() > 0 {
		missed = st.Bad.Render("missed " + format.Count(d.Missed()))
	}
	out := []string{
		common.Clip(st.Value.Render(head)+": "+format.Count(d.Before)+" → "+format.Count(d.After)+" objects", width),
		common.Clip(missed+st.Label.Render(" · "+common.MissedBreakdown(d)), width),
	}
	h -= len(out)
	p.Scroll.Clamp(len(p.Rows), h)
	for i := p.Scroll.Top; i < len(p.Rows) && h > 0; i++ {
		r := p.Rows[i]
		if i == p.Scroll.Cursor {
			out = append(out, st.CursorRow(focused, common.Pad(fmt.Sprintf("%-13s ", r.What)+r.Text(), width)))
		} else {
			out = append(out, common.Clip(st.Sev(r.Sev, fmt.Sprintf("%-13s", r.What))+" "+r.Text(), width))
		}
		h--
	}
	return out
}
