package logpane

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
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

// A message carries what a proxied client chose (a note's detail naming
// its selector): its control characters are escaped on the screen.
func TestALogLineEscapesTheControlCharactersAClientSent(t *testing.T) {
	p := NewPane(10)
	p.Add(Entry{At: time.Now(), Kind: KindNote, Text: "stream -l a=\x1b]0;PWNED\a\x1b[31mRED"})
	line := strings.Join(p.Tail(common.NewStyles(), 200, 1), "")
	if strings.Contains(line, "]0;PWNED\a") || strings.Contains(line, "\x1b[31mRED") {
		t.Errorf("the log line runs the client's control characters: %q", line)
	}
}
