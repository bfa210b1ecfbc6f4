package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/charmbracelet/x/term"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/lines"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui"
)

// display shows a run: the dashboard on a terminal, lines otherwise; then the summary.
type display struct {
	opts    DisplayOptions
	streams genericiooptions.IOStreams
	useTUI  bool
	notes   []*tui.NoteBuffer // one per resource, for the dashboard
	lines   *lines.Output
	// afterRun, when set, is called once the session has ended, before the summary.
	afterRun func()
	// rewinding, when set and true, says the dashboard ended to start the
	// replay again: no summary yet.
	rewinding func() bool
}

// attach gives each resource of sess the listener of the chosen display; it never blocks.
func (d *display) attach(sess *session.Session) {
	if d.useTUI {
		for _, r := range sess.Resources {
			b := tui.NewNoteBuffer(tui.DefaultNoteBuffer)
			d.notes = append(d.notes, b)
			r.OnNote(b.Push)
		}
		return
	}
	names := make([]string, len(sess.Resources))
	for i, r := range sess.Resources {
		names[i] = r.Name()
	}
	d.lines = lines.NewOutput(d.streams.Out, d.opts.Output == "json", names...)
	for _, r := range sess.Resources {
		r.OnNote(d.lines.For(r.Name()))
	}
}

// views are the dashboard's resources: each one's target, list settings and
// feed. live adds what needs a cluster (forced relists, audits).
func views(sess *session.Session, live bool, alerts func() tui.Alerts) []tui.Resource {
	out := make([]tui.Resource, len(sess.Resources))
	for i, r := range sess.Resources {
		o := r.Header.Options
		feed := tui.Feed{Stats: r.Reflector.Stats, Store: r.Store, Alerts: alerts,
			Audit: func(context.Context) (*reflector.AuditReport, error) {
				return nil, errors.New("audit needs a live cluster; this is a replay")
			}}
		if live {
			rf := r.Reflector
			feed.ForceRelist = rf.ForceRelist
			feed.Audit = func(ctx context.Context) (*reflector.AuditReport, error) { return rf.Audit(ctx, 5*time.Second) }
		}
		out[i] = tui.Resource{Target: r.Target(), Strategy: o.Strategy, PageSize: o.PageSize, MetadataOnly: o.MetadataOnly, Wire: o.Wire, Feed: feed}
	}
	return out
}

// run runs the session under runCtx and shows it; the dashboard lives until
// the user quits or uiCtx ends (in a replay it outlives the trace). cancel stops the session.
func (d *display) run(runCtx, uiCtx context.Context, cancel context.CancelFunc, sess *session.Session, opts tui.Options, resources []tui.Resource) error {
	errc := make(chan error, 1)
	go func() { errc <- sess.Run(runCtx) }()
	var runErr, uiErr error
	if d.useTUI {
		for i := range resources {
			resources[i].Feed.Notes = d.notes[i]
		}
		opts.Now = sess.Now
		uiErr = tui.Run(uiCtx, opts, resources, d.streams.In, d.streams.Out)
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
	if d.opts.Summary && (d.rewinding == nil || !d.rewinding()) {
		if err := writeSummaries(d.streams.Out, sess.Summaries(), d.opts.Output == "json"); err != nil {
			uiErr = errors.Join(uiErr, err)
		}
	}
	if uiErr != nil && !errors.Is(uiErr, context.Canceled) {
		return errors.Join(runErr, fmt.Errorf("dashboard: %w", uiErr))
	}
	return runErr
}

// writeSummaries prints the summary contract: one resource's summary as it
// always was, several as {"resources": [...]} in the session's order.
func writeSummaries(w io.Writer, sums []summary.Summary, asJSON bool) error {
	if len(sums) == 1 {
		if asJSON {
			return sums[0].WriteJSON(w)
		}
		return sums[0].WriteText(w)
	}
	if asJSON {
		return summary.WriteAllJSON(w, sums)
	}
	for i, s := range sums {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return fmt.Errorf("writing summary: %w", err)
			}
		}
		if err := s.WriteText(w); err != nil {
			return err
		}
	}
	return nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
