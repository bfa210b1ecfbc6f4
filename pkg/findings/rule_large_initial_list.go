package findings

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// LargeInitialList is a first list over one of its bounds.
const LargeInitialList ID = "large-initial-list"

// The bounds of a large initial list: 100 MiB, 50,000 objects, 30 s.
const (
	largeListBytes   = 100 << 20
	largeListObjects = 50000
	largeListTime    = 30 * time.Second
)

type largeInitialList struct{}

func (largeInitialList) entry() Entry {
	return Entry{LargeInitialList, Warning, fmt.Sprintf("the first list was over %d MiB (its bodies as received, streamed or paged), %s objects or %s (from the request that began it, not counting waits and fallbacks before it)",
		largeListBytes>>20, format.Count(largeListObjects), span(largeListTime))}
}

// observe checks the first list's size and time.
func (largeInitialList) observe(e *Engine, n reflector.Note) {
	if !e.track.firstList {
		return
	}
	d := n.Decision
	took := listTook(n)
	bytes := d.Bytes
	var over []string
	if bytes > largeListBytes {
		over = append(over, fmt.Sprintf("%s over %s", mib(bytes), mib(largeListBytes)))
	}
	if d.Objects > largeListObjects {
		over = append(over, fmt.Sprintf("%s objects over %s", format.Count(d.Objects), format.Count(largeListObjects)))
	}
	if took > largeListTime {
		over = append(over, fmt.Sprintf("%s over %s", roundDur(took), roundDur(largeListTime)))
	}
	if len(over) == 0 {
		return
	}
	size := "size unknown"
	if bytes > 0 {
		size = mib(bytes)
	}
	e.raise(LargeInitialList, Warning, n.At, func(f *Finding) {
		f.Count = 1
		f.Title = fmt.Sprintf("the initial list is large: %s, %s, %s", format.Plural(d.Objects, "object"), size, tookText(took))
		f.Evidence = Evidence{
			Text:     "the first complete list was " + strings.Join(over, ", "),
			Requests: slices.Clone(e.track.listReqs),
			Window:   window(d.Began, n.At),
			Facts:    map[string]string{"objects": fmt.Sprint(d.Objects), "bytes": fmt.Sprint(bytes), "seconds": fmt.Sprintf("%.1f", took.Seconds())},
		}
		f.Cause = "every informer of this resource starts with this list, holds it all in memory while it syncs, and lists it again after each 410 Gone"
		f.Action = "cut what is listed: a metadata-only informer (--metadata-only) when the spec is not needed, protobuf (--wire protobuf), label or field selectors, or a namespace; `kubectl watchcache cost` measures what each would save"
		f.Docs = "https://kubernetes.io/docs/reference/using-api/api-concepts/#retrieving-large-results-sets-in-chunks"
	})
}
