package program

import (
	"sync/atomic"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// DefaultNoteBuffer is a NoteBuffer capacity that absorbs a burst of watch
// events, or a relist storm, between two deliveries to the screen.
const DefaultNoteBuffer = 16384

// NoteBuffer is the bounded hand-over of reflector notes to the dashboard.
// The reflector calls Push synchronously (as Config.OnNote); Push never
// blocks: when the buffer is full the note is dropped and counted, so the
// reflector's speed never depends on the terminal's. The dashboard drains it.
type NoteBuffer struct {
	ch      chan reflector.Note
	dropped atomic.Int64
}

// NewNoteBuffer returns a buffer for capacity notes (values below 1 mean 1).
func NewNoteBuffer(capacity int) *NoteBuffer {
	if capacity < 1 {
		capacity = 1
	}
	return &NoteBuffer{ch: make(chan reflector.Note, capacity)}
}

// Push hands a note over without blocking; a note that does not fit is
// dropped and counted in Dropped, and the dashboard's log says where (the
// notes' sequence numbers have a gap there): notes are skipped, never
// reordered. Its signature fits reflector.Config.OnNote.
func (b *NoteBuffer) Push(n reflector.Note) {
	if n.Kind.Fact() {
		return // the log shows none; the gauges read Stats
	}
	select {
	case b.ch <- n:
	default:
		b.dropped.Add(1)
	}
}

// Dropped returns how many notes Push dropped because the buffer was full.
func (b *NoteBuffer) Dropped() int64 { return b.dropped.Load() }

// Len returns how many notes wait to be shown.
func (b *NoteBuffer) Len() int { return len(b.ch) }

// C is the channel of the notes pushed: the dashboard's reader drains it.
func (b *NoteBuffer) C() <-chan reflector.Note { return b.ch }

// Cap returns the buffer's capacity.
func (b *NoteBuffer) Cap() int { return cap(b.ch) }
