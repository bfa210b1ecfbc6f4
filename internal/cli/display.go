package cli

import (
	"io"
	"os"

	"github.com/charmbracelet/x/term"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
)

// outputs are the options of a run's outputs: where its notes go.
func (d *DisplayOptions) outputs(streams genericiooptions.IOStreams, useTUI bool) session.OutputOptions {
	return session.OutputOptions{In: streams.In, Out: streams.Out, ErrOut: streams.ErrOut, Dashboard: useTUI, JSON: d.Output == "json", Summary: d.Summary}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
