package common

// Ring is a bounded FIFO that overwrites its oldest element once full. It
// grows to its capacity as elements come: a proxy keeps a log for every
// client's stream, most of them a few lines long.
type Ring[T any] struct {
	buf   []T
	size  int
	start int // the oldest, once full
}

// NewRing is an empty ring that holds capacity elements (at least one).
func NewRing[T any](capacity int) Ring[T] {
	return Ring[T]{size: max(capacity, 1)}
}

// Push appends v, dropping the oldest element when full.
func (r *Ring[T]) Push(v T) {
	if len(r.buf) < r.size {
		if len(r.buf) == cap(r.buf) {
			// Doubling, never past size (append's growth would be).
			grown := make([]T, len(r.buf), min(max(2*len(r.buf), 4), r.size))
			copy(grown, r.buf)
			r.buf = grown
		}
		r.buf = append(r.buf, v)
		return
	}
	r.buf[r.start] = v
	r.start = (r.start + 1) % r.size
}

// Len is how many elements the ring holds.
func (r *Ring[T]) Len() int { return len(r.buf) }

// At returns element i, 0 being the oldest.
func (r *Ring[T]) At(i int) *T { return &r.buf[(r.start+i)%len(r.buf)] }

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
