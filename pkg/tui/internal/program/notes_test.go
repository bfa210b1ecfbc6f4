package program

import (
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

func TestFullNoteBufferDropsAndCountsInsteadOfBlocking(t *testing.T) {
	b := NewNoteBuffer(2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 5 {
			b.Push(reflector.Note{Kind: reflector.NoteDecision, Decision: &reflector.Decision{Reason: reflector.ReasonBackoff, Cause: string(rune('a' + i))}})
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Push blocked on a full buffer; it must drop instead")
	}
	if got, want := b.Dropped(), int64(3); got != want {
		t.Errorf("Dropped() = %d, want %d", got, want)
	}
	if got, want := b.Len(), 2; got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
	// The notes that fit are the first ones, in order.
	<-b.Ready()
	kept := b.Take(maxTake)
	if len(kept) != 2 || kept[0].Decision.Cause != "a" || kept[1].Decision.Cause != "b" {
		t.Errorf("kept %d notes %v, want a and b", len(kept), kept)
	}
}

func TestNoteBufferKeepsAppliedNotesInOrderWithDecisions(t *testing.T) {
	b := NewNoteBuffer(2)
	b.Push(reflector.Note{Seq: 1, Kind: reflector.NoteApplied})
	b.Push(reflector.Note{Seq: 2, Kind: reflector.NoteDecision, Decision: &reflector.Decision{Reason: reflector.ReasonGone}})
	b.Push(reflector.Note{Seq: 3, Kind: reflector.NoteApplied})
	if b.Len() != 2 || b.Dropped() != 1 {
		t.Fatalf("Len() = %d, Dropped() = %d; want the first two kept and the third dropped", b.Len(), b.Dropped())
	}
	if kept := b.Take(maxTake); len(kept) != 2 || kept[0].Seq != 1 || kept[1].Seq != 2 {
		t.Errorf("kept %v, want notes 1 and 2", kept)
	}
}

const maxTake = 100

// A buffer holds only the notes that wait, whatever its capacity: Take
// leaves it empty, takes at most its limit, and says when more wait.
func TestNoteBufferHoldsOnlyWhatWaits(t *testing.T) {
	b := NewNoteBuffer(DefaultNoteBuffer)
	if b.Len() != 0 || cap(b.waiting) != 0 {
		t.Fatalf("a new buffer holds room for %d notes", cap(b.waiting))
	}
	for i := range 5 {
		b.Push(reflector.Note{Seq: uint64(i + 1), Kind: reflector.NoteApplied})
	}
	<-b.Ready()
	if got := b.Take(3); len(got) != 3 || got[0].Seq != 1 || got[2].Seq != 3 {
		t.Fatalf("Take(3) = %v, want notes 1 to 3", got)
	}
	select {
	case <-b.Ready():
	default:
		t.Fatal("two notes wait, and Ready says nothing")
	}
	if got := b.Take(3); len(got) != 2 || got[0].Seq != 4 || b.Len() != 0 || b.waiting != nil {
		t.Errorf("Take(3) = %v, Len %d; want notes 4 and 5, and nothing held", got, b.Len())
	}
}

func TestNoteBufferCapacityBelowOneMeansOne(t *testing.T) {
	if got := NewNoteBuffer(0).Cap(); got != 1 {
		t.Errorf("Cap() = %d, want 1", got)
	}
}
