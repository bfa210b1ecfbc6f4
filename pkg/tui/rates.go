package tui

import (
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// rateSeconds is the event-rate window: the last minute, one bucket a second.
const rateSeconds = 60

// numSeries is how many event types have a sparkline.
const numSeries = 4

// seriesName names the event type of sparkline i, in display order.
func seriesName(i int) string {
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

// rateCounts picks the counters of the sparklines out of the reflector's.
func rateCounts(c reflector.Counters) [numSeries]int64 {
	return [numSeries]int64{c.Added, c.Modified, c.Deleted, c.Bookmarks}
}

// rateWindow turns successive counter snapshots into per-second event counts
// over the last minute: each snapshot's delta from the previous one goes to
// the bucket of the second it was taken in.
type rateWindow struct {
	have    bool
	last    [numSeries]int64
	lastSec int64 // unix second of the newest bucket
	buckets [numSeries][rateSeconds]int64
}

// observe adds one snapshot of the counters taken at at.
func (w *rateWindow) observe(at time.Time, c reflector.Counters) {
	cur := rateCounts(c)
	sec := at.Unix()
	if !w.have {
		w.have, w.last, w.lastSec = true, cur, sec
		return
	}
	if sec > w.lastSec {
		// Clear the buckets of the seconds that passed without a snapshot.
		for s := w.lastSec + 1; s <= sec && s <= w.lastSec+rateSeconds; s++ {
			for i := range w.buckets {
				w.buckets[i][s%rateSeconds] = 0
			}
		}
		w.lastSec = sec
	}
	for i := range cur {
		d := cur[i] - w.last[i]
		if d < 0 { // a new reflector started counting from zero
			d = cur[i]
		}
		w.buckets[i][w.lastSec%rateSeconds] += d
	}
	w.last = cur
}

// series returns the per-second counts of series i, oldest first, ending
// with the current (possibly partial) second.
func (w *rateWindow) series(i int) []int64 {
	out := make([]int64, rateSeconds)
	if !w.have {
		return out
	}
	for k := range out {
		sec := w.lastSec - int64(rateSeconds-1-k)
		if sec < 0 {
			continue
		}
		out[k] = w.buckets[i][sec%rateSeconds]
	}
	return out
}

// eventSeries is how many of the series are watch events (ADDED, MODIFIED,
// DELETED): the overview's events/min sums them and leaves bookmarks out.
const eventSeries = 3

// addEvents adds the per-second counts of watch events in the minute that
// ends with the second end to dst (rateSeconds long, oldest first): seconds
// the window has not reached yet, or has forgotten, add nothing. The
// overview aligns every resource on its own clock this way, and its total
// sums the rows without allocating.
func (w *rateWindow) addEvents(dst []int64, end time.Time) {
	if !w.have {
		return
	}
	endSec := end.Unix()
	for k := range dst {
		sec := endSec - int64(len(dst)-1-k)
		if sec < 0 || sec > w.lastSec || sec <= w.lastSec-rateSeconds {
			continue
		}
		for i := range eventSeries {
			dst[k] += w.buckets[i][sec%rateSeconds]
		}
	}
}

// perSecond is the count of the last complete second.
func (w *rateWindow) perSecond(i int) int64 {
	s := w.series(i)
	return s[len(s)-2]
}

// total is the count over the whole window.
func (w *rateWindow) total(i int) int64 {
	var t int64
	for _, v := range w.series(i) {
		t += v
	}
	return t
}

// sparkBlocks are the sparkline's levels; the lowest is the zero baseline.
const sparkBlocks = "▁▂▃▄▅▆▇█"

// sparkline draws values in width cells: values are summed into width
// columns when there are more values than cells, and scaled to the largest
// column, with any non-zero column at least one step above the baseline.
func sparkline(values []int64, width int) string {
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
