package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/outputs"
)

// DisplayOptions are the output flags shared by the live and replay commands.
type DisplayOptions struct {
	NoTUI   bool
	Output  string
	Summary bool
	// Findings are the findings flags, which every such command takes.
	Findings FindingOptions
}

func (d *DisplayOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&d.NoTUI, "no-tui", false, "Print one line per request, event (bookmarks aside) and decision instead of the dashboard (automatic when stdout is not a terminal)")
	cmd.Flags().StringVarP(&d.Output, "output", "o", "text", "Line output format: text or json")
	cmd.Flags().BoolVar(&d.Summary, "summary", false, "Print the summary at exit (JSON with -o json)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	d.Findings.addFlags(cmd)
}

func (d *DisplayOptions) validate() error {
	if d.Output != "text" && d.Output != "json" {
		return usageErrorf("invalid output format %q: want text or json", d.Output)
	}
	return d.Findings.validate()
}

// dashboardIgnores is the warning for -o json on the dashboard without
// --summary: it shapes the lines and the summary, and the run prints
// neither ("" when it does not apply).
func (d *DisplayOptions) dashboardIgnores(useTUI bool) string {
	if !useTUI || d.Output != "json" || d.Summary {
		return ""
	}
	return "-o json shapes the line output (--no-tui) and the summary (--summary): the dashboard shows neither"
}

// warnDashboardIgnores prints dashboardIgnores's warning on errOut and
// returns it for the dashboard's footer, where the line on stderr is hidden.
func (d *DisplayOptions) warnDashboardIgnores(errOut io.Writer, useTUI bool) string {
	w := d.dashboardIgnores(useTUI)
	if w != "" {
		fmt.Fprintln(errOut, "warning: "+w)
	}
	return w
}

// outputs are the options of a run's outputs: where its notes go.
func (d *DisplayOptions) outputs(streams genericiooptions.IOStreams, useTUI bool) outputs.Options {
	return outputs.Options{In: streams.In, Out: streams.Out, ErrOut: streams.ErrOut, Dashboard: useTUI, JSON: d.Output == "json", Summary: d.Summary,
		Findings: d.Findings.options()}
}

// logAcrossDashboard refuses -v or --vmodule (verbose) on the dashboard
// when stderr is a terminal, the dashboard's: client-go writes its log
// lines there, across the screen.
func logAcrossDashboard(useTUI, verbose, stderrTerminal bool) error {
	if useTUI && verbose && stderrTerminal {
		return usageErrorf("-v and --vmodule write client-go's log to stderr, across the dashboard: redirect it (2> client-go.log) or use --no-tui")
	}
	return nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
