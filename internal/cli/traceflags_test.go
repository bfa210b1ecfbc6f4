package cli

import (
	"os"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// The smallest --trace-max-size is refused with its minimum: --help and
// README say the minimum before the user meets the error.
func TestTheTraceMaxSizeMinimumIsInTheHelpAndREADME(t *testing.T) {
	if minTraceSegmentText() != "64Ki" {
		t.Fatalf("the minimum reads %q, want 64Ki (README says it)", minTraceSegmentText())
	}
	root := NewCommand(genericiooptions.NewTestIOStreamsDiscard(), "test")
	for _, path := range [][]string{{}, {"monitor"}} {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		f := cmd.Flags().Lookup("trace-max-size")
		if f == nil {
			t.Fatalf("%s: no --trace-max-size", cmd.CommandPath())
		}
		if !strings.Contains(f.Usage, "at least "+minTraceSegmentText()) {
			t.Errorf("%s --trace-max-size's help does not say its minimum: %q", cmd.CommandPath(), f.Usage)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, bullet, ok := strings.Cut(string(readme), "- A trace bounded on disk: `--trace-max-size")
	if !ok {
		t.Fatal("README has no bullet on --trace-max-size")
	}
	bullet, _, _ = strings.Cut(bullet, "\n- ")
	if !strings.Contains(bullet, "at least `"+minTraceSegmentText()+"`") {
		t.Errorf("README's --trace-max-size bullet does not say its minimum:\n%s", bullet)
	}
}
