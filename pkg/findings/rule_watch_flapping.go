package findings

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// WatchFlapping is watches cut early, again and again, without a 410.
const WatchFlapping ID = "watch-flapping"

// flapWatches watches that end in an error or within flapLifetime of
// starting, within flapWindow, are flapping.
const (
	flapWatches  = 5
	flapWindow   = 5 * time.Minute
	flapLifetime = 10 * time.Second
)

type watchFlapping struct {
	flaps    []flap // within the window
	lastGone time.Time
}

type flap struct {
	at       time.Time
	id       int64
	lifetime time.Duration
	cause    string
}

func (r *watchFlapping) entry() Entry {
	return Entry{WatchFlapping, Warning, fmt.Sprintf("%d watches within %s were cut (an error while open, or closed within %s), and no 410 Gone came (to a watch or a LIST) in the %s before the last of them (a 410 makes it a relist matter, relist-storm's); refused connections and error answers are failed requests, not cut watches, and a watch that ran to the timeout it asked for is not cut",
		flapWatches, span(flapWindow), span(flapLifetime), span(flapWindow))}
}

// pass: after no-bookmarks, which reads a watch's end first.
func (r *watchFlapping) pass() int { return 1 }

func (r *watchFlapping) observe(e *Engine, n reflector.Note) {
	if decided(n, reflector.ReasonGone) != nil && n.At.After(r.lastGone) {
		r.lastGone = n.At
	}
	req := endedWatch(n)
	if req == nil {
		return
	}
	at, end := n.At, req.End
	if end.IsGone() || end.IsTooLargeResourceVersion() {
		return
	}
	switch end.Reason {
	case reflector.EndStopped, reflector.EndCanceled:
		return
	}
	if !established(req, end) {
		return // a refused connection or an error answer: no watch was open to be cut
	}
	if w := e.track.ended; w != nil && w.ranOut {
		return // it ran to the timeout it asked for, however short
	}
	if end.Reason != reflector.EndError && req.Duration >= flapLifetime {
		return
	}
	r.flaps = append(r.flaps, flap{at: at, id: req.ID, lifetime: req.Duration, cause: end.Cause()})
	r.flaps = slices.DeleteFunc(r.flaps, func(f flap) bool { return at.Sub(f.at) > flapWindow })
	// A 410 in the window makes it a relist matter, not flapping.
	if len(r.flaps) < flapWatches || (!r.lastGone.IsZero() && at.Sub(r.lastGone) <= flapWindow) {
		return
	}
	r.raise(e, at)
}

// established says whether a watch's stream was open: it received an event
// (an ERROR event included), or it ended without an error answer and its
// error, if any, came from reading the stream. A request that failed before
// any response (Go's client says `Get "URL": …`: a refused or reset
// connection) or got an error status instead of a stream is a failed
// request, not a cut watch.
func established(r *reflector.RequestInfo, end *reflector.RequestEnd) bool {
	if r.Events > 0 {
		return true
	}
	if end.Status != nil {
		return false
	}
	return end.Err == nil || !requestFailed.MatchString(end.Err.Error())
}

// requestFailed matches the error of a Go HTTP request that got no response.
var requestFailed = regexp.MustCompile(`^[A-Z][a-z]+ "https?://`)

func (r *watchFlapping) raise(e *Engine, at time.Time) {
	lifetimes := make([]time.Duration, len(r.flaps))
	var ids []int64
	causes := map[string]int{}
	failed := 0
	for i, f := range r.flaps {
		lifetimes[i] = f.lifetime
		ids = appendLast(ids, f.id)
		causes[f.cause]++
		if f.cause != string(reflector.EndClosed) {
			failed++
		}
	}
	slices.Sort(lifetimes)
	typical := lifetimes[len(lifetimes)/2]
	common, commonN := "", 0
	for c, k := range causes {
		if k > commonN || (k == commonN && c < common) {
			common, commonN = c, k
		}
	}
	e.raise(WatchFlapping, Warning, at, func(f *Finding) {
		f.Count = max(f.Count, int64(len(r.flaps))) // never down, as the window moves on
		f.Title = fmt.Sprintf("%d watches ended early in %s (typically after %s)", len(r.flaps), roundDur(flapWindow), roundDur(typical))
		f.Evidence = Evidence{
			Text:     fmt.Sprintf("%d watches in the last %s ended in an error or within %s of starting, with no 410 Gone; typical lifetime %s; most common end: %s (%d)", len(r.flaps), roundDur(flapWindow), roundDur(flapLifetime), roundDur(typical), common, commonN),
			Requests: ids,
			Window:   window(r.flaps[0].at, at),
			Facts:    map[string]string{"typicalLifetime": roundDur(typical), "errors": fmt.Sprint(failed)},
		}
		f.Cause = flapCause(typical, lifetimes, common)
		f.Action = "find what cuts long-lived connections between this client and the API server: raise the idle timeout of the proxy or load balancer above the watch timeout (5-10 minutes), or check the API server's restarts and the network"
		f.Docs = "https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes"
	})
}

// flapCause reads the lifetimes and the common end: alike lifetimes are a
// timer in between; GOAWAY and refused connections a server going away.
func flapCause(typical time.Duration, lifetimes []time.Duration, common string) string {
	lc := strings.ToLower(common)
	switch {
	case strings.Contains(lc, "goaway") || strings.Contains(lc, "connection refused") || strings.Contains(lc, "503"):
		return "the API server went away under the watches (GOAWAY, refused connections, 503): restarts or a rolling update"
	case alike(lifetimes):
		return fmt.Sprintf("the watches live about %s each: something in between (a proxy, a load balancer, a NAT) cuts connections on an idle or maximum-lifetime timer", roundDur(typical))
	}
	return "watches are cut early: connection resets, a proxy or load balancer in between, or the network"
}

// alike says whether most lifetimes are within 25 % of the median.
func alike(ls []time.Duration) bool {
	m := ls[len(ls)/2]
	n := 0
	for _, l := range ls {
		if l >= m*3/4 && l <= m*5/4 {
			n++
		}
	}
	return n*4 >= len(ls)*3
}
