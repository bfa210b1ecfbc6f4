package findings

import (
	"fmt"
	"slices"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// MissedDeletes is a relist that found deletes the watch never told.
const MissedDeletes ID = "missed-deletes"

type missedDeletes struct {
	objects []Object // the first keepObjects
	// window spans every relist's: from the first one's beginning (the
	// watch's last sign of life before it, or with deletes dropped on
	// purpose the list before it) to the last relist, so that it holds
	// every object listed.
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
	// The deletes the proxy dropped on purpose were sent while the watch
	// was up: they lie anywhere after the list before this relist. Else
	// they came while the watch was down, after its last sign of life.
	dropped := e.track.beforeList.dropped
	from := e.track.beforeList.alive
	if dropped > 0 {
		from = e.track.beforeList.list
	}
	this := window(from, n.At)
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
	before := &e.track.beforeList
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
		quiet, others := before.quietOpen, deleted+recreated-dropped
		switch {
		case this == nil:
		case dropped > 0:
			text += fmt.Sprintf("; in the %s from the list before it to the relist, the observing proxy dropped %s on an open watch",
				roundSeconds(this.Seconds), format.PluralUngrouped(dropped, "DELETED event"))
			if others > 0 {
				text += fmt.Sprintf(": the other %d were never sent to it (made while no watch was open)", others)
			}
		case quiet > 0:
			// A watch was open, and said nothing: the deletes may have
			// been lost on it, not only while no watch was open.
			text += fmt.Sprintf("; in the %s from the watch's last sign of life (an event, a list, or the end of a watch that delivered one) to the relist, a watch was open for %s and delivered nothing",
				roundSeconds(this.Seconds), roundSeconds(min(quiet.Seconds(), this.Seconds)))
		default:
			text += fmt.Sprintf("; the watch was down for %s before it, from its last sign of life (an event, a list, or the end of a watch that delivered one) to the relist", roundSeconds(this.Seconds))
		}
		if f.Count > int64(deleted+recreated) {
			text += fmt.Sprintf(" (%d in all, over %d relists; the window spans them all)", f.Count, r.relists)
		}
		f.Evidence = Evidence{Text: text, Requests: slices.Clone(r.reqs), Objects: slices.Clone(r.objects), ObjectsTotal: int(f.Count), Window: r.window}
		why := "history was gone when the watch came back (410 Gone after a compaction, a restart, a long disconnect), so the deletes were never sent"
		switch {
		case dropped > 0 && others > 0:
			why = "the observing proxy left DELETED events out on their way to the client, and " + why
		case dropped > 0:
			// The server sent them; the observing proxy left them out.
			why = "the DELETED events were left out on their way to the client, so its watch never reported them"
		case quiet > 0:
			why = "either the DELETED events were lost on a watch that was open (a proxy or middlebox dropping them on the way), or they were made while no watch was open and history was gone when it came back (410 Gone after a compaction, a restart)"
		}
		f.Cause = why + "; the relist found them by comparing lists. A client-go informer hands such objects to OnDelete as cache.DeletedFinalStateUnknown, with the last state it knew, and a handler that expects the object itself misses them"
		f.Action = "handle cache.DeletedFinalStateUnknown in every OnDelete handler; make cleanup level-based (reconcile what exists) rather than edge-triggered on delete events; use finalizers for cleanup that must run"
		f.Docs = "https://pkg.go.dev/k8s.io/client-go/tools/cache#DeletedFinalStateUnknown"
	})
}
