package findings

import (
	"fmt"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// RVBackwards is a resourceVersion older than the cursor.
const RVBackwards ID = "resource-version-backwards"

type rvBackwards struct{}

func (r *rvBackwards) entry() Entry {
	return Entry{RVBackwards, Error, "an event or bookmark carried a resourceVersion older than the cursor"}
}

func (r *rvBackwards) observe(e *Engine, n reflector.Note) {
	d := decided(n, reflector.ReasonRVBackwards)
	if d == nil {
		return
	}
	e.raise(RVBackwards, Error, n.At, func(f *Finding) {
		f.Count++
		f.Title = "the resourceVersion went backwards " + format.PluralUngrouped(f.Count, "time")
		f.Evidence = Evidence{
			Text:     fmt.Sprintf("request #%d delivered resourceVersion %s after the cursor had reached %s (the cursor was kept)", n.RequestID, d.ResourceVersion, d.Cursor),
			Requests: appendLast(f.Evidence.Requests, n.RequestID),
			Facts:    map[string]string{"resourceVersion": d.ResourceVersion, "cursor": d.Cursor},
		}
		f.Cause = "the events came from a source behind the one the cursor came from: an HA API server whose watch cache lags the others (the watch reconnected to another replica), or something in between (a caching proxy) serving old data"
		f.Action = "check which API server replica served the request (its audit log, or a load balancer's session affinity); keep the client on one replica, or upgrade to a version with consistent reads from the watch cache"
		f.Docs = "https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions"
	})
}
