package cli

import (
	"cmp"

	"github.com/spf13/cobra"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/alert"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/outputs"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

// MonitorOptions are the metrics and alert-rule flags, shared by the live
// and replay commands.
type MonitorOptions struct {
	MetricsAddress string
	FailOn         []string
	FailOnWarn     bool

	rules []alert.Rule
	// addressFlag is the flag that set MetricsAddress: the monitor's --listen,
	// or "" for --metrics-address.
	addressFlag string
}

func (o *MonitorOptions) addFlags(cmd *cobra.Command, replay bool) {
	metricsHelp := "Serve Prometheus metrics at http://ADDRESS/metrics, e.g. 127.0.0.1:9090 (off when empty; any other than a loopback address makes them reachable from other hosts)"
	if replay {
		metricsHelp += "; at a --speed other than 1 the metrics' rates are meaningless"
	}
	f := cmd.Flags()
	f.StringVar(&o.MetricsAddress, "metrics-address", "", metricsHelp)
	f.StringArrayVar(&o.FailOn, "fail-on", nil, "Alert rule MEASURE>VALUE or MEASURE>=VALUE, repeatable, evaluated per resource every second and at the end: "+
		"the first that trips ends the run with exit status 3 (e.g. relists>0, gone>3, bookmark-age>3m, no-progress>10m, sync>30s). Measures: "+alert.MeasureList())
	f.BoolVar(&o.FailOnWarn, "fail-on-warn", false, "A --fail-on rule that trips is shown as an alert and the run goes on (exit status 0)")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, m := range alert.Measures() {
			out = append(out, string(m)+">")
		}
		for _, e := range findings.Catalogue() {
			out = append(out, "finding:"+string(e.ID)+">")
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
}

func (o *MonitorOptions) validate() error {
	rules, err := alert.ParseAll(o.FailOn)
	if err != nil {
		return usageError{err}
	}
	o.rules = rules
	if o.FailOnWarn && len(rules) == 0 {
		return usageErrorf("--fail-on-warn needs at least one --fail-on rule")
	}
	return checkMetricsAddress(cmp.Or(o.addressFlag, "--metrics-address"), o.MetricsAddress)
}

// checkMetricsAddress refuses a metrics address flag set to what is not
// HOST:PORT, as a bad command line ("" is no metrics).
func checkMetricsAddress(flag, addr string) error {
	if addr == "" {
		return nil
	}
	if _, err := metrics.IsLoopback(addr); err != nil {
		return usageErrorf("invalid %s %q: want HOST:PORT, e.g. 127.0.0.1:9090", flag, addr)
	}
	return nil
}

// options are the monitor's options for the run (after validate).
func (o *MonitorOptions) options() outputs.MonitorOptions {
	return outputs.MonitorOptions{MetricsAddress: o.MetricsAddress, AddressFlag: o.addressFlag, Rules: o.rules, WarnOnly: o.FailOnWarn}
}
