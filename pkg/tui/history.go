package tui

import (
	"cmp"
	"container/list"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/churn"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/detail"
)

// version is one state of an object the dashboard saw.
type version struct {
	at time.Time // zero when unknown (the cached state before the first change seen)
	// what says how this version was seen: a store outcome (ADDED, MODIFIED,
	// REPLACED, DELETED), CACHED, or a relist-diff category.
	what string
	// obj is the object; nil for versions known only from a relist diff.
	obj     *store.Object
	uid, rv string
	// delta is what a diffed MODIFIED event changed (--diff, or a trace
	// that recorded it): the note's, shared, never copied; nil otherwise.
	delta *diff.Changes

	// changes describe what differs from the previous version; computed
	// when first shown, since most versions never are.
	changes []string
	diffed  bool
}

// objectRecord is the bounded history of one address (namespace/name): a
// ring of its last versions, kept by value so recording allocates nothing
// once the history is full (evicted records are reused).
type objectRecord struct {
	ref       store.Ref
	ring      [versionsPerObject]version
	first, n  int
	forgotten int // versions dropped from the front
	elem      *list.Element
}

// len is how many versions the record holds.
func (r *objectRecord) len() int { return r.n }

// at returns version i, 0 being the oldest kept.
func (r *objectRecord) at(i int) *version { return &r.ring[(r.first+i)%versionsPerObject] }

func (r *objectRecord) push(v version) {
	if r.n == versionsPerObject {
		r.ring[r.first] = v
		r.first = (r.first + 1) % versionsPerObject
		r.forgotten++
		return
	}
	r.ring[(r.first+r.n)%versionsPerObject] = v
	r.n++
}

// objectHistory keeps the last versions of the most recently changed
// objects, so a selected log entry can show what changed. It is bounded in
// objects (least recently changed forgotten first) and in versions per object.
type objectHistory struct {
	max   int
	byRef map[store.Ref]*objectRecord
	lru   *list.List // of *objectRecord, most recently changed first
}

func newObjectHistory(maxObjects int) *objectHistory {
	return &objectHistory{max: max(maxObjects, 1), byRef: map[store.Ref]*objectRecord{}, lru: list.New()}
}

// len is how many objects have a history.
func (h *objectHistory) len() int { return len(h.byRef) }

// get returns the history of ref, if it is tracked.
func (h *objectHistory) get(ref store.Ref) (*objectRecord, bool) {
	r, ok := h.byRef[ref]
	return r, ok
}

// add appends v to ref's history. baseline, when the history is new, is the
// cached object before v (so the first change seen has something to compare to).
func (h *objectHistory) add(ref store.Ref, v version, baseline *store.Object) {
	r, ok := h.byRef[ref]
	switch {
	case ok:
		h.lru.MoveToFront(r.elem)
	case h.lru.Len() >= h.max:
		// Reuse the least recently changed record for the new object.
		r = h.lru.Back().Value.(*objectRecord)
		delete(h.byRef, r.ref)
		elem := r.elem
		*r = objectRecord{ref: ref, elem: elem}
		h.lru.MoveToFront(elem)
		h.byRef[ref] = r
	default:
		r = &objectRecord{ref: ref}
		r.elem = h.lru.PushFront(r)
		h.byRef[ref] = r
	}
	if !ok && baseline != nil {
		r.push(version{what: "CACHED", obj: baseline, uid: baseline.UID, rv: baseline.ResourceVersion})
	}
	r.push(v)
}

// outcomeWord names the store outcomes the history records; "" for the others.
func outcomeWord(o store.Outcome) string {
	switch o {
	case store.Added:
		return "ADDED"
	case store.Modified:
		return "MODIFIED"
	case store.Replaced:
		return "REPLACED"
	case store.Deleted:
		return "DELETED"
	}
	return ""
}

// recordResult adds what one store change did to the history, with what
// its event changed when it was diffed (ch, nil when not).
func (h *objectHistory) recordResult(at time.Time, res store.Result, ch *diff.Changes) {
	if outcomeWord(res.Outcome) == "" || res.Object == nil {
		return
	}
	h.add(res.Object.Ref(), version{
		at: at, what: outcomeWord(res.Outcome), obj: res.Object,
		uid: res.Object.UID, rv: res.Object.ResourceVersion, delta: ch,
	}, res.Previous)
}

// recordDiff adds the objects a relist diff names, at most limit of them.
func (h *objectHistory) recordDiff(at time.Time, d *store.RelistDiff, limit int) {
	groups := []struct {
		what    string
		entries []store.DiffEntry
		useOld  bool
	}{
		{"missed delete (relist)", d.Deleted, true},
		{"recreated (relist)", d.Recreated, false},
		{"missed update (relist)", d.Updated, false},
		{"missed add (relist)", d.Added, false},
	}
	for _, g := range groups {
		for _, e := range g.entries {
			if limit <= 0 {
				return
			}
			limit--
			uid, rv := e.NewUID, e.NewResourceVersion
			if g.useOld {
				uid, rv = e.OldUID, e.OldResourceVersion
			}
			h.add(e.Ref, version{at: at, what: g.what, uid: uid, rv: rv}, nil)
		}
	}
}

// changesOf returns (and caches) what version i of r changed.
func (r *objectRecord) changesOf(i int) []string {
	v := r.at(i)
	if v.diffed {
		return v.changes
	}
	var prev *version
	switch {
	case i > 0:
		prev = r.at(i - 1)
	case r.forgotten > 0:
		v.changes, v.diffed = []string{"the versions before it were forgotten"}, true
		return v.changes
	}
	v.changes, v.diffed = versionChanges(prev, v), true
	return v.changes
}

// maxBodyChanges bounds the body fields listed for one version.
const maxBodyChanges = 12

// versionChanges describes what differs between two successive versions.
func versionChanges(prev, cur *version) []string {
	if prev == nil {
		return []string{"first version seen"}
	}
	var out []string
	if prev.uid != cur.uid && prev.uid != "" && cur.uid != "" {
		out = append(out, fmt.Sprintf("new instance: uid %s → %s", store.ShortUID(prev.uid), store.ShortUID(cur.uid)))
	}
	if prev.rv != cur.rv {
		out = append(out, fmt.Sprintf("resourceVersion %s → %s", common.OrDash(prev.rv), common.OrDash(cur.rv)))
	}
	a, b := prev.obj, cur.obj
	if a == nil || b == nil {
		return out
	}
	if a.Generation != b.Generation {
		out = append(out, fmt.Sprintf("generation %d → %d", a.Generation, b.Generation))
	}
	out = append(out, labelChanges(a.Labels.Map(), b.Labels.Map())...)
	if a.DeletionTimestamp == nil && b.DeletionTimestamp != nil {
		out = append(out, "deletionTimestamp set: "+b.DeletionTimestamp.UTC().Format(time.RFC3339))
	}
	if !reflect.DeepEqual(a.OwnerReferences, b.OwnerReferences) {
		out = append(out, fmt.Sprintf("owners %s → %s", detail.Owners(a), detail.Owners(b)))
	}
	if len(a.Body) > 0 && len(b.Body) > 0 {
		out = append(out, bodyChanges(a.Body, b.Body)...)
	}
	if len(out) == 0 {
		out = append(out, "no change in what is kept (metadata-only objects hide spec and status)")
	}
	return out
}

// labelChanges lists added, removed and changed labels in key order.
func labelChanges(a, b map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(b)) {
		old, ok := a[k]
		switch {
		case !ok:
			out = append(out, "label +"+k+"="+b[k])
		case old != b[k]:
			out = append(out, "label "+k+": "+old+" → "+b[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if _, ok := b[k]; !ok {
			out = append(out, "label -"+k)
		}
	}
	return out
}

// bodyChanges lists what changed between two JSON bodies (diff.Compare:
// list items by their key), leaving out the metadata already compared.
func bodyChanges(a, b []byte) []string {
	ch, err := diff.Compare(a, b, true)
	if err != nil {
		return []string{"body changed (not JSON)"}
	}
	// What the new version has first, then what it lost, each in path order.
	paths := slices.Clone(ch.Paths)
	slices.SortStableFunc(paths, func(x, y diff.Change) int {
		return cmp.Compare(boolInt(x.Op == diff.Removed), boolInt(y.Op == diff.Removed))
	})
	var out []string
	for _, c := range paths {
		p := strings.TrimPrefix(c.Path, ".")
		if c.Meta || shownElsewhere(p) {
			continue
		}
		switch c.Op {
		case diff.Added:
			out = append(out, "+ "+p+": "+churn.RawValue(c.New))
		case diff.Removed:
			out = append(out, "- "+p)
		default:
			out = append(out, p+": "+churn.RawValue(c.Old)+" → "+churn.RawValue(c.New))
		}
	}
	if len(out) > maxBodyChanges {
		n := len(out) - maxBodyChanges
		out = append(out[:maxBodyChanges], fmt.Sprintf("… and %d more fields", n))
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// shownElsewhere are the metadata versionChanges says itself.
func shownElsewhere(path string) bool {
	for _, f := range []string{"metadata.generation", "metadata.labels", "metadata.ownerReferences", "metadata.deletionTimestamp", "metadata.uid"} {
		if path == f || strings.HasPrefix(path, f+".") || strings.HasPrefix(path, f+"[") {
			return true
		}
	}
	return false
}
