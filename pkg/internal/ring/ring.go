// Package ring is a bounded FIFO that overwrites its oldest element once
// full. It grows to its size as elements come, so a short-lived stream (one
// kubectl get through the proxy) holds only what it saw: the ledger's
// request history and apply latencies, and the dashboard's event log.
package ring

// Ring holds the last size elements pushed. The zero Ring holds none; make
// one with New.
type Ring[T any] struct {
	buf   []T
	size  int
	start int // the oldest, once full
}

// New is an empty ring of size elements (at least one).
func New[T any](size int) Ring[T] { return Ring[T]{size: max(size, 1)} }

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

// Items is a copy of the elements, oldest first (nil for none).
func (r *Ring[T]) Items() []T {
	if len(r.buf) == 0 {
		return nil
	}
	out := make([]T, 0, len(r.buf))
	out = append(out, r.buf[r.start:]...)
	return append(out, r.buf[:r.start]...)
}
