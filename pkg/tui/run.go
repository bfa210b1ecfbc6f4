package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/overview"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// Run shows the dashboard of resources on out, reading keys from in, until
// the user quits (q, ctrl+c) or ctx ends; either way it returns nil. With one
// resource it is that resource's dashboard; with several, or with
// opts.Added (resources that come while it runs), it opens on their
// overview. A nil in or out means the process's
// terminal. A non-empty NO_COLOR in the environment, or opts.NoColor, selects
// the plain profile (no colors; bold and reverse stay).
func Run(ctx context.Context, opts program.Options, resources []program.Resource, in io.Reader, out io.Writer) error {
	if len(resources) == 0 && opts.Added == nil {
		return errors.New("tui: no resource to show")
	}
	m := overview.New(ctx, opts, resources)
	defer m.Close()
	// The size is the fallback for an output that is not a terminal; a
	// terminal reports its own.
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithWindowSize(program.DefaultWidth, program.DefaultHeight)}
	if in != nil {
		popts = append(popts, tea.WithInput(in))
	}
	if out != nil {
		popts = append(popts, tea.WithOutput(out))
	}
	// no-color.org: any non-empty NO_COLOR, which colorprofile reads only as a boolean.
	if opts.NoColor || os.Getenv("NO_COLOR") != "" {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	_, err := tea.NewProgram(m, popts...).Run()
	if err != nil && !(ctx.Err() != nil && errors.Is(err, tea.ErrProgramKilled)) {
		return fmt.Errorf("tui: running the dashboard: %w", err)
	}
	return nil
}
