package cli

import (
	"flag"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
)

// completeResources completes RESOURCE with the server's listable, watchable resource types.
func completeResources(o *WatchOptions) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		dc, err := o.ConfigFlags.ToDiscoveryClient()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		lists, _ := dc.ServerPreferredResources()
		var out []string
		for _, l := range lists {
			group := ""
			if i := strings.Index(l.GroupVersion, "/"); i > 0 {
				group = l.GroupVersion[:i]
			}
			for _, r := range l.APIResources {
				if strings.Contains(r.Name, "/") || !hasVerb(r.Verbs, "list") || !hasVerb(r.Verbs, "watch") {
					continue
				}
				name := r.Name
				if group != "" {
					name += "." + group
				}
				if strings.HasPrefix(name, toComplete) {
					out = append(out, name)
				}
			}
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// addKlogFlags adds klog's -v and --vmodule, for client-go's debug logs.
// Without -v, client-go's log lines (e.g. discovery retries) are not printed:
// the command's own error says what went wrong.
func addKlogFlags(cmd *cobra.Command) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for _, name := range []string{"v", "vmodule"} {
		if f := fs.Lookup(name); f != nil {
			cmd.PersistentFlags().AddGoFlag(f)
		}
	}
	cmd.PersistentPreRun = func(*cobra.Command, []string) {
		if v := fs.Lookup("v"); v != nil && v.Value.String() == "0" {
			_ = fs.Set("logtostderr", "false")
			_ = fs.Set("stderrthreshold", "FATAL")
			klog.SetOutput(io.Discard)
		}
	}
}
