package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/subjects"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// ExplainOptions are the flags of "kubectl watchcache explain TRACE".
type ExplainOptions struct {
	genericiooptions.IOStreams
	Output   string
	Findings FindingOptions

	path    string
	version string // the plugin's, for the SARIF log's driver
}

// NewExplainOptions returns the defaults.
func NewExplainOptions(streams genericiooptions.IOStreams) *ExplainOptions {
	return &ExplainOptions{IOStreams: streams, Output: "text"}
}

// catalogueIDs are the findings' ids, in the catalogue's order, for the
// help: lines of at most about 100 columns.
func catalogueIDs() string {
	var b strings.Builder
	col := 0
	for i, e := range findings.Catalogue() {
		if i > 0 {
			b.WriteString(",")
			col++
			if col+len(e.ID) > 98 {
				b.WriteString("\n")
				col = 0
			} else {
				b.WriteString(" ")
				col++
			}
		}
		b.WriteString(string(e.ID))
		col += len(e.ID)
	}
	return b.String()
}

func newExplainCommand(streams genericiooptions.IOStreams, version string) *cobra.Command {
	o := NewExplainOptions(streams)
	o.version = version
	cmd := &cobra.Command{
		Use:   "explain TRACE [-o text|json|sarif|junit]",
		Short: "Say what went wrong in a recorded trace: its findings, with evidence, cause and what to do",
		Long: "Replay a trace recorded with --trace (or by kubectl watchcache proxy) as fast as it goes, through the\n" +
			"same reflector, and print the findings it raises:\n" + catalogueIDs() + ".\n" +
			"Each with its evidence (request ids, objects, times), its cause, and what to do.\n\n" +
			"With -o json it prints one object, {\"resources\": [{\"resource\", \"stream\" (observed traces only),\n" +
			"\"findings\": [...]}]}, the findings in the form of --summary's. To fail a CI job on the findings of\n" +
			"a watch's trace, replay it with a rule: kubectl watchcache replay TRACE --speed 0 --no-tui --fail-on\n" +
			"'findings>0' (exit 3); a proxy's trace replays as recorded, without rules: read explain -o json.\n\n" +
			"For CI: -o sarif prints a SARIF 2.1.0 log (the catalogue as its rules, one result per finding, the\n" +
			"trace as the artifact: GitHub code scanning takes it); -o junit prints JUnit XML, a test suite per\n" +
			"resource and a test case per finding of the catalogue, failed for a warning or an error.",
		Example:           "  kubectl watchcache explain out.jsonl\n  kubectl watchcache explain out.jsonl.gz -o json | jq '.resources[].findings[].id'\n  kubectl watchcache explain out.jsonl -o sarif > watchcache.sarif",
		ValidArgsFunction: completeTraceFiles,
		RunE:              runOptions(o),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "Output format: text, json, sarif (SARIF 2.1.0) or junit (JUnit XML)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(explainOutputs(), cobra.ShellCompDirectiveNoFileComp))
	o.Findings.addFlags(cmd)
	return cmd
}

// Complete takes the trace path.
func (o *ExplainOptions) Complete(args []string) error {
	if len(args) != 1 {
		return usageErrorf("explain takes one trace file, got %d arguments", len(args))
	}
	o.path = args[0]
	return nil
}

// Validate checks the flags.
func (o *ExplainOptions) Validate() error {
	if !slices.Contains(explainOutputs(), o.Output) {
		return usageErrorf("invalid output format %q: want one of %s", o.Output, strings.Join(explainOutputs(), ", "))
	}
	return o.Findings.validate()
}

// explainOutputs are explain's output formats.
func explainOutputs() []string { return []string{"text", "json", "sarif", "junit"} }

// Explained is one resource's (or observed stream's) findings, as
// `explain -o json` prints them.
type Explained struct {
	Resource string                 `json:"resource"`
	Stream   *summary.StreamSummary `json:"stream,omitempty"`
	Findings []findings.Finding     `json:"findings"`
}

// Run replays the trace and prints its findings.
func (o *ExplainOptions) Run(ctx context.Context) error {
	rd, err := trace.Open(o.path)
	if err != nil {
		return err
	}
	defer rd.Close()
	warn := func(w string) { fmt.Fprintf(o.ErrOut, "warning: %s\n", w) }
	out, err := explain(ctx, rd, o.Findings.options(), warn)
	if err != nil {
		return err
	}
	switch o.Output {
	case "json":
		enc := json.NewEncoder(o.Out)
		enc.SetEscapeHTML(false) // "lag >60s" as it is, not "\u003e60s"
		if err := enc.Encode(struct {
			Resources []Explained `json:"resources"`
		}{out}); err != nil {
			return fmt.Errorf("writing the findings: %w", err)
		}
		return nil
	case "sarif":
		return writeSARIF(o.Out, o.path, o.version, out)
	case "junit":
		return writeJUnit(o.Out, o.path, out)
	}
	return writeExplained(format.Printable(o.Out), out)
}

// explain replays a trace as `replay --speed 0` does and returns each
// subject's findings: each resource of our reflector's, or each stream of
// an observed trace (rebuilt from its client's traffic).
func explain(ctx context.Context, rd *trace.Reader, opts findings.Options, warn func(string)) ([]Explained, error) {
	sess, err := session.NewReplayOf(rd, 0)
	if err != nil {
		return nil, fmt.Errorf("replaying the trace: %w", err)
	}
	traits := subjects.Of(sess.Header)
	sess.OnSubject(func(sub session.Subject) { sub.Findings().Configure(opts) })
	err = sess.Run(ctx)
	if !sess.Replay.ReadToEnd() && ctx.Err() != nil { // interrupted: findings of part of the trace would pass for all of it
		return nil, fmt.Errorf("stopped at %s of the recording, before its end: %w", sess.Replay.Now().UTC().Format("15:04:05.000"), context.Cause(ctx))
	}
	if err != nil {
		var lineErr *trace.LineError
		var div *trace.Divergence
		if errors.As(err, &lineErr) || errors.As(err, &div) || ctx.Err() != nil || traits.AsRecorded != "" {
			return nil, err
		}
		// A reflector that stopped on an error stops so in the replay too;
		// its findings (gave-up, say) are what explain is for.
		warn(fmt.Sprintf("the replayed run stopped as the recorded one did: %v", err))
	}
	for _, w := range sess.Replay.Warnings() {
		warn(w)
	}
	rp := sess.Replay
	switch {
	case traits.None != "" && len(sess.Subjects()) == 0:
		warn("in this trace, " + traits.None)
	case traits.AsRecorded != "":
	case rp.RecordedDecisions() == 0:
		warn("the trace holds no recorded decision (a header alone, or a run cut before it decided anything): there is little to explain")
	default:
		if _, total := rp.Differences(0); total > 0 && !rp.EndedEarly() {
			warn(trace.DifferedText(total) + ": its findings are the replay's")
		}
	}
	if rp.RecordingCut() {
		warn(trace.EndedEarlyText + "; its findings are those up to there")
	}
	out := make([]Explained, 0, len(sess.Subjects())) // [] in JSON when none, not null
	for _, sub := range sess.Subjects() {
		out = append(out, Explained{Resource: sub.Target().Resource.String(), Stream: sub.Summary(sess.Now()).Stream, Findings: sub.Findings().List()})
	}
	return out, nil
}

// writeExplained prints the findings for people.
func writeExplained(w io.Writer, all []Explained) error {
	var b strings.Builder
	for i, e := range all {
		if i > 0 {
			b.WriteString("\n")
		}
		name := subjectName(e)
		if len(e.Findings) == 0 {
			fmt.Fprintf(&b, "%s: no findings\n", name)
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", name, format.PluralUngrouped(len(e.Findings), "finding"))
		for _, f := range e.Findings {
			b.WriteString(f.Detail())
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the findings: %w", err)
	}
	return nil
}
