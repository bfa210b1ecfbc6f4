package common

import (
	"fmt"

	"charm.land/bubbles/v2/key"
)

// ScrollText moves offset, the first line shown of a text that shows a
// window at a time, on a key of ListKeys: by a line, by page lines, to the
// top or to the bottom, never past last, the offset that shows the text's
// end (called only for a scroll key). It says whether k was a scroll key.
// The detail, the churn pane and the help screen share it, so that a key
// at their end is never a dead press: last is where their windows stop.
func ScrollText(offset *int, k fmt.Stringer, page int, last func() int) (ok bool) {
	lk, by := NewListKeys(), 0
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
		return false
	}
	*offset = min(max(*offset+by, 0), max(last(), 0))
	return true
}

// Scroller is a cursor over rows shown a window at a time. While Follow is
// set the cursor sticks to the newest (last) row; moving up stops following,
// reaching the last row again resumes it.
type Scroller struct {
	Cursor, Top int
	Follow      bool
}

// NewScroller is a scroller that follows the newest row.
func NewScroller() Scroller { return Scroller{Follow: true} }

// Move moves the cursor by d rows among n.
func (s *Scroller) Move(d, n int) {
	if n == 0 {
		return
	}
	s.Cursor = min(max(s.Cursor+d, 0), n-1)
	s.Follow = s.Cursor == n-1
}

// Home goes to the oldest row.
func (s *Scroller) Home(n int) {
	s.Cursor, s.Top = 0, 0
	s.Follow = n <= 1
}

// End goes to the newest row and follows.
func (s *Scroller) End(n int) {
	s.Cursor = max(n-1, 0)
	s.Follow = true
}

// Clamp keeps the cursor among n rows and inside a window of h rows.
func (s *Scroller) Clamp(n, h int) {
	if n == 0 {
		s.Cursor, s.Top = 0, 0
		return
	}
	if s.Follow {
		s.Cursor = n - 1
	}
	s.Cursor = min(max(s.Cursor, 0), n-1)
	h = max(h, 1)
	if s.Cursor < s.Top {
		s.Top = s.Cursor
	}
	if s.Cursor >= s.Top+h {
		s.Top = s.Cursor - h + 1
	}
	s.Top = min(max(s.Top, 0), max(n-h, 0))
}
