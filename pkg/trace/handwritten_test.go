package trace_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
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
	// The dashboard's badge counts none: there was nothing to compare.
	if n := rp.DifferencesSoFar(); n != 0 {
		t.Errorf("differences so far: got %d, want none for a trace without decisions", n)
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
	// Both were counted as they were compared, before the end.
	if n := rp.DifferencesSoFar(); n != 2 {
		t.Errorf("differences so far: got %d, want 2", n)
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

func TestATraceOfTwoResourcesReplaysEachThroughItsOwnReflector(t *testing.T) {
	rd, err := trace.Open("testdata/handwritten/two-resources.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rp := trace.NewReplay(rd, 0)
	if n := len(rp.Resources()); n != 2 {
		t.Fatalf("resources: got %d, want 2", n)
	}
	reflectors, stores := reflectorsFor(t, rp)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rp.Run(ctx, reflectors...); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if shown, total := rp.Differences(10); total != 0 {
		t.Errorf("differences: %v", shown)
	}
	if n := rp.RecordedDecisions(); n != 9 {
		t.Errorf("recorded decisions: got %d, want 9 (6 and 3)", n)
	}
	cm, dep := reflectors[0].Stats(), reflectors[1].Stats()
	if cm.Counters.Gone != 1 || cm.Counters.Relists != 1 || cm.ResourceVersion != "20" || stores[0].Len() != 1 {
		t.Errorf("configmaps: %d objects, cursor %s, counters %+v; want 1 object at 20 after a 410 and a relist", stores[0].Len(), cm.ResourceVersion, cm.Counters)
	}
	if dep.Counters.Gone != 0 || dep.Counters.Modified != 1 || dep.ResourceVersion != "12" || stores[1].Len() != 1 {
		t.Errorf("deployments: %d objects, cursor %s, counters %+v; want 1 object at 12, modified once", stores[1].Len(), dep.ResourceVersion, dep.Counters)
	}
}

// Two resources that both failed (403: the user may watch neither): the
// replay fails as the recording did, and its error names each resource, as
// the live run's did.
func TestAReplayOfSeveralResourcesNamesEachOneThatFailed(t *testing.T) {
	rp, _, err := replayEach(t, "testdata/failed/two-forbidden.jsonl")
	for _, want := range []string{
		`configmaps.v1: failed to perform initial object list (a streaming list, which is a watch): 403 Forbidden: configmaps is forbidden: User "alice"`,
		`secrets.v1: failed to perform initial object list (a streaming list, which is a watch): 403 Forbidden: secrets is forbidden: User "alice"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("replay: got %v, want it to say %s", err, want)
		}
	}
	if shown, total := rp.Differences(10); total != 0 {
		t.Errorf("differences: %v", shown)
	}
}

func TestAVersion2LineForAResourceTheHeaderDoesNotListIsAnError(t *testing.T) {
	in := `{"k":"header","v":2,"resources":[{"resource":{"version":"v1","resource":"configmaps"}}]}
{"k":"request","r":1,"at":0,"id":1,"verb":"list"}
`
	rd, err := trace.NewReader("t.jsonl", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Next(); err == nil || err.Error() != "t.jsonl:2: request line for resource 1, but the header lists 1" {
		t.Errorf("got %v", err)
	}
}

func TestATraceReplaysTheRecordedDeliveryLagNotOneFromItsObjects(t *testing.T) {
	// The third event has a creationTimestamp a year old but no recorded
	// lag (as in a trace written before lags were recorded): not counted.
	_, sum, err := replayFile(t, "testdata/handwritten/delivery.jsonl")
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	got := sum.Delivery.Lag
	if got.Under2 != 1 || got.To5 != 1 || got.To15 != 0 || got.To60 != 1 || got.Over60 != 0 {
		t.Errorf("lag buckets %+v, want one <2s, one 2-5s, one 15-60s", got)
	}
	if sum.Delivery.Probe != nil {
		t.Errorf("a trace without a probe has probe figures: %+v", sum.Delivery.Probe)
	}
}

// A run stopped between two requests (its list complete, its watch not yet
// sent) replays to the same requests: the replayed reflector stops where the
// recorded one did and sends no watch the recording never made.
func TestARunStoppedBetweenTwoRequestsReplaysWithoutAThirdRequest(t *testing.T) {
	rp, sum, err := replayFile(t, "testdata/handwritten/stopped-between-requests.jsonl")
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if shown, total := rp.Differences(10); total != 0 {
		t.Errorf("differences: %v", shown)
	}
	if c := sum.Counters; c.Watches != 0 || c.Lists != 1 || sum.Objects != 2 {
		t.Errorf("got %d objects, counters %+v; want 2 objects, 1 list, no watch", sum.Objects, c)
	}
}

// TestAHandWrittenTraceWithoutAStartTimeStillSyncs: a header without
// startedAt counts its times from the Unix epoch. From the zero time, the
// first list, made at once, ended at the zero time too, and the summary
// said the run never synced.
func TestAHandWrittenTraceWithoutAStartTimeStillSyncs(t *testing.T) {
	rd, err := trace.Open("testdata/handwritten/no-start.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rd.Header().StartedAt, time.Unix(0, 0).UTC(); !got.Equal(want) {
		t.Errorf("startedAt: got %v, want %v", got, want)
	}
	rd.Close()
	_, sum, err := replayFile(t, "testdata/handwritten/no-start.jsonl")
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if sum.SyncSeconds == nil {
		t.Fatal("the summary says the run never synced")
	}
	if *sum.SyncSeconds < 0 || *sum.SyncSeconds > 1 {
		t.Errorf("synced after %vs, want the first list's time, under a second", *sum.SyncSeconds)
	}
}

// A flowcontrol line's r is read as nothing (the reader lets any through):
// one with r past the resources goes to the first one's goroutine, as one
// with r 0 does; the replay indexed its resources with it and panicked.
func TestAFlowControlLineWithAnyRIsTheFirstResources(t *testing.T) {
	b, err := os.ReadFile("testdata/handwritten/two-resources.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := strings.Cut(string(b), "\n")
	rd, err := trace.NewReader("t.jsonl", strings.NewReader(header+"\n"+`{"k":"flowcontrol","r":5,"at":1,"flowSchemas":{"u":"n"}}`+"\n"+rest))
	if err != nil {
		t.Fatal(err)
	}
	rp := trace.NewReplay(rd, 0)
	var named []string
	rp.OnFlowControlNames(func(fs, _ map[string]string) { named = append(named, fs["u"]) })
	reflectors, _ := reflectorsFor(t, rp)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rp.Run(ctx, reflectors...); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if len(named) != 1 || named[0] != "n" {
		t.Errorf("names handed: %v, want n once", named)
	}
}
