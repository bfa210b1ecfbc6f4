package logpane

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// TestAClientLeftNoteHasNoArrowToTheSameState: a stream whose client left
// keeps its state, so its line says what it was and draws no "→ Watching",
// which read as a change; a decision that moves the state keeps its arrow.
func TestAClientLeftNoteHasNoArrowToTheSameState(t *testing.T) {
	left := FromNote(reflector.Note{Kind: reflector.NoteDecision, State: reflector.StateWatching,
		Decision: &reflector.Decision{Reason: reflector.ReasonClientLeft, State: reflector.StateWatching, Wait: 2 * time.Second, Cause: "Watching"}})
	if got := left.Message(); strings.Contains(got, "→") || !strings.Contains(got, "it was Watching") {
		t.Errorf("client left: %q, want what it was and no arrow", got)
	}
	listed := FromNote(reflector.Note{Kind: reflector.NoteDecision, State: reflector.StateWatching,
		Decision: &reflector.Decision{Reason: reflector.ReasonListComplete, State: reflector.StateWatching, Objects: 3, ResourceVersion: "7"}})
	if got := listed.Message(); !strings.HasSuffix(got, "→ Watching") {
		t.Errorf("list complete: %q, want it to end in → Watching", got)
	}
}
