// Package outputs attaches what a run shows, in one place for a live watch,
// a replay and the proxy's observed streams: the line output (text or JSON
// lines) or the dashboard, the Prometheus metrics, the --fail-on rules, and
// the proxy's trace. The commands turn their flags into Options and call it.
package outputs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/alert"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/lines"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
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
	// Observed says the run follows observed streams (the proxy, or the
	// replay of its trace): their metrics carry a client label, and they
	// come through OnStream, each with its own outputs.
	Observed bool
	// TracePath records the observed streams of a proxy run (Rest names its
	// server), each a resource of the trace, keeping TraceObjects of their
	// objects. A live watch records in NewLive.
	TracePath          string
	TraceObjects       trace.ObjectMode
	TraceUnsafeSecrets bool
	Rest               *rest.Config
	// Now is the observed streams' clock (the replay's, in a replay).
	Now func() time.Time
	// Findings tune every findings engine of the run (thresholds, ignored ids).
	Findings findings.Options
}

// MonitorOptions are the Prometheus metrics and the --fail-on rules of a run.
type MonitorOptions struct {
	// MetricsAddress serves the metrics at http://ADDRESS/metrics when set.
	MetricsAddress string
	// Rules end the run with an *AlertError when one trips, unless WarnOnly
	// (--fail-on-warn): then the trip is shown and the run goes on.
	Rules    []alert.Rule
	WarnOnly bool
}

// Outputs are a run's outputs, attached in one place: the line output or
// the dashboard, the metrics, the rules, and an observed run's trace.
type Outputs struct {
	opts Options

	lines *lines.Output
	notes []*tui.NoteBuffer // one per watched resource, for the dashboard
	sess  *session.Session

	metrics *metrics.Metrics
	server  *metrics.Server
	rules   *alert.Monitor
	stop    context.CancelFunc // ends the session at a trip (fail mode)
	stopMu  sync.Mutex

	warnings chan alert.Trip // line output in warn mode: printed as they come
	printed  chan struct{}

	added chan tui.Resource // observed streams, for the dashboard
	rec   *trace.Recorder   // the proxy's trace
	mu    sync.Mutex
	errs  error // what went wrong giving observed streams their outputs

	// Rewinding, when set and true, says the dashboard ended to start the
	// replay again: no summary yet.
	Rewinding func() bool
}

// New starts the metrics endpoint (listening at once, so a taken port
// fails here) and the rules. Attach a session, or hand OnStream the observed
// streams, next; call Finish at the end.
func New(o Options) (*Outputs, error) {
	x := &Outputs{opts: o}
	if o.Observed && o.TracePath != "" {
		h := trace.Header{StartedAt: time.Now(), Tool: session.Tool + " proxy", Server: session.ServerURL(o.Rest), Observed: true, ServerVersion: session.ServerVersion(o.Rest)}
		rec, err := trace.Create(o.TracePath, h)
		if err != nil {
			return nil, err
		}
		x.rec = rec
	}
	m := o.Monitor
	if m.MetricsAddress != "" {
		if loopback, _ := metrics.IsLoopback(m.MetricsAddress); !loopback {
			fmt.Fprintf(o.ErrOut, "warning: --metrics-address %s is not a loopback address: the metrics are reachable from other hosts\n", m.MetricsAddress)
		}
		if o.Observed {
			x.metrics = metrics.NewObserved()
		} else {
			x.metrics = metrics.New()
		}
		srv, err := metrics.Serve(m.MetricsAddress, x.metrics)
		if err != nil {
			if x.rec != nil {
				_ = x.rec.Close()
			}
			return nil, fmt.Errorf("--metrics-address %s: %w", m.MetricsAddress, err)
		}
		x.server = srv
		fmt.Fprintf(o.ErrOut, "serving metrics at %s\n", srv.URL())
	}
	if len(m.Rules) > 0 {
		x.rules = alert.NewMonitor(m.Rules, x.onTrip)
		if m.WarnOnly && !o.Dashboard {
			x.warnings, x.printed = make(chan alert.Trip, 1024), make(chan struct{})
			go x.printWarnings()
		}
	}
	if o.Observed {
		x.added = make(chan tui.Resource, 1024)
		if !o.Dashboard {
			x.lines = lines.NewOutput(o.Out, o.JSON)
		}
	}
	return x, nil
}

// Rewindable says nothing outlives one replay of a session: no metrics and
// no rules (they count the whole trace once), so a replay may start again.
func (x *Outputs) Rewindable() bool { return x.metrics == nil && x.rules == nil }

// Attach gives each resource of sess its outputs: the line output or a
// dashboard note buffer, its metrics and its rules (a replay's rules are
// evaluated on its virtual clock). Call it before the session runs; a
// replay that starts again attaches its new session.
func (x *Outputs) Attach(sess *session.Session) error {
	x.sess = sess
	x.notes = nil
	for _, r := range sess.Resources {
		r.Findings.Configure(x.opts.Findings)
	}
	if x.opts.Dashboard {
		for _, r := range sess.Resources {
			b := tui.NewNoteBuffer(tui.DefaultNoteBuffer)
			x.notes = append(x.notes, b)
			r.OnNote(b.Push)
		}
	} else {
		names := make([]string, len(sess.Resources))
		for i, r := range sess.Resources {
			names[i] = r.Name()
		}
		x.lines = lines.NewOutput(x.opts.Out, x.opts.JSON, names...)
		for _, r := range sess.Resources {
			r.OnNote(x.lines.For(r.Name()))
			r.Findings.OnRaise(x.lines.Finding(r.Name()))
		}
	}
	for _, r := range sess.Resources {
		t := r.Target()
		if x.metrics != nil {
			set, err := x.metrics.Add(metricLabels(t))
			if err != nil {
				return err
			}
			r.OnNote(set.Note)
			set.Attach(metrics.Source{Stats: r.Reflector.Stats, Store: r.Store.Counters, Now: sess.Now, Findings: r.Findings.List})
		}
		if x.rules != nil {
			sub := x.rules.Add(Describe(t))
			sub.Attach(r.Reflector.Stats)
			sub.AttachFindings(r.Findings.List)
			if sess.Replay != nil {
				sess.Replay.OnClockAdvance(sub.ClockAdvanced)
			}
		}
	}
	x.attachProbe(sess)
	return nil
}

// metricLabels are the metrics' labels of what t watches.
func metricLabels(t reflector.Target) metrics.Labels {
	return metrics.Labels{Resource: t.Resource.String(), Namespace: t.Namespace, LabelSelector: t.LabelSelector, FieldSelector: t.FieldSelector}
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
// itself keeps its last screen until a key (tui.Options.Ended). cancel stops
// the session.
// Then it evaluates the rules once more, prints the summaries, and says
// where a recorded trace was written.
func (x *Outputs) Run(runCtx, uiCtx context.Context, cancel context.CancelFunc, opts tui.Options) error {
	sess := x.sess
	runCtx = x.context(runCtx)
	errc := make(chan error, 1)
	ended := make(chan struct{})
	go func() {
		err := sess.Run(runCtx)
		close(ended)
		errc <- err
	}()
	var runErr, uiErr error
	if x.opts.Dashboard {
		opts.Now = sess.Now
		opts.Probe = probeView(sess)
		if sess.Replay == nil {
			// A live run that ends by itself (--once, --duration, a tripped
			// rule, every resource stopped) keeps its last screen until a
			// key; a replay's end is its badge's "ended".
			opts.Ended = ended
		}
		uiErr = tui.Run(uiCtx, opts, x.views(), x.opts.In, x.opts.Out)
		cancel()
		runErr = <-errc
	} else {
		runErr = <-errc
		x.CloseLines()
	}
	x.end()
	if x.opts.Summary && (x.Rewinding == nil || !x.Rewinding()) {
		if err := WriteSummaries(x.opts.Out, sess.Summaries(), x.opts.JSON); err != nil {
			uiErr = errors.Join(uiErr, err)
		}
	}
	if uiErr != nil && !errors.Is(uiErr, context.Canceled) {
		return errors.Join(runErr, fmt.Errorf("dashboard: %w", uiErr))
	}
	if sess.Recorder != nil && runErr == nil {
		fmt.Fprintf(x.opts.ErrOut, "trace written to %s\n", sess.TracePath)
	}
	return runErr
}

// views are the dashboard's resources: each one's target, list settings and
// feed. A live run adds what needs a cluster (forced relists, audits).
func (x *Outputs) views() []tui.Resource {
	sess := x.sess
	alerts := x.alerts()
	out := make([]tui.Resource, len(sess.Resources))
	for i, r := range sess.Resources {
		o := r.Header.Options
		feed := tui.Feed{Stats: r.Reflector.Stats, Store: r.Store, Alerts: alerts, Notes: x.notes[i], Findings: r.Findings.List,
			Audit: func(context.Context) (*reflector.AuditReport, error) {
				return nil, errors.New("audit needs a live cluster; this is a replay")
			}}
		if sess.Replay == nil {
			rf := r.Reflector
			feed.ForceRelist = rf.ForceRelist
			feed.Audit = func(ctx context.Context) (*reflector.AuditReport, error) { return rf.Audit(ctx, 5*time.Second) }
		}
		out[i] = tui.Resource{Target: r.Target(), Strategy: o.Strategy, PageSize: o.PageSize, MetadataOnly: o.MetadataOnly, Wire: o.Wire, Feed: feed}
	}
	return out
}

// context is ctx, ended also when a rule trips (unless WarnOnly). A live
// run's rules are evaluated every second until it ends.
func (x *Outputs) context(ctx context.Context) context.Context {
	if x.rules == nil {
		return ctx
	}
	ctx, cancel := context.WithCancel(ctx)
	x.stopMu.Lock()
	x.stop = cancel
	x.stopMu.Unlock()
	if x.sess != nil && x.sess.Replay == nil {
		go x.rules.Run(ctx, x.sess.Now)
	}
	return ctx
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

// end evaluates the rules once more at the end of the run (unless one already ended it).
func (x *Outputs) end() {
	if x.rules == nil || x.sess == nil || x.Tripped() {
		return
	}
	x.rules.Evaluate(x.sess.Now())
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
		words := make([]string, len(trips))
		for i, t := range trips {
			words[i] = t.String()
		}
		if x.opts.Monitor.WarnOnly {
			a.Banner = strings.Join(words, "; ") + " (--fail-on-warn: the run goes on)"
		} else {
			a.Fatal = true
			a.Banner = "the run stopped, q exits with status 3: " + strings.Join(words, "; ")
		}
		return a
	}
}

// CloseLines flushes the line output (Run does it for a session).
func (x *Outputs) CloseLines() {
	if x.lines != nil {
		if dropped := x.lines.Close(); dropped > 0 {
			fmt.Fprintf(x.opts.ErrOut, "warning: %d output lines were dropped because the output could not keep up\n", dropped)
		}
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

// Finish ends the outputs after the run that ended with err: it closes an
// observed run's trace, stops the metrics endpoint, prints the warnings a
// dashboard held back, and turns a trip into the run's error (*AlertError).
func (x *Outputs) Finish(err error) error {
	if x.opts.Observed {
		err = errors.Join(err, x.closeTrace())
	}
	if x.server != nil {
		if cerr := x.server.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	if x.opts.Observed {
		x.mu.Lock()
		err = errors.Join(err, x.errs)
		x.mu.Unlock()
	}
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

// WriteSummaries prints the summary contract: one resource's summary as it
// always was, several as {"resources": [...]} in the session's order.
func WriteSummaries(w io.Writer, sums []summary.Summary, asJSON bool) error {
	if len(sums) == 1 {
		if asJSON {
			return sums[0].WriteJSON(w)
		}
		return sums[0].WriteText(w)
	}
	if asJSON {
		return summary.WriteAllJSON(w, sums)
	}
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

// Observed streams: the proxy's, or the replay of its trace.

// Recording says the observed streams are recorded: the proxy keeps the raw
// bytes of what it decodes for the trace.
func (x *Outputs) Recording() bool { return x.rec != nil }

// closeTrace closes the proxy's trace.
func (x *Outputs) closeTrace() error {
	if x.rec == nil {
		return nil
	}
	if err := x.rec.Close(); err != nil {
		return err
	}
	fmt.Fprintf(x.opts.ErrOut, "trace written to %s\n", x.opts.TracePath)
	return nil
}

// FlowControlNames records in the proxy's trace the names of FlowSchemas
// and PriorityLevels (uid → name) learned after the 429s that gave them by
// UID (proxy.Options.OnFlowControlNames).
func (x *Outputs) FlowControlNames(flowSchemas, priorityLevels map[string]string) {
	if x.rec != nil {
		x.rec.FlowControlNames(flowSchemas, priorityLevels)
	}
}

// Added are the observed streams for the dashboard (tui.Options.Added).
func (x *Outputs) Added() <-chan tui.Resource { return x.added }

// StreamName names a stream on every line and row: its resource, namespace
// and number.
func StreamName(s *observed.Stream) string {
	n := s.Target.Resource.String()
	if s.Target.Namespace != "" {
		n += "@" + s.Target.Namespace
	}
	return fmt.Sprintf("%s#%d", n, s.ID)
}

// OnStream hands a new observed stream to every output (proxy.Options.OnStream,
// observed.NewReplay's onStream); it runs before the stream is fed.
func (x *Outputs) OnStream(s *observed.Stream) {
	name := StreamName(s)
	s.Findings().Configure(x.opts.Findings)
	var notes *tui.NoteBuffer
	if x.lines != nil {
		s.OnNote(x.lines.For(name))
		s.Findings().OnRaise(x.lines.Finding(name))
		asks := (&summary.StreamSummary{Wire: s.Asked.Wire, MetadataOnly: s.Asked.MetadataOnly, Table: s.Asked.Table}).Asks()
		if asks != "" {
			asks = ", asking for " + asks
		}
		fmt.Fprintf(x.opts.ErrOut, "stream %s: %s from %s (%s)%s\n", name, Describe(s.Target), s.Client.RemoteAddr, s.Client.UserAgent, asks)
	} else {
		notes = tui.NewNoteBuffer(tui.DefaultNoteBuffer)
		s.OnNote(notes.Push)
	}
	if rec := x.rec; rec != nil {
		// Its resource line records its number, its client and what it asked for.
		rh, client := s.TraceResource()
		rh.Objects, rh.Options.UnsafeSecrets = x.opts.TraceObjects, x.opts.TraceUnsafeSecrets
		if i, err := rec.AddStream(rh, client, s.ID); err == nil {
			s.Record(rec.Observed(i))
			s.OnNote(rec.Notes(i))
		}
	}
	if x.metrics != nil {
		l := metricLabels(s.Target)
		// Its User-Agent, never the stream's number: a short-lived client
		// must not add series each time; the streams of one client that
		// share every label share their series (metrics sums them).
		l.Client = s.Client.UserAgent
		set, err := x.metrics.Add(l)
		if err != nil {
			x.fail(err)
		} else {
			s.OnNote(set.Note)
			set.Attach(metrics.Source{Stats: s.Stats, Store: s.Store().Counters, Now: x.opts.Now, Findings: s.Findings().List})
		}
	}
	if notes != nil {
		// No ForceRelist and no Audit: the dashboard says they are not available for an observed reflector.
		view := tui.Resource{Target: s.Target, Client: s.Client.UserAgent, ClientAddr: s.Client.RemoteAddr, Wire: s.Asked.Wire, MetadataOnly: s.Asked.MetadataOnly, Table: s.Asked.Table,
			Feed: tui.Feed{Stats: s.Stats, Store: s.Store(), Notes: notes, Findings: s.Findings().List}}
		select {
		case x.added <- view:
		default:
			x.fail(fmt.Errorf("the dashboard could not take stream %s: more than %d streams at once", name, cap(x.added)))
		}
	}
}

func (x *Outputs) fail(err error) {
	x.mu.Lock()
	x.errs = errors.Join(x.errs, err)
	x.mu.Unlock()
}

// StreamSummary says whose reflector an observed stream is and what it
// asked for (the summary's `stream`).
func StreamSummary(s *observed.Stream) *summary.StreamSummary {
	return &summary.StreamSummary{ID: s.ID, Namespace: s.Target.Namespace, LabelSelector: s.Target.LabelSelector, FieldSelector: s.Target.FieldSelector,
		UserAgent: s.Client.UserAgent, RemoteAddr: s.Client.RemoteAddr, Accept: s.Asked.Accept, ContentType: s.ContentType(), Wire: s.Asked.Wire,
		MetadataOnly: s.Asked.MetadataOnly, Table: s.Asked.Table, Strategy: s.Options.Strategy, PageSize: s.Options.PageSize}
}

// WriteStreamSummaries prints each observed stream's summary at now (when
// asked), as the watch command does.
func (x *Outputs) WriteStreamSummaries(streams []*observed.Stream, now func() time.Time) error {
	if !x.opts.Summary {
		return nil
	}
	sums := make([]summary.Summary, 0, len(streams))
	for _, s := range streams {
		at, stats := now(), s.Stats()
		sum := summary.New(s.Target.Resource, stats, s.Store(), at)
		sum.Findings = s.Findings().List()
		sum.Stream = StreamSummary(s)
		sum.Stream.ClientLeft = summary.ClientLeftOf(stats, at)
		sums = append(sums, sum)
	}
	if len(sums) == 0 {
		if x.opts.JSON {
			return summary.WriteAllJSON(x.opts.Out, sums)
		}
		_, err := io.WriteString(x.opts.Out, "no LIST or WATCH was observed\n")
		return err
	}
	if x.opts.JSON {
		return summary.WriteAllJSON(x.opts.Out, sums)
	}
	return WriteSummaries(x.opts.Out, sums, false)
}
