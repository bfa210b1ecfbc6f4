package findings

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// NoisyUpdates is a resource whose MODIFIED events mostly change nothing a
// controller acts on: only times, or one bookkeeping field, rewritten by a
// writer on nearly every event.
const NoisyUpdates ID = "noisy-updates"

// Thresholds of noisy-updates, over the last noisyWindow of events diffed.
const (
	noisyWindow    = 5 * time.Minute
	noisyMinEvents = 100
	// noisyTimestampShare is the share of timestamp-only events that makes
	// the finding.
	noisyTimestampShare = 0.5
	// noisySoleShare is the share of events in which one status, label or
	// annotation path, written by one manager, was the only change.
	noisySoleShare = 0.9
	// noisyKeys bounds the paths a bucket counts one by one.
	noisyKeys = 1000
)

// noisyUpdates counts the diffed MODIFIED events (Note.Changes) in buckets
// of a minute, the last noisyWindow of them, and keeps their sums as they
// go. The event that makes the finding raises it; once raised, it is
// written out again when read (settle), with the numbers of the last event
// before the read, even when no note follows a burst.
type noisyUpdates struct {
	buckets []noisyBucket
	sum     noisyCounts // the buckets' sums
	reqs    []int64
	// unsettled: events came since the raised finding was last written
	// out, the last of them at unsettledAt.
	unsettled   bool
	unsettledAt time.Time
}

type noisyBucket struct {
	minute time.Time
	noisyCounts
}

// noisyCounts are a bucket's counts, or the window's sums.
type noisyCounts struct {
	events, stamp int64
	// stamped counts, for timestamp-only events, each path and writer
	// changed; sole counts the events whose only change was one status,
	// label or annotation path (by its writer).
	stamped, sole map[writtenPath]int64
	// stampObjects and soleObjects count the events of each object among
	// those (of at most noisyKeys objects).
	stampObjects, soleObjects map[string]int64
}

func newNoisyCounts() noisyCounts {
	return noisyCounts{stamped: map[writtenPath]int64{}, sole: map[writtenPath]int64{}, stampObjects: map[string]int64{}, soleObjects: map[string]int64{}}
}

// writtenPath is a path and the manager that wrote it.
type writtenPath struct{ path, writer string }

func (r *noisyUpdates) entry() Entry {
	return Entry{NoisyUpdates, Warning, fmt.Sprintf("over the last %s, %d MODIFIED events or more were diffed (`--diff`) and %.0f%% or more of them changed nothing but resourceVersion, managedFields and RFC 3339 times under metadata or status, or one status, label or annotation path, written by one manager, was the only change in %.0f%% or more of them",
		span(noisyWindow), noisyMinEvents, 100*noisyTimestampShare, 100*noisySoleShare)}
}

func (r *noisyUpdates) observe(e *Engine, n reflector.Note) {
	ch := n.Changes
	if n.Kind != reflector.NoteApplied || ch == nil || ch.Skipped != "" {
		return
	}
	b := r.bucket(n.At)
	b.events++
	r.sum.events++
	visible := ch.Visible()
	object := ""
	if o := n.Applied.Object; o != nil {
		object = o.Namespace + "/" + o.Name
	}
	if ch.TimestampOnly {
		b.stamp++
		r.sum.stamp++
		for _, c := range visible {
			count(b.stamped, r.sum.stamped, writtenPath{c.Path, c.Writer()})
		}
		if len(visible) == 0 {
			// Not even a time: only managedFields (and resourceVersion),
			// a write of the same values under another manager.
			count(b.stamped, r.sum.stamped, writtenPath{path: managedFieldsPath})
		}
		if object != "" {
			count(b.stampObjects, r.sum.stampObjects, object)
		}
	}
	if len(visible) == 1 && bookkeeping(visible[0].Path) {
		count(b.sole, r.sum.sole, writtenPath{visible[0].Path, visible[0].Writer()})
		if object != "" {
			count(b.soleObjects, r.sum.soleObjects, object)
		}
	}
	r.reqs = appendLast(r.reqs, n.RequestID, keepRequests)
	if _, raised := e.found[NoisyUpdates]; raised {
		r.unsettled, r.unsettledAt = true, n.At
		return
	}
	r.check(e, n.At)
}

// settle writes the raised finding out with the window's sums.
func (r *noisyUpdates) settle(e *Engine) {
	if r.unsettled {
		r.unsettled = false
		r.check(e, r.unsettledAt)
	}
}

// managedFieldsPath stands for the events that changed only managedFields.
const managedFieldsPath = ".metadata.managedFields"

// bookkeeping says a path is status, a label or an annotation: fields a
// writer stamps, not the object's content (spec, data).
func bookkeeping(path string) bool {
	return strings.HasPrefix(path, ".status") || strings.HasPrefix(path, ".metadata.annotations") || strings.HasPrefix(path, ".metadata.labels")
}

// count counts k in a bucket's map m and in the window's sum, when m
// counts it already or has room for another key.
func count[K comparable](m, sum map[K]int64, k K) {
	if _, ok := m[k]; ok || len(m) < noisyKeys {
		m[k]++
		sum[k]++
	}
}

// uncount takes a bucket's map m out of the window's sum.
func uncount[K comparable](m, sum map[K]int64) {
	for k, n := range m {
		if sum[k] -= n; sum[k] <= 0 {
			delete(sum, k)
		}
	}
}

// bucket returns the bucket of at's minute, taking those out of the
// window out of its sums.
func (r *noisyUpdates) bucket(at time.Time) *noisyBucket {
	minute := at.Truncate(time.Minute)
	if r.sum.stamped == nil {
		r.sum = newNoisyCounts()
	}
	r.buckets = slices.DeleteFunc(r.buckets, func(b noisyBucket) bool {
		if b.minute.After(minute.Add(-noisyWindow)) {
			return false
		}
		r.sum.events -= b.events
		r.sum.stamp -= b.stamp
		uncount(b.stamped, r.sum.stamped)
		uncount(b.sole, r.sum.sole)
		uncount(b.stampObjects, r.sum.stampObjects)
		uncount(b.soleObjects, r.sum.soleObjects)
		return true
	})
	if n := len(r.buckets); n > 0 && !r.buckets[n-1].minute.Before(minute) {
		return &r.buckets[n-1]
	}
	r.buckets = append(r.buckets, noisyBucket{minute: minute, noisyCounts: newNoisyCounts()})
	return &r.buckets[len(r.buckets)-1]
}

// check raises or updates the finding from the window's sums.
func (r *noisyUpdates) check(e *Engine, at time.Time) {
	events, stamp := r.sum.events, r.sum.stamp
	if events < noisyMinEvents {
		return
	}
	stampShare := float64(stamp) / float64(events)
	top, topN := most(r.sum.sole)
	soleShare := float64(topN) / float64(events)
	var what string
	var path writtenPath
	var objects int
	switch {
	case stampShare >= noisyTimestampShare:
		path, _ = most(r.sum.stamped)
		objects = len(r.sum.stampObjects)
		only := "times"
		if path.path == managedFieldsPath {
			only = "who manages the fields (managedFields), not a value"
		}
		what = fmt.Sprintf("%d of the last %d MODIFIED events (%.0f%%) changed only %s", stamp, events, 100*stampShare, only)
	case soleShare >= noisySoleShare:
		path, objects = top, len(r.sum.soleObjects)
		what = fmt.Sprintf("%d of the last %d MODIFIED events (%.0f%%) changed only %s", topN, events, 100*soleShare, top.path)
	default:
		return
	}
	writer := path.writer
	if writer == "" {
		writer = "a writer the object's managedFields do not name"
	}
	cause := fmt.Sprintf("%s rewrites %s on nearly every update while nothing a controller acts on changes", writer, path.path)
	action := "in the writer, compare the new object with the old before writing status, and do not stamp times (heartbeats, lastUpdateTime) on a reconcile that changed nothing"
	if path.path == managedFieldsPath {
		writer = "writers the diff cannot name: no value changed"
		cause = "writes of the values the object already has (a server-side apply under another field manager each time, or an update that changes nothing) still make a new resourceVersion and an event"
		action = "in the writer, apply under one field manager name, not a new one each time, and skip a write whose values the object already has"
	}
	e.raise(NoisyUpdates, Warning, at, func(f *Finding) {
		f.Count = events
		f.Title = what
		f.Evidence = Evidence{
			Text: fmt.Sprintf("over the last %s, %s, of %s; the path changed most among them is %s, written by %s",
				span(noisyWindow), what, format.PluralUngrouped(objects, "object"), path.path, writer),
			Requests: slices.Clone(r.reqs),
			Facts: map[string]string{"path": path.path, "manager": path.writer, "share": fmt.Sprintf("%.0f%%", 100*max(stampShare, soleShare)),
				"events": fmt.Sprint(events), "timestampOnly": fmt.Sprint(stamp)},
		}
		f.Cause = cause + ": every informer of the resource receives, decodes and hands each such event to its handlers, and each controller reconciles for nothing"
		f.Action = action + "; in the controllers that watch it, filter these updates with a predicate (controller-runtime's GenerationChangedPredicate, or one that ignores this path)"
		f.Docs = "https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management"
	})
}

// most is the key with the highest count, the first in path order among equals.
func most(m map[writtenPath]int64) (writtenPath, int64) {
	var top writtenPath
	var topN int64
	for k, n := range m {
		if n > topN || (n == topN && cmp.Or(cmp.Compare(k.path, top.path), cmp.Compare(k.writer, top.writer)) < 0) {
			top, topN = k, n
		}
	}
	return top, topN
}
