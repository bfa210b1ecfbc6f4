package trace

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

const (
	// maxKeptDifferences bounds the differences a comparison keeps to show.
	maxKeptDifferences = 100
	// maxUnmatched bounds the decisions waiting for their counterpart; past
	// it the oldest is counted as a difference (normally the replay lags the
	// trace by a decision or two).
	maxUnmatched = 1000
)

// decisionComparison compares recorded decisions with replayed ones as they
// come, in order, keeping only what has not been matched yet and the first
// differences: its memory does not grow with the trace.
type decisionComparison struct {
	rec, rep      []*Line // waiting for their counterpart (rec with their line numbers)
	recordedCount int
	// recordedStop: the recording has its run's end: a stopped decision, or
	// a failed one (the reflector gave up: a 403, a bad selector).
	recordedStop bool
	// replayedCount counts the replayed decisions; settled is what it was
	// when the replayed reflector last began a request: a decision before
	// that has its counterpart in the recording, which wrote it before that
	// request's line. The decisions after it answer the last request the
	// trace has (a live reflector may decide at its end line what the
	// replay decides at its ERROR event), or the trace's end.
	replayedCount, settled int
	// endedEarly: the recording ended before its run recorded its stop
	// (killed, or its file cut): what the replay decided during its last
	// request and after (its answer to that request, and its own stop) had
	// nothing recorded to be compared with.
	endedEarly bool
	index      int // decisions compared so far
	total      int
	kept       []string
}

func (c *decisionComparison) recorded(l *Line) {
	c.recordedCount++
	c.recordedStop = c.recordedStop || l.Reason == string(reflector.ReasonStopped) || l.State == reflector.StateFailed.String()
	c.rec = append(c.rec, compared(l))
	c.compare()
	if len(c.rec) > maxUnmatched {
		c.unmatched(c.rec[0], "")
		c.rec = c.rec[1:]
	}
}

// began marks that the replayed reflector began a request.
func (c *decisionComparison) began() { c.settled = c.replayedCount }

func (c *decisionComparison) replayed(l *Line) {
	c.replayedCount++
	c.rep = append(c.rep, compared(l))
	c.compare()
	if len(c.rep) > maxUnmatched {
		c.unmatched(nil, describeDecision(c.rep[0]))
		c.rep = c.rep[1:]
	}
}

// unmatched counts a recorded decision (rec) or a replayed one (rep, described) that has no counterpart.
func (c *decisionComparison) unmatched(rec *Line, rep string) {
	c.index++
	if rec != nil {
		c.differ(fmt.Sprintf("decision %d (line %d): the trace decided %s, the replay did not", c.index, rec.num, describeDecision(rec)))
	} else {
		c.differ(fmt.Sprintf("decision %d: the replay decided %s, the trace has no more decisions", c.index, rep))
	}
}

// compared is what a comparison keeps of a note line: the fields it compares.
func compared(l *Line) *Line {
	return &Line{State: l.State, Reason: l.Reason, ResourceVersion: l.ResourceVersion, Objects: l.Objects, Code: l.Code, Cursor: l.Cursor, Diff: l.Diff, Wait: l.Wait, num: l.num}
}

func (c *decisionComparison) compare() {
	for len(c.rec) > 0 && len(c.rep) > 0 {
		rec, rep := c.rec[0], c.rep[0]
		c.rec, c.rep = c.rec[1:], c.rep[1:]
		c.index++
		if !sameDecision(rec, rep) {
			c.differ(fmt.Sprintf("decision %d (line %d): recorded %s, replayed %s", c.index, rec.num, describeDecision(rec), describeDecision(rep)))
		}
	}
}

func (c *decisionComparison) differ(s string) {
	c.total++
	if len(c.kept) < maxKeptDifferences {
		c.kept = append(c.kept, s)
	}
}

// finish counts the decisions left without a counterpart and returns the
// differences. Where the recording never recorded its own stop (its run
// was killed, its file cut), what the replay decided during the trace's last
// request or after it is no difference: its answer to that request (a
// watch's end, a 410, a backoff) and its stop at the trace's end were never
// recorded.
func (c *decisionComparison) finish(max int) ([]string, int) {
	if len(c.rec) == 0 && len(c.rep) > 0 && c.recordedCount > 0 && !c.recordedStop {
		// c.rep are the last len(c.rep) replayed decisions; those since
		// the last request began are past the recording.
		past := min(c.replayedCount-c.settled, len(c.rep))
		if !slices.ContainsFunc(c.rep, func(d *Line) bool { return d.Reason != string(reflector.ReasonStopped) }) {
			past = len(c.rep) // only the reflector stopping
		}
		c.endedEarly = c.endedEarly || past > 0
		c.rep = c.rep[:len(c.rep)-past]
	}
	for _, rec := range c.rec {
		c.unmatched(rec, "")
	}
	for _, rep := range c.rep {
		c.unmatched(nil, describeDecision(rep))
	}
	c.rec, c.rep = nil, nil
	return c.kept[:min(len(c.kept), max)], c.total
}

// waitTolerance is how far a replayed backoff's wait may be from the
// recorded one: a trace records waits to the millisecond.
const waitTolerance = time.Millisecond

// sameDecision compares a recorded decision with a replayed one by state,
// reason and each structured field the recorded one has.
func sameDecision(rec, rep *Line) bool {
	switch {
	case rec.Wait != 0 && (rep.Wait-rec.Wait > Duration(waitTolerance) || rec.Wait-rep.Wait > Duration(waitTolerance)):
		return false
	case rec.State != rep.State, rec.Reason != rep.Reason,
		rec.ResourceVersion != "" && rec.ResourceVersion != rep.ResourceVersion,
		rec.Objects != nil && (rep.Objects == nil || *rec.Objects != *rep.Objects),
		rec.Code != 0 && rec.Code != rep.Code,
		rec.Cursor != "" && rec.Cursor != rep.Cursor,
		rec.Diff != nil && (rep.Diff == nil || *rec.Diff != *rep.Diff):
		return false
	}
	return true
}

// describeDecision names a decision by its compared fields: "gone → Relisting (resourceVersion 250, code 410)".
func describeDecision(l *Line) string {
	var f []string
	if l.ResourceVersion != "" {
		f = append(f, "resourceVersion "+l.ResourceVersion)
	}
	if l.Objects != nil {
		f = append(f, format.PluralUngrouped(*l.Objects, "object"))
	}
	if l.Code != 0 {
		f = append(f, fmt.Sprintf("code %d", l.Code))
	}
	if l.Cursor != "" {
		f = append(f, "cursor "+l.Cursor)
	}
	if d := l.Diff; d != nil {
		f = append(f, fmt.Sprintf("missed %d deletes, %d recreates, %d updates, %d adds", d.Deleted, d.Recreated, d.Updated, d.Added))
	}
	if l.Wait != 0 {
		f = append(f, "wait "+time.Duration(l.Wait).String())
	}
	s := l.Reason + " → " + l.State
	if len(f) > 0 {
		s += " (" + strings.Join(f, ", ") + ")"
	}
	return s
}
