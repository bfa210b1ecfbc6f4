package program

import (
	"sync"
	"sync/atomic"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// DefaultNoteBuffer is a NoteBuffer capacity that absorbs a burst of watch
// events, or a relist storm, between two deliveries to the screen.
const DefaultNoteBuffer = 16384

// NoteBuffer is the bounded hand-over of reflector notes to the dashboard.
// The reflector calls Push synchronously (as Config.OnNote); Push never
// blocks: when the buffer is full the note is dropped and counted, so the
// reflector's speed never depends on the terminal's. The dashboard drains it
// (Ready, Take). It holds only the notes waiting, not its capacity: a
// proxy makes one for every client's stream, most of them short-lived.
type NoteBuffer struct {
	mu      sync.Mutex
	waiting []reflector.Note
	max     int
	ready   chan struct{} // a token while notes wait
	dropped atomic.Int64
}

// NewNoteBuffer returns a buffer for capacity notes (values below 1 mean 1).
func NewNoteBuffer(capacity int) *NoteBuffer {
	return &NoteBuffer{max: max(capacity, 1), ready: make(chan struct{}, 1)}
}

// Push hands a note over without blocking; a note that does not fit is
// dropped and counted in Dropped, and the dashboard's log says where (the
// notes' sequence numbers have a gap there): notes are skipped, never
// reordered. Its signature fits reflector.Config.OnNote.
func (b *NoteBuffer) Push(n reflector.Note) {
	if n.Kind.Fact() {
		return // the log shows none; the gauges read Stats
	}
	b.mu.Lock()
	if len(b.waiting) >= b.max {
		b.mu.Unlock()
		b.dropped.Add(1)
		return
	}
	b.waiting = append(b.waiting, n)
	b.mu.Unlock()
	b.signal()
}

// signal leaves a token in ready, unless one is there.
func (b *NoteBuffer) signal() {
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

// Take takes up to limit of the notes waiting, oldest first.
func (b *NoteBuffer) Take(limit int) []reflector.Note {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiting) <= limit {
		out := b.waiting
		b.waiting = nil // its memory goes with the notes taken
		return out
	}
	out := append([]reflector.Note(nil), b.waiting[:limit]...)
	b.waiting = append(b.waiting[:0:0], b.waiting[limit:]...)
	b.signal() // more wait
	return out
}

// Dropped returns how many notes Push dropped because the buffer was full.
func (b *NoteBuffer) Dropped() int64 { return b.dropped.Load() }

// Len returns how many notes wait to be shown.
func (b *NoteBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiting)
}

// Ready has a token while notes wait (and may have one spuriously): the
// dashboard's reader waits on it, then Takes.
func (b *NoteBuffer) Ready() <-chan struct{} { return b.ready }

// Cap returns the buffer's capacity.
func (b *NoteBuffer) Cap() int { return b.max }
