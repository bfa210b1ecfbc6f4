package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of the bundled traces' findings (testdata/traces/*.findings.json)")

// goldenResource is one resource's (or observed stream's) findings in a
// trace's golden file: what a replay must raise, not the words it uses.
type goldenResource struct {
	Resource string          `json:"resource"`
	Stream   int             `json:"stream,omitempty"`
	Findings []goldenFinding `json:"findings"`
}

type goldenFinding struct {
	ID       findings.ID       `json:"id"`
	Severity findings.Severity `json:"severity"`
	Count    int64             `json:"count"`
	// Objects names the objects of its evidence ("namespace/name what").
	Objects []string `json:"objects,omitempty"`
}

// TestEveryBundledTraceRaisesItsGoldenFindings replays each trace of
// testdata/traces with the command (replay --summary -o json, and explain
// -o json, which must agree) and compares each resource's findings (id,
// severity, count, objects) with the trace's golden file, NAME.findings.json. go test -run ThisTest -update rewrites
// them; a change is then read in the diff.
func TestEveryBundledTraceRaisesItsGoldenFindings(t *testing.T) {
	traces, err := filepath.Glob("../../testdata/traces/*.jsonl")
	if err != nil || len(traces) < 9 {
		t.Fatalf("found %d bundled traces (%v), want 9 or more", len(traces), err)
	}
	for _, path := range traces {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			code, out, errOut := run(t, "replay", path, "--speed", "0", "--no-tui", "--summary", "-o", "json")
			if code != ExitOK {
				t.Fatalf("replay: exit %d\n%s", code, errOut)
			}
			got := []goldenResource{}
			for _, s := range allSummaries(t, out) {
				id := 0
				if s.Stream != nil {
					id = s.Stream.ID
				}
				got = append(got, golden(s.Resource, id, s.Findings))
			}
			// explain -o json, the command for CI, says the same.
			code, out, errOut = run(t, "explain", path, "-o", "json")
			if code != ExitOK {
				t.Fatalf("explain: exit %d\n%s", code, errOut)
			}
			var explained struct {
				Resources []struct {
					Resource string `json:"resource"`
					Stream   *struct {
						ID int `json:"id"`
					} `json:"stream"`
					Findings []findings.Finding `json:"findings"`
				} `json:"resources"`
			}
			if err := json.Unmarshal([]byte(out), &explained); err != nil {
				t.Fatalf("explain -o json: %v\n%s", err, out)
			}
			fromExplain := []goldenResource{}
			for _, r := range explained.Resources {
				id := 0
				if r.Stream != nil {
					id = r.Stream.ID
				}
				fromExplain = append(fromExplain, golden(r.Resource, id, r.Findings))
			}
			if !reflect.DeepEqual(fromExplain, got) {
				t.Errorf("explain -o json says %+v, the replay's summary %+v", fromExplain, got)
			}
			b, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, '\n')
			golden := strings.TrimSuffix(path, ".jsonl") + ".findings.json"
			if *updateGolden {
				if err := os.WriteFile(golden, b, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
			}
			if !bytes.Equal(want, b) {
				t.Errorf("the replay of %s raises other findings than %s (go test -update rewrites it):\ngot\n%s\nwant\n%s", path, golden, b, want)
			}
		})
	}
}

// golden is one resource's findings as its golden file keeps them.
func golden(resource string, stream int, fs []findings.Finding) goldenResource {
	r := goldenResource{Resource: resource, Stream: stream, Findings: []goldenFinding{}}
	for _, f := range fs {
		g := goldenFinding{ID: f.ID, Severity: f.Severity, Count: f.Count}
		for _, o := range f.Evidence.Objects {
			g.Objects = append(g.Objects, o.String()+" "+o.What)
		}
		r.Findings = append(r.Findings, g)
	}
	return r
}
