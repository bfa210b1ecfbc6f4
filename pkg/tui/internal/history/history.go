// Package history is the dashboard's memory of objects: the last versions
// of the objects most recently changed, each with what it changed from the
// version before, for an object's detail. Recording allocates nothing once
// it is full.
package history

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
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// VersionsPerObject is how many versions of one object the history keeps.
const VersionsPerObject = 16

// Version is one state of an object the dashboard saw.
type Version struct {
	At time.Time // zero when unknown (the cached state before the first change seen)
	// What says how this version was seen: a store outcome (ADDED, MODIFIED,
	// REPLACED, DELETED), CACHED, or a relist-diff category.
	What string
	// obj is the object; nil for versions known only from a relist diff.
	obj     *store.Object
	UID, RV string
	// Delta is what a diffed MODIFIED event changed (--diff, or a trace
	// that recorded it): the note's, shared, never copied; nil otherwise.
	Delta *diff.Changes

	// changes describe what differs from the previous version; computed
	// when first shown, since most versions never are.
	changes []string
	diffed  bool
}

// Record is the bounded history of one address (namespace/name): a
// ring of its last versions, kept by value so recording allocates nothing
// once the history is full (evicted records are reused).
type Record struct {
	ref       store.Ref
	ring      [VersionsPerObject]Version
	first, n  int
	Forgotten int // versions dropped from the front
	elem      *list.Element
}

// Len is how many versions the record holds.
func (r *Record) Len() int { return r.n }

// At returns version i, 0 being the oldest kept.
func (r *Record) At(i int) *Version { return &r.ring[(r.first+i)%VersionsPerObject] }

func (r *Record) push(v Version) {
	if r.n == VersionsPerObject {
		r.ring[r.first] = v
		r.first = (r.first + 1) % VersionsPerObject
		r.Forgotten++
		return
	}
	r.ring[(r.first+r.n)%VersionsPerObject] = v
	r.n++
}

// Objects keeps the last versions of the most recently changed
// objects, so a selected log entry can show what changed. It is bounded in
// objects (least recently changed forgotten first) and in versions per object.
type Objects struct {
	max   int
	byRef map[store.Ref]*Record
	lru   *list.List // of *Record, most recently changed first
}

// NewObjects is an empty history of at most maxObjects objects.
func NewObjects(maxObjects int) *Objects {
	return &Objects{max: max(maxObjects, 1), byRef: map[store.Ref]*Record{}, lru: list.New()}
}

// Len is how many objects have a history.
func (h *Objects) Len() int { return len(h.byRef) }

// Get returns the history of ref, if it is tracked.
func (h *Objects) Get(ref store.Ref) (*Record, bool) {
	r, ok := h.byRef[ref]
	return r, ok
}

// add appends v to ref's history. before, when the history is new, is the
// version cached before v (so the first change seen has something to
// compare to); nil when there was none.
func (h *Objects) add(ref store.Ref, v Version, before *Version) {
	r, ok := h.byRef[ref]
	switch {
	case ok:
		h.lru.MoveToFront(r.elem)
	case h.lru.Len() >= h.max:
		// Reuse the least recently changed record for the new object.
		r = h.lru.Back().Value.(*Record)
		delete(h.byRef, r.ref)
		elem := r.elem
		*r = Record{ref: ref, elem: elem}
		h.lru.MoveToFront(elem)
		h.byRef[ref] = r
	default:
		r = &Record{ref: ref}
		r.elem = h.lru.PushFront(r)
		h.byRef[ref] = r
	}
	if !ok && before != nil {
		r.push(*before)
	}
	r.push(v)
}

// RecordResult adds what one store change did to the history, with what
// its event changed when it was diffed (ch, nil when not).
func (h *Objects) RecordResult(at time.Time, res store.Result, ch *diff.Changes) {
	if o := res.Outcome; res.Object == nil || o != store.Added && o != store.Modified && o != store.Replaced && o != store.Deleted {
		return // the history records only the changes the log shows
	}
	var before *Version
	if p := res.Previous; p != nil {
		before = &Version{What: cached, obj: p, UID: p.UID, RV: p.ResourceVersion}
	}
	h.add(res.Object.Ref(), Version{
		At: at, What: strings.ToUpper(res.Outcome.String()), obj: res.Object,
		UID: res.Object.UID, RV: res.Object.ResourceVersion, Delta: ch,
	}, before)
}

// cached names the version the cache held before the first change seen.
const cached = "CACHED"

// RecordDiff adds the objects a relist diff names, at most limit of them.
// cache (nil: none) gives an object as the cache holds it now: the one
// listed, when it still has the listed UID and resourceVersion, so the
// detail says what a missed update changed.
func (h *Objects) RecordDiff(at time.Time, d *store.RelistDiff, limit int, cache func(store.Ref) (*store.Object, bool)) {
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
			v := Version{At: at, What: g.what, UID: uid, RV: rv}
			if !g.useOld && cache != nil {
				if o, ok := cache(e.Ref); ok && o.UID == uid && o.ResourceVersion == rv {
					v.obj = o
				}
			}
			var before *Version
			if e.OldUID != "" && !g.useOld {
				// Recreated or updated behind the watch: what the cache
				// held before the relist (its UID and resourceVersion).
				before = &Version{What: cached, UID: e.OldUID, RV: e.OldResourceVersion}
			}
			h.add(e.Ref, v, before)
		}
	}
}

// ChangesOf returns (and caches) what version i of r changed; secret says
// the object is a Secret, whose values it never shows (--keep-objects keeps
// them in memory, not for the screen).
func (r *Record) ChangesOf(i int, secret bool) []string {
	v := r.At(i)
	if v.diffed {
		return v.changes
	}
	var prev *Version
	switch {
	case i > 0:
		prev = r.At(i - 1)
	case r.Forgotten > 0:
		v.changes, v.diffed = []string{"the versions before it were forgotten"}, true
		return v.changes
	}
	v.changes, v.diffed = versionChanges(prev, v, secret), true
	return v.changes
}

// maxBodyChanges bounds the body fields listed for one version.
const maxBodyChanges = 12

// versionChanges describes what differs between two successive versions
// (a Secret's: without its values).
func versionChanges(prev, cur *Version, secret bool) []string {
	if prev == nil {
		return []string{"first version seen"}
	}
	var out []string
	if prev.UID != cur.UID && prev.UID != "" && cur.UID != "" {
		out = append(out, fmt.Sprintf("new instance: uid %s → %s", store.ShortUID(prev.UID), store.ShortUID(cur.UID)))
	}
	if prev.RV != cur.RV {
		out = append(out, fmt.Sprintf("resourceVersion %s → %s", common.OrDash(prev.RV), common.OrDash(cur.RV)))
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
		out = append(out, fmt.Sprintf("owners %s → %s", common.Owners(a), common.Owners(b)))
	}
	if len(a.Body) > 0 && len(b.Body) > 0 {
		out = append(out, bodyChanges(a.Body, b.Body, secret)...)
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
// list items by their key), leaving out the metadata already compared;
// hide leaves out the values (a Secret's).
func bodyChanges(a, b []byte, hide bool) []string {
	ch, err := diff.Compare(a, b, !hide)
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
		// Written as the diffed events' changes and the churn write them.
		p := c.Path
		if c.Meta || shownElsewhere(strings.TrimPrefix(p, ".")) {
			continue
		}
		switch {
		case c.Op == diff.Removed:
			out = append(out, "- "+p)
		case hide && c.Op == diff.Added:
			out = append(out, "+ "+p)
		case hide:
			out = append(out, p+" changed")
		case c.Op == diff.Added:
			out = append(out, "+ "+p+": "+common.RawValue(c.New))
		default:
			out = append(out, p+": "+common.RawValue(c.Old)+" → "+common.RawValue(c.New))
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
