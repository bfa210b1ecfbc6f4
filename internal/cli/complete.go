package cli

import (
	"context"
	"flag"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
)

// completeResources completes RESOURCE with the server's listable,
// watchable resource types, waiting at most 5 s for each request: every
// argument (each is a resource), and after a comma (kubectl's syntax for
// several) the name after it, the ones before kept.
func completeResources(flags *genericclioptions.ConfigFlags) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		before, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			before, last = toComplete[:i+1], toComplete[i+1:]
		}
		bound(flags, 5*time.Second)
		dc, err := flags.ToDiscoveryClient()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		lists, _ := dc.ServerPreferredResources()
		var names []string
		for _, l := range lists {
			group := ""
			if i := strings.Index(l.GroupVersion, "/"); i > 0 {
				group = l.GroupVersion[:i]
			}
			for _, r := range l.APIResources {
				if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "watch") {
					continue
				}
				name := r.Name
				if group != "" {
					name += "." + group
				}
				names = append(names, name)
			}
		}
		names = withPrefix(names, last)
		for i := range names {
			names[i] = before + names[i]
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// withPrefix is names that begin with prefix, sorted, in names' array.
func withPrefix(names []string, prefix string) []string {
	names = slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, prefix) })
	slices.Sort(names)
	return names
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
	cmd.PersistentPreRun = func(c *cobra.Command, _ []string) {
		if fs.Lookup("v").Value.String() != "0" || fs.Lookup("vmodule").Value.String() != "" {
			// Client-go logs on stderr: the dashboard must know (logging).
			c.SetContext(context.WithValue(c.Context(), loggingKey{}, true))
			return
		}
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	}
}

// loggingKey marks a command's context whose client-go logs on stderr (-v
// or --vmodule).
type loggingKey struct{}

// logging reports whether client-go logs on stderr in ctx's command.
func logging(ctx context.Context) bool { return ctx.Value(loggingKey{}) != nil }

// completeConfigFlags completes the connection flags as kubectl does: -n
// with the server's namespaces, --context, --cluster and --user with the
// kubeconfig's; -l and --field-selector with nothing (not file names).
func completeConfigFlags(cmd *cobra.Command, cf *genericclioptions.ConfigFlags) {
	type completion = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)
	fromKubeconfig := func(names func(*clientcmdapi.Config) []string) completion {
		return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			raw, err := cf.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return withPrefix(names(&raw), toComplete), cobra.ShellCompDirectiveNoFileComp
		}
	}
	namespaces := func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		bound(cf, 5*time.Second) // a prompt waits for it
		cfg, err := cf.ToRESTConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		l, err := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make([]string, 0, len(l.Items))
		for _, ns := range l.Items {
			names = append(names, ns.Name)
		}
		return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	for flag, f := range map[string]completion{
		"namespace": namespaces,
		"context":   fromKubeconfig(func(c *clientcmdapi.Config) []string { return slices.Collect(maps.Keys(c.Contexts)) }),
		"cluster":   fromKubeconfig(func(c *clientcmdapi.Config) []string { return slices.Collect(maps.Keys(c.Clusters)) }),
		"user":      fromKubeconfig(func(c *clientcmdapi.Config) []string { return slices.Collect(maps.Keys(c.AuthInfos)) }),
	} {
		_ = cmd.RegisterFlagCompletionFunc(flag, f)
	}
	for _, flag := range []string{"selector", "field-selector"} {
		if cmd.Flags().Lookup(flag) != nil {
			_ = cmd.RegisterFlagCompletionFunc(flag, cobra.NoFileCompletions)
		}
	}
}
