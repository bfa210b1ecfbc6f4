package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/probe"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// The timeline's geometry, in the SVG's user units (it scales to the page's width).
const (
	svgWidth   = 1200
	plotX      = 128 // left of the plot; lane labels stand before it
	plotWidth  = svgWidth - plotX - 16
	axisHeight = 22
	barHeight  = 16
	barGap     = 4
	markHeight = 16
	chartGap   = 10
	objHeight  = 56
	ageHeight  = 40
	rateHeight = 56
	// lagBand is the height of one lag bucket's band in the lag chart.
	lagBand     = 11
	probeHeight = 56
	// maxSubLanes bounds the rows of overlapping requests (another client's
	// concurrent requests); more overlap on the last row.
	maxSubLanes = 6
)

// Clipping of user data shown in the page (the trace keeps it whole).
const (
	clipMessage = 240
	clipTitle   = 160
	clipName    = 253 // the longest Kubernetes name
	clipToken   = 16
)

// timelineView is one resource's timeline, ready for the template.
type timelineView struct {
	Index                 int
	Height                int
	Span                  string // the plot's time range, in milliseconds
	PlotX, PlotW, LabelX  int
	Lanes                 []laneView
	Ticks                 []tickView
	Requests, AllRequests int
	HiddenRequests        int
	BucketWidth, Duration string
	// Lag is set when the resource's events carry the passive lag
	// estimate (its chart is drawn); Probe is the probe's legend when the
	// resource watches the probe's Lease.
	Lag   bool
	Probe string
}

// laneView is one horizontal band: a label and a plot in time units.
type laneView struct {
	Label, Hint string
	Y, H        int
	// LabelY and ScaleY are the baselines of the label and the scale, in
	// the outer SVG; LabelX is where they end (the lag chart's stand left
	// of its bands' names).
	LabelY, ScaleY, LabelX int
	// Bands name a chart's rows (the lag buckets), right of the label.
	Bands     []bandView
	Class     string
	Bars      []barView
	Lines     []lineView
	Spans     []barView
	Polylines []string
	Paths     []pathView
	Scale     string // the top of a chart's scale
}

type barView struct {
	Href, Class, Title string
	X, W               string
	Y, H               int
	// Band is a streaming list's initial-events part (its width; "" for none).
	Band  string
	BandY int
}

type lineView struct {
	Href, Class, Title string
	X                  string
}

type pathView struct{ Class, D string }

// bandView is one row's name, at its baseline in the outer SVG.
type bandView struct {
	Label string
	Y     int
}

type tickView struct {
	X     string // in the outer SVG
	Label string
}

// ms renders a duration in the plot's time unit, milliseconds.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
}

func (v *pageView) timeline(res *Section, span time.Duration) timelineView {
	tv := timelineView{Index: res.Index, PlotX: plotX, PlotW: plotWidth, LabelX: plotX - 8, Span: ms(span),
		Requests: len(res.Requests), AllRequests: res.RequestsTotal, HiddenRequests: res.RequestsTotal - len(res.Requests),
		BucketWidth: format.Duration(res.BucketWidth), Duration: format.Duration(span)}
	y := axisHeight
	lists, watches := v.requestLanes(res)
	for _, l := range []laneView{lists, watches} {
		l.Y = y
		tv.Lanes = append(tv.Lanes, l)
		y += l.H + barGap
	}
	y += chartGap / 2
	for _, l := range v.markerLanes(res) {
		l.Y = y
		tv.Lanes = append(tv.Lanes, l)
		y += l.H
	}
	y += chartGap
	charts := []laneView{v.objectsLane(res, span), v.ageLane(res, span), v.rateLane(res)}
	if res.Lag.Total() > 0 {
		charts = append(charts, v.lagLane(res))
		tv.Lag = true
	}
	if res.Probe != nil {
		charts = append(charts, v.probeLane(res, span))
		tv.Probe = probeLegend(res.Probe)
	}
	for _, l := range charts {
		l.Y = y
		tv.Lanes = append(tv.Lanes, l)
		y += l.H + chartGap
	}
	tv.Height = y + 4
	tv.Ticks = ticks(span)
	for i := range tv.Lanes {
		l := &tv.Lanes[i]
		if l.LabelX == 0 {
			l.LabelX = tv.LabelX
		}
		for j := range l.Bands {
			l.Bands[j].Y += l.Y
		}
		if l.Scale != "" {
			l.LabelY, l.ScaleY = l.Y+12, l.Y+25
		} else {
			l.LabelY = l.Y + l.H/2 + 4
		}
	}
	return tv
}

// requestLanes draws LIST pages in one lane and watches (streaming lists
// included) in another, each request in the first row where it overlaps nothing.
func (v *pageView) requestLanes(res *Section) (laneView, laneView) {
	lists := laneView{Label: "LIST pages", Hint: "one bar per LIST request (page)", Class: "lane-list"}
	watches := laneView{Label: "WATCH", Hint: "watches; a streaming list has a band over its initial events", Class: "lane-watch"}
	var listEnds, watchEnds []time.Duration
	for _, r := range res.Requests {
		lane, ends := &lists, &listEnds
		if r.Verb == reflector.VerbWatch {
			lane, ends = &watches, &watchEnds
		}
		row := len(*ends)
		for i, e := range *ends {
			if e <= r.Start {
				row = i
				break
			}
		}
		if row == len(*ends) {
			if row < maxSubLanes {
				*ends = append(*ends, 0)
			} else {
				row = maxSubLanes - 1
			}
		}
		(*ends)[row] = max((*ends)[row], r.End)
		b := barView{Href: "#" + requestAnchor(res.Index, r.ID), Class: "req k-" + string(r.Kind) + " c-" + string(r.Class),
			Title: requestTitle(r), X: ms(r.Start), W: ms(r.End - r.Start), Y: barGap/2 + row*(barHeight+barGap), H: barHeight}
		if r.Kind == KindStreamingList {
			end := r.End
			if r.InitialEventsEnd > 0 {
				end = r.InitialEventsEnd
			}
			b.Band, b.BandY = ms(end-r.Start), b.Y+barHeight/2-2
		}
		lane.Bars = append(lane.Bars, b)
	}
	lists.H = max(1, len(listEnds))*(barHeight+barGap) + barGap
	watches.H = max(1, len(watchEnds))*(barHeight+barGap) + barGap
	return lists, watches
}

func requestAnchor(res int, id int64) string { return fmt.Sprintf("r%d-%d", res, id) }
func relistAnchor(res, n int) string         { return fmt.Sprintf("l%d-%d", res, n) }

// requestTitle is a request's tooltip.
func requestTitle(r *Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s #%d · %s → %s (%s) · %s", r.Kind.Noun(), r.ID, formatOffset(r.Start), formatOffset(r.End), format.Duration(r.End-r.Start), r.Opts.Format(true))
	if r.Verb == reflector.VerbList {
		b.WriteString(" · " + format.PluralUngrouped(r.Items, "item"))
	} else {
		b.WriteString(" · " + format.PluralUngrouped(r.Events, "event"))
		if r.Bookmarks > 0 {
			fmt.Fprintf(&b, " (%s)", format.PluralUngrouped(r.Bookmarks, "bookmark"))
		}
	}
	b.WriteString(" · " + format.ClipWithLength(describeEnd(r), clipTitle))
	return b.String()
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// markerLanes are one row per marker kind; bookmarks come from the buckets.
func (v *pageView) markerLanes(res *Section) []laneView {
	kinds := []struct {
		kind MarkerKind
		lane laneView
	}{
		{MarkGone, laneView{Label: "410 Gone", Hint: "a request ended with 410 Gone", Class: "mark m-gone"}},
		{MarkRelist, laneView{Label: "relists", Hint: "a relist completed (list-complete after the first)", Class: "mark m-relist"}},
		{MarkBackoff, laneView{Label: "backoffs", Hint: "a recorded backoff, until the next request", Class: "mark m-backoff"}},
		{"", laneView{Label: "bookmarks", Hint: "bookmarks (one tick per time bucket; hover for how many)", Class: "mark m-bookmark"}},
		{MarkRVBackwards, laneView{Label: "RV backwards", Hint: "an event or bookmark older than the cursor", Class: "mark m-rv"}},
	}
	lane := map[MarkerKind]*laneView{}
	for i := range kinds {
		lane[kinds[i].kind] = &kinds[i].lane
	}
	for _, m := range res.Markers {
		l := lane[m.Kind]
		href := ""
		switch {
		case m.Relist != 0:
			href = "#" + relistAnchor(res.Index, m.Relist)
		case m.Request != 0:
			href = "#" + requestAnchor(res.Index, m.Request)
		}
		if m.Kind == MarkBackoff {
			title := fmt.Sprintf("%s · %s for %s", format.ClipWithLength(m.Detail, clipMessage), formatOffset(m.At), format.Duration(m.End-m.At))
			l.Spans = append(l.Spans, barView{Title: title, X: ms(m.At), W: ms(m.End - m.At), Y: 4, H: markHeight - 8})
			continue
		}
		l.Lines = append(l.Lines, lineView{Href: href, Title: format.ClipWithLength(m.Detail, clipMessage) + " · " + formatOffset(m.At), X: ms(m.At)})
	}
	// One tick per bucket with bookmarks, all in one path: the page's
	// read-out says how many a bucket had.
	var ticks strings.Builder
	for _, b := range res.Buckets {
		if b.Bookmarks > 0 {
			fmt.Fprintf(&ticks, "M%s 2V14", ms(b.FirstBookmark))
		}
	}
	if ticks.Len() > 0 {
		lane[""].Paths = append(lane[""].Paths, pathView{Class: "ticks", D: ticks.String()})
	}
	var out []laneView
	for _, k := range kinds {
		l := k.lane
		l.H = markHeight
		if n := res.MarkersDropped[k.kind]; n > 0 {
			l.Hint += fmt.Sprintf(" (the first %s drawn, %s more not)", format.Count(len(l.Lines)+len(l.Spans)), format.Count(n))
		}
		out = append(out, l)
	}
	return out
}

// objectsLane is the cache's object count: its value at the end of each
// bucket as a step line, and a band where it moved within a bucket. The
// scale fits the counts seen, so a relist that changes a few objects of
// thousands still shows.
func (v *pageView) objectsLane(res *Section, span time.Duration) laneView {
	l := laneView{Label: "objects", Hint: "objects in the cache (the band: lowest to highest within a bucket)", Class: "chart c-objects", H: objHeight}
	lo, hi, seen := 0, 0, false
	for _, b := range res.Buckets {
		if b.HasObjects {
			if !seen {
				lo, hi, seen = b.ObjectsMin, b.ObjectsMax, true
			}
			lo, hi = min(lo, b.ObjectsMin), max(hi, b.ObjectsMax)
		}
	}
	if !seen {
		l.Scale = "none listed"
		return l
	}
	if lo == hi || lo < hi/2 {
		lo = 0
	}
	hi = max(hi, lo+1)
	l.Scale = format.Count(lo) + "–" + format.Count(hi)
	y := func(n int) string {
		return strconv.FormatFloat(float64(objHeight-3)-float64(n-lo)/float64(hi-lo)*float64(objHeight-6), 'f', 1, 64)
	}
	var pts, band strings.Builder
	last, started := 0, false
	w := res.BucketWidth
	for i, b := range res.Buckets {
		if !b.HasObjects {
			continue
		}
		t0 := time.Duration(i) * w
		if started {
			fmt.Fprintf(&pts, "%s,%s ", ms(t0), y(last))
		}
		fmt.Fprintf(&pts, "%s,%s ", ms(t0), y(b.ObjectsLast))
		if b.ObjectsMin < b.ObjectsMax {
			fmt.Fprintf(&band, "M%s %sH%sV%sH%sZ", ms(t0), y(b.ObjectsMax), ms(t0+w), y(b.ObjectsMin), ms(t0))
		}
		last, started = b.ObjectsLast, true
	}
	fmt.Fprintf(&pts, "%s,%s", ms(span), y(last))
	l.Polylines = append(l.Polylines, pts.String())
	if band.Len() > 0 {
		l.Paths = append(l.Paths, pathView{Class: "band", D: band.String()})
	}
	return l
}

// bookmarkAges are the bookmark age's corners: it grows from each bookmark
// until the next. Bookmarks within one bucket after its first are drawn as
// one (their teeth are shorter than the bucket).
func bookmarkAges(res *Section, span time.Duration) (pts [][2]time.Duration, top time.Duration) {
	last := time.Duration(-1)
	for _, b := range res.Buckets {
		if b.Bookmarks == 0 {
			continue
		}
		if last >= 0 {
			pts = append(pts, [2]time.Duration{b.FirstBookmark, b.FirstBookmark - last})
			top = max(top, b.FirstBookmark-last)
		}
		pts = append(pts, [2]time.Duration{b.FirstBookmark, 0})
		if b.LastBookmark > b.FirstBookmark {
			pts = append(pts, [2]time.Duration{b.LastBookmark, 0})
		}
		last = b.LastBookmark
	}
	if last >= 0 {
		pts = append(pts, [2]time.Duration{span, span - last})
		top = max(top, span-last)
	}
	return pts, top
}

func (v *pageView) ageLane(res *Section, span time.Duration) laneView {
	l := laneView{Label: "bookmark age", Hint: "time since the last bookmark", Class: "chart c-age", H: ageHeight}
	pts, top := bookmarkAges(res, span)
	if len(pts) == 0 {
		l.Scale = "none"
		return l
	}
	top = max(top, time.Millisecond)
	l.Scale = format.Duration(top)
	var b strings.Builder
	for _, p := range pts {
		fmt.Fprintf(&b, "%s,%s ", ms(p[0]), strconv.FormatFloat(float64(ageHeight-2)-float64(p[1])/float64(top)*float64(ageHeight-4), 'f', 1, 64))
	}
	l.Polylines = append(l.Polylines, strings.TrimSpace(b.String()))
	return l
}

// rateLane stacks ADDED, MODIFIED and DELETED per bucket: one path per type.
func (v *pageView) rateLane(res *Section) laneView {
	l := laneView{Label: "events", Hint: "watch events applied per bucket: ADDED, MODIFIED, DELETED (not list items, nor a streaming list's initial events)", Class: "chart c-rate", H: rateHeight}
	top := 0
	for _, b := range res.Buckets {
		top = max(top, b.Added+b.Modified+b.Deleted)
	}
	if top == 0 {
		l.Scale = "none"
		return l
	}
	l.Scale = fmt.Sprintf("%s/%s", format.Count(top), format.Duration(res.BucketWidth))
	scale := float64(rateHeight-2) / float64(top)
	var paths [3]strings.Builder
	w := res.BucketWidth
	for i, b := range res.Buckets {
		base := float64(rateHeight)
		for k, n := range [3]int{b.Added, b.Modified, b.Deleted} {
			if n == 0 {
				continue
			}
			h := float64(n) * scale
			fmt.Fprintf(&paths[k], "M%s %sH%sV%sH%sZ", ms(time.Duration(i)*w), strconv.FormatFloat(base, 'f', 1, 64), ms(time.Duration(i+1)*w),
				strconv.FormatFloat(base-h, 'f', 1, 64), ms(time.Duration(i)*w))
			base -= h
		}
	}
	for k, class := range []string{"e-added", "e-modified", "e-deleted"} {
		if paths[k].Len() > 0 {
			l.Paths = append(l.Paths, pathView{Class: class, D: paths[k].String()})
		}
	}
	return l
}

// lagShares are the lag chart's shades: a cell's opacity says what share
// of its time bucket's events fell in its lag bucket, in four steps (one
// path per lag bucket and step, so at most 20 paths whatever the trace).
var lagShares = [...]float64{0.1, 0.35, 0.7}

func lagShade(share float64) int {
	for i, s := range lagShares {
		if share < s {
			return i
		}
	}
	return len(lagShares)
}

// lagLane is the passive delivery estimate over time: one band per lag
// bucket (<2s at the bottom, >60s at the top), each time bucket's cell
// shaded by the share of its events in that lag bucket (neighbours of the
// same shade drawn as one), and a step line
// at the bucket that holds each time bucket's 99th percentile. The
// estimate's precision is about ±2 s: it is never drawn finer than its
// buckets.
func (v *pageView) lagLane(res *Section) laneView {
	n := reflector.LagBucketCount
	l := laneView{Label: "event lag", Hint: "the passive delivery estimate: each watch event's arrival minus its object's last write (managedFields, deletion or creation time), corrected for the server's clock; precision about ±2 s, so only its buckets. A cell's shade is the share of the time bucket's events in that lag bucket; the line is the bucket of each time bucket's p99",
		Class: "chart c-lag", H: n * lagBand, Scale: "±2 s", LabelX: plotX - 46}
	for i := range n {
		l.Bands = append(l.Bands, bandView{Label: reflector.LagBucketName(i), Y: (n-i)*lagBand - 2})
	}
	bandTop := func(i int) string { return strconv.Itoa((n - 1 - i) * lagBand) }
	var cells [reflector.LagBucketCount][len(lagShares) + 1]strings.Builder
	// A run of time buckets with the same shade in a band is one cell.
	type run struct {
		shade  int
		t0, t1 int
	}
	runs := [reflector.LagBucketCount]run{}
	for i := range runs {
		runs[i].shade = -1
	}
	w := res.BucketWidth
	flush := func(i int) {
		if r := runs[i]; r.shade >= 0 {
			fmt.Fprintf(&cells[i][r.shade], "M%s %sH%sv%dH%sZ", ms(time.Duration(r.t0)*w), bandTop(i), ms(time.Duration(r.t1)*w), lagBand, ms(time.Duration(r.t0)*w))
		}
		runs[i].shade = -1
	}
	var p99 strings.Builder
	prevEnd := -1
	for t, b := range res.Buckets {
		total := b.Lag.Total()
		for i, c := range b.Lag {
			shade := -1
			if c > 0 {
				shade = lagShade(float64(c) / float64(total))
			}
			if r := &runs[i]; shade >= 0 && r.shade == shade && r.t1 == t {
				r.t1 = t + 1
				continue
			}
			flush(i)
			if shade >= 0 {
				runs[i] = run{shade: shade, t0: t, t1: t + 1}
			}
		}
		if total == 0 {
			continue
		}
		x0, x1 := ms(time.Duration(t)*w), ms(time.Duration(t+1)*w)
		y := strconv.FormatFloat(float64(n-1-b.Lag.P99Bucket())*lagBand+lagBand/2.0, 'f', 1, 64)
		if prevEnd == t {
			fmt.Fprintf(&p99, "V%sH%s", y, x1)
		} else {
			fmt.Fprintf(&p99, "M%s %sH%s", x0, y, x1)
		}
		prevEnd = t + 1
	}
	for i := range runs {
		flush(i)
	}
	for i := range cells {
		for k := range cells[i] {
			if cells[i][k].Len() > 0 {
				l.Paths = append(l.Paths, pathView{Class: fmt.Sprintf("lag lag-%d s-%d", i, k), D: cells[i][k].String()})
			}
		}
	}
	if p99.Len() > 0 {
		l.Paths = append(l.Paths, pathView{Class: "lag-p99", D: p99.String()})
	}
	return l
}

// probeLane is the delivery probe's write-to-event time of each sample,
// in milliseconds, on the resource that watches its Lease: a dot per time
// bucket with samples at the slowest one (when it was sent), a line
// through them, a whisker from the fastest when the bucket has several,
// and the whole run's p50 and p99 as dashed lines. The points are the
// buckets', so they are bounded as the other charts are.
func (v *pageView) probeLane(res *Section, span time.Duration) laneView {
	p := res.Probe
	l := laneView{Label: "probe", Hint: "the delivery probe: from sending each renewal of its Lease to receiving its watch event (the apiserver's watch path for a Lease on this connection, not every resource's)",
		Class: "chart c-probe", H: probeHeight}
	if p.Count == 0 {
		l.Scale = "no samples"
		return l
	}
	top := max(p.Max, time.Millisecond) // the buckets hold the same samples
	l.Scale = "0–" + format.Duration(top)
	y := func(d time.Duration) string {
		return strconv.FormatFloat(float64(probeHeight-3)-float64(d)/float64(top)*float64(probeHeight-6), 'f', 1, 64)
	}
	var pts, dots, ranges strings.Builder
	for _, b := range res.Buckets {
		if b.ProbeN == 0 {
			continue
		}
		x := ms(b.ProbeAt)
		fmt.Fprintf(&pts, "%s,%s ", x, y(b.ProbeMax))
		fmt.Fprintf(&dots, "M%s %sh0", x, y(b.ProbeMax))
		if b.ProbeN > 1 && b.ProbeMin < b.ProbeMax {
			fmt.Fprintf(&ranges, "M%s %sV%s", x, y(b.ProbeMin), y(b.ProbeMax))
		}
	}
	l.Paths = append(l.Paths,
		pathView{Class: "p-p50", D: fmt.Sprintf("M0 %sH%s", y(p.P50), ms(span))},
		pathView{Class: "p-p99", D: fmt.Sprintf("M0 %sH%s", y(p.P99), ms(span))})
	if ranges.Len() > 0 {
		l.Paths = append(l.Paths, pathView{Class: "p-range", D: ranges.String()})
	}
	l.Polylines = append(l.Polylines, strings.TrimSpace(pts.String()))
	l.Paths = append(l.Paths, pathView{Class: "p-dots", D: dots.String()})
	return l
}

// probeLegend says what the probe's chart shows, with the whole run's figures.
func probeLegend(p *probe.Figures) string {
	if p.Count == 0 {
		return "probe: no samples in the trace"
	}
	return fmt.Sprintf("probe: write to watch event of each renewal of its Lease, whole run p50 %s, p99 %s, max %s (%s samples; the write itself p50 %s)",
		format.Duration(p.P50), format.Duration(p.P99), format.Duration(p.Max), format.Count(p.Count), format.Duration(p.WriteP50))
}

// tickSteps are the axis steps: 1, 2, 5 times powers of ten below a second,
// clock-friendly steps above (report.js has the same list).
func tickSteps() []time.Duration {
	var s []time.Duration
	for p := time.Duration(1); p < time.Second; p *= 10 {
		s = append(s, p, 2*p, 5*p)
	}
	return append(s, time.Second, 2*time.Second, 5*time.Second, 10*time.Second, 15*time.Second, 30*time.Second,
		time.Minute, 2*time.Minute, 5*time.Minute, 10*time.Minute, 15*time.Minute, 30*time.Minute,
		time.Hour, 2*time.Hour, 3*time.Hour, 6*time.Hour, 12*time.Hour, 24*time.Hour)
}

// ticks are the axis labels for the whole span (the page's script redraws
// them for a zoomed range with the same steps and words).
func ticks(span time.Duration) []tickView {
	steps := tickSteps()
	step := steps[len(steps)-1]
	for _, s := range steps {
		if span/s <= 8 {
			step = s
			break
		}
	}
	var out []tickView
	for t := time.Duration(0); t <= span; t += step {
		x := float64(plotX) + float64(t)/float64(span)*float64(plotWidth)
		out = append(out, tickView{X: strconv.FormatFloat(x, 'f', 1, 64), Label: formatOffset(t)})
	}
	return out
}

// formatOffset is a time since the trace's start: "+1.5s", "+2m03s".
func formatOffset(d time.Duration) string { return "+" + format.Duration(d) }

// labelsText renders labels as kubectl does ("app=web,tier=1"), sorted and clipped.
func labelsText(l map[string]string) string {
	keys := slices.Sorted(maps.Keys(l))
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + l[k])
		if b.Len() > clipMessage {
			break
		}
	}
	return format.ClipWithLength(b.String(), clipMessage)
}

// diffRows flattens a relist diff for its table, kind by kind.
type diffRow struct {
	Kind, Ref, OldUID, NewUID, OldRV, NewRV, Labels string
}

func diffRows(d *Diff) []diffRow {
	var rows []diffRow
	add := func(kind string, es []DiffObject) {
		for _, e := range es {
			rows = append(rows, diffRow{Kind: kind, Ref: format.ClipWithLength(e.Ref.String(), clipName), OldUID: format.ClipWithLength(e.OldUID, 64), NewUID: format.ClipWithLength(e.NewUID, 64),
				OldRV: format.ClipWithLength(e.OldResourceVersion, 64), NewRV: format.ClipWithLength(e.NewResourceVersion, 64), Labels: labelsText(e.Labels)})
		}
	}
	add("missed delete", d.Deleted)
	add("recreated", d.Recreated)
	add("missed update", d.Updated)
	add("missed add", d.Added)
	return rows
}
