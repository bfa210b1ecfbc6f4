package cli

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/outputs"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/subjects"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui"
)

// ReplayOptions are the flags of "kubectl watchcache replay FILE".
type ReplayOptions struct {
	genericiooptions.IOStreams
	Speed   float64
	Strict  bool
	Display DisplayOptions
	Monitor MonitorOptions
	Diff    DiffFlags

	path       string
	isTerminal func() bool
}

// NewReplayOptions returns the defaults.
func NewReplayOptions(streams genericiooptions.IOStreams) *ReplayOptions {
	return &ReplayOptions{IOStreams: streams, Speed: 1, isTerminal: func() bool { return isTerminal(streams.Out) }}
}

// maxReplayDifferences is how many differing decisions a replay prints.
const maxReplayDifferences = 10

func newReplayCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := NewReplayOptions(streams)
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Replay a recorded trace offline through the same reflector",
		Long: "Replay a trace recorded with --trace: the recorded LIST pages and watch events are served, in order,\n" +
			"to the same reflector, with the recorded timing. Where the replayed reflector decides differently\n" +
			"from the recorded one (compared by state, reason and fields such as resourceVersion, object\n" +
			"count and status code), it warns; with --strict it exits 1. A malformed trace exits 1.\n\n" +
			"On the dashboard, the player's keys: space pauses and resumes, → steps to the next request or\n" +
			"decision, + and - double and halve the speed, 0-9 jump to that tenth of the recorded time (back: the replay\n" +
			"starts again and runs fast to it).",
		Example:           "  kubectl watchcache replay out.jsonl\n  kubectl watchcache replay out.jsonl.gz --speed 0 --summary -o json",
		ValidArgsFunction: completeTraceFiles,
		RunE:              runOptions(o),
	}
	cmd.Flags().Float64Var(&o.Speed, "speed", o.Speed, "Replay speed: 0 as fast as possible, 1 real time, N times faster")
	cmd.Flags().BoolVar(&o.Strict, "strict", false, "Exit 1 when the replayed decisions differ from the recorded ones (for regression tests)")
	o.Diff.addFlags(cmd, "Diff the MODIFIED events of a trace recorded with --trace-objects full that did not record its changes (a trace recorded with --diff replays its changes without it)")
	o.Display.addFlags(cmd)
	o.Monitor.addFlags(cmd, true)
	return cmd
}

// completeTraceFiles completes a trace argument: files ending in .jsonl or .gz.
func completeTraceFiles(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"jsonl", "gz"}, cobra.ShellCompDirectiveFilterFileExt
}

// Complete takes the trace path.
func (o *ReplayOptions) Complete(args []string) error {
	if len(args) != 1 {
		return usageErrorf("replay takes one trace file, got %d arguments", len(args))
	}
	o.path = args[0]
	return nil
}

// Validate checks the flags.
func (o *ReplayOptions) Validate() error {
	if !(o.Speed >= 0) || math.IsInf(o.Speed, 1) { // NaN too
		return usageErrorf("invalid --speed %g: must be 0 (as fast as possible) or a positive number", o.Speed)
	}
	if err := o.Diff.validate(); err != nil {
		return err
	}
	if err := o.Monitor.validate(); err != nil {
		return err
	}
	return o.Display.validate()
}

// Run replays the trace.
func (o *ReplayOptions) Run(ctx context.Context) error {
	useTUI := !o.Display.NoTUI && o.isTerminal()
	warning := o.Display.warnDashboardIgnores(o.ErrOut, useTUI)
	d := o.Diff.options()
	sess, err := session.NewReplayDiffing(o.path, o.Speed, d)
	if err != nil {
		return err
	}
	traits := subjects.Of(sess.Header)
	if traits.AsRecorded != "" && len(o.Monitor.rules) > 0 {
		return usageErrorf("--fail-on does not apply to %s", traits.AsRecorded)
	}
	if o.Diff.On {
		if err := o.checkDiffable(sess); err != nil {
			return err
		}
	}
	oo := o.Display.outputs(o.IOStreams, useTUI)
	oo.Monitor = o.Monitor.options()
	outs, err := outputs.New(oo)
	if err != nil {
		return err
	}
	// A jump behind the replay starts it again and runs it fast to the
	// target: on the dashboard, when nothing outlives one run (metrics and
	// rules count the whole trace once).
	canRewind := useTUI && outs.Rewindable()
	var (
		runErr   error
		rewindTo = time.Duration(-1)
		last     *trace.Player
		view     tui.View // where the dashboard was at a rewind: the next one opens there
	)
	for {
		if last != nil { // a rewind: the replay starts again
			if sess, err = session.NewReplayDiffing(o.path, o.Speed, d); err != nil {
				return outs.Finish(err)
			}
		}
		if err := outs.Attach(sess); err != nil {
			return outs.Finish(err)
		}
		player := sess.Replay.Player()
		if last != nil {
			player.SetSpeed(last.Speed())
			if end, ok := last.End(); ok {
				player.SetEnd(end)
			}
			if err := player.Seek(rewindTo); err != nil {
				return outs.Finish(fmt.Errorf("rewinding: %w", err))
			}
		}
		if traits.AsRecorded != "" && last == nil {
			fmt.Fprintln(o.ErrOut, "replay: "+traits.AsRecorded)
		}
		var rewind atomic.Int64
		rewind.Store(-1)
		opts := tui.Options{Server: sess.Header.Server, Replay: true, Trace: o.path, Player: player, Start: sess.Header.StartedAt, Kind: traits.Dashboard, Warning: warning}
		if traits.AsRecorded == "" { // a trace replayed as recorded decides nothing again
			opts.Differences = sess.Replay.DifferencesSoFar
		}
		opts.EndedEarly = sess.Replay.RecordingCut
		if last != nil {
			// The dashboard before this one said it rewinds; this one says it did.
			opts.NoticeAt = sess.Header.StartedAt.Add(rewindTo)
			opts.Notice = "rewound to " + opts.NoticeAt.Format("15:04:05") + ": the replay started again and ran to it"
			opts.Reopen = &view
		}
		// The dashboard's clock goes on between two lines at pace, as it
		// did live (the reflectors' stays on the lines' times).
		start := sess.Header.StartedAt
		opts.Now = func() time.Time { return start.Add(player.Reached()) }
		if canRewind {
			opts.Rewind = func(at time.Duration, v tui.View) {
				view = v
				rewind.Store(int64(at))
			}
			outs.Rewinding = func() bool { return rewind.Load() >= 0 }
		}
		runCtx, cancel := context.WithCancel(ctx)
		if useTUI {
			// The progress line and the jumps need the recorded span: the end of
			// a plain trace is read at once, a gzip one's while the replay runs.
			go func() {
				if end, err := trace.RecordedEnd(runCtx, o.path); err == nil {
					player.SetEnd(end)
				}
			}()
		}
		runErr = outs.Run(runCtx, ctx, cancel, opts)
		cancel()
		if at := rewind.Load(); at >= 0 && ctx.Err() == nil {
			rewindTo, last = time.Duration(at), player
			continue
		}
		break
	}
	for _, w := range sess.Replay.Warnings() {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
	if runErr != nil || outs.Tripped() {
		// A tripped rule stopped the replay early: there is nothing to compare.
		return outs.Finish(runErr)
	}
	if err := outs.Finish(nil); err != nil {
		return err
	}
	if traits.AsRecorded != "" { // it decides nothing again: nothing to compare
		if sess.Replay.RecordingCut() {
			fmt.Fprintln(o.ErrOut, "replay: "+trace.EndedEarlyText+"; it was replayed up to there")
		}
		return nil
	}
	if sess.Replay.RecordedDecisions() == 0 {
		fmt.Fprintln(o.ErrOut, "replay: the trace has no recorded decisions to compare")
		return nil
	}
	shown, total := sess.Replay.Differences(maxReplayDifferences)
	switch {
	case !sess.Replay.ReadToEnd():
		// Stopped by the user (q, SIGINT, SIGTERM): the recording itself may be whole.
		fmt.Fprintf(o.ErrOut, "replay: stopped at %s of the recording, before its end; its decisions were compared up to there\n", sess.Replay.Now().UTC().Format("15:04:05.000"))
	case sess.Replay.RecordingCut(): // as the badge says it
		fmt.Fprintln(o.ErrOut, "replay: "+trace.EndedEarlyText+"; it was replayed up to there")
	}
	if total == 0 {
		return nil
	}
	for _, d := range shown {
		fmt.Fprintf(o.ErrOut, "warning: difference: %s\n", d)
	}
	if total > len(shown) {
		fmt.Fprintf(o.ErrOut, "warning: … and %d more differences\n", total-len(shown))
	}
	if o.Strict {
		return fmt.Errorf("the replayed reflector decided differently from the recorded one in %s (--strict)", format.PluralUngrouped(total, "place"))
	}
	fmt.Fprintf(o.ErrOut, "warning: the replayed reflector decided differently from the recorded one in %s; --strict makes this an error\n", format.PluralUngrouped(total, "place"))
	return nil
}

// checkDiffable refuses --diff where the session diffs nothing, and warns
// of the resources it does not diff.
func (o *ReplayOptions) checkDiffable(sess *session.Session) error {
	switch {
	case sess.Header.Observed:
		return usageErrorf("--diff does not apply to a proxy's trace: it replays as recorded, with the changes proxy --diff recorded")
	}
	var partial, redacted []string
	for _, n := range sess.NotDiffed {
		if n.Redacted {
			redacted = append(redacted, n.Resource)
		} else {
			partial = append(partial, n.Resource)
		}
	}
	why := []string{}
	if len(partial) > 0 {
		why = append(why, fmt.Sprintf("the trace keeps no whole objects of %s (recorded without --trace-objects full)", strings.Join(partial, ", ")))
	}
	if len(redacted) > 0 {
		why = append(why, fmt.Sprintf("the trace keeps the values of %s REDACTED (recorded without --trace-unsafe-secrets), so a diff would see no change of their data", strings.Join(redacted, ", ")))
	}
	switch {
	case len(sess.NotDiffed) == len(sess.Resources) && len(redacted) == 0:
		return usageErrorf("--diff needs whole objects, and the trace keeps none: record it with --trace-objects full (a trace recorded with --diff shows its changes without --diff)")
	case len(sess.NotDiffed) == len(sess.Resources):
		return usageErrorf("--diff has nothing to diff: %s", strings.Join(why, "; "))
	}
	for _, w := range why {
		fmt.Fprintf(o.ErrOut, "warning: --diff: %s: they are not diffed (the changes a trace recorded with --diff still show)\n", w)
	}
	return nil
}
