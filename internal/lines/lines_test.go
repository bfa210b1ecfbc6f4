package lines

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// Text lines of several resources pad the resource column to the longest
// name, so the sequence numbers and what follows line up; JSON lines carry
// the name as it is.
func TestTheResourceColumnLinesUp(t *testing.T) {
	names := []string{"configmaps.v1", "widgets.v1.example.com"}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	note := func(seq uint64) reflector.Note {
		return reflector.Note{Seq: seq, At: at, Kind: reflector.NoteDecision,
			Decision: &reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialList}}
	}
	for _, asJSON := range []bool{false, true} {
		var buf bytes.Buffer
		out := NewOutput(&buf, asJSON, names...)
		out.For(names[0])(note(1))
		out.For(names[1])(note(1))
		if dropped := out.Close(); dropped != 0 {
			t.Fatalf("dropped %d lines", dropped)
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("got %d lines, want 2:\n%s", len(lines), buf.String())
		}
		if asJSON {
			if !strings.Contains(lines[0], `"resource":"configmaps.v1"`) {
				t.Errorf("JSON line: got %s, want the name unpadded", lines[0])
			}
			continue
		}
		for i, l := range lines {
			if !strings.Contains(l, names[i]) {
				t.Errorf("line %d lacks %s: %q", i, names[i], l)
			}
		}
		if a, b := strings.Index(lines[0], " 1 "), strings.Index(lines[1], " 1 "); a != b || a < 0 {
			t.Errorf("the sequence numbers are at columns %d and %d:\n%s", a, b, buf.String())
		}
	}
}
