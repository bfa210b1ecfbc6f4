// Package cli holds the cobra commands of "kubectl watchcache": flags become
// typed configuration (Options with Complete, Validate and Run) so that the
// packages under pkg/ never see a flag.
package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Exit codes of the plugin.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// usageError marks errors caused by the command line, which exit with ExitUsage.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageErrorf builds a usage error in kubectl's wording style.
func usageErrorf(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// NewCommand builds the root "kubectl watchcache" command.
func NewCommand(streams genericiooptions.IOStreams, version string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kubectl-watchcache",
		Short: "Run a reflector against a cluster and show how its watch behaves",
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl watchcache",
		},
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	cmd.AddCommand(newVersionCommand(streams, version))
	return cmd
}

func newVersionCommand(streams genericiooptions.IOStreams, version string) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(streams.Out, "kubectl-watchcache %s\n", version)
			return err
		},
	}
}

// Execute runs cmd, prints an error the way kubectl does ("error: ...") and
// returns the process exit code.
func Execute(cmd *cobra.Command, streams genericiooptions.IOStreams) int {
	err := cmd.Execute()
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(streams.ErrOut, "error: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitFailure
}
