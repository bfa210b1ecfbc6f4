package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A trace replays to the same summaries, lines and findings every time:
// each resource's reflector reads its own resource's clock, never the time
// the other resources' lines moved the replay to on their goroutines. (The
// resources' lines interleave as their goroutines run: each resource's own
// are compared.)
func TestEveryBundledTraceReplaysTheSameEveryTime(t *testing.T) {
	traces, err := filepath.Glob("../../testdata/traces/*.jsonl")
	if err != nil || len(traces) == 0 {
		t.Fatalf("no bundled traces: %v", err)
	}
	for _, path := range traces {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			for _, args := range [][]string{
				{"replay", path, "--speed", "0", "--no-tui", "--summary", "-o", "json"},
				{"explain", path, "-o", "json"},
			} {
				var first string
				for i := range 5 {
					code, out, stderr := run(t, args...)
					if code != ExitOK {
						t.Fatalf("%v: exit %d: %s", args, code, stderr)
					}
					out = byResource(t, out)
					if i == 0 {
						first = out
					} else if out != first {
						t.Fatalf("%v: run %d differs from the first:\n%s\nfirst:\n%s", args, i+1, out, first)
					}
				}
			}
		})
	}
}

// byResource groups JSON lines by their resource, in order, each resource's
// after the other's; other lines (the summary, explain's JSON) stay last.
func byResource(t *testing.T, out string) string {
	t.Helper()
	groups := map[string][]string{}
	var order []string
	var rest []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var x struct {
			Seq      *uint64 `json:"seq"`
			Resource string  `json:"resource"`
		}
		if json.Unmarshal([]byte(l), &x) != nil || x.Seq == nil {
			rest = append(rest, l)
			continue
		}
		if _, ok := groups[x.Resource]; !ok {
			order = append(order, x.Resource)
		}
		groups[x.Resource] = append(groups[x.Resource], l)
	}
	slices.Sort(order) // which resource's line came first is the scheduler's
	var b strings.Builder
	for _, r := range order {
		b.WriteString(strings.Join(groups[r], "\n") + "\n")
	}
	b.WriteString(strings.Join(rest, "\n"))
	return b.String()
}
