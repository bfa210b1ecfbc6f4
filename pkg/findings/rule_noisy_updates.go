package findings

import (
	"cmp"
	"fmt"
	"math"
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
	// noisyWriters is how many of the paths stamped most the finding
	// keeps, and noisyWriterShare the share of the timestamp-only events
	// one of them must have to be named: two writers that each stamp
	// half of the events both make the finding.
	noisyWriters     = 3
	noisyWriterShare = 0.1
)

// noisyUpdates counts the diffed MODIFIED events (Note.Changes) in buckets
// of a minute, the last noisyWindow of them, and keeps their sums, and the
// paths changed most, as it goes: each event is checked at once. The event
// that makes the finding raises it; once raised, the finding is written out
// when read (settle), with the window as it was at the last event that
// held it (what a check of every event would have written), so that what
// it says does not depend on when it was read.
type noisyUpdates struct {
	buckets []noisyBucket
	sum     noisyCounts // the buckets' sums
	// stampTop and soleTop are the sums' paths counted most (see most);
	// stampTops the noisyWriters stamped paths counted most, most first.
	stampTop, soleTop writtenPath
	stampTops         []writtenPath
	reqs              []int64
	// held is the window at the last event that held the finding, not
	// written out yet when unsettled.
	held      noisyView
	unsettled bool
}

// noisyView is what the finding says of the window at one event.
type noisyView struct {
	at                  time.Time
	events, stamp, sole int64 // sole: the events of soleTop
	stampTop, soleTop   writtenPath
	stampObjects        int
	// stamped are the paths stamped most, most first, and their counts.
	stamped  [noisyWriters]writtenPath
	stampedN [noisyWriters]int64
	reqs     []int64
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
	// stampObjects counts the timestamp-only events of each object (of at
	// most noisyKeys objects).
	stampObjects map[string]int64
}

func newNoisyCounts() noisyCounts {
	return noisyCounts{stamped: map[writtenPath]int64{}, sole: map[writtenPath]int64{}, stampObjects: map[string]int64{}}
}

// writtenPath is a path and the manager that wrote it.
type writtenPath struct{ path, writer string }

// before says a comes before b among paths counted as often: most's order.
func (a writtenPath) before(b writtenPath) bool {
	return cmp.Or(cmp.Compare(a.path, b.path), cmp.Compare(a.writer, b.writer)) < 0
}

func (r *noisyUpdates) entry() Entry {
	return Entry{NoisyUpdates, Warning, fmt.Sprintf("over the last %s (in minutes of the clock: the one under way and the %d before it), %d MODIFIED events or more were diffed (`--diff`) and %.0f%% or more of them changed nothing but resourceVersion, managedFields and RFC 3339 times under metadata or status, or one status, label or annotation path, written by one manager, was the only change in %.0f%% or more of them",
		span(noisyWindow), noisyWindow/time.Minute-1, noisyMinEvents, 100*noisyTimestampShare, 100*noisySoleShare)}
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
	if ch.TimestampOnly {
		b.stamp++
		r.sum.stamp++
		for _, c := range visible {
			r.countStamped(b, writtenPath{c.Path, c.Author()})
		}
		if len(visible) == 0 {
			// Not even a time: only managedFields (and resourceVersion),
			// a write of the same values under another manager.
			r.countStamped(b, writtenPath{path: managedFieldsPath})
		}
		if o := n.Applied.Object; o != nil {
			count(b.stampObjects, r.sum.stampObjects, o.Namespace+"/"+o.Name)
		}
	}
	if len(visible) == 1 && bookkeeping(visible[0].Path) {
		r.countPath(b.sole, r.sum.sole, &r.soleTop, writtenPath{visible[0].Path, visible[0].Author()})
	}
	r.reqs = appendLast(r.reqs, n.RequestID)
	v := noisyView{at: n.At, events: r.sum.events, stamp: r.sum.stamp, sole: r.sum.sole[r.soleTop],
		stampTop: r.stampTop, soleTop: r.soleTop, stampObjects: len(r.sum.stampObjects), reqs: r.reqs}
	for i, k := range r.stampTops {
		v.stamped[i], v.stampedN[i] = k, r.sum.stamped[k]
	}
	if !v.holds() {
		return // the finding, if raised, keeps what it said at the last event that held it
	}
	if _, raised := e.found[NoisyUpdates]; raised {
		r.held, r.unsettled = v, true
		return
	}
	v.write(e)
}

// settle writes the raised finding out as the last event that held it left it.
func (r *noisyUpdates) settle(e *Engine) {
	if r.unsettled {
		r.unsettled = false
		r.held.write(e)
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
// counts it already or has room for another key; it says whether it did.
func count[K comparable](m, sum map[K]int64, k K) bool {
	if _, ok := m[k]; ok || len(m) < noisyKeys {
		m[k]++
		sum[k]++
		return true
	}
	return false
}

// countPath counts k as count does, and keeps top the sum's path counted
// most (sums only grow between two minutes: the top follows them).
func (r *noisyUpdates) countPath(m, sum map[writtenPath]int64, top *writtenPath, k writtenPath) {
	if !count(m, sum, k) {
		return
	}
	if n, topN := sum[k], sum[*top]; n > topN || (n == topN && k.before(*top)) {
		*top = k
	}
}

// countStamped counts a stamped path k as countPath does, and keeps
// stampTops, the paths counted most: sums only grow between two minutes,
// so a path enters them only by passing the last of them.
func (r *noisyUpdates) countStamped(b *noisyBucket, k writtenPath) {
	r.countPath(b.stamped, r.sum.stamped, &r.stampTop, k)
	sum := r.sum.stamped
	if _, counted := sum[k]; !counted {
		return
	}
	if !slices.Contains(r.stampTops, k) {
		if n := len(r.stampTops); n < noisyWriters {
			r.stampTops = append(r.stampTops, k)
		} else if last := r.stampTops[n-1]; sum[k] > sum[last] || (sum[k] == sum[last] && k.before(last)) {
			r.stampTops[n-1] = k
		}
	}
	r.sortTops()
}

// sortTops puts stampTops in most's order: the most counted first, then
// in path order.
func (r *noisyUpdates) sortTops() {
	sum := r.sum.stamped
	slices.SortFunc(r.stampTops, func(a, b writtenPath) int {
		if c := cmp.Compare(sum[b], sum[a]); c != 0 {
			return c
		}
		if a.before(b) {
			return -1
		}
		return 1
	})
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
	dropped := false
	r.buckets = slices.DeleteFunc(r.buckets, func(b noisyBucket) bool {
		if b.minute.After(minute.Add(-noisyWindow)) {
			return false
		}
		r.sum.events -= b.events
		r.sum.stamp -= b.stamp
		uncount(b.stamped, r.sum.stamped)
		uncount(b.sole, r.sum.sole)
		uncount(b.stampObjects, r.sum.stampObjects)
		dropped = true
		return true
	})
	if dropped { // the sums went down: their tops are found again
		r.stampTop = most(r.sum.stamped)
		r.soleTop = most(r.sum.sole)
		r.stampTops = r.stampTops[:0]
		for k := range r.sum.stamped {
			r.stampTops = append(r.stampTops, k)
		}
		r.sortTops()
		r.stampTops = r.stampTops[:min(len(r.stampTops), noisyWriters)]
	}
	if n := len(r.buckets); n > 0 && !r.buckets[n-1].minute.Before(minute) {
		return &r.buckets[n-1]
	}
	r.buckets = append(r.buckets, noisyBucket{minute: minute, noisyCounts: newNoisyCounts()})
	return &r.buckets[len(r.buckets)-1]
}

// holds says the window at v makes the finding.
func (v noisyView) holds() bool {
	return v.events >= noisyMinEvents && (float64(v.stamp)/float64(v.events) >= noisyTimestampShare || float64(v.sole)/float64(v.events) >= noisySoleShare)
}

// write raises or updates the finding as v says.
func (v noisyView) write(e *Engine) {
	events, stamp := v.events, v.stamp
	stampShare := float64(stamp) / float64(events)
	soleShare := float64(v.sole) / float64(events)
	var what, of string
	var path writtenPath
	share := stampShare // the one the title gives
	if stampShare >= noisyTimestampShare {
		path = v.stampTop
		only := "times"
		if path.path == managedFieldsPath {
			only = "who manages the fields (managedFields), not a value"
		}
		what = fmt.Sprintf("%d of the last %d MODIFIED events (%s) changed only %s", stamp, events, percent(stampShare), only)
		of = ", of " + format.PluralUngrouped(v.stampObjects, "object")
	} else {
		path, share = v.soleTop, soleShare
		what = fmt.Sprintf("%d of the last %d MODIFIED events (%s) changed only %s", v.sole, events, percent(soleShare), path.path)
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
	changedMost := fmt.Sprintf("the path changed most among them is %s, written by %s", path.path, writer)
	ignores := "this path"
	if named := v.writers(path); distinctWriters(named) > 1 {
		// Each stamps only some of the events: together they stamp
		// nearly every one, and naming one leaves the others' noise.
		var rewrites, written []string
		for i, k := range named {
			w := cmp.Or(k.writer, "a writer the object's managedFields do not name")
			rewrites = append(rewrites, fmt.Sprintf("%s rewrites %s (in %s of the events)", w, k.path, percentTenth(float64(v.stampedN[i])/float64(events))))
			written = append(written, fmt.Sprintf("%s, written by %s (%d events, %s)", k.path, w, v.stampedN[i], percentTenth(float64(v.stampedN[i])/float64(events))))
		}
		cause = strings.Join(rewrites, ", ") + ": between them nearly every update, while nothing a controller acts on changes"
		changedMost = "the paths changed most among them are " + strings.Join(written, "; ")
		ignores = "these paths"
	}
	e.raise(NoisyUpdates, Warning, v.at, func(f *Finding) {
		f.Count = max(f.Count, events) // never down, as the window moves on
		f.Title = what
		f.Evidence = Evidence{
			Text:     fmt.Sprintf("over the last %s, %s%s; %s", span(noisyWindow), what, of, changedMost),
			Requests: slices.Clone(v.reqs),
			Facts: map[string]string{"path": path.path, "manager": path.writer, "share": percent(share),
				"events": fmt.Sprint(events), "timestampOnly": fmt.Sprint(stamp)},
		}
		f.Cause = cause + ": every informer of the resource receives, decodes and hands each such event to its handlers, and each controller reconciles for nothing"
		f.Action = action + "; in the controllers that watch it, filter these updates with a predicate (controller-runtime's GenerationChangedPredicate, or one that ignores " + ignores + ")"
		f.Docs = "https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management"
	})
}

// writers are the stamped paths that make the finding with path, the
// one it names first: those of v.stamped (most first) stamped in
// noisyWriterShare or more of the timestamp-only events; only path when
// the finding is not of timestamp-only events, or names who manages the
// fields.
func (v noisyView) writers(path writtenPath) []writtenPath {
	if path != v.stampTop || path.path == managedFieldsPath {
		return []writtenPath{path}
	}
	var named []writtenPath
	for i, k := range v.stamped {
		if v.stampedN[i] > 0 && k.path != managedFieldsPath && float64(v.stampedN[i]) >= noisyWriterShare*float64(v.stamp) {
			named = append(named, k)
		}
	}
	if len(named) == 0 || named[0] != path {
		return []writtenPath{path}
	}
	return named
}

// distinctWriters counts the writers of paths (one writer stamping two
// paths, as a kubelet its conditions' heartbeats, is one).
func distinctWriters(paths []writtenPath) int {
	seen := map[string]bool{}
	for _, k := range paths {
		seen[k.writer] = true
	}
	return len(seen)
}

// percent is a share as a percentage, "50%": never 100% for a share
// under 1 (99.5% is said so, not rounded up to 100%).
func percent(share float64) string {
	if s := fmt.Sprintf("%.0f%%", 100*share); s != "100%" || share >= 1 {
		return s
	}
	return percentTenth(share)
}

// percentTenth is a share as a percentage to the tenth, "49.8%": writers
// that share the events are told apart; never 100.0% under 1, as percent.
func percentTenth(share float64) string {
	if share < 1 {
		share = math.Min(share, 0.999)
	}
	return fmt.Sprintf("%.1f%%", 100*share)
}

// most is the key with the highest count, the first in path order among equals.
func most(m map[writtenPath]int64) writtenPath {
	var top writtenPath
	var topN int64
	for k, n := range m {
		if n > topN || (n == topN && k.before(top)) {
			top, topN = k, n
		}
	}
	return top
}
