package findings

import (
	"fmt"
	"slices"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// UIDMismatch is a watch event for another object under the same name: one
// that replaced the cached object, or a stale delete of an older one.
const UIDMismatch ID = "uid-mismatch"

type uidMismatch struct {
	objects []Object // the first keepObjects
}

func (r *uidMismatch) entry() Entry {
	return Entry{UIDMismatch, Warning, "a watch event replaced an object of the same name with another UID, or deleted one with another UID than the cached one's (a stale delete: a late delete of an older instance, ignored)"}
}

func (r *uidMismatch) observe(e *Engine, n reflector.Note) {
	res := n.Applied
	if n.Kind != reflector.NoteApplied || res == nil || !res.Outcome.UIDMismatch() {
		return
	}
	o := Object{What: "replaced"}
	if res.Outcome == store.StaleDelete {
		o.What = "stale delete"
	}
	if res.Object != nil {
		o.Namespace, o.Name, o.NewUID = res.Object.Namespace, res.Object.Name, res.Object.UID
	}
	if res.Previous != nil {
		o.OldUID = res.Previous.UID
	}
	r.objects = keepFirst(r.objects, o)
	e.raise(UIDMismatch, Warning, n.At, func(f *Finding) {
		f.Count++
		f.Title = "another UID under the same name in " + format.PluralUngrouped(f.Count, "watch event")
		f.Evidence = Evidence{
			Text:         fmt.Sprintf("%s carried another UID than the cached object of the same name; the last: %s (%s) in request #%d", format.PluralUngrouped(f.Count, "watch event"), o, o.What, n.RequestID),
			Requests:     appendLast(f.Evidence.Requests, n.RequestID),
			Objects:      slices.Clone(r.objects),
			ObjectsTotal: int(f.Count),
		}
		f.Cause = "an object was deleted and recreated with the same name and the watch did not deliver the delete in between (or delivered an old instance's delete late): handlers keyed by name see one object where there were two"
		f.Action = "key per-object state by UID as well as name, and treat an update whose UID changed as a delete and a create"
		f.Docs = "https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#uids"
	})
}
