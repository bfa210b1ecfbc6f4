package summary

import (
	"strings"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

// A proxy's summary has "faults" when none acted too: README's CI check
// (jq '.faults[]') reads an empty list, not null.
func TestAnObservedSummaryHasFaultsWhenNoneActed(t *testing.T) {
	var b strings.Builder
	if err := WriteObservedJSON(&b, []Summary{{Resource: "configmaps.v1"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"faults":[]`) {
		t.Errorf("got %s, want \"faults\":[]", b.String())
	}
}

// A live run and its replay read durations on clocks milliseconds apart:
// the titles and facts that give them are dropped for the comparison too
// (a reviewer found them left in, one comparison in twenty to differ).
func TestWithoutClockReadingsDropsTheDurationsOfTitlesAndFacts(t *testing.T) {
	s := Summary{Findings: []findings.Finding{{ID: findings.LargeInitialList, Title: "the first list took 31.2s",
		Evidence: findings.Evidence{Facts: map[string]string{"objects": "50000", "seconds": "31.2"}}}}}
	f := s.WithoutClockReadings().Findings[0]
	if f.Title != "" || f.Evidence.Facts["seconds"] != "" || f.Evidence.Facts["objects"] != "50000" {
		t.Errorf("got %+v, want the title and seconds dropped, the objects kept", f)
	}
	if s.Findings[0].Evidence.Facts["seconds"] != "31.2" {
		t.Error("the summary compared was changed")
	}
}

// How long before the end a stream's client left is read on the run's
// clock: dropped for the comparison, the state it left its stream in kept,
// the summary compared left as it was.
func TestWithoutClockReadingsDropsWhenAClientLeft(t *testing.T) {
	s := Summary{Stream: &StreamSummary{ID: 1, ClientLeft: &ClientLeftSummary{AgeSeconds: 4.2, State: "Watching"}}}
	got := s.WithoutClockReadings().Stream.ClientLeft
	if got.AgeSeconds != 0 || got.State != "Watching" {
		t.Errorf("got %+v, want the age dropped, the state kept", *got)
	}
	if s.Stream.ClientLeft.AgeSeconds != 4.2 {
		t.Error("the summary compared was changed")
	}
}
