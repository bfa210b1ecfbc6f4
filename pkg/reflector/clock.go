package reflector

import (
	"math"
	"math/rand/v2"
	"time"
)

// Clock is the time source of the reflector's timing decisions: backoff
// waits, idle and initial-events timeouts, bookmark age. Replay substitutes a
// virtual clock so a trace replays with the timing it was recorded with.
type Clock interface {
	Now() time.Time
	// After fires once d has passed.
	After(d time.Duration) <-chan time.Time
	// AfterFunc calls f in its own goroutine once d has passed, unless stopped.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a stoppable, resettable AfterFunc timer.
type Timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

// RealClock is the wall clock.
type RealClock struct{}

// Now implements Clock.
func (RealClock) Now() time.Time { return time.Now() }

// After implements Clock.
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// AfterFunc implements Clock.
func (RealClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Backoff is exponential backoff with jitter for errors (429 and 5xx
// included): Initial, doubling up to Max, each wait stretched by up to Jitter
// of itself, and reset once ResetAfter has passed without an error.
type Backoff struct {
	Initial    time.Duration
	Max        time.Duration
	Factor     float64
	Jitter     float64
	ResetAfter time.Duration
}

// DefaultBackoff is kube-rs's default_backoff: 0.8 s doubling to 30 s, reset after two healthy minutes.
func DefaultBackoff() Backoff {
	return Backoff{Initial: 800 * time.Millisecond, Max: 30 * time.Second, Factor: 2, Jitter: 0.5, ResetAfter: 2 * time.Minute}
}

func (b Backoff) withDefaults() Backoff {
	d := DefaultBackoff()
	if b.Initial == 0 {
		b.Initial = d.Initial
	}
	if b.Max == 0 {
		b.Max = d.Max
	}
	if b.Factor == 0 {
		b.Factor = d.Factor
	}
	if b.Jitter == 0 {
		b.Jitter = d.Jitter
	}
	if b.ResetAfter == 0 {
		b.ResetAfter = d.ResetAfter
	}
	return b
}

// backoffState counts consecutive failures.
type backoffState struct {
	cfg         Backoff
	attempt     int
	lastFailure time.Time
	rand        func() float64
}

// next returns the wait before the next retry and counts the failure.
func (s *backoffState) next(now time.Time) time.Duration {
	if !s.lastFailure.IsZero() && now.Sub(s.lastFailure) > s.cfg.ResetAfter {
		s.attempt = 0
	}
	s.lastFailure = now
	d := float64(s.cfg.Initial) * math.Pow(s.cfg.Factor, float64(s.attempt))
	if d > float64(s.cfg.Max) {
		d = float64(s.cfg.Max)
	} else {
		s.attempt++
	}
	d += d * s.cfg.Jitter * s.rand()
	if d > float64(s.cfg.Max) {
		d = float64(s.cfg.Max)
	}
	return time.Duration(d)
}

// reset forgets past failures (a request succeeded).
func (s *backoffState) reset() { s.attempt = 0 }

func defaultRand() float64 { return rand.Float64() }
