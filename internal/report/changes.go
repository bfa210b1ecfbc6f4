package report

import (
	"fmt"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// ChangedEvent is one MODIFIED event the trace recorded the changes of
// (--diff): when it came, its object, and what it changed, or why it was
// not diffed.
type ChangedEvent struct {
	At              time.Duration
	Object          string // namespace/name
	ResourceVersion string
	// Changes are the visible ones (metadata.resourceVersion and
	// managedFields left out), the first maxChangesPerEvent of them; More
	// counts the rest.
	Changes       []diff.Change
	More          int
	TimestampOnly bool
	Skipped       string
}

// maxChangesPerEvent is how many paths of one event the last diffs keep.
const maxChangesPerEvent = 12

// changed keeps a MODIFIED event's changes among the last ones (a ring of
// MaxRecentChanges): the totals are the replay's churn, taken at the end.
func (c *collector) changed(n reflector.Note) {
	if n.Changes == nil || n.Event != reflector.EventModified || n.Applied == nil || n.Applied.Object == nil {
		return
	}
	o := n.Applied.Object
	ev := ChangedEvent{At: c.at, Object: o.Ref().String(), ResourceVersion: o.ResourceVersion,
		TimestampOnly: n.Changes.TimestampOnly, Skipped: n.Changes.Skipped}
	visible := n.Changes.Visible()
	ev.Changes = visible[:min(len(visible), maxChangesPerEvent)]
	ev.More = len(visible) - len(ev.Changes)
	c.recentChanges.add(ev)
}

// Clipping of the changes' user data.
const (
	clipPath  = 240
	clipValue = 80
)

// churnView is a resource's "What changed": the replay's churn and the last diffs.
type churnView struct {
	Events, TimestampOnly, TimestampShare, Skipped string
	// SkippedN is the number of events not diffed (the template tests it).
	SkippedN int64
	// Values says whether the trace kept the changes' values: with
	// --trace-objects full, and for Secrets with --trace-unsafe-secrets.
	Values bool
	// AllRecent is set when Recent holds every event that had changes.
	AllRecent bool
	Paths     []churnPathRow
	Objects   []churnObjectRow
	// Recent are the last diffs, newest first; RecentTotal counts every
	// MODIFIED event that had changes.
	Recent      []changedRow
	RecentTotal string
}

type churnPathRow struct {
	Path, Count, Share, Manager string
	CountV                      int64
	ShareV                      float64
}

type churnObjectRow struct {
	Name, Count, Share string
	CountV             int64
}

// changedRow is one of the last diffs.
type changedRow struct {
	At, Object, RV string
	// Note is what stands for the changes when there are none to list: why
	// the event was not diffed, or that nothing but times changed.
	Note    string
	Changes []changeCell
	More    int
	// TimestampOnly marks an event that changed only times.
	TimestampOnly bool
}

type changeCell struct {
	Path, Op, Old, New, Writer string
	// HasOld and HasNew say whether the trace kept the value (an empty
	// string is a value too).
	HasOld, HasNew bool
}

func share(n, of int64) string {
	if of <= 0 {
		return "0%"
	}
	return percent(float64(n) / float64(of))
}

func percent(f float64) string {
	if f > 0 && f < 0.005 {
		return "<1%"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

// churnViewOf is the "What changed" of res; nil when the trace recorded no changes for it.
func churnViewOf(res *Section) *churnView {
	c := res.Churn
	if c == nil {
		return nil
	}
	n := format.Count[int64]
	v := &churnView{Events: n(c.Events), TimestampOnly: n(c.TimestampOnly), TimestampShare: share(c.TimestampOnly, c.Events),
		Skipped: n(c.Skipped), SkippedN: c.Skipped, Values: res.Header.KeepsChangeValues(),
		RecentTotal: n(res.RecentChangesTotal), AllRecent: int64(len(res.RecentChanges)) == res.RecentChangesTotal}
	for _, p := range c.Paths {
		v.Paths = append(v.Paths, churnPathRow{Path: format.ClipWithLength(p.Path, clipPath), Count: n(p.Count), CountV: p.Count,
			Share: percent(p.Share), ShareV: p.Share, Manager: format.ClipWithLength(p.Manager, clipName)})
	}
	for _, o := range c.Objects {
		v.Objects = append(v.Objects, churnObjectRow{Name: format.ClipWithLength(o.Name, clipName), Count: n(o.Count), CountV: o.Count, Share: share(o.Count, c.Events+c.Skipped)})
	}
	for i := len(res.RecentChanges) - 1; i >= 0; i-- {
		v.Recent = append(v.Recent, changedRowOf(res.RecentChanges[i]))
	}
	return v
}

func changedRowOf(e ChangedEvent) changedRow {
	row := changedRow{At: formatOffset(e.At), Object: format.ClipWithLength(e.Object, clipName), RV: format.ClipWithLength(e.ResourceVersion, 64),
		More: e.More, TimestampOnly: e.TimestampOnly}
	switch {
	case e.Skipped != "":
		row.Note = "not diffed: " + format.ClipWithLength(e.Skipped, clipMessage)
	case len(e.Changes) == 0:
		row.Note = "nothing changed but resourceVersion and managedFields"
	}
	for _, ch := range e.Changes {
		row.Changes = append(row.Changes, changeCell{Path: format.ClipWithLength(ch.Path, clipPath), Op: string(ch.Op),
			Old: format.Clip(string(ch.Old), clipValue), New: format.Clip(string(ch.New), clipValue), HasOld: ch.Old != nil, HasNew: ch.New != nil,
			Writer: format.ClipWithLength(ch.Writer(), clipName)})
	}
	return row
}
