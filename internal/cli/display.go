package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/lines"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui"
)

// display shows a run: the dashboard on a terminal, lines otherwise; then the summary.
type display struct {
	opts    DisplayOptions
	streams genericiooptions.IOStreams
	useTUI  bool
	notes   *tui.NoteBuffer
	lines   *lines.Output
	// afterRun, when set, is called once the session has ended, before the summary.
	afterRun func()
}

// listener is the OnNote listener feeding the chosen display; it never blocks.
func (d *display) listener() func(reflector.Note) {
	if d.useTUI {
		d.notes = tui.NewNoteBuffer(tui.DefaultNoteBuffer)
		return d.notes.Push
	}
	d.lines = lines.NewOutput(d.streams.Out, d.opts.Output == "json")
	return d.lines.Push
}

// run runs the session under runCtx and shows it; the dashboard lives until
// the user quits or uiCtx ends (in a replay it outlives the trace). cancel stops the session.
func (d *display) run(runCtx, uiCtx context.Context, cancel context.CancelFunc, sess *session.Session, opts tui.Options, res tui.Resource) error {
	errc := make(chan error, 1)
	go func() { errc <- sess.Run(runCtx) }()
	var runErr, uiErr error
	if d.useTUI {
		res.Feed.Notes = d.notes
		opts.Now = sess.Now
		uiErr = tui.Run(uiCtx, opts, []tui.Resource{res}, d.streams.In, d.streams.Out)
		cancel()
		runErr = <-errc
	} else {
		runErr = <-errc
		if dropped := d.lines.Close(); dropped > 0 {
			fmt.Fprintf(d.streams.ErrOut, "warning: %d output lines were dropped because the output could not keep up\n", dropped)
		}
	}
	if d.afterRun != nil {
		d.afterRun()
	}
	if d.opts.Summary {
		sum := sess.Summary()
		var err error
		if d.opts.Output == "json" {
			err = sum.WriteJSON(d.streams.Out)
		} else {
			err = sum.WriteText(d.streams.Out)
		}
		if err != nil {
			uiErr = errors.Join(uiErr, err)
		}
	}
	if uiErr != nil && !errors.Is(uiErr, context.Canceled) {
		return errors.Join(runErr, fmt.Errorf("dashboard: %w", uiErr))
	}
	return runErr
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
