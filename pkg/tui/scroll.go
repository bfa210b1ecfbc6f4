package tui

// ring is a fixed-capacity FIFO that overwrites its oldest element.
type ring[T any] struct {
	buf      []T
	start, n int
}

func newRing[T any](capacity int) ring[T] {
	return ring[T]{buf: make([]T, max(capacity, 1))}
}

// push appends v, dropping the oldest element when full.
func (r *ring[T]) push(v T) {
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = v
		r.n++
		return
	}
	r.buf[r.start] = v
	r.start = (r.start + 1) % len(r.buf)
}

// len is how many elements the ring holds.
func (r *ring[T]) len() int { return r.n }

// at returns element i, 0 being the oldest.
func (r *ring[T]) at(i int) *T { return &r.buf[(r.start+i)%len(r.buf)] }

// scroller is a cursor over rows shown a window at a time. While follow is
// set the cursor sticks to the newest (last) row; moving up stops following,
// reaching the last row again resumes it.
type scroller struct {
	cursor, top int
	follow      bool
}

func newScroller() scroller { return scroller{follow: true} }

// move moves the cursor by d rows among n.
func (s *scroller) move(d, n int) {
	if n == 0 {
		return
	}
	s.cursor = min(max(s.cursor+d, 0), n-1)
	s.follow = s.cursor == n-1
}

// home goes to the oldest row.
func (s *scroller) home(n int) {
	s.cursor, s.top = 0, 0
	s.follow = n <= 1
}

// end goes to the newest row and follows.
func (s *scroller) end(n int) {
	s.cursor = max(n-1, 0)
	s.follow = true
}

// clamp keeps the cursor among n rows and inside a window of h rows.
func (s *scroller) clamp(n, h int) {
	if n == 0 {
		s.cursor, s.top = 0, 0
		return
	}
	if s.follow {
		s.cursor = n - 1
	}
	s.cursor = min(max(s.cursor, 0), n-1)
	h = max(h, 1)
	if s.cursor < s.top {
		s.top = s.cursor
	}
	if s.cursor >= s.top+h {
		s.top = s.cursor - h + 1
	}
	s.top = min(max(s.top, 0), max(n-h, 0))
}
