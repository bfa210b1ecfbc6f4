// Package cli holds the cobra commands of "kubectl watchcache": flags become
// typed configuration (Options with Complete, Validate and Run) so that the
// packages under pkg/ never see a flag.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/outputs"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
)

// Exit codes of the plugin.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	// ExitAlert: a --fail-on rule tripped (and --fail-on-warn was not given).
	// It wins over a failure that came with it: the rule ended the run.
	ExitAlert = 3
)

// usageError marks errors caused by the command line, which exit with ExitUsage.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageErrorf builds a usage error in kubectl's wording style.
func usageErrorf(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// commandOptions are a command's options in kubectl's pattern: Complete
// fills them from the arguments, Validate checks them, Run does the work.
type commandOptions interface {
	Complete(args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runOptions is a command's RunE for o: Complete, Validate, then Run, the
// first error ending it.
func runOptions(o commandOptions) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(cmd.Context())
	}
}

// NewCommand builds the root "kubectl watchcache" command.
// version is the release's stamp ("dev" when none; see ResolveVersion).
func NewCommand(streams genericiooptions.IOStreams, version string) *cobra.Command {
	version = ResolveVersion(version)
	o, run := newWatchCommand(streams, version)
	cmd := &cobra.Command{
		Use:   "kubectl-watchcache RESOURCE",
		Short: "Run a reflector against a cluster and show how its watch behaves",
		Long: "Run a real reflector (LIST + WATCH with a resourceVersion cursor, pagination, streaming list,\n" +
			"bookmarks, 410 Gone -> relist, UID-guarded deletes) against the cluster and show, live, what the\n" +
			"watch does. Record it with --trace and replay it later with \"kubectl watchcache replay\".",
		Example: "  kubectl watchcache pods -n prod\n" +
			"  kubectl watchcache deployments.apps -A --initial-list=stream --trace out.jsonl\n" +
			"  kubectl watchcache configmaps --no-tui --once --summary -o json\n" +
			"  kubectl watchcache replay out.jsonl\n" +
			"  kubectl watchcache report out.jsonl",
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl watchcache",
		},
		SilenceErrors:     true,
		SilenceUsage:      true,
		Args:              cobra.ArbitraryArgs,
		RunE:              run,
		ValidArgsFunction: completeResources(o.ConfigFlags),
	}
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	o.AddFlags(cmd)
	addKlogFlags(cmd)
	cmd.AddCommand(newVersionCommand(streams, version), newReplayCommand(streams), newProxyCommand(streams, version), newReportCommand(streams),
		newExplainCommand(streams, version), newCostCommand(streams, version), newMonitorCommand(streams, version))
	cmd.SetHelpCommand(newHelpCommand())
	cmd.InitDefaultCompletionCmd()
	if c, _, err := cmd.Find([]string{"completion"}); err == nil && c != cmd {
		// cobra's completion prints its help and exits 0 for a shell it
		// does not know; kubectl completion says so and fails.
		c.RunE = func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("shell not specified: one of bash, zsh, fish, powershell")
			}
			return usageErrorf("unsupported shell type %q: one of bash, zsh, fish, powershell", args[0])
		}
		c.Args = cobra.ArbitraryArgs
	}
	argsAreUsage(cmd)
	completeNoFiles(cmd)
	return cmd
}

// completeNoFiles registers, for every flag of cmd and its subcommands that
// takes a value, is not a file or a directory, and completes with nothing
// of its own, a completion without file names (cobra's default offers
// them: --duration <TAB> listed the directory).
func completeNoFiles(cmd *cobra.Command) {
	for _, c := range append([]*cobra.Command{cmd}, cmd.Commands()...) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			switch f.Name {
			case "kubeconfig", "cache-dir", "certificate-authority", "client-certificate", "client-key", "trace", "print-kubeconfig", "output":
				return // a path (-o is report's file; the others' -o completes its formats)
			}
			if _, has := c.GetFlagCompletionFunc(f.Name); !has && f.NoOptDefVal == "" {
				_ = c.RegisterFlagCompletionFunc(f.Name, cobra.NoFileCompletions)
			}
		})
	}
}

// newHelpCommand is "help [command]": cobra's prints the root's help and
// exits 0 for a command it does not know.
func newHelpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil || target == nil || len(rest) > 0 {
				return usageErrorf("unknown help topic %q: run \"kubectl watchcache --help\" for the commands", strings.Join(args, " "))
			}
			target.InitDefaultHelpFlag()
			return target.Help()
		},
	}
}

// argsAreUsage makes the arguments' errors of c and its subcommands usage
// errors (exit 2), cobra's own ("unknown command") included.
func argsAreUsage(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			err := check(cmd, args)
			var ue usageError
			if err != nil && !errors.As(err, &ue) {
				return usageError{err}
			}
			return err
		}
	}
	for _, sub := range c.Commands() {
		argsAreUsage(sub)
	}
}

func newVersionCommand(streams genericiooptions.IOStreams, version string) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("version takes no arguments, got %q", args)
			}
			return nil
		},
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(streams.Out, "kubectl-watchcache %s\n", version)
			return err
		},
	}
}

// stopSignals end a run cleanly: the trace is flushed, the summary printed.
// SIGHUP is a closed terminal (or tmux pane).
func stopSignals() []os.Signal { return []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} }

// Main runs the plugin on the process's own streams and returns its exit
// code. Besides the stop signals, a closed stdout pipe (| head) ends a run
// cleanly, where the default SIGPIPE would kill it with its trace unwritten.
func Main(version string) int {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
	defer stop()
	ctx, closed := context.WithCancelCause(ctx)
	defer closed(nil)
	var out io.Writer = os.Stdout
	if !isTerminal(os.Stdout) {
		// Writes to a closed stdout then fail with EPIPE instead.
		signal.Ignore(syscall.SIGPIPE)
		out = &closedPipeStops{w: os.Stdout, stop: closed}
		// And a reader that left is noticed before the next write, which a
		// quiet watch may make minutes later.
		watchPipeReader(os.Stdout, func() { closed(errStdoutClosed) })
	}
	// An error or a warning can name what another program chose (a proxied
	// client's selectors): its control characters are escaped.
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: out, ErrOut: format.Printable(os.Stderr)}
	return execute(ctx, NewCommand(streams, version), streams)
}

// errStdoutClosed is why a run stopped when its stdout pipe closed.
var errStdoutClosed = errors.New("stdout closed")

// closedPipeStops ends the run (stop) at the first write to a closed pipe.
type closedPipeStops struct {
	w    io.Writer
	stop context.CancelCauseFunc
}

func (c *closedPipeStops) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		c.stop(errStdoutClosed)
	}
	return n, err
}

// Execute runs cmd, prints an error the way kubectl does ("error: ...") and
// returns the process exit code. The stop signals end a run cleanly.
func Execute(cmd *cobra.Command, streams genericiooptions.IOStreams) int {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
	defer stop()
	return execute(ctx, cmd, streams)
}

func execute(ctx context.Context, cmd *cobra.Command, streams genericiooptions.IOStreams) int {
	err := cmd.ExecuteContext(ctx)
	if errors.Is(err, syscall.EPIPE) && errors.Is(context.Cause(ctx), errStdoutClosed) {
		// What read the output has gone (| head): nothing is left to tell it.
		return ExitOK
	}
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(streams.ErrOut, "error: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	var ae *outputs.AlertError
	if errors.As(err, &ae) {
		return ExitAlert
	}
	return ExitFailure
}
