package tui

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/logpane"
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
	scroll common.Scroller
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

func (p requestsPane) lines(st common.Styles, rows []reflector.RequestInfo, now time.Time, width, h int, focused bool) []string {
	if len(rows) == 0 {
		return []string{st.Faint.Render("no request yet")}
	}
	out := []string{st.Label.Render(common.Clip(fmt.Sprintf("%5s %-5s %7s %13s %-9s %s", "ID", "VERB", "TOOK", "RECEIVED", "END", "OPTIONS (as sent)"), width))}
	h--
	p.scroll.Clamp(len(rows), h)
	for i := p.scroll.Top; i < len(rows) && len(out) <= h; i++ {
		r := &rows[i]
		head, end, opts := requestLine(r, now)
		if i == p.scroll.Cursor {
			out = append(out, logpane.CursorRow(st, focused, common.Pad(head+end+" "+opts, width)))
			continue
		}
		out = append(out, common.Clip(head+st.Sev(endSeverity(r.End), end)+" "+st.Label.Render(opts), width))
	}
	return out
}

// diffPane shows the last relist's diff: what the watch had missed, by name.
type diffPane struct {
	diff   *store.RelistDiff
	rows   []common.DiffRow // built once per diff
	seenAt time.Time        // when the dashboard first saw this diff
	scroll common.Scroller
}

// setDiff installs a new diff (a no-op for the one already shown).
func (p *diffPane) setDiff(d *store.RelistDiff, now time.Time) {
	if d == p.diff {
		return
	}
	p.diff, p.rows, p.seenAt = d, common.DiffRows(d), now
	p.scroll = common.Scroller{}
}

// selected is the diff entry under the cursor, if any.
func (p *diffPane) selected() (common.DiffRow, bool) {
	if len(p.rows) == 0 {
		return common.DiffRow{}, false
	}
	return p.rows[min(p.scroll.Cursor, len(p.rows)-1)], true
}

func (p diffPane) lines(st common.Styles, now time.Time, width, h int, focused bool) []string {
	d := p.diff
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
	p.scroll.Clamp(len(p.rows), h)
	for i := p.scroll.Top; i < len(p.rows) && h > 0; i++ {
		r := p.rows[i]
		if i == p.scroll.Cursor {
			out = append(out, logpane.CursorRow(st, focused, common.Pad(fmt.Sprintf("%-13s ", r.What)+r.Text(), width)))
		} else {
			out = append(out, common.Clip(st.Sev(r.Sev, fmt.Sprintf("%-13s", r.What))+" "+r.Text(), width))
		}
		h--
	}
	return out
}
