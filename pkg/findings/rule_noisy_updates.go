package findings

import (
	"cmp"
	"fmt"
	"maps"
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
// of a minute, the last noisyWindow of them.
type noisyUpdates struct {
	buckets []noisyBucket
	checked time.Time // the last check: at most one a second
	// unchecked says events came since the last check: any later note
	// checks them, so that a burst's last events count once it stops.
	unchecked bool
	reqs      []int64
}

type noisyBucket struct {
	minute        time.Time
	events, stamp int64
	// stamped counts, for timestamp-only events, each path and writer
	// changed; sole counts the events whose only change was one status,
	// label or annotation path (by its writer).
	stamped, sole map[writtenPath]int64
	objects       map[string]bool
}

// writtenPath is a path and the manager that wrote it.
type writtenPath struct{ path, writer string }

func (r *noisyUpdates) entry() Entry {
	return Entry{NoisyUpdates, Warning, fmt.Sprintf("over the last %s, %d MODIFIED events or more were diffed (`--diff`) and %.0f%% or more of them changed nothing but resourceVersion, managedFields and RFC 3339 times, or one status, label or annotation path, written by one manager, was the only change in %.0f%% or more of them",
		span(noisyWindow), noisyMinEvents, 100*noisyTimestampShare, 100*noisySoleShare)}
}

func (r *noisyUpdates) observe(e *Engine, n reflector.Note) {
	if d := n.Decision; d != nil && (d.State == reflector.StateStopped || d.State == reflector.StateFailed) && len(r.buckets) > 0 {
		r.check(e, n.At) // the run's end: the events since the last check count too
		return
	}
	ch := n.Changes
	if n.Kind != reflector.NoteApplied || ch == nil || ch.Skipped != "" {
		if r.unchecked && n.At.Sub(r.checked) >= time.Second {
			r.checked, r.unchecked = n.At, false
			r.check(e, n.At)
		}
		return
	}
	b := r.bucket(n.At)
	b.events++
	visible := ch.Visible()
	if ch.TimestampOnly {
		b.stamp++
		for _, c := range visible {
			count(b.stamped, writtenPath{c.Path, c.Writer()})
		}
		if len(visible) == 0 {
			// Not even a time: only managedFields (and resourceVersion),
			// a write of the same values under another manager.
			count(b.stamped, writtenPath{path: managedFieldsPath})
		}
	}
	if len(visible) == 1 && bookkeeping(visible[0].Path) {
		count(b.sole, writtenPath{visible[0].Path, visible[0].Writer()})
	}
	if o := n.Applied.Object; o != nil && len(b.objects) < noisyKeys {
		b.objects[o.Namespace+"/"+o.Name] = true
	}
	r.reqs = appendLast(r.reqs, n.RequestID, keepRequests)
	// At most a check a second, and one when the window reaches the
	// events it needs, however soon after the last.
	var events int64
	for i := range r.buckets {
		events += r.buckets[i].events
	}
	r.unchecked = true
	if n.At.Sub(r.checked) >= time.Second || events == noisyMinEvents {
		r.checked, r.unchecked = n.At, false
		r.check(e, n.At)
	}
}

// managedFieldsPath stands for the events that changed only managedFields.
const managedFieldsPath = ".metadata.managedFields"

// bookkeeping says a path is status, a label or an annotation: fields a
// writer stamps, not the object's content (spec, data).
func bookkeeping(path string) bool {
	return strings.HasPrefix(path, ".status") || strings.HasPrefix(path, ".metadata.annotations") || strings.HasPrefix(path, ".metadata.labels")
}

func count(m map[writtenPath]int64, k writtenPath) {
	if _, ok := m[k]; ok || len(m) < noisyKeys {
		m[k]++
	}
}

// bucket returns the bucket of at's minute, dropping those out of the window.
func (r *noisyUpdates) bucket(at time.Time) *noisyBucket {
	minute := at.Truncate(time.Minute)
	r.buckets = slices.DeleteFunc(r.buckets, func(b noisyBucket) bool { return !b.minute.After(minute.Add(-noisyWindow)) })
	if n := len(r.buckets); n > 0 && !r.buckets[n-1].minute.Before(minute) {
		return &r.buckets[n-1]
	}
	r.buckets = append(r.buckets, noisyBucket{minute: minute, stamped: map[writtenPath]int64{}, sole: map[writtenPath]int64{}, objects: map[string]bool{}})
	return &r.buckets[len(r.buckets)-1]
}

// check raises or updates the finding from the window's sums.
func (r *noisyUpdates) check(e *Engine, at time.Time) {
	var events, stamp int64
	stamped, sole, objects := map[writtenPath]int64{}, map[writtenPath]int64{}, map[string]bool{}
	for _, b := range r.buckets {
		events += b.events
		stamp += b.stamp
		for k, n := range b.stamped {
			stamped[k] += n
		}
		for k, n := range b.sole {
			sole[k] += n
		}
		for o := range b.objects {
			objects[o] = true
		}
	}
	if events < noisyMinEvents {
		return
	}
	stampShare := float64(stamp) / float64(events)
	top, topN := most(sole)
	soleShare := float64(topN) / float64(events)
	var what string
	var path writtenPath
	switch {
	case stampShare >= noisyTimestampShare:
		path, _ = most(stamped)
		only := "times"
		if path.path == managedFieldsPath {
			only = "who manages the fields (managedFields), not a value"
		}
		what = fmt.Sprintf("%d of the last %d MODIFIED events (%.0f%%) changed only %s", stamp, events, 100*stampShare, only)
	case soleShare >= noisySoleShare:
		path = top
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
				span(noisyWindow), what, format.PluralUngrouped(len(objects), "object"), path.path, writer),
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
	keys := slices.SortedFunc(maps.Keys(m), func(a, b writtenPath) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a.path, b.path), cmp.Compare(a.writer, b.writer))
	})
	if len(keys) == 0 {
		return writtenPath{}, 0
	}
	return keys[0], m[keys[0]]
}
