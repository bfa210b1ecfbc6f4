// Package rates is the dashboard's event-rate component: a minute of
// per-second counts of each event type, made from successive snapshots of
// the reflector's counters, and the sparklines that draw them.
package rates

import (
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// Seconds is the event-rate window: the last minute, one bucket a second.
const Seconds = 60

// NumSeries is how many event types have a sparkline.
const NumSeries = 4

// SeriesName names the event type of sparkline i, in display order.
func SeriesName(i int) string {
	switch i {
	case 0:
		return "ADDED"
	case 1:
		return "MODIFIED"
	case 2:
		return "DELETED"
	}
	return "BOOKMARK"
}

// Counts picks the counters of the sparklines out of the reflector's.
func Counts(c reflector.Counters) [NumSeries]int64 {
	return [NumSeries]int64{c.Added, c.Modified, c.Deleted, c.Bookmarks}
}

// Window turns successive counter snapshots into per-second event counts
// over the last minute: each snapshot's delta from the previous one (from
// zero, at the time the counting began, for the first) goes to the bucket
// of the second it was taken in, or, when seconds passed between the two
// (a replay faster than real time: at --speed 0 a poll can span minutes of
// the trace's clock, and the first can come after the whole trace), is
// spread evenly over them.
type Window struct {
	have    bool
	last    [NumSeries]int64
	lastSec int64 // unix second of the newest bucket
	buckets [NumSeries][Seconds]int64
}

// Observe adds one snapshot of the counters taken at at; began is when
// they began counting from zero (Stats.Started; zero: unknown, taken as at's
// second).
func (w *Window) Observe(at, began time.Time, c reflector.Counters) {
	cur := Counts(c)
	sec := at.Unix()
	if !w.have {
		w.have, w.lastSec = true, sec-1
		if !began.IsZero() && began.Unix() < sec {
			w.lastSec = began.Unix() - 1
		}
	}
	// The seconds the delta spreads over: those after the last snapshot's,
	// up to this one's, of which the window keeps the last Seconds.
	first, span := w.lastSec, int64(1)
	if sec > w.lastSec {
		first, span = w.lastSec+1, sec-w.lastSec
		// Clear the buckets of the seconds that passed without a snapshot.
		for s := max(first, sec-Seconds+1); s <= sec; s++ {
			for i := range w.buckets {
				w.buckets[i][s%Seconds] = 0
			}
		}
		w.lastSec = sec
	}
	for i := range cur {
		d := cur[i] - w.last[i]
		if d < 0 { // a new reflector started counting from zero
			d = cur[i]
		}
		// Spread evenly: the k-th of the span's seconds gets the events
		// between k/span and (k+1)/span of d, so a remainder lands spaced
		// across the span rather than heaped on its latest seconds.
		for s := max(first, w.lastSec-Seconds+1); s <= w.lastSec; s++ {
			k := s - first
			w.buckets[i][s%Seconds] += (k+1)*d/span - k*d/span
		}
	}
	w.last = cur
}

// Series returns the per-second counts of series i, oldest first, ending
// with the current (possibly partial) second.
func (w *Window) Series(i int) []int64 {
	out := make([]int64, Seconds)
	if !w.have {
		return out
	}
	for k := range out {
		sec := w.lastSec - int64(Seconds-1-k)
		if sec < 0 {
			continue
		}
		out[k] = w.buckets[i][sec%Seconds]
	}
	return out
}

// eventSeries is how many of the series are watch events (ADDED, MODIFIED,
// DELETED): the overview's events/min sums them and leaves bookmarks out.
const eventSeries = 3

// AddEvents adds the per-second counts of watch events in the minute that
// ends with the second end to dst (Seconds long, oldest first): seconds
// the window has not reached yet, or has forgotten, add nothing. The
// overview aligns every resource on its own clock this way, and its total
// sums the rows without allocating.
func (w *Window) AddEvents(dst []int64, end time.Time) {
	if !w.have {
		return
	}
	endSec := end.Unix()
	for k := range dst {
		sec := endSec - int64(len(dst)-1-k)
		if sec < 0 || sec > w.lastSec || sec <= w.lastSec-Seconds {
			continue
		}
		for i := range eventSeries {
			dst[k] += w.buckets[i][sec%Seconds]
		}
	}
}

// PerSecond is the count of the last complete second.
func (w *Window) PerSecond(i int) int64 {
	s := w.Series(i)
	return s[len(s)-2]
}

// Total is the count over the whole window.
func (w *Window) Total(i int) int64 {
	var t int64
	for _, v := range w.Series(i) {
		t += v
	}
	return t
}

// sparkBlocks are the sparkline's levels; the lowest is the zero baseline.
const sparkBlocks = "▁▂▃▄▅▆▇█"

// Sparkline draws values in width cells: values are summed into width
// columns when there are more values than cells, and scaled to the largest
// column, with any non-zero column at least one step above the baseline.
func Sparkline(values []int64, width int) string {
	if width <= 0 || len(values) == 0 {
		return ""
	}
	cols := values
	if len(values) > width {
		cols = make([]int64, width)
		for i, v := range values {
			cols[i*width/len(values)] += v
		}
	}
	var peak int64
	for _, v := range cols {
		peak = max(peak, v)
	}
	blocks := []rune(sparkBlocks)
	top := int64(len(blocks) - 1)
	var b strings.Builder
	for _, v := range cols {
		var level int64
		if v > 0 {
			level = min((v*top+peak-1)/peak, top) // ceil: any event shows
		}
		b.WriteRune(blocks[level])
	}
	return b.String()
}
