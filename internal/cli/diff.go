package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
)

// DiffFlags are --diff and --diff-max-objects, the same on watch and replay.
type DiffFlags struct {
	On         bool
	MaxObjects int
	maxFlag    *pflag.Flag // to refuse --diff-max-objects without --diff
}

func (d *DiffFlags) addFlags(cmd *cobra.Command, replay bool) {
	help := "Diff each MODIFIED event against the object's previous version: the paths changed, with old and new values and the field manager that owns each (DIFF lines, the summary's churn, the noisy-updates finding). Asks for JSON and holds each object's last version"
	if replay {
		help = "Diff the MODIFIED events of a trace recorded with --trace-objects full that did not record its changes (a trace recorded with --diff replays its changes without it)"
	}
	cmd.Flags().BoolVar(&d.On, "diff", false, help)
	cmd.Flags().IntVar(&d.MaxObjects, "diff-max-objects", session.DefaultDiffMaxObjects, "With --diff, how many objects' last versions are held; events of objects past it are counted as not diffed")
	d.maxFlag = cmd.Flags().Lookup("diff-max-objects")
}

func (d *DiffFlags) validate() error {
	if d.MaxObjects < 1 {
		return usageErrorf("invalid --diff-max-objects %d: must be at least 1", d.MaxObjects)
	}
	if !d.On && d.maxFlag != nil && d.maxFlag.Changed {
		return usageErrorf("--diff-max-objects needs --diff")
	}
	return nil
}

// options are the session's DiffOptions (nil without --diff).
func (d *DiffFlags) options() *session.DiffOptions {
	if !d.On {
		return nil
	}
	return &session.DiffOptions{MaxObjects: d.MaxObjects}
}
