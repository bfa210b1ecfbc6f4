package findings

import (
	"fmt"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// CacheDrift is an audit that found the cache differs from a fresh list.
const CacheDrift ID = "cache-drift"

type cacheDrift struct{}

func (cacheDrift) entry() Entry {
	return Entry{CacheDrift, Error, "an audit (`a` on the dashboard) found the cache differs from a fresh list"}
}

func (cacheDrift) observe(e *Engine, n reflector.Note) {
	a := n.Audit
	if n.Kind != reflector.NoteAudit || a == nil || !a.Drift() {
		return
	}
	var objs []Object
	add := func(list []store.DiffEntry, what string) {
		for _, d := range list {
			objs = keepFirst(objs, Object{Namespace: d.Ref.Namespace, Name: d.Ref.Name, What: what, OldUID: d.OldUID, NewUID: d.NewUID})
		}
	}
	add(a.Missing, "missing")
	add(a.Extra, "extra")
	add(a.Different, "different")
	missing, extra, different := a.Counts()
	total := missing + extra + different
	e.raise(CacheDrift, Error, n.At, func(f *Finding) {
		f.Count++
		f.Title = fmt.Sprintf("the cache differs from a fresh list: %d missing, %d extra, %d different", missing, extra, different)
		f.Evidence = Evidence{Text: a.String(), Objects: objs, ObjectsTotal: total, Requests: []int64{n.RequestID},
			Facts: map[string]string{"listed": fmt.Sprint(a.Listed), "cached": fmt.Sprint(a.Cached), "resourceVersion": a.ResourceVersion}}
		f.Cause = "the watch's view and the server's disagree: events were lost or applied out of order, or objects changed between the list and the watch; a cache that drifts serves wrong answers until the next relist"
		f.Action = "relist (r on the dashboard) and audit again; if it drifts again, record a trace (--trace) and look at the events of the objects named here"
	})
}
