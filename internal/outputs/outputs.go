// Package outputs attaches what a run shows to each of its subjects
// (session.Subject), one way for a live watch, a replay, the proxy's
// observed streams and their replay: the line output (text or JSON lines)
// or the dashboard, the Prometheus metrics and the --fail-on rules. The
// commands turn their flags into Options and call it.
package outputs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/alert"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/lines"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/probe"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/subjects"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui"
)

// Options say where a run's notes go: the same for a live watch, a
// replay and the proxy's observed streams.
type Options struct {
	// In, Out and ErrOut are the terminal's: the dashboard reads In and
	// draws on Out; lines, summaries go to Out, warnings to ErrOut.
	In          io.Reader
	Out, ErrOut io.Writer
	// Dashboard shows the run on the dashboard; otherwise each note is a
	// line on Out, text or (JSON) JSON lines.
	Dashboard bool
	JSON      bool
	// Summary prints the summaries at the end (JSON with JSON).
	Summary bool
	// Monitor is the metrics endpoint and the --fail-on rules.
	Monitor MonitorOptions
	// Findings tune every findings engine of the run (thresholds, ignored ids).
	Findings findings.Options
	// Significant prints only the notes that matter to a long-running
	// monitor (lines.Significant) and the findings.
	Significant bool
}

// MonitorOptions are the Prometheus metrics and the --fail-on rules of a run.
type MonitorOptions struct {
	// MetricsAddress serves the metrics at http://ADDRESS/metrics when set;
	// AddressFlag is the flag that set it, for messages ("--metrics-address"
	// when empty).
	MetricsAddress, AddressFlag string
	// Rules end the run with an *AlertError when one trips, unless WarnOnly
	// (--fail-on-warn): then the trip is shown and the run goes on.
	Rules    []alert.Rule
	WarnOnly bool
	// Health serves /healthz and /readyz beside /metrics: ready once every
	// resource has completed a list.
	Health bool
}

// Outputs are a run's outputs, attached in one place: the line output or
// the dashboard, the metrics and the rules.
type Outputs struct {
	opts Options

	lines *lines.Output
	sess  *session.Session
	// traits are what the session's subjects are (subjects.Of its header,
	// which a live run's records).
	traits subjects.Traits

	metrics *metrics.Metrics
	server  *metrics.Server
	rules   *alert.Monitor
	stop    context.CancelFunc // ends the session at a trip (fail mode)
	// stopRules ends a live run's rules once its session returned, at
	// ended on its clock: a run that ended by itself (every resource
	// failed) keeps its screen, and no rule counts on, nor trips, after its
	// end, nor at the last evaluation, however long the screen is read.
	stopRules context.CancelFunc
	// rulesDone is closed once a live run's rules stopped evaluating: an
	// evaluation under way may still print a warning.
	rulesDone chan struct{}
	ended     time.Time
	stopMu    sync.Mutex

	warnings chan alert.Trip // line output in warn mode: printed as they come
	printed  chan struct{}

	mu      sync.Mutex
	views   []tui.Resource    // the subjects' dashboard views, until it runs
	added   chan tui.Resource // the subjects that come while it runs
	running bool
	errs    error // what went wrong giving subjects their outputs
	// lineNames counts the lines' names given each name: a second watch of
	// a resource (the probe's Lease beside the user's leases) is name#2.
	lineNames map[string]int

	// Rewinding, when set and true, says the dashboard ended to start the
	// replay again: no summary yet.
	Rewinding func() bool
}

// New starts the metrics endpoint (listening at once, so a taken port
// fails here, before a session exists) and the rules. Attach a session
// next: /metrics serves from then on, labelled as its subjects' Traits say.
// Call Finish at the end.
func New(o Options) (*Outputs, error) {
	x := &Outputs{opts: o}
	// A message names what a proxied client chose (its selectors, its
	// User-Agent): its control characters must not reach a terminal.
	x.opts.ErrOut = format.Printable(o.ErrOut)
	m := o.Monitor
	if m.MetricsAddress != "" {
		flag := cmp.Or(m.AddressFlag, "--metrics-address")
		if loopback, _ := metrics.IsLoopback(m.MetricsAddress); !loopback {
			fmt.Fprintf(o.ErrOut, "warning: %s %s is not a loopback address: the metrics are reachable from other hosts\n", flag, m.MetricsAddress)
		}
		var ready func() error
		if m.Health {
			ready = x.ready
		}
		srv, err := metrics.Listen(m.MetricsAddress, ready)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, m.MetricsAddress, err)
		}
		x.server = srv
		fmt.Fprintln(o.ErrOut, metrics.ServingLineOf(srv))
	}
	if len(m.Rules) > 0 {
		x.rules = alert.NewMonitor(m.Rules, x.onTrip)
		if m.WarnOnly && !o.Dashboard {
			x.warnings, x.printed = make(chan alert.Trip, 1024), make(chan struct{})
			go x.printWarnings()
		}
	}
	return x, nil
}

// ready is /readyz's answer: nil once every subject of the session has
// completed a list, else which have not.
func (x *Outputs) ready() error {
	x.mu.Lock()
	sess := x.sess
	x.mu.Unlock()
	if sess == nil {
		return errors.New("not started")
	}
	var waiting []string
	for _, sub := range sess.Subjects() {
		if sub.Stats().Synced.IsZero() {
			waiting = append(waiting, sub.Name())
		}
	}
	if len(waiting) > 0 {
		return fmt.Errorf("not synced yet: %s", strings.Join(waiting, ", "))
	}
	return nil
}

// Rewindable says nothing outlives one replay of a session: no metrics and
// no rules (they count the whole trace once), so a replay may start again.
func (x *Outputs) Rewindable() bool { return x.server == nil && x.rules == nil }

// Attach gives each subject of sess its outputs, those it has and those
// that come while it runs (the proxy's streams): the line output or a
// dashboard view, its metrics and its rules (a replay's rules are
// evaluated on its virtual clock). Call it before the session runs; a
// replay that starts again attaches its new session.
func (x *Outputs) Attach(sess *session.Session) error {
	x.mu.Lock()
	x.sess, x.traits, x.views, x.added, x.running = sess, subjects.Of(sess.Header), nil, make(chan tui.Resource, 1024), false
	x.lineNames = map[string]int{}
	x.mu.Unlock()
	if x.server != nil && x.metrics == nil { // the first session: its subjects say the labels
		x.metrics = metrics.New(x.traits.Clients)
		x.server.Publish(x.metrics)
	}
	if !x.opts.Dashboard {
		// The names attach gives the lines, in the same order (name#N for
		// a second subject of a name), size their column.
		var names []string
		counts := map[string]int{}
		for _, sub := range sess.Subjects() {
			names = append(names, numbered(counts, sub.Name()))
		}
		x.lines = lines.NewOutput(x.opts.Out, x.opts.JSON, names...)
		if x.opts.Significant {
			x.lines.Only(lines.Significant)
		}
	}
	sess.OnSubject(x.attach)
	x.attachProbe(sess)
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.errs
}

// attach gives one subject its outputs; it runs before the subject is fed.
func (x *Outputs) attach(sub session.Subject) {
	sess, name, t := x.sess, sub.Name(), sub.Target()
	rh, client := sub.Describe()
	sub.Findings().Configure(x.opts.Findings)
	var notes *tui.NoteBuffer
	if x.opts.Dashboard {
		notes = tui.NewNoteBuffer(tui.DefaultNoteBuffer)
		sub.OnNote(notes.Push)
	} else {
		x.mu.Lock()
		lineName := numbered(x.lineNames, name)
		x.mu.Unlock()
		sub.OnNote(x.lines.For(lineName))
		sub.Findings().OnRaise(x.lines.Finding(lineName))
		switch {
		case client != (trace.Client{}):
			fmt.Fprintf(x.opts.ErrOut, "stream %s: %s from %s (%s)%s\n", name, Describe(t), client.RemoteAddr, client.UserAgent, asks(rh, client))
		case lineName != name:
			fmt.Fprintf(x.opts.ErrOut, "lines of %s are the watch of %s\n", lineName, Describe(t))
		}
	}
	if x.metrics != nil {
		// A stream's client is its User-Agent, never its number: a
		// short-lived client must not add series each time; the streams of
		// one client that share every label share their series.
		set, err := x.metrics.Add(metrics.Labels{Resource: t.Resource.String(), Namespace: t.Namespace,
			LabelSelector: t.LabelSelector, FieldSelector: t.FieldSelector, Client: client.UserAgent})
		if err != nil {
			x.fail(err)
		} else {
			sub.OnNote(set.Note)
			set.Attach(metrics.Source{Stats: sub.Stats, Store: sub.Store().Counters, Now: sess.Now, Findings: sub.Findings().List})
		}
	}
	if x.rules != nil {
		rs := x.rules.Add(Describe(t))
		if w, ok := sub.(*session.Watched); ok {
			// A trip is a note of the resource's run, in order with its
			// reflector's: the lines and the dashboard's log show it, and a
			// trace records it for the report's "Alert rules". A proxy's
			// streams take no rules.
			rs.OnTrip(func(tr alert.Trip) {
				w.Reflector.Report(reflector.Decision{Reason: reflector.ReasonAlert, Cause: tr.String()})
			})
		}
		rs.Attach(sub.Stats)
		rs.AttachFindings(sub.Findings().List)
		if sess.Replay != nil {
			sess.Replay.OnClockAdvance(rs.ClockAdvanced)
		}
	}
	if notes != nil {
		x.addView(x.view(sub, notes))
	}
}

// numbered is the name the lines give a subject named name: name, and
// name#N for the N-th subject of that name; counts counts the names given.
func numbered(counts map[string]int, name string) string {
	counts[name]++
	if n := counts[name]; n > 1 {
		return fmt.Sprintf("%s#%d", name, n)
	}
	return name
}

// asks is ", asking for …" what a stream's client asked for ("" when it says nothing).
func asks(rh trace.ResourceHeader, client trace.Client) string {
	a := (&summary.StreamSummary{Wire: rh.Options.Wire, MetadataOnly: rh.Options.MetadataOnly, Table: observed.ParseAccept(client.Accept).Table}).Asks()
	if a == "" {
		return ""
	}
	return ", asking for " + a
}

// view is sub's dashboard view. A live reflector of our own offers what
// needs a cluster (forced relists, audits); a replay and another program's
// reflector do not.
func (x *Outputs) view(sub session.Subject, notes *tui.NoteBuffer) tui.Resource {
	rh, client := sub.Describe()
	o := rh.Options
	feed := tui.Feed{Stats: sub.Stats, Store: sub.Store(), Notes: notes, Findings: sub.Findings().List, Churn: sub.Churn, Diffing: sub.Diffs, Alerts: x.alerts()}
	if w, ok := sub.(*session.Watched); ok {
		// In a replay neither is set: the dashboard says each needs a live cluster.
		if x.sess.Replay == nil {
			rf := w.Reflector
			feed.ForceRelist = rf.ForceRelist
			feed.Audit = func(ctx context.Context) (*reflector.AuditReport, error) { return rf.Audit(ctx, 5*time.Second) }
		}
	}
	// What the client chose is shown: no control character reaches the screen.
	target := sub.Target()
	for _, s := range []*string{&target.Namespace, &target.LabelSelector, &target.FieldSelector, &target.Resource.GVR.Group, &target.Resource.GVR.Version, &target.Resource.GVR.Resource} {
		*s = format.PrintableString(*s)
	}
	return tui.Resource{Target: target, Client: format.PrintableString(client.UserAgent), ClientAddr: client.RemoteAddr, Strategy: o.Strategy, PageSize: o.PageSize,
		MetadataOnly: o.MetadataOnly, Wire: o.Wire, Table: observed.ParseAccept(client.Accept).Table, Feed: feed,
		Probe: client.UserAgent == "" && strings.HasPrefix(sub.Target().FieldSelector, "metadata.name="+probe.NamePrefix)}
}

// addView shows a subject on the dashboard: among the first rows before it
// runs, added to it after.
func (x *Outputs) addView(v tui.Resource) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.running {
		x.views = append(x.views, v)
		return
	}
	select {
	case x.added <- v:
	default:
		x.errs = errors.Join(x.errs, fmt.Errorf("the dashboard could not take %s: more than %d at once", v.Target.Resource, cap(x.added)))
	}
}

// Describe says what t watches, for people (in alerts, and the proxy's
// stream lines): "configmaps.v1 in namespace demo -l app=web".
func Describe(t reflector.Target) string {
	name := t.Resource.String()
	switch {
	case t.Namespace != "":
		name += " in namespace " + t.Namespace
	case t.Resource.Namespaced:
		name += " in all namespaces"
	}
	if t.LabelSelector != "" {
		name += " -l " + t.LabelSelector
	}
	if t.FieldSelector != "" {
		name += " --field-selector " + t.FieldSelector
	}
	return name
}

// Run runs the attached session under runCtx (ended also when a rule trips,
// unless WarnOnly) and shows it; the dashboard lives until the user quits or
// uiCtx ends: it outlives a replay's trace, and a live session that ended by
// itself keeps its last screen, its rules stopped, until q
// (tui.Options.Ended). cancel stops the session.
// Then it evaluates the rules once more, prints the summaries, and says
// where a recorded trace was written.
func (x *Outputs) Run(runCtx, uiCtx context.Context, cancel context.CancelFunc, opts tui.Options) error {
	sess := x.sess
	runCtx = x.context(runCtx)
	errc := make(chan error, 1)
	ended := make(chan struct{})
	x.mu.Lock()
	views := x.views
	x.running = true
	x.mu.Unlock()
	go func() {
		err := sess.Run(runCtx)
		x.endRules()
		close(ended)
		errc <- err
	}()
	var runErr, uiErr error
	if x.opts.Dashboard {
		if opts.Now == nil {
			opts.Now = sess.Now
		}
		opts.Probe = probeView(sess)
		if x.server != nil {
			opts.Metrics = x.server.URL() // the port chosen for :0 too
		}
		if x.traits.Arrive {
			opts.Added = x.added // subjects come while it runs
		} else if sess.Replay == nil {
			// A live run that ends by itself (--once, --duration, a tripped
			// rule, every resource stopped) keeps its last screen until q;
			// a replay's end is its badge's "ended".
			opts.Ended = ended
		}
		uiErr = tui.Run(uiCtx, opts, views, x.opts.In, x.opts.Out)
		cancel()
		runErr = <-errc
	} else {
		runErr = <-errc
		if dropped := x.lines.Close(); dropped > 0 {
			fmt.Fprintf(x.opts.ErrOut, "warning: %d output lines were dropped because the output could not keep up\n", dropped)
		}
	}
	x.end()
	// A summary that could not be written is the run's error, not the
	// dashboard's: a dashboard quit with ctrl-c ends with context.Canceled,
	// which must not hide it.
	var sumErr error
	if x.opts.Summary && (x.Rewinding == nil || !x.Rewinding()) {
		sumErr = x.writeSummaries()
	}
	if uiErr != nil && !errors.Is(uiErr, context.Canceled) {
		return errors.Join(runErr, fmt.Errorf("dashboard: %w", uiErr), sumErr)
	}
	if sess.Recorder != nil && runErr == nil {
		fmt.Fprintf(x.opts.ErrOut, "trace written to %s\n", sess.TracePath)
	}
	return errors.Join(runErr, sumErr)
}

// writeSummaries prints the session's summaries, the summary contract: one
// resource's summary as it always was, several as {"resources": [...]} in
// the session's order; clients' streams always as several (they come and
// go), and it says when none came.
func (x *Outputs) writeSummaries() error {
	sums, t, w := x.sess.Summaries(), x.traits, x.opts.Out
	switch {
	case t.Clients && x.opts.JSON:
		return summary.WriteObservedJSON(w, sums)
	case t.None != "" && len(sums) == 0:
		_, err := io.WriteString(w, t.None+"\n")
		return err
	case x.opts.JSON && len(sums) == 1:
		return sums[0].WriteJSON(w)
	case x.opts.JSON:
		return summary.WriteAllJSON(w, sums)
	}
	w = format.Printable(w)
	for i, s := range sums {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return fmt.Errorf("writing summary: %w", err)
			}
		}
		if err := s.WriteText(w); err != nil {
			return err
		}
	}
	return nil
}

// context is ctx, ended also when a rule trips (unless WarnOnly). A live
// run's rules are evaluated every second until it ends.
func (x *Outputs) context(ctx context.Context) context.Context {
	if x.rules == nil {
		return ctx
	}
	ctx, cancel := context.WithCancel(ctx)
	rulesCtx, stopRules := context.WithCancel(ctx)
	var done chan struct{}
	live := x.sess != nil && x.sess.Replay == nil
	if live {
		done = make(chan struct{})
	}
	// Stored before the rules run: a trip stops the run with them.
	x.stopMu.Lock()
	x.stop, x.stopRules, x.rulesDone = cancel, stopRules, done
	x.stopMu.Unlock()
	if live {
		go func() {
			defer close(done)
			x.rules.Run(rulesCtx, x.sess.Now)
		}()
	}
	return ctx
}

// endRules stops evaluating a live run's rules: its session returned now.
// It waits for an evaluation under way, so that none trips after it (Finish
// then closes the warnings an evaluation sends on).
func (x *Outputs) endRules() {
	x.stopMu.Lock()
	stop, done := x.stopRules, x.rulesDone
	x.ended = x.sess.Now()
	x.stopMu.Unlock()
	if stop != nil {
		stop()
	}
	if done != nil {
		<-done
	}
}

// onTrip is the rules' trip callback; it never blocks.
func (x *Outputs) onTrip(t alert.Trip) {
	if x.opts.Monitor.WarnOnly {
		if x.warnings != nil {
			select {
			case x.warnings <- t:
			default:
			}
		}
		return
	}
	x.stopMu.Lock()
	stop := x.stop
	x.stopMu.Unlock()
	if stop != nil {
		stop()
	}
}

func (x *Outputs) printWarnings() {
	defer close(x.printed)
	for t := range x.warnings {
		fmt.Fprintf(x.opts.ErrOut, "warning: --fail-on %s (--fail-on-warn: the run goes on)\n", t)
	}
}

// Tripped reports whether a rule ended the run.
func (x *Outputs) Tripped() bool {
	return x.rules != nil && !x.opts.Monitor.WarnOnly && len(x.rules.Trips()) > 0
}

// end evaluates the rules once more, as they were when the session returned
// (unless one already ended the run).
func (x *Outputs) end() {
	if x.rules == nil || x.sess == nil || x.Tripped() {
		return
	}
	x.stopMu.Lock()
	ended := x.ended
	x.stopMu.Unlock()
	x.rules.Evaluate(ended)
}

// alerts is the dashboard's view of the rules (nil without rules).
func (x *Outputs) alerts() func() tui.Alerts {
	if x.rules == nil {
		return nil
	}
	return func() tui.Alerts {
		var a tui.Alerts
		for _, s := range x.rules.Statuses() {
			a.Rows = append(a.Rows, tui.AlertRow{Rule: s.Rule.String(), Resource: s.Resource, Value: s.FormatValue(),
				Threshold: s.FormatThreshold(), Fraction: s.Fraction(), Tripped: s.Tripped})
		}
		trips := x.rules.Trips()
		if len(trips) == 0 {
			return a
		}
		// What tripped first, the words a narrow screen may cut last.
		words := make([]string, len(trips))
		for i, t := range trips {
			words[i] = t.Short()
		}
		if x.opts.Monitor.WarnOnly {
			a.Banner = strings.Join(words, "; ") + " · --fail-on-warn: the run goes on"
		} else {
			a.Fatal = true
			a.Banner = strings.Join(words, "; ") + " · the run stopped, q exits with status 3"
		}
		return a
	}
}

// AlertError is the error of a run that a --fail-on rule ended (exit status 3).
type AlertError struct{ Trips []alert.Trip }

func (e *AlertError) Error() string {
	lines := make([]string, len(e.Trips))
	for i, t := range e.Trips {
		lines[i] = "--fail-on " + t.String()
	}
	// The CLI prints "error: " before the first line; the others get it here.
	return strings.Join(lines, "\nerror: ")
}

// Finish ends the outputs after the run that ended with err: it stops the
// metrics endpoint, prints the warnings a dashboard held back, and turns a
// trip into the run's error (*AlertError).
func (x *Outputs) Finish(err error) error {
	if x.server != nil {
		if cerr := x.server.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	x.mu.Lock()
	err = errors.Join(err, x.errs)
	x.mu.Unlock()
	if x.rules == nil {
		return err
	}
	if x.warnings != nil {
		close(x.warnings)
		<-x.printed
	}
	trips := x.rules.Trips()
	if len(trips) == 0 {
		return err
	}
	if x.opts.Monitor.WarnOnly {
		if x.opts.Dashboard {
			for _, t := range trips {
				fmt.Fprintf(x.opts.ErrOut, "warning: --fail-on %s (--fail-on-warn: the run went on)\n", t)
			}
		}
		return err
	}
	return errors.Join(err, &AlertError{Trips: trips})
}

func (x *Outputs) fail(err error) {
	x.mu.Lock()
	x.errs = errors.Join(x.errs, err)
	x.mu.Unlock()
}
