package trace_test

import (
	"strings"
	"testing"
)

// Traces written by hand from docs/trace-format.md replay like recorded ones.

func TestAHandWrittenTraceWithoutDecisionsReplaysWithNothingToCompare(t *testing.T) {
	rp, sum, err := replayFile(t, "testdata/handwritten/no-notes.jsonl")
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if n := rp.RecordedDecisions(); n != 0 {
		t.Errorf("recorded decisions: got %d, want 0", n)
	}
	if _, total := rp.Differences(10); total == 0 {
		t.Error("differences: got none, want the replayed decisions counted as unmatched (the CLI says there was nothing to compare)")
	}
	c := sum.Counters
	if sum.Objects != 2 || c.Gone != 1 || c.Relists != 1 || c.Bookmarks != 1 || sum.ResourceVersion != "25" {
		t.Errorf("got %d objects at %s, counters %+v; want 2 objects at 25, 1 gone, 1 relist, 1 bookmark", sum.Objects, sum.ResourceVersion, c)
	}
}

func TestDecisionsAreComparedByTheirFieldsNotTheirSentences(t *testing.T) {
	rp, _, err := replayFile(t, "testdata/handwritten/other-sentences.jsonl")
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if n := rp.RecordedDecisions(); n != 7 {
		t.Errorf("recorded decisions: got %d, want 7", n)
	}
	if shown, total := rp.Differences(10); total != 0 {
		t.Errorf("differences: got %d %v, want none: the fields agree, only the sentences differ", total, shown)
	}
}

func TestDecisionsWithOtherFieldsAreDifferences(t *testing.T) {
	rp, _, err := replayFile(t, "testdata/handwritten/other-fields.jsonl")
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	shown, total := rp.Differences(10)
	if total != 2 {
		t.Fatalf("differences: got %d %v, want 2", total, shown)
	}
	for i, want := range []string{
		"recorded list-complete → Watching (resourceVersion 10, 3 objects), replayed list-complete → Watching (resourceVersion 10, 2 objects)",
		"recorded gone → Relisting (resourceVersion 11, code 410), replayed gone → Relisting (resourceVersion 12, code 410)",
	} {
		if !strings.Contains(shown[i], want) {
			t.Errorf("difference %d: got %q, want it to say %q", i+1, shown[i], want)
		}
	}
}

func TestATraceFromANewerWriterReplaysWithWarningsForWhatItSkips(t *testing.T) {
	rp, sum, err := replayFile(t, "testdata/handwritten/newer-writer.jsonl")
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if shown, total := rp.Differences(10); total != 0 {
		t.Errorf("differences: %v", shown)
	}
	if w := rp.Warnings(); len(w) != 1 || !strings.Contains(w[0], `unknown kind "sample"`) {
		t.Errorf("warnings: got %v, want one about the unknown line kind", w)
	}
	if sum.Objects != 2 {
		t.Errorf("objects: got %d, want 2", sum.Objects)
	}
}
