package cli

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/owenrumney/go-sarif/v3/pkg/report"
	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// projectURI is where the tool and its findings are documented, for the
// SARIF driver's informationUri and each rule's helpUri.
const projectURI = "https://github.com/kubectl-watchcache/kubectl-watchcache"

// findingsAnchor is the anchor GitHub gives README.md's findings section,
// "## Findings: what is wrong, why, and what to do".
const findingsAnchor = "#findings-what-is-wrong-why-and-what-to-do"

// sarifLevel is SARIF's level for a severity.
func sarifLevel(s findings.Severity) string {
	switch s {
	case findings.Error:
		return "error"
	case findings.Warning:
		return "warning"
	}
	return "note"
}

// subjectName names a resource, or an observed stream and its client.
func subjectName(e Explained) string {
	if st := e.Stream; st != nil {
		return fmt.Sprintf("%s, stream #%d of %s (%s)", e.Resource, st.ID, st.RemoteAddr, st.UserAgent)
	}
	return e.Resource
}

// findingText is a finding for people, in one block: its title, evidence,
// cause and action, as the text output's detail says them.
func findingText(f findings.Finding) string {
	return strings.TrimRight(f.Detail(), "\n")
}

// writeSARIF prints the findings as a SARIF 2.1.0 log: one run of this
// tool, its rules the findings catalogue, one result per finding, located
// at the trace (the artifact) and at the resource or stream it is about.
func writeSARIF(w io.Writer, tracePath, version string, all []Explained) error {
	rep := report.NewV210Report()
	run := sarif.NewRunWithInformationURI("kubectl-watchcache", projectURI)
	run.Tool.Driver.WithVersion(version)
	for _, e := range findings.Catalogue() {
		run.AddRule(string(e.ID)).
			WithName(string(e.ID)).
			WithShortDescription(sarif.NewMultiformatMessageString().WithText(e.When).WithMarkdown(e.When)).
			WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(sarifLevel(e.Severity))).
			WithHelpURI(projectURI + findingsAnchor)
	}
	uri := traceURI(tracePath)
	run.AddDistinctArtifact(uri)
	var raised []time.Time
	for _, e := range all {
		for _, f := range e.Findings {
			raised = append(raised, f.FirstAt)
		}
	}
	lines, err := linesAt(tracePath, raised)
	if err != nil {
		return err
	}
	for _, e := range all {
		for _, f := range e.Findings {
			where := sarif.NewLogicalLocation().WithName(e.Resource).WithFullyQualifiedName(subjectName(e)).WithKind("resource")
			props := sarif.NewPropertyBag().Add("count", f.Count).Add("firstAt", f.FirstAt).Add("lastAt", f.LastAt).Add("evidence", f.Evidence)
			if f.Client != "" {
				props.Add("client", f.Client)
			}
			res := run.CreateResultForRule(string(f.ID)).
				WithLevel(sarifLevel(f.Severity)).
				WithMessage(sarif.NewTextMessage(findingText(f))).
				AddLocation(sarif.NewLocationWithPhysicalLocation(sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(uri)).
					WithRegion(sarif.NewRegion().WithStartLine(lines[f.FirstAt]))).
					WithLogicalLocations([]*sarif.LogicalLocation{where})).
				WithOccurrenceCount(int(max(f.Count, 1))).
				WithProperties(props)
			if f.Ignored {
				res.AddSuppression(sarif.NewSuppression().WithKind("external").WithJustification("--ignore-finding " + string(f.ID)))
			}
		}
	}
	rep.AddRun(run)
	if err := rep.PrettyWrite(w); err != nil {
		return fmt.Errorf("writing the SARIF log: %w", err)
	}
	return nil
}

// traceURI is the SARIF artifact location of the trace at path: a
// relative path as a relative reference (code scanning reads it from the
// repository's root), an absolute one as a file URI (which it makes
// relative to the checkout; a bare absolute path is no URI), a space, a #
// or a % escaped, and a first segment with a colon after "./" (not a scheme).
func traceURI(path string) string { return uriOf(filepath.ToSlash(path), filepath.IsAbs(path)) }

// uriOf is traceURI of a path with forward slashes, absolute or not (a
// Windows path's drive, C:/ci/t.jsonl, is the URI's path: file:///C:/…,
// never its host).
func uriOf(path string, abs bool) string {
	u := url.URL{Path: path}
	if abs {
		u.Scheme, u.Path = "file", "/"+strings.TrimPrefix(path, "/")
		return u.String()
	}
	if first, _, _ := strings.Cut(u.Path, "/"); strings.Contains(first, ":") {
		u.Path = "./" + u.Path
	}
	return u.EscapedPath()
}

// linesAt is, for each of times, the line of the trace at path where its
// replay stood then: the first line recorded at or after it (the last line
// for a time past it). A SARIF result's region is that line, where code
// scanning shows it. It reads the trace once more.
func linesAt(path string, times []time.Time) (map[time.Time]int, error) {
	out := make(map[time.Time]int, len(times))
	if len(times) == 0 {
		return out, nil
	}
	times = slices.Clone(times)
	slices.SortFunc(times, time.Time.Compare)
	rd, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	start, last := rd.Header().StartedAt, 1
	for len(times) > 0 {
		l, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		last = rd.LineNumber()
		at := start.Add(time.Duration(l.At))
		for len(times) > 0 && !times[0].After(at) {
			out[times[0]] = last
			times = times[1:]
		}
	}
	for _, t := range times {
		out[t] = last // past every line: the last
	}
	return out, nil
}

// The JUnit XML that CI systems read: a suite per resource (or stream),
// a case per finding of the catalogue.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		ClassName string        `xml:"classname,attr"`
		Failure   *junitMessage `xml:"failure,omitempty"`
		Skipped   *junitMessage `xml:"skipped,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitMessage struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// writeJUnit prints the findings as JUnit XML: for each resource (or
// observed stream) a suite, and in it a case per finding of the catalogue.
// A warning or an error fails its case; an info finding passes, its text
// in the case's output; an ignored one (--ignore-finding) is skipped.
func writeJUnit(w io.Writer, tracePath string, all []Explained) error {
	out := junitSuites{Name: "kubectl watchcache explain " + filepath.Base(tracePath)}
	for _, e := range all {
		raised := map[findings.ID]findings.Finding{}
		for _, f := range e.Findings {
			raised[f.ID] = f
		}
		s := junitSuite{Name: subjectName(e)}
		for _, entry := range findings.Catalogue() {
			c := junitCase{Name: string(entry.ID), ClassName: "watchcache." + e.Resource}
			if f, ok := raised[entry.ID]; ok {
				msg := &junitMessage{Message: f.Title, Type: string(f.Severity), Text: findingText(f)}
				switch {
				case f.Ignored:
					c.Skipped = msg
					s.Skipped++
				case f.Severity.AtLeast(findings.Warning):
					c.Failure = msg
					s.Failures++
				default:
					c.SystemOut = msg.Text
				}
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		out.Tests, out.Failures, out.Skipped = out.Tests+s.Tests, out.Failures+s.Failures, out.Skipped+s.Skipped
		out.Suites = append(out.Suites, s)
	}
	b, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the JUnit XML: %w", err)
	}
	if _, err := fmt.Fprintf(w, "%s%s\n", xml.Header, b); err != nil {
		return fmt.Errorf("writing the JUnit XML: %w", err)
	}
	return nil
}
