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
	for _, want := range []string{"a", "b"} {
		if got := (<-b.C()).Decision.Cause; got != want {
			t.Errorf("kept note %q, want %q", got, want)
		}
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
	for _, want := range []uint64{1, 2} {
		if got := (<-b.C()).Seq; got != want {
			t.Errorf("kept note %d, want %d", got, want)
		}
	}
}

func TestNoteBufferCapacityBelowOneMeansOne(t *testing.T) {
	if got := NewNoteBuffer(0).Cap(); got != 1 {
		t.Errorf("Cap() = %d, want 1", got)
	}
}
