package findings

import (
	"fmt"
	"slices"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// NoBookmarks is a watch that asked for bookmarks and got none.
const NoBookmarks ID = "no-bookmarks"

// bookmarkInterval is how long a watch that asked for bookmarks may stay
// open without one after its first event: past the API server's minute.
const bookmarkInterval = 75 * time.Second

// minBookmarkTimeout is the shortest watch timeout after which a watch
// that asked for bookmarks should have had one (the API server sends one
// shortly before the timeout, on a timer of its own).
const minBookmarkTimeout = 10 * time.Second

// minTimeoutMisses is how many watches must run to their timeout without
// the bookmark due before it for no-bookmarks.
const minTimeoutMisses = 2

// preTimeoutBookmark is how long before a watch's timeout the API server's
// watch cache sends it a bookmark.
const preTimeoutBookmark = 2 * time.Second

type noBookmarks struct {
	reqs []int64
	// timeoutMisses are the watches that ran to their timeout without the
	// bookmark due before it since the last watch that ended having had a
	// bookmark, however long it was open (see minTimeoutMisses).
	timeoutMisses []int64
	checked       *openWatch // the open watch checked already: raised, or found a bookmark
}

func (r *noBookmarks) entry() Entry {
	return Entry{NoBookmarks, Warning, fmt.Sprintf("a watch that asked for bookmarks stayed open past %s after its first event (said at its first note past that: an event, its end, or any other), or %d watches in a row (no watch with a bookmark between them) ran to a timeout of %s or more with an event at least %s before it, without one (one such watch is weak evidence: a loaded healthy server can miss the bookmark due %s before a timeout; the API server bookmarks only a resourceVersion newer than the watch's: a watch of a resource nothing changed gets none, and that is no evidence)",
		span(bookmarkInterval), minTimeoutMisses, span(minBookmarkTimeout), span(preTimeoutBookmark+time.Second), span(preTimeoutBookmark))}
}

// pass: after the others, as the open watch's check of each note always was.
func (r *noBookmarks) pass() int { return 1 }

func (r *noBookmarks) observe(e *Engine, n reflector.Note) {
	if w, req := e.track.ended, endedWatch(n); w != nil && req != nil {
		r.ended(e, n.At, w, req)
	}
	r.checkOpen(e, n.At)
}

// ended checks a watch that asked for bookmarks at its end.
func (r *noBookmarks) ended(e *Engine, at time.Time, w *openWatch, req *reflector.RequestInfo) {
	if w.bookmarked {
		// The server sends bookmarks: a miss before this was the load's.
		// Cleared before any other check: a watch open past the bookmark
		// interval was checked already (checkOpen found its bookmark), and
		// is a watch with a bookmark between two misses all the same.
		r.timeoutMisses = nil
		return
	}
	if !w.asked || r.checked == w || w.firstEvent.IsZero() || req.End.IsGone() {
		return
	}
	open := req.Duration
	// A watch that ran to a timeout too short for the server's
	// bookmark timer is no evidence; nor is one whose first event came
	// too late for the bookmark the server sends 2 s before the timeout.
	atTimeout := w.ranOut && w.timeout >= minBookmarkTimeout && at.Sub(w.firstEvent) >= preTimeoutBookmark+time.Second
	switch {
	case at.Sub(w.firstEvent) > bookmarkInterval:
		r.raise(e, at, req.ID, open, at.Sub(w.firstEvent), false)
	case atTimeout:
		// One watch that ran to its timeout without the bookmark due 2 s
		// before it is weak evidence: a healthy server sends that one
		// only once its watch cache has a newer resourceVersion (from
		// etcd's progress notifications, every few seconds), which a
		// loaded server can miss. Two, with no bookmark on a watch in
		// between, are the finding.
		r.timeoutMisses = appendLast(r.timeoutMisses, req.ID)
		if len(r.timeoutMisses) >= minTimeoutMisses {
			r.raise(e, at, req.ID, open, at.Sub(w.firstEvent), true)
		}
	}
}

// checkOpen raises no-bookmarks for a watch still open, with none, past
// the bookmark interval after its first event: checked on each note while
// it is open.
//
// The interval counts from the first event, not from the watch's start:
// the API server's watch cache sends a watch a bookmark only when it has a
// resourceVersion newer than the one the watch started from (a bookmark at
// the watch's own resourceVersion is dropped), so a watch of a resource
// that nothing changed is quiet on a healthy server. An event is the proof
// that there was something to bookmark.
func (r *noBookmarks) checkOpen(e *Engine, now time.Time) {
	w := e.track.watch
	if w == nil || !w.asked || r.checked == w || w.firstEvent.IsZero() || now.Sub(w.firstEvent) <= bookmarkInterval {
		return
	}
	r.checked = w
	if !w.bookmarked {
		r.raise(e, now, w.id, now.Sub(w.started), now.Sub(w.firstEvent), false)
	}
}

// raise raises no-bookmarks for watch id and the earlier watches that
// ran to their timeout without one and were not counted yet (pending).
func (r *noBookmarks) raise(e *Engine, at time.Time, id int64, open, sinceEvent time.Duration, atTimeout bool) {
	pending := 0
	if atTimeout {
		// The misses before this one, held back until there were enough.
		for _, m := range r.timeoutMisses[:len(r.timeoutMisses)-1] {
			if !slices.Contains(r.reqs, m) {
				r.reqs = appendLast(r.reqs, m)
				pending++
			}
		}
	}
	r.reqs = appendLast(r.reqs, id)
	e.raise(NoBookmarks, Warning, at, func(f *Finding) {
		f.Count += int64(1 + pending)
		how := fmt.Sprintf("stayed open %s", roundDur(open))
		if atTimeout {
			how = fmt.Sprintf("ran to its timeout (%s)", roundDur(open))
		}
		f.Title = "no bookmark arrived on 1 watch that asked for them"
		if f.Count != 1 {
			f.Title = fmt.Sprintf("no bookmark arrived on %d watches that asked for them", f.Count)
		}
		f.Evidence = Evidence{
			Text:     fmt.Sprintf("watch #%d asked for bookmarks (allowWatchBookmarks=true) and %s without one, %s after its first event showed the resource had moved on; the API server sends one about every minute, and %s before a watch's timeout, whenever it has a newer resourceVersion than the watch's", id, how, roundDur(sinceEvent), roundDur(preTimeoutBookmark)),
			Requests: slices.Clone(r.reqs),
		}
		f.Cause = "without bookmarks the cursor moves only when an object changes; after a restart or a compaction a quiet resource's resourceVersion is too old, and every reconnect relists (410 Gone). The API server sends bookmarks from its watch cache: it is disabled (--watch-cache=false, or for this resource), or the server is old"
		f.Action = "enable the API server's watch cache (--watch-cache, --watch-cache-sizes); until then expect a relist after each compaction"
		f.Docs = "https://kubernetes.io/docs/reference/using-api/api-concepts/#watch-bookmarks"
	})
}
