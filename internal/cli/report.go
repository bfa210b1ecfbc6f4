package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/report"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// ReportOptions are the flags of "kubectl watchcache report TRACE".
type ReportOptions struct {
	genericiooptions.IOStreams
	// Output is the HTML file to write; "" for TRACE's base name with .html in
	// the current directory, "-" for standard output.
	Output string
	// Findings are --ignore-finding and --relist-storm.
	Findings FindingOptions

	path string
	out  string // the resolved output path; "" for standard output
}

// NewReportOptions returns the defaults.
func NewReportOptions(streams genericiooptions.IOStreams) *ReportOptions {
	return &ReportOptions{IOStreams: streams}
}

func newReportCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := NewReportOptions(streams)
	cmd := &cobra.Command{
		Use:   "report TRACE [-o report.html]",
		Short: "Write an HTML report of a recorded trace: timeline, relists, requests",
		Long: "Write one self-contained HTML page about a trace recorded with --trace: the run's server and its\n" +
			"resources (one or several); first the findings (what is wrong, the evidence with each request\n" +
			"linked to its row, the cause and what to do); for each resource its options and counters; a timeline of every request\n" +
			"(colour: how it ended) with markers for 410 Gone, relists, backoffs, bookmarks and resourceVersion\n" +
			"anomalies, the object count, the bookmark age and event rates over time; when the trace recorded\n" +
			"the MODIFIED events' changes (--diff), what changed: the paths that changed most with their\n" +
			"managers, the objects that took most events, the last diffs; every relist with what it\n" +
			"found (missed deletes, recreates with the old and new UID, updates); every request with its options\n" +
			"as sent. The page loads nothing from the network: open it from disk or attach it to a bug report.\n\n" +
			"By default the report is written to the current directory, named after TRACE with .html instead of\n" +
			"its extension (out.jsonl.gz -> out.html); -o names another file, -o - writes to standard output.",
		Example:           "  kubectl watchcache report out.jsonl\n  kubectl watchcache report out.jsonl.gz -o /tmp/watch.html\n  kubectl watchcache report out.jsonl -o - > report.html",
		ValidArgsFunction: completeTraceFiles,
		RunE:              runOptions(o),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "HTML file to write (default: TRACE's base name with .html, in the current directory; - for standard output)")
	o.Findings.addFlags(cmd)
	return cmd
}

// Complete takes the trace path and resolves the output file.
func (o *ReportOptions) Complete(args []string) error {
	if len(args) != 1 {
		return usageErrorf("report takes one trace file, got %d arguments", len(args))
	}
	o.path = args[0]
	switch o.Output {
	case "-":
		o.out = ""
	case "":
		o.out = DefaultReportName(o.path)
	default:
		o.out = o.Output
	}
	return nil
}

// DefaultReportName is the report's name for a trace: its base name with
// .html instead of its extension (and .gz), in the current directory.
func DefaultReportName(tracePath string) string {
	base, _ := trace.SplitName(filepath.Base(tracePath))
	if base == "" || base == "." || base == string(filepath.Separator) {
		base = "trace"
	}
	return base + ".html"
}

// Validate refuses an output that cannot be written, or that is the trace itself.
func (o *ReportOptions) Validate() error {
	if err := o.Findings.validate(); err != nil {
		return err
	}
	if o.out == "" {
		return nil
	}
	if err := checkOutputPath("-o", o.out, nil); err != nil {
		return err
	}
	if sameFile(o.out, o.path) {
		if o.Output == "" {
			return usageErrorf("the report's default name %s is the trace itself; name another output with -o", o.out)
		}
		return usageErrorf("-o %s: refusing to overwrite the trace %s; name another output with -o", o.out, o.path)
	}
	return nil
}

// sameFile reports whether a and b name one file (or one path, when a does not exist yet).
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}

// Run reads the trace and writes the report; ctx ending first (^C) is an error.
func (o *ReportOptions) Run(ctx context.Context) error {
	rd, err := trace.Open(o.path)
	if err != nil {
		return err
	}
	defer rd.Close()
	rep, err := report.Analyze(ctx, rd, report.Options{Name: filepath.Base(o.path), Findings: o.Findings.options()})
	if err != nil {
		return err
	}
	// The page says them too; stderr says them where a script or a person reads first.
	for _, w := range rep.Warnings {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
	if o.out == "" {
		return rep.WriteHTML(o.Out)
	}
	if err := writeFileAtomically(o.out, rep.WriteHTML); err != nil {
		return fmt.Errorf("writing %s: %w", o.out, err)
	}
	fmt.Fprintf(o.ErrOut, "report written to %s\n", o.out)
	return nil
}
