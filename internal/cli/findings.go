package cli

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

// FindingOptions are the findings flags, shared by every command that
// raises findings (watch, replay, proxy, explain).
type FindingOptions struct {
	Ignore      []string
	RelistStorm string

	opts findings.Options
}

func (o *FindingOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringSliceVar(&o.Ignore, "ignore-finding", nil, "Finding IDs to silence, comma-separated or repeated: each stays in the summary, marked as ignored, and no --fail-on rule counts it. IDs: "+findings.IDList())
	f.StringVar(&o.RelistStorm, "relist-storm", findings.RelistStormDefault(), "How many relists within how long are a relist storm (the relist-storm finding): COUNT/DURATION")
	_ = cmd.RegisterFlagCompletionFunc("ignore-finding", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, e := range findings.Catalogue() {
			out = append(out, string(e.ID))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

func (o *FindingOptions) validate() error {
	o.opts = findings.Options{}
	for _, id := range o.Ignore {
		id = strings.TrimSpace(id)
		if !findings.Known(findings.ID(id)) {
			return usageErrorf("unknown finding %q in --ignore-finding: want one of %s", id, findings.IDList())
		}
		o.opts.Ignore = append(o.opts.Ignore, findings.ID(id))
	}
	count, window, ok := strings.Cut(o.RelistStorm, "/")
	n, err := strconv.Atoi(strings.TrimSpace(count))
	d, derr := time.ParseDuration(strings.TrimSpace(window))
	if !ok || err != nil || derr != nil || n < 1 || d <= 0 {
		return usageErrorf("invalid --relist-storm %q: want COUNT/DURATION such as %s (a count of 1 or more, a positive duration)", o.RelistStorm, findings.RelistStormDefault())
	}
	o.opts.StormRelists, o.opts.StormWindow = n, d
	return nil
}

// options are the engines' options (after validate).
func (o *FindingOptions) options() findings.Options { return o.opts }
