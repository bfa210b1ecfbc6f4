package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/alert"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui"
)

// MonitorOptions are the metrics and alert-rule flags, shared by the live
// and replay commands.
type MonitorOptions struct {
	MetricsAddress string
	FailOn         []string
	FailOnWarn     bool

	rules []alert.Rule
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
	if o.MetricsAddress != "" {
		if _, err := metrics.IsLoopback(o.MetricsAddress); err != nil {
			return usageErrorf("invalid --metrics-address %q: want HOST:PORT, e.g. 127.0.0.1:9090", o.MetricsAddress)
		}
	}
	return nil
}

// alertError is the error of a run that a --fail-on rule ended (exit status 3).
type alertError struct{ trips []alert.Trip }

func (e *alertError) Error() string {
	lines := make([]string, len(e.trips))
	for i, t := range e.trips {
		lines[i] = "--fail-on " + t.String()
	}
	// Execute prints "error: " before the first line; the others get it here.
	return strings.Join(lines, "\nerror: ")
}

// monitored is what the metrics and the rules call the resource of a run.
type monitored struct {
	labels metrics.Labels
	// name describes it in alerts: "configmaps.v1 in namespace demo -l app=web".
	name string
}

func newMonitored(t reflector.Target) monitored {
	r := monitored{labels: metrics.Labels{Resource: t.Resource.String(), Namespace: t.Namespace, LabelSelector: t.LabelSelector, FieldSelector: t.FieldSelector}}
	r.name = r.labels.Resource
	switch {
	case t.Namespace != "":
		r.name += " in namespace " + t.Namespace
	case t.Resource.Namespaced:
		r.name += " in all namespaces"
	}
	if t.LabelSelector != "" {
		r.name += " -l " + t.LabelSelector
	}
	if t.FieldSelector != "" {
		r.name += " --field-selector " + t.FieldSelector
	}
	return r
}

// monitor runs the metrics endpoint and the alert rules of one run.
type monitor struct {
	opts    *MonitorOptions
	streams genericiooptions.IOStreams
	useTUI  bool

	metrics *metrics.Metrics
	server  *metrics.Server
	rules   *alert.Monitor
	sess    *session.Session
	stop    context.CancelFunc // ends the session at a trip (fail mode)
	stopMu  sync.Mutex

	warnings chan alert.Trip // line output in warn mode: printed as they come
	printed  chan struct{}
}

// start starts the metrics endpoint (listening at once, so a taken port fails
// here) and the rule monitor. Add the resource next; call finish after.
func (o *MonitorOptions) start(streams genericiooptions.IOStreams, useTUI bool) (*monitor, error) {
	mon := &monitor{opts: o, streams: streams, useTUI: useTUI}
	if o.MetricsAddress != "" {
		if loopback, _ := metrics.IsLoopback(o.MetricsAddress); !loopback {
			fmt.Fprintf(streams.ErrOut, "warning: --metrics-address %s is not a loopback address: the metrics are reachable from other hosts\n", o.MetricsAddress)
		}
		mon.metrics = metrics.New()
		srv, err := metrics.Serve(o.MetricsAddress, mon.metrics)
		if err != nil {
			return nil, fmt.Errorf("--metrics-address %s: %w", o.MetricsAddress, err)
		}
		mon.server = srv
		fmt.Fprintf(streams.ErrOut, "serving metrics at %s\n", srv.URL())
	}
	if len(o.rules) > 0 {
		mon.rules = alert.NewMonitor(o.rules, mon.onTrip)
		if o.FailOnWarn && !useTUI {
			mon.warnings, mon.printed = make(chan alert.Trip, 1024), make(chan struct{})
			go mon.printWarnings()
		}
	}
	return mon, nil
}

// attach registers each of the session's resources with the metrics and
// the rules, and has them follow its notes, stats and store; a replay's
// rules are evaluated on its virtual clock. Call it before the session runs.
func (mon *monitor) attach(sess *session.Session) error {
	mon.sess = sess
	for _, r := range sess.Resources {
		res := newMonitored(r.Target())
		if mon.metrics != nil {
			mres, err := mon.metrics.Add(res.labels)
			if err != nil {
				return err
			}
			r.OnNote(mres.Note)
			mres.Attach(metrics.Source{Stats: r.Reflector.Stats, Counters: r.Reflector.Counters, Store: r.Store.Counters, Now: sess.Now})
		}
		if mon.rules != nil {
			ares := mon.rules.Add(res.name)
			r.OnNote(ares.Note)
			ares.Attach(r.Reflector.Stats)
			if sess.Replay != nil {
				sess.Replay.OnClockAdvance(ares.ClockAdvanced)
			}
		}
	}
	return nil
}

// sessionContext is ctx, ended also when a rule trips (unless --fail-on-warn).
// A live run's rules are evaluated every second until it ends.
func (mon *monitor) sessionContext(ctx context.Context) context.Context {
	if mon.rules == nil {
		return ctx
	}
	ctx, cancel := context.WithCancel(ctx)
	mon.stopMu.Lock()
	mon.stop = cancel
	mon.stopMu.Unlock()
	if mon.sess != nil && mon.sess.Replay == nil {
		go mon.rules.Run(ctx, mon.sess.Now)
	}
	return ctx
}

// onTrip is the monitor's trip callback; it never blocks.
func (mon *monitor) onTrip(t alert.Trip) {
	if mon.opts.FailOnWarn {
		if mon.warnings != nil {
			select {
			case mon.warnings <- t:
			default:
			}
		}
		return
	}
	mon.stopMu.Lock()
	stop := mon.stop
	mon.stopMu.Unlock()
	if stop != nil {
		stop()
	}
}

func (mon *monitor) printWarnings() {
	defer close(mon.printed)
	for t := range mon.warnings {
		fmt.Fprintf(mon.streams.ErrOut, "warning: --fail-on %s (--fail-on-warn: the run goes on)\n", t)
	}
}

// tripped reports whether a rule ended the run.
func (mon *monitor) tripped() bool {
	return mon.rules != nil && !mon.opts.FailOnWarn && len(mon.rules.Trips()) > 0
}

// end evaluates the rules once more at the end of the run (unless one already ended it).
func (mon *monitor) end() {
	if mon.rules == nil || mon.sess == nil || mon.tripped() {
		return
	}
	mon.rules.Evaluate(mon.sess.Now())
}

// alerts is the dashboard's view of the rules (nil without rules).
func (mon *monitor) alerts() func() tui.Alerts {
	if mon.rules == nil {
		return nil
	}
	return func() tui.Alerts {
		var a tui.Alerts
		for _, s := range mon.rules.Statuses() {
			a.Rows = append(a.Rows, tui.AlertRow{Rule: s.Rule.String(), Resource: s.Resource, Value: s.FormatValue(),
				Threshold: s.FormatThreshold(), Fraction: s.Fraction(), Tripped: s.Tripped})
		}
		trips := mon.rules.Trips()
		if len(trips) == 0 {
			return a
		}
		words := make([]string, len(trips))
		for i, t := range trips {
			words[i] = t.String()
		}
		if mon.opts.FailOnWarn {
			a.Banner = strings.Join(words, "; ") + " (--fail-on-warn: the run goes on)"
		} else {
			a.Fatal = true
			a.Banner = "the run stopped, q exits with status 3: " + strings.Join(words, "; ")
		}
		return a
	}
}

// finish stops the metrics endpoint, prints the warnings a dashboard held
// back, and turns a trip into the run's error.
func (mon *monitor) finish(err error) error {
	if mon.server != nil {
		if cerr := mon.server.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	if mon.rules == nil {
		return err
	}
	if mon.warnings != nil {
		close(mon.warnings)
		<-mon.printed
	}
	trips := mon.rules.Trips()
	if len(trips) == 0 {
		return err
	}
	if mon.opts.FailOnWarn {
		if mon.useTUI {
			for _, t := range trips {
				fmt.Fprintf(mon.streams.ErrOut, "warning: --fail-on %s (--fail-on-warn: the run went on)\n", t)
			}
		}
		return err
	}
	return errors.Join(err, &alertError{trips: trips})
}
