package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
)

// DiffFlags are --diff and --diff-max-objects, the same on watch, replay and proxy.
type DiffFlags struct {
	On         bool
	MaxObjects int
	maxFlag    *pflag.Flag // to refuse --diff-max-objects without --diff
}

// diffHelp is --diff's help on watch, where it asks for JSON.
const diffHelp = "Diff each MODIFIED event against the object's previous version: the paths changed, with old and new values and the field manager that owns each (DIFF lines, the summary's churn, the noisy-updates finding)"

// addFlags registers the flags, --diff with the help given.
func (d *DiffFlags) addFlags(cmd *cobra.Command, help string) {
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
