// Package session wires one run of the tool: for each watched resource a
// Source (live, recording or replayed), its reflector and its store, and the
// listeners of its notes. The CLI, the trace recording scenarios and the
// benchmarks all build their runs here, so there is one way to do it.
//
// What a run shows attaches to its resources' notes in internal/outputs.
package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/probe"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// Tool names the program in trace headers.
const Tool = "kubectl-watchcache"

// ResourceConfig is one resource of a live run.
type ResourceConfig struct {
	Target reflector.Target
	// Reflector is the reflector's configuration; Source, AuditSource,
	// Clock, OnNote and InitialLists are filled in here.
	Reflector reflector.Config
	// MetadataOnly asks the server for PartialObjectMetadata; KeepBodies keeps each object's JSON in the store.
	MetadataOnly bool
	KeepBodies   bool
	// Wire is the encoding to ask for ("" is auto; see live.ResolveWire).
	Wire reflector.Wire
	// TraceObjects and UnsafeSecrets shape what a trace keeps of the resource's objects.
	TraceObjects  trace.ObjectMode
	UnsafeSecrets bool
	// Diff, when set, diffs each MODIFIED event against the object's
	// previous version (--diff): it asks for JSON and holds objects' JSON.
	Diff *DiffOptions
}

// LiveConfig is a run against a cluster.
type LiveConfig struct {
	Rest      *rest.Config
	Resources []ResourceConfig
	// MaxConcurrentLists bounds how many resources make their first list at
	// once (0: no bound).
	MaxConcurrentLists int
	// TracePath records the run when set.
	TracePath string
	// TraceRotation bounds the trace on disk (zero: it is not bounded).
	TraceRotation TraceRotation
	// FailFast ends the whole run when one resource's reflector fails (a
	// monitor); otherwise the others go on.
	FailFast bool
}

// TraceRotation bounds a live run's trace: segments of MaxBytes, Keep
// earlier ones kept (see trace.Rotation).
type TraceRotation struct {
	MaxBytes int64
	Keep     int
}

// Subject is one reflector a run shows: our reflector of one resource,
// live or replayed (*Watched), or another program's reflector that the
// observing proxy follows, live or replayed (*observed.Stream). The outputs
// attach to every subject the same way, and a view of a run is a reducer
// of its subjects' notes and Stats.
type Subject interface {
	// Name names the subject on every line: "configmaps.v1", or a stream's
	// "configmaps.v1@demo#3".
	Name() string
	// Target is what its reflector watches; Describe, how (as a trace's
	// resource line records it) and, for another program's, whose.
	Target() reflector.Target
	Describe() (trace.ResourceHeader, trace.Client)
	// OnNote adds a listener of its notes, before it is fed; the listener
	// is called in order, on the goroutine that feeds it, and must not block.
	OnNote(func(reflector.Note))
	Stats() reflector.Stats
	Store() *store.Store
	// Findings reads its notes after the listeners.
	Findings() *findings.Engine
	// Churn is what its diffed MODIFIED events changed so far (--diff, or
	// a trace that recorded the changes), with the top paths and objects.
	Churn(top int) diff.Summary
	// Diffs says whether its MODIFIED events are diffed as they come.
	Diffs() bool
	// Summary is the summary contract of it at now.
	Summary(now time.Time) summary.Summary
}

// Watched is one resource a session watches with a reflector of our own:
// its reflector and its cache (reflector.Resource is the Kubernetes
// resource it watches).
type Watched struct {
	// Index is the resource's place in the session (and in a trace's header).
	Index int
	// Header says what is watched, where and how, as a trace header says it.
	Header    trace.ResourceHeader
	Reflector *reflector.Reflector
	// Replay is set in a replay.
	Replay *trace.ResourceReplay

	store     *store.Store
	findings  *findings.Engine
	sess      *Session // its summary has the session's delivery probe
	writer    *store.Writer
	listeners []func(reflector.Note)
	mu        sync.Mutex
	err       error // what ended its Run, once it returned
	diffs     bool  // its source diffs the MODIFIED events (Diffs)
	done      chan struct{}
}

// Target is what the resource's reflector watches.
func (r *Watched) Target() reflector.Target { return r.Header.Target() }

// Describe is the resource's trace header; a reflector of our own has no client.
func (r *Watched) Describe() (trace.ResourceHeader, trace.Client) { return r.Header, trace.Client{} }

// Name is the resource's full name, "configmaps.v1".
func (r *Watched) Name() string { return r.Header.Resource.String() }

// Store is the resource's cache.
func (r *Watched) Store() *store.Store { return r.store }

// Stats is its reflector's snapshot.
func (r *Watched) Stats() reflector.Stats { return r.Reflector.Stats() }

// Findings reads the resource's notes, after its listeners (nil: none read).
func (r *Watched) Findings() *findings.Engine { return r.findings }

// Diffs says its MODIFIED events are diffed as they come (--diff).
func (r *Watched) Diffs() bool { return r.diffs }

// Churn is what the reflector's diffed MODIFIED events changed (Reflector.Churn).
func (r *Watched) Churn(top int) diff.Summary { return r.Reflector.Churn(top) }

// DropFindings runs the resource without a findings engine (a benchmark's
// baseline); call it before Run.
func (r *Watched) DropFindings() { r.findings = nil }

// Summary is the resource's summary at now, with the session's delivery
// probe when it has one.
func (r *Watched) Summary(now time.Time) summary.Summary {
	sum := summary.New(r.Header.Resource, r.Reflector.Stats(), r.store, r.findings.List(), now)
	sum.Namespace, sum.LabelSelector, sum.FieldSelector = r.Header.Namespace, r.Header.LabelSelector, r.Header.FieldSelector
	sum.Churn = summary.ChurnOf(r.Reflector.Churn(summary.ChurnTop))
	if p := r.sess.Probe; p != nil && p.On() {
		sum.Delivery.Probe = ProbeSummary(p)
		sum.Probe = r.sess.ProbeIndex == r.Index
	}
	return sum
}

// OnNote adds a listener of the resource's notes. Call it before Run; the
// listener is called from the reflector's goroutine and must not block.
func (r *Watched) OnNote(f func(reflector.Note)) { r.listeners = append(r.listeners, f) }

func (r *Watched) note(n reflector.Note) {
	for _, l := range r.listeners {
		l(n)
	}
	r.findings.Observe(n)
}

// Done is closed once the resource's reflector stopped (it failed, or the run ended).
func (r *Watched) Done() <-chan struct{} { return r.done }

// Err is what ended the resource's reflector: its failure, or nil.
func (r *Watched) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Session is a wired run: of reflectors of our own (NewLive, or the replay
// of their trace), or of the reflectors of other programs that the
// observing proxy follows (NewObserved, or the replay of its trace). Its
// subjects (Subjects, OnSubject) are shown the same way whichever it is.
type Session struct {
	// Resources are the reflectors of our own (none in an observed run).
	Resources []*Watched
	// Recorder is set when recording, to TracePath.
	Recorder  *trace.Recorder
	TracePath string
	// Replay is set for a replay.
	Replay *trace.Replay
	// Header is the trace header of this run (recorded or replayed; in a live
	// run without a trace it describes the run all the same).
	Header trace.Header
	// Probe is the delivery probe's measures: set by the CLI for a live
	// run with --probe (ProbeIndex is its Lease's watch); in a replay,
	// filled from the trace's probe lines (On once one came), and
	// ProbeIndex is the resource the last probe line named (read it after Run).
	Probe      *probe.Stats
	ProbeIndex int
	// NotDiffed are the resources of a replay asked to diff that are
	// replayed without a diff, and why: their trace kept no whole objects,
	// or a Secret's values only REDACTED (a diff would see no change).
	NotDiffed []NotDiffed
	clock     reflector.Clock
	// run runs the session as its constructor wired it: our reflectors,
	// their replay, the proxy, or its trace's replay.
	run func(context.Context) error

	// An observed run's: its streams (its subjects), fed by the proxy
	// (serve) or by the replay (feed), and how they are recorded.
	serve  func(context.Context) error
	feed   *observed.Feed
	record trace.ObjectMode
	unsafe bool
	// diff is an observed run's --diff (nil without it).
	diff *DiffOptions
	// failFast: LiveConfig.FailFast.
	failFast bool
	// closeTrace closes the replayed trace the session opened itself, once
	// Run has read it (nil when the caller owns it: NewReplayOf).
	closeTrace func() error

	mu        sync.Mutex
	subjects  []Subject
	onSubject []func(Subject)
	onLine    func(index int, l *trace.Line)
	recErr    error
	// names names the FlowSchemas and PriorityLevels of a live run's 429s.
	names *live.FlowControlNames
}

// Subjects are the session's subjects so far, in the order they came.
func (s *Session) Subjects() []Subject {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Subject(nil), s.subjects...)
}

// OnSubject calls f with every subject of the session: at once with those
// it has, then with each as it comes, before it is fed. f must not block.
func (s *Session) OnSubject(f func(Subject)) {
	s.mu.Lock()
	subs := append([]Subject(nil), s.subjects...)
	s.onSubject = append(s.onSubject, f)
	s.mu.Unlock()
	for _, sub := range subs {
		f(sub)
	}
}

// add makes sub a subject of the session and hands it to the OnSubject listeners.
func (s *Session) add(sub Subject) {
	s.mu.Lock()
	s.subjects = append(s.subjects, sub)
	listeners := append([]func(Subject){}, s.onSubject...)
	s.mu.Unlock()
	for _, f := range listeners {
		f(sub)
	}
}

// OnLine registers f, called in a replay with each line the replay takes
// for the subject at index, before the subject sees it, in order with the
// subject's notes (see trace.ResourceReplay.OnLine): a report lays the
// notes out at the recorded times. Call it before Run.
func (s *Session) OnLine(f func(index int, l *trace.Line)) {
	s.onLine = f
	for _, r := range s.Resources {
		r.Replay.OnLine(func(l *trace.Line) { f(r.Index, l) })
	}
}

// ServerURL is cfg's server without any credentials in it, as client-go
// reads it (a host without a scheme, "127.0.0.1:6443", is a URL too).
func ServerURL(cfg *rest.Config) string {
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return "(unparseable server URL)"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

// NewLive wires a live run of cfg's resources (and its recorder, when
// TracePath is set). The reflectors share one HTTP client, and so one
// connection to the server, as a controller's informers do.
func NewLive(cfg LiveConfig) (*Session, error) {
	if len(cfg.Resources) == 0 {
		return nil, errors.New("a run needs at least one resource")
	}
	s := &Session{clock: reflector.RealClock{}, failFast: cfg.FailFast}
	s.run = s.runLive
	s.Header = trace.Header{Tool: Tool, Server: ServerURL(cfg.Rest)}
	var gate *reflector.ListGate
	if cfg.MaxConcurrentLists > 0 && len(cfg.Resources) > 1 {
		gate = reflector.NewListGate(cfg.MaxConcurrentLists)
	}
	// The FlowSchemas and PriorityLevels that a 429 names by UID are named
	// once, for all the resources (read lazily, at the first 429).
	names, err := live.NewFlowControlNames(cfg.Rest)
	if err != nil {
		return nil, fmt.Errorf("flow control names: %w", err)
	}
	s.names = names
	sources := make([]reflector.Source, len(cfg.Resources))
	configs := make([]reflector.Config, len(cfg.Resources))
	for i, rc := range cfg.Resources {
		src, err := live.NewSource(cfg.Rest, rc.Target, live.Options{
			// A rotating trace of whole objects writes each new segment's
			// cache from the store: it keeps their JSON.
			MetadataOnly: rc.MetadataOnly, KeepBody: rc.KeepBodies || cfg.TraceRotation.MaxBytes > 0 && rc.TraceObjects == trace.ObjectsFull, Wire: rc.Wire,
			FullObjects: rc.Diff != nil || cfg.TracePath != "" && rc.TraceObjects == trace.ObjectsFull,
			// Only a recorder and --diff read the objects' JSON as served.
			DropRaw: cfg.TracePath == "" && rc.Diff == nil,
			Names:   names, Warnings: cfg.Rest.WarningHandler,
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rc.Target.Resource, err)
		}
		c := rc.Reflector
		c.Source, c.AuditSource, c.Clock, c.InitialLists = src, src, s.clock, gate
		if rc.Diff != nil {
			c.Source = newDiffer(src, *rc.Diff, rc.Target.Resource)
		}
		resolved, err := reflector.ResolveConfig(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rc.Target.Resource, err)
		}
		sources[i], configs[i] = c.Source, c
		s.Header.Resources = append(s.Header.Resources, trace.ResourceHeader{
			Resource: rc.Target.Resource, Namespace: rc.Target.Namespace,
			LabelSelector: rc.Target.LabelSelector, FieldSelector: rc.Target.FieldSelector,
			Objects: rc.TraceObjects,
			Options: trace.Options{
				Strategy: resolved.Strategy, PageSize: resolved.PageSize,
				ResourceVersion: resolved.ResourceVersion, ResourceVersionMatch: resolved.ResourceVersionMatch,
				WatchTimeout: trace.Duration(resolved.WatchTimeout), IdleTimeout: trace.Duration(resolved.IdleTimeout),
				InitialEventsTimeout: trace.Duration(resolved.InitialEventsTimeout),
				MaxPermanentRetries:  resolved.MaxPermanentRetries, GiveUpAfter: trace.Duration(resolved.GiveUpAfter), Once: resolved.Once,
				RetriesNotFound: !resolved.NotFoundAfterListPermanent,
				MetadataOnly:    rc.MetadataOnly, UnsafeSecrets: rc.UnsafeSecrets, Wire: src.Wire(),
				Backoff: trace.BackoffOptionsOf(resolved.Backoff),
			},
		})
	}
	// Asking for the version opens the connection the reflectors then share
	// (client-go's transports are cached by configuration): reflectors that
	// start together would otherwise race to dial, each its own.
	s.Header.ServerVersion = ServerVersion(cfg.Rest)
	// The trace's times count from here, just before the reflectors start:
	// a replay's reflectors start at the header's startedAt, so the time to
	// sync replayed is the one measured live even when a loaded machine
	// took long to build the sources and ask the server's version. The
	// time keeps its monotonic reading, which the lines' at count on; the
	// trace writes it in UTC.
	s.Header.StartedAt = time.Now()
	if cfg.TracePath != "" {
		rec, err := s.createTrace(cfg)
		if err != nil {
			return nil, err
		}
		s.Recorder, s.TracePath = rec, cfg.TracePath
	}
	for i := range cfg.Resources {
		res := &Watched{Index: i, Header: s.Header.Resources[i], sess: s, done: make(chan struct{}), diffs: cfg.Resources[i].Diff != nil}
		c := configs[i]
		if s.Recorder != nil {
			c.Source = s.Recorder.Source(i, sources[i])
			res.OnNote(s.Recorder.Notes(i))
		}
		c.OnNote = res.note
		if err := res.build(c); err != nil {
			if s.Recorder != nil {
				_ = s.Recorder.Close()
			}
			return nil, fmt.Errorf("%s: %w", res.Name(), err)
		}
		s.Resources = append(s.Resources, res)
		s.add(res)
	}
	// Names learned after the 429s that gave them by UID name the findings
	// and are recorded, so that a replay names them too.
	names.OnNamed(func(n live.Named) {
		if s.Recorder != nil {
			s.Recorder.FlowControlNames(n.FlowSchemas, n.PriorityLevels)
		}
		s.nameFlowControl(n.FlowSchemas, n.PriorityLevels)
	})
	if s.Recorder != nil {
		go s.reportTraceFailure()
	}
	return s, nil
}

// createTrace creates a live run's trace, rotating if asked: each new
// segment begins with every resource's cache and cursor.
func (s *Session) createTrace(cfg LiveConfig) (*trace.Recorder, error) {
	if cfg.TraceRotation.MaxBytes <= 0 {
		return trace.Create(cfg.TracePath, s.Header)
	}
	return trace.CreateRotating(cfg.TracePath, s.Header, trace.Rotation{
		MaxBytes: cfg.TraceRotation.MaxBytes, Keep: cfg.TraceRotation.Keep,
		Snapshot: func(i int) ([]*store.Object, string) {
			r := s.Resources[i]
			return r.store.List(), r.Reflector.Stats().ResourceVersion
		},
	})
}

// nameFlowControl hands names of FlowSchemas and PriorityLevels (uid →
// name) learned after the 429s that gave them by UID to every resource's
// findings.
func (s *Session) nameFlowControl(flowSchemas, priorityLevels map[string]string) {
	for _, sub := range s.Subjects() {
		sub.Findings().NameFlowControl(flowSchemas, priorityLevels)
	}
}

// FlowControlNames records in the trace the names of FlowSchemas and
// PriorityLevels (uid → name) that an observed run's proxy learned after
// the 429s that gave them by UID (proxy.Options.OnFlowControlNames; the
// proxy names its streams' findings itself).
func (s *Session) FlowControlNames(flowSchemas, priorityLevels map[string]string) {
	if s.Recorder != nil {
		s.Recorder.FlowControlNames(flowSchemas, priorityLevels)
	}
}

// reportTraceFailure tells every resource's display, in order with the
// reflector's notes, that recording stopped; the reflectors keep running and
// Run reports the error at the end.
func (s *Session) reportTraceFailure() {
	select {
	case <-s.Recorder.Failed():
	case <-s.Recorder.Closed():
		return
	}
	if err := s.Recorder.Err(); err != nil {
		for _, r := range s.Resources {
			r.Reflector.Report(reflector.Decision{Reason: reflector.ReasonTraceWriteError,
				Cause: fmt.Sprintf("recording stopped: %v; the live view goes on, the trace is incomplete", err)})
		}
	}
}

// ServerVersion is the server's gitVersion for a trace header ("" when discovery fails).
func ServerVersion(cfg *rest.Config) string {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return ""
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return ""
	}
	return v.GitVersion
}

// NewReplay wires a replay of the trace at path, one reflector for each of
// its resources. speed: 0 as fast as possible, 1 real time, N faster.
func NewReplay(path string, speed float64) (*Session, error) {
	return NewReplayDiffing(path, speed, nil)
}

// NewReplayDiffing is NewReplay with --diff: the MODIFIED events of a trace
// that kept whole objects and did not record their changes are diffed as
// they replay (a trace that recorded changes replays them in any case).
func NewReplayDiffing(path string, speed float64, d *DiffOptions) (*Session, error) {
	rd, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	s, err := newReplayOf(rd, speed, d)
	if err != nil {
		_ = rd.Close()
		return nil, err
	}
	s.closeTrace = rd.Close // the session opened it: Run closes it
	return s, nil
}

// NewReplayOf wires a replay of rd (its header read), as NewReplay does for
// a path: the report replays a trace its caller opened. The caller closes rd.
// An observed trace (recorded by the proxy) replays as recorded: each stream
// fed its client's recorded traffic, no reflector of ours.
func NewReplayOf(rd *trace.Reader, speed float64) (*Session, error) {
	return newReplayOf(rd, speed, nil)
}

// NotDiffed is a resource a replay does not diff: its trace kept no whole
// objects, or (Redacted) its Secrets' values only REDACTED.
type NotDiffed struct {
	Resource string
	Redacted bool
}

func newReplayOf(rd *trace.Reader, speed float64, d *DiffOptions) (*Session, error) {
	rp := trace.NewReplay(rd, speed)
	s := &Session{Replay: rp, Header: rd.Header(), clock: rp.Clock(), Probe: new(probe.Stats)}
	s.run = s.runReplay
	if rd.Header().Observed {
		feed, err := observed.NewFeed(rd, rp.Now, func(st *observed.Stream) { s.add(st) })
		if err != nil {
			return nil, err
		}
		s.feed, s.run = feed, s.runFeed
		rp.Feed(func(l *trace.Line) error {
			// A resource line makes a stream; a flowcontrol line is the
			// run's (its r is 0, maybe before any stream).
			if s.onLine != nil && l.K != trace.KindResource && l.K != trace.KindFlowControl {
				s.onLine(l.R, l)
			}
			return feed.Line(l)
		})
		return s, nil
	}
	if len(rp.Resources()) == 0 {
		// Our reflectors are made from the header's resources (an observed
		// trace's come later, in resource lines).
		return nil, &trace.LineError{Name: rd.Name(), Line: 1, Err: errors.New("bad header: it lists no resources")}
	}
	for i, rr := range rp.Resources() {
		if rr.Header().Resource.GVR.Resource == "" {
			return nil, &trace.LineError{Name: rd.Name(), Line: 1, Err: fmt.Errorf("bad header: resource %d names no resource (its \"resource\" has no \"resource\")", i)}
		}
	}
	rp.OnProbe(func(at time.Time, l *trace.Line) {
		s.ProbeIndex = l.R
		if l.Write == nil || l.Event == nil {
			if l.ResourceVersion != "" {
				s.Probe.AddLost()
			}
			s.Probe.Note(l.Detail)
			return
		}
		// The live run wrote the line once it had both the update's answer
		// and its watch event (RecordProbe): the later of the two.
		write, event := time.Duration(*l.Write), time.Duration(*l.Event)
		sent := at.Add(-max(write, event))
		s.Probe.Add(probe.Sample{At: sent, Write: write, Event: event})
		s.probeFindings(l.R, sent.Add(event))
	})
	rp.OnFlowControlNames(s.nameFlowControl)
	for i, rr := range rp.Resources() {
		res := &Watched{Index: i, Header: rr.Header(), Replay: rr, sess: s, done: make(chan struct{})}
		c := rr.ReflectorConfig()
		switch h := rr.Header(); {
		case d == nil:
		case h.Objects != trace.ObjectsFull:
			s.NotDiffed = append(s.NotDiffed, NotDiffed{Resource: h.Resource.GVR.Resource})
		case !h.KeepsObjectValues():
			s.NotDiffed = append(s.NotDiffed, NotDiffed{Resource: h.Resource.GVR.Resource, Redacted: true})
		default:
			c.Source, res.diffs = newDiffer(c.Source, *d, h.Resource), true
		}
		res.OnNote(rr.Note)
		c.OnNote = res.note
		if err := res.build(c); err != nil {
			return nil, fmt.Errorf("%s: %w", res.Name(), err)
		}
		rr.SetForceRelist(res.Reflector.ForceRelist)
		rr.SetAudit(res.Reflector.NoteAudit)
		s.Resources = append(s.Resources, res)
		s.add(res)
	}
	return s, nil
}

// ObservedConfig is an observed run: the proxy's (NewObserved).
type ObservedConfig struct {
	// Rest names the server in the trace's header.
	Rest *rest.Config
	// TracePath records the streams when set, keeping TraceObjects of their
	// objects (UnsafeSecrets: Secrets' values too).
	TracePath     string
	TraceObjects  trace.ObjectMode
	UnsafeSecrets bool
	// Diff diffs every JSON stream's MODIFIED events (proxy --diff).
	Diff *DiffOptions
}

// NewObserved wires an observed run: the streams the observing proxy
// follows come through Observe; Serve gives it the proxy's serving, which
// Run runs. The run's trace, if asked for, is created here.
func NewObserved(cfg ObservedConfig) (*Session, error) {
	s := &Session{clock: reflector.RealClock{}, record: cfg.TraceObjects, unsafe: cfg.UnsafeSecrets, diff: cfg.Diff}
	s.run = s.runProxy
	s.Header = trace.Header{StartedAt: time.Now(), Tool: Tool + " proxy", Server: ServerURL(cfg.Rest), Observed: true, ServerVersion: ServerVersion(cfg.Rest)}
	if cfg.TracePath != "" {
		rec, err := trace.Create(cfg.TracePath, s.Header)
		if err != nil {
			return nil, err
		}
		s.Recorder, s.TracePath = rec, cfg.TracePath
	}
	return s, nil
}

// Serve gives an observed run the proxy's serving: Run calls it, and it
// serves until ctx ends.
func (s *Session) Serve(serve func(context.Context) error) { s.serve = serve }

// Observe makes st, a stream the proxy observes, a subject of the run
// (proxy.Options.OnStream), recorded when the run is; before it is fed.
func (s *Session) Observe(st *observed.Stream) {
	if d := s.diff; d != nil {
		// A Secret's changes keep no values (see DiffOptions).
		st.Diff(d.MaxObjects, !st.Target().Resource.Secrets())
	}
	if rec := s.Recorder; rec != nil {
		// Its resource line records its number, its client and what it asked for.
		rh, client := st.Describe()
		rh.Objects, rh.Options.UnsafeSecrets = s.record, s.unsafe
		if i, err := rec.AddStream(rh, client, st.ID); err == nil {
			st.Record(rec.Observed(i))
			st.OnNote(rec.Notes(i))
		} else {
			s.mu.Lock()
			s.recErr = errors.Join(s.recErr, fmt.Errorf("recording stream %s: %w", st.Name(), err))
			s.mu.Unlock()
		}
	}
	s.add(st)
}

func (r *Watched) build(c reflector.Config) error {
	st, w := store.New()
	rf, err := reflector.New(c, w, st)
	if err != nil {
		return err
	}
	r.store, r.writer, r.Reflector = st, w, rf
	r.findings = findings.New(findings.Options{Resource: r.Name(), StreamAsked: c.Strategy == reflector.StrategyStream}, rf)
	return nil
}

// Now is the session's clock (virtual in a replay).
func (s *Session) Now() time.Time { return s.clock.Now() }

// Run runs the reflectors until ctx ends (live) or the trace ends (replay);
// a resource that fails stops alone, the others go on (a live run also ends
// when every resource has stopped). Then it closes the stores' writers and
// the recorder. It returns each failure (named after its resource when there
// are several), a replay divergence, or a trace write error, joined.
func (s *Session) Run(ctx context.Context) error {
	runErr := s.run(ctx)
	if s.closeTrace != nil {
		_ = s.closeTrace() // read through: a close error loses nothing
	}
	for _, r := range s.Resources {
		r.writer.Close()
	}
	s.mu.Lock()
	recErr := s.recErr
	s.mu.Unlock()
	if s.Recorder != nil {
		if err := s.Recorder.Close(); err != nil {
			recErr = errors.Join(recErr, fmt.Errorf("the trace is incomplete: %w", err))
		}
	}
	return errors.Join(runErr, recErr)
}

// runLive runs our reflectors until ctx ends or every one has stopped.
func (s *Session) runLive(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(s.Resources))
	for i, r := range s.Resources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := r.Reflector.Run(ctx)
			r.finish(err)
			if err != nil && s.failFast {
				cancel() // one resource failed: the run ends (a monitor's pod restarts, its log says why)
			}
			if err != nil && len(s.Resources) > 1 {
				err = fmt.Errorf("%s: %w", r.Name(), err)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	// The names a throttled run could not learn while it was throttled,
	// looked up once more before the summary (and the trace's end).
	s.names.Finish(context.Background())
	return errors.Join(errs...)
}

// runReplay replays our reflectors' trace through them.
func (s *Session) runReplay(ctx context.Context) error {
	reflectors := make([]*reflector.Reflector, len(s.Resources))
	for i, r := range s.Resources {
		reflectors[i] = r.Reflector
	}
	err := s.Replay.Run(ctx, reflectors...)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		err = nil
	}
	for _, r := range s.Resources {
		r.finish(nil) // a replay's reflectors end when the trace does
	}
	return err
}

// runFeed replays an observed trace into its streams.
func (s *Session) runFeed(ctx context.Context) error {
	defer s.feed.Close()
	return s.Replay.Run(ctx)
}

// runProxy serves the proxy (Serve) until ctx ends, then ends its streams.
func (s *Session) runProxy(ctx context.Context) error {
	var err error
	if s.serve != nil {
		err = s.serve(ctx)
	}
	for _, sub := range s.Subjects() {
		if st, ok := sub.(*observed.Stream); ok { // an observed run's subjects are its streams
			st.Close()
		}
	}
	return err
}

func (r *Watched) finish(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.done:
	default:
		r.err = err
		close(r.done)
	}
}

// ProbeSummary is the summary's `delivery.probe`: the figures of the whole run, in seconds.
func ProbeSummary(st *probe.Stats) *summary.ProbeSummary {
	f := st.Figures(time.Time{})
	return &summary.ProbeSummary{Count: f.Count, P50: f.P50.Seconds(), P90: f.P90.Seconds(), P99: f.P99.Seconds(), Max: f.Max.Seconds(), WriteP50: f.WriteP50.Seconds(),
		Lost: st.Lost()}
}

// RecordProbe records the probe's sample (answered at resourceVersion rv)
// into Probe and, when recording, the trace.
func (s *Session) RecordProbe(x probe.Sample, rv string) {
	s.Probe.Add(x)
	s.probeFindings(s.ProbeIndex, x.At.Add(x.Event))
	if s.Recorder != nil {
		s.Recorder.Probe(s.ProbeIndex, rv, x.Write, x.Event)
	}
}

// probeFindings hands the probe's figures over the whole run, after a
// sample that arrived at at, to the findings of the resource that watches
// its Lease (slow-delivery).
func (s *Session) probeFindings(i int, at time.Time) {
	if i < 0 || i >= len(s.Resources) {
		return
	}
	f := s.Probe.Figures(time.Time{})
	s.Resources[i].findings.Probe(at, f.Count, s.Probe.Over(findings.SlowProbe), f.P50, f.P99, f.WriteP50)
}

// LoseProbe records a renewal of the probe's Lease, sent at at and
// answered at resourceVersion rv, whose watch event did not come within
// after: counted lost in Probe, with a note, and, when recording, in the trace.
func (s *Session) LoseProbe(at time.Time, rv string, after time.Duration) {
	detail := fmt.Sprintf("renewal sent at %s (resourceVersion %s) lost: no watch event within %s", at.Format("15:04:05.000"), rv, after)
	s.Probe.AddLost()
	s.Probe.Note(detail)
	if s.Recorder != nil {
		s.Recorder.ProbeLost(s.ProbeIndex, rv, detail)
	}
}

// NoteProbe records a note of the probe's into Probe and, when recording, the trace.
func (s *Session) NoteProbe(detail string) {
	s.Probe.Note(detail)
	if s.Recorder != nil {
		s.Recorder.ProbeNote(s.ProbeIndex, detail)
	}
}

// Summaries are every subject's summary as of now, in the session's order.
func (s *Session) Summaries() []summary.Summary {
	now := s.Now()
	subs := s.Subjects()
	out := make([]summary.Summary, len(subs))
	for i, sub := range subs {
		out[i] = sub.Summary(now)
	}
	return out
}

// WaitUntilReady waits for every resource's first complete list, or for its
// reflector to stop; ctx ending stops the wait.
func (s *Session) WaitUntilReady(ctx context.Context) error {
	for _, r := range s.Resources {
		ready := make(chan error, 1)
		go func() { ready <- r.store.WaitUntilReady(ctx) }()
		select {
		case err := <-ready:
			if err != nil {
				return err
			}
		case <-r.done:
		}
	}
	return nil
}
