package cli

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/joshdk/go-junit"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

// sarifSchema compiles the SARIF 2.1.0 schema (OASIS, errata 01),
// vendored in testdata: the test reads no network.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	const id = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// explainAs runs explain on path with -o format (and args) and returns its output.
func explainAs(t *testing.T, path, format string, args ...string) []byte {
	t.Helper()
	code, out, stderr := run(t, append([]string{"explain", path, "-o", format}, args...)...)
	if code != ExitOK {
		t.Fatalf("explain %s -o %s: exit %d: %s", path, format, code, stderr)
	}
	return []byte(out)
}

// Every bundled trace (each recorded from a real API server: restarts,
// 410s, relists that missed deletes, a proxy's streams) explained as SARIF
// validates against the SARIF 2.1.0 schema and says what -o json says: one
// result per finding, at its level, on its rule, the catalogue as the
// rules; as JUnit, read back by go-junit (the parser CI tools in Go use), a
// suite per resource, a case per finding of the catalogue, failed where a
// warning or an error was raised, skipped where it was ignored.
func TestExplainAsSARIFAndJUnitSaysWhatJSONSays(t *testing.T) {
	schema := sarifSchema(t)
	traces, err := filepath.Glob("../../testdata/traces/*.jsonl")
	if err != nil || len(traces) == 0 {
		t.Fatalf("no bundled traces: %v", err)
	}
	raisedSome := false
	for _, path := range traces {
		for _, ignore := range [][]string{nil, {"--ignore-finding", "missed-deletes"}} {
			t.Run(filepath.Base(path)+strings.Join(ignore, "="), func(t *testing.T) {
				var want struct{ Resources []Explained }
				if err := json.Unmarshal(explainAs(t, path, "json", ignore...), &want); err != nil {
					t.Fatal(err)
				}
				var all []findings.Finding
				for _, r := range want.Resources {
					all = append(all, r.Findings...)
				}
				raisedSome = raisedSome || len(all) > 0

				raw := explainAs(t, path, "sarif", ignore...)
				doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
				if err != nil {
					t.Fatal(err)
				}
				if err := schema.Validate(doc); err != nil {
					t.Fatalf("the SARIF log does not validate against the 2.1.0 schema: %v", err)
				}
				checkSARIF(t, raw, path, all)

				suites, err := junit.Ingest(explainAs(t, path, "junit", ignore...))
				if err != nil {
					t.Fatalf("go-junit cannot read the JUnit XML: %v", err)
				}
				if len(suites) != len(want.Resources) {
					t.Fatalf("%d suites, %d resources", len(suites), len(want.Resources))
				}
				for i, s := range suites {
					if len(s.Tests) != len(findings.Catalogue()) {
						t.Errorf("suite %s: %d cases, want one per finding of the catalogue (%d)", s.Name, len(s.Tests), len(findings.Catalogue()))
					}
					raised := map[string]findings.Finding{}
					for _, f := range want.Resources[i].Findings {
						raised[string(f.ID)] = f
					}
					for _, c := range s.Tests {
						f, ok := raised[c.Name]
						wantStatus := junit.StatusPassed
						switch {
						case ok && f.Ignored:
							wantStatus = junit.StatusSkipped
						case ok && f.Severity.AtLeast(findings.Warning):
							wantStatus = junit.StatusFailed
						}
						if c.Status != wantStatus {
							t.Errorf("suite %s, case %s: %s, want %s (finding %+v)", s.Name, c.Name, c.Status, wantStatus, f.ID)
						}
						if wantStatus == junit.StatusFailed && (c.Error == nil || !strings.Contains(c.Error.Error(), f.Title)) {
							t.Errorf("suite %s, case %s: the failure does not carry the finding's title %q: %v", s.Name, c.Name, f.Title, c.Error)
						}
					}
				}
			})
		}
	}
	if !raisedSome {
		t.Error("no bundled trace raised a finding: the formats were checked on nothing")
	}
}

// checkSARIF compares the SARIF log's rules and results with the findings.
func checkSARIF(t *testing.T, raw []byte, path string, all []findings.Finding) {
	t.Helper()
	var log struct {
		Version string
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string
					Rules []struct {
						ID                   string
						DefaultConfiguration struct{ Level string }
						HelpURI              string
					}
				}
			}
			Artifacts []struct{ Location struct{ URI string } }
			Results   []struct {
				RuleID    string
				Level     string
				Message   struct{ Text string }
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
				Suppressions []struct{ Kind string }
			}
		}
	}
	if err := json.Unmarshal(raw, &log); err != nil {
		t.Fatal(err)
	}
	at := recordedAt(t, path)
	if log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("version %q, %d runs", log.Version, len(log.Runs))
	}
	run := log.Runs[0]
	cat := findings.Catalogue()
	if len(run.Tool.Driver.Rules) != len(cat) {
		t.Fatalf("%d rules, the catalogue has %d", len(run.Tool.Driver.Rules), len(cat))
	}
	help := projectURI + "#" + readmeAnchor(t, "## Findings")
	for i, r := range run.Tool.Driver.Rules {
		if r.ID != string(cat[i].ID) || r.DefaultConfiguration.Level != sarifLevel(cat[i].Severity) {
			t.Errorf("rule %d: %s at %s, want %s at %s", i, r.ID, r.DefaultConfiguration.Level, cat[i].ID, sarifLevel(cat[i].Severity))
		}
		if r.HelpURI != help {
			t.Errorf("rule %s: helpUri %q, want README's findings section, %q", r.ID, r.HelpURI, help)
		}
	}
	if len(run.Artifacts) != 1 || run.Artifacts[0].Location.URI != filepath.ToSlash(path) {
		t.Errorf("artifacts %+v, want the trace %s", run.Artifacts, path)
	}
	if len(run.Results) != len(all) {
		t.Fatalf("%d results, %d findings", len(run.Results), len(all))
	}
	for i, r := range run.Results {
		f := all[i]
		if r.RuleID != string(f.ID) || r.Level != sarifLevel(f.Severity) || !strings.Contains(r.Message.Text, f.Title) {
			t.Errorf("result %d: %s %s %q, want %s %s with %q", i, r.RuleID, r.Level, r.Message.Text, f.ID, sarifLevel(f.Severity), f.Title)
		}
		if len(r.Locations) != 1 || r.Locations[0].PhysicalLocation.ArtifactLocation.URI != filepath.ToSlash(path) {
			t.Fatalf("result %d: locations %+v, want the trace", i, r.Locations)
		}
		// The region (code scanning shows a result at its line) is the
		// first line recorded at or after the finding was first raised.
		if n := r.Locations[0].PhysicalLocation.Region.StartLine; n < 2 || n > len(at) || at[n-1].Before(f.FirstAt) || n > 2 && !at[n-2].Before(f.FirstAt) {
			t.Errorf("result %d: region.startLine %d, want the first line recorded at or after %s", i, n, f.FirstAt)
		}
		if f.Ignored != (len(r.Suppressions) == 1) {
			t.Errorf("result %d: ignored %t, suppressions %+v", i, f.Ignored, r.Suppressions)
		}
	}
}

// recordedAt is when each line of the trace at path was recorded (its
// header's startedAt plus its at), by line, the header's first.
func recordedAt(t *testing.T, path string) []time.Time {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var start time.Time
	var out []time.Time
	for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var l struct {
			StartedAt time.Time
			At        int64
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			start = l.StartedAt
		}
		out = append(out, start.Add(time.Duration(l.At)))
	}
	return out
}

// readmeAnchor is the anchor GitHub gives README.md's first heading that
// begins with prefix: lower case, spaces as hyphens, punctuation other than
// hyphens dropped.
func readmeAnchor(t *testing.T, prefix string) string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#"))) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	t.Fatalf("README.md has no heading %q", prefix)
	return ""
}

// TestASARIFArtifactURIEscapesTheTracesName: SARIF's artifact location is a
// URI reference; a space or a # in the trace's name is escaped, where it
// made the log's URI another file (and a fragment).
func TestASARIFArtifactURIEscapesTheTracesName(t *testing.T) {
	raw, err := os.ReadFile(bundled + "demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run 1#b.jsonl")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Artifacts []struct{ Location struct{ URI string } }
		}
	}
	if err := json.Unmarshal(explainAs(t, path, "sarif"), &log); err != nil {
		t.Fatal(err)
	}
	want := "file://" + strings.ReplaceAll(strings.ReplaceAll(filepath.ToSlash(path), " ", "%20"), "#", "%23")
	if len(log.Runs) != 1 || len(log.Runs[0].Artifacts) != 1 || log.Runs[0].Artifacts[0].Location.URI != want {
		t.Errorf("artifacts %+v, want the one URI %q", log.Runs, want)
	}
}

// An absolute trace path is a file URI (a bare absolute path is no URI:
// code scanning makes only a file URI relative to the checkout); a
// relative one stays relative, its first segment never read as a scheme.
func TestASARIFArtifactURIIsAFileURIOrARelativeReference(t *testing.T) {
	for path, want := range map[string]string{
		"watch.jsonl":           "watch.jsonl",
		"out/run 1.jsonl":       "out/run%201.jsonl",
		"a:b.jsonl":             "./a:b.jsonl",
		"/tmp/w/trace.jsonl.gz": "file:///tmp/w/trace.jsonl.gz",
		"/tmp/w/a%b#c.jsonl":    "file:///tmp/w/a%25b%23c.jsonl",
	} {
		if got := traceURI(path); got != want {
			t.Errorf("traceURI(%q) = %q, want %q", path, got, want)
		}
		if u, err := url.Parse(want); err != nil || u.Path != path && u.Path != "./"+path {
			t.Errorf("%q does not parse back to %q: %v, %v", want, path, u, err)
		}
	}
	// A Windows path, as filepath makes it there: its drive is no host.
	if got, want := uriOf("C:/ci/run 1.jsonl", true), "file:///C:/ci/run%201.jsonl"; got != want {
		t.Errorf("a Windows path: %q, want %q", got, want)
	} else if u, err := url.Parse(got); err != nil || u.Host != "" || u.Path != "/C:/ci/run 1.jsonl" {
		t.Errorf("%q parses back to host %q, path %q (%v)", got, u.Host, u.Path, err)
	}
}

// A time past the trace's last line is at that line, not one past it (the
// reader had counted its attempt past the end).
func TestATimePastTheTraceIsAtItsLastLine(t *testing.T) {
	path := bundled + "demo.jsonl"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	at, err := linesAt(path, []time.Time{past})
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); at[past] != n {
		t.Errorf("a time past the trace: line %d, want its last, %d", at[past], n)
	}
}
