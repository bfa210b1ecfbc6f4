package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// defaultListen is where the monitor serves /metrics, /healthz and
// /readyz: loopback, unless told (a pod's manifest says --listen :8080).
const defaultListen = "127.0.0.1:8080"

// newMonitorCommand is "kubectl watchcache monitor": the watch, for weeks in
// a pod. No dashboard; one JSON line per note that matters (a list
// complete, a relist and what it found, a 410, an error, a finding);
// /metrics, /healthz and /readyz on --listen; SIGTERM ends it cleanly (the
// probe's Lease deleted). With no kubeconfig it uses the pod's service
// account, as kubectl does.
func newMonitorCommand(streams genericiooptions.IOStreams, version string) *cobra.Command {
	o, run := newWatchCommand(streams, version)
	o.monitor = true
	o.GiveUpAfter = 0 // a monitor retries for ever: its readiness says it is behind
	cmd := &cobra.Command{
		Use:   "monitor RESOURCE[,RESOURCE...] [-A | -n NAMESPACE] [--listen ADDRESS]",
		Short: "Watch resources for as long as it runs, for a pod: JSON log lines of what matters, /metrics, /healthz, /readyz",
		Long: "Run the watch of kubectl watchcache RESOURCE without a dashboard, for as long as it runs (in a pod of the\n" +
			"cluster, say). It logs one JSON line per note that matters: each list complete (the first\n" +
			"sync, each relist) and what a relist found missed, each 410 Gone, each error, each finding. It serves Prometheus\n" +
			"metrics at http://ADDRESS/metrics, /healthz (up) and /readyz (ready once every resource has synced once) on\n" +
			"--listen, loopback unless told. SIGINT and SIGTERM end it cleanly, the probe's Lease deleted. Without a\n" +
			"kubeconfig it uses the pod's service account (in-cluster configuration), as kubectl does.",
		Example: "  kubectl watchcache monitor deployments.apps,configmaps -A\n" +
			"  kubectl watchcache monitor pods -n shop --listen :8080 --probe shop   # in a pod",
		RunE:              run,
		ValidArgsFunction: completeResources(o.ConfigFlags),
	}
	o.AddFlags(cmd)
	// Its lines are JSON: -o text is refused, not quietly turned into JSON.
	o.Display.Output, cmd.Flags().Lookup("output").DefValue = "json", "json"
	// What the monitor always does, it is not asked: its lines are JSON, its
	// metrics at --listen, and it runs until stopped; it has no object
	// detail to show whole objects in.
	for _, name := range []string{"metrics-address", "once", "output", "no-tui", "keep-objects"} {
		_ = cmd.Flags().MarkHidden(name)
	}
	cmd.Flags().Lookup("summary").Usage = "Print the summary, as JSON, at exit"
	cmd.Flags().StringVar(&o.Listen, "listen", defaultListen, "Serve /metrics, /healthz and /readyz at this address (any other than a loopback address makes them reachable from other hosts)")
	return cmd
}

// validateMonitor fixes what the monitor always does: lines as JSON, no
// dashboard, metrics at --listen.
func (o *WatchOptions) validateMonitor() error {
	if o.Listen == "" {
		return usageErrorf("monitor needs --listen ADDRESS: its metrics and probes are served there")
	}
	if o.Monitor.MetricsAddress != "" {
		return usageErrorf("monitor serves its metrics at --listen %s: use --listen, not --metrics-address", o.Listen)
	}
	if o.Once {
		return usageErrorf("monitor runs until stopped: --once is for kubectl watchcache RESOURCE")
	}
	if o.Display.Output != "json" {
		return usageErrorf("invalid output format %q: monitor logs JSON lines", o.Display.Output)
	}
	o.Display.NoTUI = true
	o.Monitor.MetricsAddress, o.Monitor.addressFlag = o.Listen, "--listen"
	return nil
}
