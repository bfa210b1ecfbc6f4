package findings

import (
	"fmt"
	"slices"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// MissedDeletes is a relist that found deletes the watch never told.
const MissedDeletes ID = "missed-deletes"

type missedDeletes struct {
	objects []Object // the first keepObjects
	// window spans every relist's: from the list before the first one
	// (the objects can have been deleted at any time after it) to the
	// last relist, so that it holds every object listed.
	window  *Window
	relists int
	reqs    []int64
}

func (r *missedDeletes) entry() Entry {
	return Entry{MissedDeletes, Warning, "a relist found objects the watch never said were deleted, or recreated under the same name with another UID (client-go hands those to `OnDelete` as `DeletedFinalStateUnknown`)"}
}

func (r *missedDeletes) observe(e *Engine, n reflector.Note) {
	d := decided(n, reflector.ReasonRelistDiff)
	if d == nil || d.Diff == nil || len(d.Diff.Deleted)+len(d.Diff.Recreated) == 0 {
		return
	}
	diff := d.Diff
	for _, de := range diff.Deleted {
		r.objects = keepFirst(r.objects, Object{Namespace: de.Ref.Namespace, Name: de.Ref.Name, What: "deleted", OldUID: de.OldUID})
	}
	for _, de := range diff.Recreated {
		r.objects = keepFirst(r.objects, Object{Namespace: de.Ref.Namespace, Name: de.Ref.Name, What: "recreated", OldUID: de.OldUID, NewUID: de.NewUID})
	}
	// Each object was in the cache as the list before this relist left
	// it, or came after: it can have been deleted at any time from that
	// list to this one, on a watch that was up (the proxy dropping its
	// DELETED, say) or while none was.
	before := &e.track.beforeList
	dropped := before.dropped
	this := window(before.list, n.At)
	switch {
	case this == nil:
	case r.window == nil:
		r.window = this
	default:
		r.window = window(r.window.From, n.At)
	}
	r.relists++
	// The watch that was up when they went missing, those open but silent
	// after it, the last one before the relist (a resume answered 410,
	// say), then the relist that found them.
	for _, id := range append(append([]int64{before.aliveWatch}, before.quiet...), before.watch) {
		if id != 0 && !slices.Contains(r.reqs, id) {
			r.reqs = appendLast(r.reqs, id)
		}
	}
	r.reqs = appendLast(r.reqs, n.RequestID)
	deleted, recreated := len(diff.Deleted), len(diff.Recreated)
	e.raise(MissedDeletes, Warning, n.At, func(f *Finding) {
		f.Count += int64(deleted + recreated)
		f.Title = format.PluralUngrouped(f.Count, "delete") + " never reached the watch"
		text := fmt.Sprintf("the relist at resourceVersion %s found %s deleted and %d recreated under the same name with another UID that the watch never reported", diff.ResourceVersion, format.PluralUngrouped(deleted, "object"), recreated)
		others := deleted + recreated - dropped
		var open, down time.Duration
		if this != nil {
			open = min(before.open, this.To.Sub(this.From))
			down = this.To.Sub(this.From) - open
		}
		switch {
		case this == nil:
		case dropped > 0:
			text += fmt.Sprintf("; in the %s from the list before it to the relist, the observing proxy dropped %s on an open watch",
				roundSeconds(this.Seconds), format.PluralUngrouped(dropped, "DELETED event"))
			if others > 0 {
				text += fmt.Sprintf(": the other %d were never sent to it (made while no watch was open)", others)
			}
		case open == 0:
			text += fmt.Sprintf("; no watch was open in the %s from the list before it (when they can have been deleted) to the relist", roundSeconds(this.Seconds))
		default:
			text += fmt.Sprintf("; in the %s from the list before it (when they can have been deleted) to the relist, a watch was open for %s", roundSeconds(this.Seconds), roundDur(open))
			if q := min(before.quietOpen, open); q > 0 {
				text += fmt.Sprintf(" (%s of it delivering nothing)", roundDur(q))
			}
			text += fmt.Sprintf(" and down for %s", roundDur(down))
		}
		if dropped == 0 && this != nil {
			if before.gone {
				text += ", and a 410 Gone came before the relist"
			} else {
				text += ", and no 410 Gone came before the relist"
			}
		}
		if f.Count > int64(deleted+recreated) {
			text += fmt.Sprintf(" (%d in all, over %d relists; the window spans them all)", f.Count, r.relists)
		}
		f.Evidence = Evidence{Text: text, Requests: slices.Clone(r.reqs), Objects: slices.Clone(r.objects), ObjectsTotal: int(f.Count), Window: r.window}
		f.Cause = missedBecause(before, e.track.relistCause, dropped, others, open, down) + "; the relist found them by comparing lists. A client-go informer hands such objects to OnDelete as cache.DeletedFinalStateUnknown, with the last state it knew, and a handler that expects the object itself misses them"
		f.Action = "handle cache.DeletedFinalStateUnknown in every OnDelete handler; make cleanup level-based (reconcile what exists) rather than edge-triggered on delete events; use finalizers for cleanup that must run"
		f.Docs = "https://pkg.go.dev/k8s.io/client-go/tools/cache#DeletedFinalStateUnknown"
	})
}

// missedBecause is why deletes were missed, as the evidence says: dropped
// by the observing proxy; lost on a watch that was open (nothing else
// explains deletes missed without a 410 Gone, the server keeping their
// history); or made while the watch was down and gone with history after
// a 410. open and down are how long a watch was up, and none, from the
// list before the relist to it.
func missedBecause(before *signs, cause reflector.ListCause, dropped, others int, open, down time.Duration) string {
	const gone = "history was gone when the watch came back (410 Gone after a compaction, a restart, a long disconnect), so the deletes were never sent"
	const lost = "(a proxy or middlebox dropping DELETED events on the way, or a bug in the server or the client)"
	switch {
	case dropped > 0 && others > 0:
		return "the observing proxy left DELETED events out on their way to the client, and " + gone
	case dropped > 0:
		// The server sent them; the observing proxy left them out.
		return "the DELETED events were left out on their way to the client, so its watch never reported them"
	case before.gone && open == 0:
		return gone
	}
	// A 410 loses only what came after the resourceVersion the watch
	// resumed from: deletes made while a watch was up should have come on
	// it. Without a 410, those made while none was up came before the
	// relist's list, and only it could see them.
	onWatch := fmt.Sprintf("the watch that was open for %s failed to deliver them %s", roundDur(open), lost)
	whileDown := fmt.Sprintf("they were made in the %s no watch was open before the relist's list", roundDur(down))
	why := "no 410 Gone came before the relist (it followed a watch that ended without one), so the server still had their history: "
	if cause == reflector.CauseForced {
		why = "no 410 Gone came before the relist (you forced it), so the server still had their history: "
	}
	if before.gone {
		why, whileDown = "", fmt.Sprintf("they were made in the %s no watch was open and %s", roundDur(down), gone)
	}
	switch {
	case open == 0:
		return why + whileDown
	case down == 0:
		return why + onWatch
	case down > open:
		return why + "either " + whileDown + ", or " + onWatch
	}
	return why + "either " + onWatch + ", or " + whileDown
}
