// Package session wires one run of the tool: a Source (live, recorded or
// replayed), the store, the reflector and the note listeners. The CLI, the
// trace recording scenarios and the benchmarks all build their runs here, so
// there is one way to do it.
package session

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// Tool names the program in trace headers.
const Tool = "kubectl-watchcache"

// LiveConfig is a run against a cluster.
type LiveConfig struct {
	Rest   *rest.Config
	Target reflector.Target
	// Reflector is the reflector's configuration; Source, AuditSource, Clock and OnNote are filled in here.
	Reflector reflector.Config
	// MetadataOnly asks the server for PartialObjectMetadata; KeepBodies keeps each object's JSON in the store.
	MetadataOnly bool
	KeepBodies   bool
	// Wire is the encoding to ask for ("" is auto; see reflector.ResolveWire).
	Wire reflector.Wire
	// TracePath records the run when set; TraceObjects and UnsafeSecrets shape what it keeps.
	TracePath     string
	TraceObjects  trace.ObjectMode
	UnsafeSecrets bool
	// OnNote listeners, called from the reflector's goroutine; they must not block.
	OnNote []func(reflector.Note)
}

// Session is a wired run.
type Session struct {
	Store     *store.Store
	Reflector *reflector.Reflector
	// Recorder is set when recording.
	Recorder *trace.Recorder
	// Replay is set for a replay.
	Replay *trace.Replay
	// Resource is what the session lists and watches.
	Resource reflector.Resource
	// Wire is the encoding a live session asks for (protobuf or json; "" in a replay).
	Wire reflector.Wire
	// Header is the trace header of this run (recorded or replayed).
	Header trace.Header
	clock  reflector.Clock
	writer *store.Writer
}

// ServerURL is cfg's server without any credentials in it.
func ServerURL(cfg *rest.Config) string {
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return "(unparseable server URL)"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

// NewLive wires a live run (and its recorder, when TracePath is set).
func NewLive(cfg LiveConfig) (*Session, error) {
	live, err := reflector.NewLiveSourceWith(cfg.Rest, cfg.Target, reflector.LiveOptions{
		MetadataOnly: cfg.MetadataOnly, KeepBody: cfg.KeepBodies, Wire: cfg.Wire,
		FullObjects: cfg.TracePath != "" && cfg.TraceObjects == trace.ObjectsFull,
	})
	if err != nil {
		return nil, err
	}
	if cfg.TracePath == "" {
		live.DropRaw() // only a recorder reads the objects' JSON as served
	}
	rc := cfg.Reflector
	rc.Source, rc.AuditSource = live, live
	if rc.Clock == nil {
		rc.Clock = reflector.RealClock{}
	}
	s := &Session{Resource: cfg.Target.Resource, Wire: live.Wire(), clock: rc.Clock}
	listeners := append([]func(reflector.Note){}, cfg.OnNote...)
	if cfg.TracePath != "" {
		resolved, err := reflector.ResolveConfig(rc)
		if err != nil {
			return nil, err
		}
		s.Header = trace.Header{
			StartedAt:     time.Now().UTC(),
			Tool:          Tool,
			Server:        ServerURL(cfg.Rest),
			ServerVersion: serverVersion(cfg.Rest),
			Resource:      s.Resource,
			Namespace:     cfg.Target.Namespace,
			LabelSelector: cfg.Target.LabelSelector,
			FieldSelector: cfg.Target.FieldSelector,
			Objects:       cfg.TraceObjects,
			Options: trace.Options{
				Strategy: resolved.Strategy, PageSize: resolved.PageSize,
				ResourceVersion: resolved.ResourceVersion, ResourceVersionMatch: resolved.ResourceVersionMatch,
				WatchTimeout: trace.Duration(resolved.WatchTimeout), IdleTimeout: trace.Duration(resolved.IdleTimeout),
				InitialEventsTimeout: trace.Duration(resolved.InitialEventsTimeout),
				MaxPermanentRetries:  resolved.MaxPermanentRetries, GiveUpAfter: trace.Duration(resolved.GiveUpAfter),
				MetadataOnly: cfg.MetadataOnly, UnsafeSecrets: cfg.UnsafeSecrets, Wire: live.Wire(),
			},
		}
		rec, err := trace.Create(cfg.TracePath, s.Header)
		if err != nil {
			return nil, err
		}
		s.Recorder = rec
		rc.Source = rec.Source(live)
		listeners = append([]func(reflector.Note){rec.Note}, listeners...)
	}
	rc.OnNote = fanOut(listeners)
	if err := s.build(rc); err != nil {
		if s.Recorder != nil {
			_ = s.Recorder.Close()
		}
		return nil, err
	}
	if s.Recorder != nil {
		go s.reportTraceFailure()
	}
	return s, nil
}

// ReasonTraceWriteError is the note reason when recording stops on a write error.
const ReasonTraceWriteError reflector.Reason = "trace-write-error"

// reportTraceFailure tells the display, in order with the reflector's notes, that recording stopped;
// the reflector keeps running and Run reports the error at the end.
func (s *Session) reportTraceFailure() {
	select {
	case <-s.Recorder.Failed():
	case <-s.Recorder.Closed():
		return
	}
	if err := s.Recorder.Err(); err != nil {
		s.Reflector.Report(reflector.Decision{Reason: ReasonTraceWriteError,
			Cause: fmt.Sprintf("recording stopped: %v; the live view goes on, the trace is incomplete", err)})
	}
}

// serverVersion is the server's gitVersion for the trace header ("" when discovery fails).
func serverVersion(cfg *rest.Config) string {
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

// NewReplay wires a replay of the trace at path. speed: 0 as fast as possible, 1 real time, N faster.
func NewReplay(path string, speed float64, onNote ...func(reflector.Note)) (*Session, error) {
	rd, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	rp := trace.NewReplay(rd, speed)
	rc := rp.ReflectorConfig()
	listeners := append([]func(reflector.Note){rp.Note}, onNote...)
	rc.OnNote = fanOut(listeners)
	h := rd.Header()
	s := &Session{Replay: rp, Resource: h.Resource, Wire: h.Options.Wire, Header: h, clock: rc.Clock}
	if err := s.build(rc); err != nil {
		_ = rd.Close()
		return nil, err
	}
	rp.SetForceRelist(s.Reflector.ForceRelist)
	return s, nil
}

func (s *Session) build(rc reflector.Config) error {
	st, w := store.New()
	r, err := reflector.New(rc, w, st)
	if err != nil {
		return err
	}
	s.Store, s.writer, s.Reflector = st, w, r
	return nil
}

func fanOut(listeners []func(reflector.Note)) func(reflector.Note) {
	return func(n reflector.Note) {
		for _, l := range listeners {
			l(n)
		}
	}
}

// Now is the session's clock (virtual in a replay).
func (s *Session) Now() time.Time { return s.clock.Now() }

// Run runs the reflector until ctx ends (live) or the trace ends (replay),
// then closes the store writer and the recorder. It returns the reflector's
// failure, a replay divergence, or a trace write error, joined.
func (s *Session) Run(ctx context.Context) error {
	var runErr error
	if s.Replay != nil {
		runErr = s.Replay.Run(ctx, s.Reflector)
		if errors.Is(runErr, context.Canceled) && ctx.Err() != nil {
			runErr = nil
		}
	} else {
		runErr = s.Reflector.Run(ctx)
	}
	s.writer.Close()
	var recErr error
	if s.Recorder != nil {
		if err := s.Recorder.Close(); err != nil {
			recErr = fmt.Errorf("the trace is incomplete: %w", err)
		}
	}
	return errors.Join(runErr, recErr)
}

// Summary is the run's summary as of now.
func (s *Session) Summary() summary.Summary {
	return summary.New(s.Resource, s.Reflector.Stats(), s.Store, s.Now())
}
