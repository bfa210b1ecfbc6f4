package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func absTrace(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("../../testdata/traces", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReportWritesAPageNamedAfterTheTraceInTheCurrentDirectory(t *testing.T) {
	demo := absTrace(t, "demo.jsonl")
	dir := t.TempDir()
	t.Chdir(dir)
	code, out, stderr := run(t, "report", demo)
	if code != ExitOK || out != "" || stderr != "report written to demo.html\n" {
		t.Fatalf("got exit %d, stdout %q, stderr %q; want 0, nothing, and where the report went", code, out, stderr)
	}
	fi, err := os.Stat(filepath.Join(dir, "demo.html"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode: got %v, want 0600 (a report holds the trace's data)", fi.Mode().Perm())
	}
	page, err := os.ReadFile(filepath.Join(dir, "demo.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(page), "<!DOCTYPE html>") || !strings.Contains(string(page), "configmaps.v1") {
		t.Errorf("the report does not look like one: %.100q", page)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the report alone (no temporary file left)", len(entries))
	}
}

func TestReportWithOutputDashWritesToStandardOutputOnly(t *testing.T) {
	demo := absTrace(t, "demo.jsonl")
	dir := t.TempDir()
	t.Chdir(dir)
	code, out, stderr := run(t, "report", demo, "-o", "-")
	if code != ExitOK || stderr != "" || !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.HasSuffix(out, "</html>\n") {
		t.Fatalf("got exit %d, stderr %q, stdout %.60q…; want 0, nothing, and the page", code, stderr, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("-o - wrote %d files to the current directory, want none", len(entries))
	}
}

func TestTheDefaultReportNameIsTheTracesBaseNameWithHTML(t *testing.T) {
	for in, want := range map[string]string{
		"out.jsonl":                "out.html",
		"/var/tmp/out.jsonl.gz":    "out.html",
		"dir/run.2026-01-01.jsonl": "run.2026-01-01.html",
		"trace":                    "trace.html",
		".jsonl":                   ".jsonl.html",
		"x.gz":                     "x.html",
	} {
		if got := DefaultReportName(in); got != want {
			t.Errorf("DefaultReportName(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestReportRefusesBadInputWithTheRightExitCode(t *testing.T) {
	demo := absTrace(t, "demo.jsonl")
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.jsonl")
	if err := os.WriteFile(corrupt, []byte("this is not a trace\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	sameTrace := filepath.Join(dir, "same.html")
	if err := os.WriteFile(sameTrace, []byte(`{"k":"header","v":1}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no trace", []string{"report"}, ExitUsage, "error: report takes one trace file, got 0 arguments"},
		{"two traces", []string{"report", demo, demo}, ExitUsage, "error: report takes one trace file, got 2 arguments"},
		{"missing trace", []string{"report", "missing.jsonl"}, ExitFailure, "error: cannot read missing.jsonl: no such file or directory"},
		{"not a trace", []string{"report", corrupt, "-o", "x.html"}, ExitFailure, "error: " + corrupt + ":1: not a watchcache trace (the first line is not JSON): invalid character 'h' in literal true (expecting 'r')"},
		{"output is a directory", []string{"report", demo, "-o", dir}, ExitUsage, "error: -o " + dir + ": is a directory"},
		{"output directory missing", []string{"report", demo, "-o", "/nonexistent/dir/r.html"}, ExitUsage, "error: -o /nonexistent/dir/r.html: directory /nonexistent/dir does not exist"},
		{"output is the trace", []string{"report", demo, "-o", demo}, ExitUsage, "error: -o " + demo + ": refusing to overwrite the trace " + demo + "; name another output with -o"},
		{"output is the trace by another path", []string{"report", corrupt, "-o", "./corrupt.jsonl"}, ExitUsage, "error: -o ./corrupt.jsonl: refusing to overwrite the trace " + corrupt + "; name another output with -o"},
		{"the default name is the trace", []string{"report", "same.html"}, ExitUsage, "error: the report's default name same.html is the trace itself; name another output with -o"},
		{"unknown flag", []string{"report", demo, "--bogus"}, ExitUsage, "error: unknown flag: --bogus"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != tc.code || strings.TrimSpace(stderr) != tc.want {
				t.Errorf("got exit %d and %q\nwant exit %d and %q", code, strings.TrimSpace(stderr), tc.code, tc.want)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the directory holds %d files after the refusals, want the 2 it had", len(entries))
	}
}

// A report of a trace cut short says so on stderr, as replay and explain
// do, and on the page; a whole trace gets no such warning.
func TestReportOfACutTraceWarnsOnStderrAndOnThePage(t *testing.T) {
	b, err := os.ReadFile("../../testdata/traces/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.jsonl")
	lines := strings.SplitAfter(string(b), "\n")
	if err := os.WriteFile(cut, []byte(strings.Join(lines[:150], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "cut.html")
	code, _, stderr := run(t, "report", cut, "-o", page)
	if code != ExitOK || !strings.Contains(stderr, "warning: the recording ends early") {
		t.Fatalf("exit %d, stderr %q; want exit 0 and the warning that the recording ends early", code, stderr)
	}
	if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), "the recording ends early") {
		t.Errorf("the page lacks the warning (%v)", err)
	}
	if code, _, stderr := run(t, "report", "../../testdata/traces/demo.jsonl", "-o", filepath.Join(dir, "demo.html")); code != ExitOK || strings.Contains(stderr, "warning") {
		t.Errorf("the whole demo trace: exit %d, stderr %q; want exit 0 and no warning", code, stderr)
	}
}
