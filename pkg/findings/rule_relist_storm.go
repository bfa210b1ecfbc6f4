package findings

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// RelistStorm is too many relists within a window (Options.StormRelists, StormWindow).
const RelistStorm ID = "relist-storm"

// The relist storm's defaults: 3 relists within 10 minutes.
const (
	defaultStormRelists = 3
	defaultStormWindow  = 10 * time.Minute
)

// goneOnReconnect is how long a watch that delivered nothing may have
// waited for its 410 Gone for the 410 to count as its answer on reconnect:
// an API server that just started holds a watch until its watch cache is
// ready, seconds on a busy machine.
const goneOnReconnect = 30 * time.Second

// etcdCompaction is how often the API server compacts etcd's history by
// default (kube-apiserver --etcd-compaction-interval).
const etcdCompaction = 5 * time.Minute

// longDown is how long a watch may be down before its 410 counts as an
// outage longer than the server keeps history: etcd's default compaction
// interval, past which the resourceVersion it resumes from may be gone.
const longDown = etcdCompaction

type relistStorm struct {
	relists int
	window  time.Duration
	began   []time.Time // when relists of the server's began, within the window
	reqs    []int64     // the requests that evidence the storm
	gones   []goneAt    // the 410s within the window
	// watched and asked: a watch was made, and one asked for bookmarks.
	watched, asked bool
}

type goneAt struct {
	at         time.Time
	afterStart time.Duration // the life of the quiet watch that got the 410 (-1: not a watch's)
	downFor    time.Duration // from the last sign of life to the 410
}

// RelistStormDefault is the default of --relist-storm, COUNT/DURATION: "3/10m".
func RelistStormDefault() string {
	return fmt.Sprintf("%d/%s", defaultStormRelists, strings.TrimSuffix(defaultStormWindow.String(), "0s"))
}

func (r *relistStorm) tune(o Options) {
	r.relists, r.window = o.StormRelists, o.StormWindow
	if r.relists <= 0 {
		r.relists = defaultStormRelists
	}
	if r.window <= 0 {
		r.window = defaultStormWindow
	}
}

func (r *relistStorm) entry() Entry {
	return Entry{RelistStorm, Error, fmt.Sprintf("%d or more relists within %s (`--relist-storm %s`), not counting those you forced (`r`); the cause says whether the 410s came right after reconnects, after long outages, or for want of bookmarks",
		r.relists, span(r.window), RelistStormDefault())}
}

// observe keeps the 410s, and counts a relist of the server's (not one the
// user forced): a relist beginning is the storm's new evidence.
func (r *relistStorm) observe(e *Engine, n reflector.Note) {
	// The watch as the track read it, which guards a note without its
	// request (Observe is exported: a caller's note may lack it).
	if w := e.track.watch; n.Kind == reflector.NoteRequestStarted && w != nil {
		r.watched, r.asked = true, r.asked || w.asked
	}
	if decided(n, reflector.ReasonGone) != nil {
		t := &e.track
		g := goneAt{at: n.At, afterStart: -1}
		if !t.seen.alive.IsZero() {
			g.downFor = n.At.Sub(t.seen.alive)
		}
		// The life of the watch the 410 answered: a LIST's 410 (the last
		// request a LIST) answered no reconnect, whatever watch ended before.
		if t.lastWatchQuiet && t.lastVerb == reflector.VerbWatch {
			g.afterStart = t.lastWatchLife
		}
		r.gones = append(r.gones, g)
		r.gones = slices.DeleteFunc(r.gones, func(x goneAt) bool { return n.At.Sub(x.at) > r.window })
	}
	b := n.List
	if n.Kind != reflector.NoteListBegan || b == nil || !b.Relist() || b.Cause == reflector.CauseForced {
		return
	}
	r.began = append(r.began, n.At)
	r.reqs = appendLast(r.reqs, n.RequestID)
	r.began = slices.DeleteFunc(r.began, func(t time.Time) bool { return n.At.Sub(t) > r.window })
	if len(r.began) >= r.relists {
		r.raise(e, n.At)
	}
}

func (r *relistStorm) raise(e *Engine, at time.Time) {
	n := len(r.began)
	var cause []string
	atOnce, longDowns := 0, 0
	for _, g := range r.gones {
		if at.Sub(g.at) > r.window {
			continue
		}
		if g.afterStart >= 0 && g.afterStart < goneOnReconnect {
			atOnce++
		}
		if g.downFor > longDown {
			longDowns++
		}
	}
	_, injected := e.track.faults["gone"]
	switch {
	case injected:
		// The proxy answered them: nothing was compacted (a reviewer read
		// both the fault and a compaction as the cause).
		cause = append(cause, "the 410 Gone answers were the proxy's, in place of the server's, as after a compaction; each relist is the client's answer to one")
	case atOnce > 0:
		// A 410 on reconnect says only that the server no longer had the
		// history: a compaction while the watch was down, or a restarted
		// server's watch cache that starts newer (milliseconds after a
		// cut, no compaction need have happened).
		cause = append(cause, fmt.Sprintf("%d 410 Gone came right after a reconnect: the server no longer had the history from the resourceVersion the watch resumed from (etcd compacted it, or a restarted API server's watch cache starts at a newer one)", atOnce))
	}
	if longDowns > 0 && !injected {
		cause = append(cause, fmt.Sprintf("%s the watch was down longer than the server keeps history (etcd compacts every %s by default)", format.PluralUngrouped(longDowns, "time"), span(etcdCompaction)))
	}
	// Only with no-bookmarks' evidence: watches cut before a bookmark was
	// due got none, and that says nothing.
	if _, none := e.found[NoBookmarks]; !injected && none {
		cause = append(cause, "the watches asked for bookmarks and got none (no-bookmarks), so a quiet resource's cursor falls behind compaction")
	} else if !injected && r.watched && !r.asked {
		cause = append(cause, "no watch asked for bookmarks (allowWatchBookmarks), so a quiet resource's cursor falls behind compaction")
	}
	if len(cause) == 0 {
		cause = append(cause, "each relist follows a 410 Gone, a too-large resourceVersion or a forced relist; see the requests")
	}
	e.raise(RelistStorm, Error, at, func(f *Finding) {
		f.Count = max(f.Count, int64(n)) // the most relists seen within one window
		f.Title = fmt.Sprintf("%s within %s", format.PluralUngrouped(n, "relist"), roundDur(r.window))
		f.Evidence = Evidence{
			Text:     fmt.Sprintf("%s (complete lists after the first) began within %s (the threshold is %d); each one lists every object again", format.PluralUngrouped(n, "relist"), roundDur(r.window), r.relists),
			Requests: slices.Clone(r.reqs),
			Window:   window(r.began[0], at),
		}
		f.Cause = strings.Join(cause, "; ")
		f.Action = "keep the watch's cursor fresh: ask for bookmarks (allowWatchBookmarks) and keep the API server's watch cache on; reconnect quickly after a cut; use the streaming list (WatchListClient) so a relist is served from the watch cache; check what restarts the API server or compacts etcd so often"
		f.Docs = "https://kubernetes.io/docs/reference/using-api/api-concepts/#410-gone-responses"
	})
}
