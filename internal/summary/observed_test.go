package summary

import (
	"strings"
	"testing"
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
