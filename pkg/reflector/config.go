package reflector

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Strategy is how the reflector gets a complete list.
type Strategy string

const (
	// StrategyList pages through LIST requests (limit + continue).
	StrategyList Strategy = "list"
	// StrategyStream uses a streaming list (a watch with sendInitialEvents=true),
	// falling back to LIST for that list when the server refuses it or the
	// initial-events-end bookmark does not come in time; it tries streaming again
	// on the next relist.
	StrategyStream Strategy = "stream"
	// StrategyAuto streams like StrategyStream, but after one fallback it keeps
	// using LIST for the rest of the run.
	StrategyAuto Strategy = "auto"
)

// Config is the reflector's typed configuration. Source is required; zero
// values of the rest get the defaults documented on each field.
type Config struct {
	// Source serves LIST pages and WATCH streams (live, recording or replay).
	Source Source
	// AuditSource serves Audit's LIST; it defaults to Source. Give the undecorated
	// live source so audits never enter a trace.
	AuditSource Source
	// Strategy for every (re)list; default StrategyList.
	Strategy Strategy
	// PageSize is the LIST limit; 0 lists in one response.
	PageSize int64
	// ResourceVersion and ResourceVersionMatch apply to the first list only
	// ("" = consistent read, "0" = any). Relists after 410 always read consistently.
	ResourceVersion      string
	ResourceVersionMatch string
	// WatchTimeout is the base of the jittered server-side timeoutSeconds:
	// each watch asks for a random duration in [WatchTimeout, 2*WatchTimeout).
	// Default 5 minutes (client-go's).
	WatchTimeout time.Duration
	// ChooseWatchTimeout, when set, chooses each watch's server-side timeout
	// from WatchTimeout instead of the jitter (a replay answers with the
	// recorded request's timeoutSeconds).
	ChooseWatchTimeout func(base time.Duration) time.Duration
	// IdleTimeout ends a watch that has received nothing (no event, no bookmark)
	// for this long, counted from the last thing it received, catching dead
	// connections. Default: 2*WatchTimeout + 30s, past the longest jittered
	// server-side timeout, when the server should have closed the watch anyway.
	// (Deterministic, so a replay decides the same.)
	IdleTimeout time.Duration
	// InitialEventsTimeout ends a streaming list that has delivered nothing
	// for this long, counted from its last initial event (an ADDED before
	// any change: a MODIFIED or DELETED says the initial events are over,
	// though their end may still come), before its initial-events-end
	// bookmark; the list falls back to LIST. A streaming list that keeps
	// delivering its initial events is never cut, however big. Default 1
	// minute.
	InitialEventsTimeout time.Duration
	// Backoff after errors; zero fields get DefaultBackoff's.
	Backoff Backoff
	// ChooseBackoff, when set, chooses each backoff's wait instead of the
	// one computed from Backoff, which it is given (a replay answers with
	// the recorded wait). The reflector still decides when to back off and
	// counts each failure as Backoff says.
	ChooseBackoff func(computed time.Duration) time.Duration
	// MaxPermanentRetries is how many times in a row a permanent error (401,
	// 403, 404, 405) is retried before the reflector fails. Default 5.
	MaxPermanentRetries int
	// GiveUpAfter fails the reflector when a request fails and nothing has
	// made progress for this long: no response headers, LIST page, watch
	// event or bookmark, and no watch open (e.g. the server is unreachable).
	// A watch cut by a restart, a GOAWAY, a reset or a proxy after it
	// streamed is progress up to the cut. 0 retries forever.
	GiveUpAfter time.Duration
	// Once stops Run (returning nil, Stopped) as soon as the first list is
	// complete: no watch follows a LIST, and the watch of a streaming list
	// ends at the bookmark that completes it (EndStopped), so the cache is
	// that list and no event after it.
	Once bool
	// NotFoundAfterListPermanent keeps a 404 permanent after the first list
	// completed too, as runs decided it before 2026-12-06: the replay of a
	// trace recorded then sets it (its options have no retriesNotFound).
	// Otherwise such a 404 (a CRD deleted, or its version no longer served)
	// is retried with backoff until the resource is back.
	NotFoundAfterListPermanent bool
	// InitialLists, when set, is shared by reflectors that start together:
	// at most its size of them make their first list at once.
	InitialLists *ListGate
	// RequestHistory is how many finished requests Stats keeps. Default 50.
	RequestHistory int
	// Clock drives timers; nil is the real clock. Replay passes a virtual one.
	Clock Clock
	// Rand returns a float in [0,1) for jitter; nil uses math/rand/v2.
	Rand func() float64
	// OnNote receives every note (requests started and ended, applied
	// events, decisions, audits), one at a time and in Seq order. It is called
	// synchronously, mostly from Run's goroutine (from Audit's and Report's
	// callers for theirs): it must not block, nor call back into the reflector.
	OnNote func(Note)
}

// withDefaults fills defaults and validates.
func (c Config) withDefaults() (Config, error) {
	if c.Source == nil {
		return c, errors.New("reflector config: Source is required")
	}
	if c.AuditSource == nil {
		c.AuditSource = c.Source
	}
	switch c.Strategy {
	case "":
		c.Strategy = StrategyList
	case StrategyList, StrategyStream, StrategyAuto:
	default:
		return c, fmt.Errorf("reflector config: unknown initial list strategy %q (want list, stream or auto)", c.Strategy)
	}
	if c.PageSize < 0 {
		return c, fmt.Errorf("reflector config: page size %d is negative", c.PageSize)
	}
	if c.ResourceVersionMatch != "" && c.ResourceVersion == "" {
		return c, errors.New("reflector config: resourceVersionMatch requires a resourceVersion")
	}
	if c.WatchTimeout == 0 {
		c.WatchTimeout = 5 * time.Minute
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 2*c.WatchTimeout + 30*time.Second
	}
	if c.InitialEventsTimeout == 0 {
		c.InitialEventsTimeout = time.Minute
	}
	c.Backoff = c.Backoff.withDefaults()
	if c.MaxPermanentRetries == 0 {
		c.MaxPermanentRetries = 5
	}
	if c.RequestHistory == 0 {
		c.RequestHistory = 50
	}
	if c.Clock == nil {
		c.Clock = RealClock{}
	}
	if c.Rand == nil {
		c.Rand = defaultRand
	}
	if c.OnNote == nil {
		c.OnNote = func(Note) {}
	}
	return c, nil
}

// ResolveConfig returns cfg with every default filled in (as New would use
// it), or the validation error. Traces record the resolved values.
func ResolveConfig(cfg Config) (Config, error) { return cfg.withDefaults() }

// ListGate bounds how many reflectors sharing it make their first list at
// once, so that starting many of them does not stampede the apiserver. A
// reflector takes a slot before its first list and gives it back once that
// list is complete, or when it backs off or stops.
type ListGate struct{ slots chan struct{} }

// NewListGate returns a gate for n lists at once (n < 1 means 1).
func NewListGate(n int) *ListGate {
	if n < 1 {
		n = 1
	}
	return &ListGate{slots: make(chan struct{}, n)}
}

func (g *ListGate) acquire(ctx context.Context) error {
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *ListGate) release() { <-g.slots }
