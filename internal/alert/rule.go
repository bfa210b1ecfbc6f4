// Package alert holds the rules of --fail-on: a measure of one watched
// resource (a count, such as relists, or an age, such as bookmark-age), a
// comparison and a threshold. A Monitor evaluates them per resource on the
// session's clock (every second, and at the end of the run) and reports the
// first time each rule trips on each resource.
package alert

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

// Measure names a value a rule compares.
type Measure string

// The measures, per resource. Counts are totals since the start of the run
// (the summary's counters); ages are durations on the session's clock.
const (
	// Relists counts complete lists started after the first (the summary's relists).
	Relists Measure = "relists"
	// Gone counts 410 Gone answers: on a watch, a LIST, or a LIST continue token.
	Gone Measure = "gone"
	// TooLarge counts "too large resource version" answers.
	TooLarge Measure = "too-large"
	// UIDMismatches counts applies that replaced another UID and deletes of a stale UID.
	UIDMismatches Measure = "uid-mismatches"
	// Duplicates counts events that carried the cached UID and resourceVersion again.
	Duplicates Measure = "duplicates"
	// RVBackwards counts events and progress bookmarks whose resourceVersion was older than the cursor.
	RVBackwards Measure = "rv-backwards"
	// Backoffs counts waits after errors.
	Backoffs Measure = "backoffs"
	// WatchErrors counts watches that ended in an error.
	WatchErrors Measure = "watch-errors"
	// Missed counts what relists found the watch had missed: deletes,
	// recreates, updates and adds, summed over every relist diff.
	Missed Measure = "missed"
	// MissedDeletes counts the deletes among Missed.
	MissedDeletes Measure = "missed-deletes"
	// BookmarkAge is the time since the last bookmark; with none yet, since
	// watching began (the first complete list); 0 before that.
	BookmarkAge Measure = "bookmark-age"
	// NoProgress is the time since the reflector last received data: a LIST
	// page or a watch event (ADDED, MODIFIED, DELETED or BOOKMARK, a
	// streaming list's initial events included). Each of them moves the
	// cursor (resourceVersion) or shows the watch is alive where nothing
	// changed; an error answer, an ERROR event, a backoff or a watch that
	// stays silent is no progress. Counted from the start of the run before
	// anything arrived.
	NoProgress Measure = "no-progress"
	// Sync is the time to the first complete list; while the first list is
	// not complete, the time waited so far, so sync>30s trips while it waits.
	Sync Measure = "sync"
	// LagP99 is the passive delivery estimate's 99th percentile, as the
	// upper bound of its bucket (2s, 5s, 15s, 60s; over a minute is
	// LagOverAMinute): lag-p99>15s trips when the p99 is in 15-60s or >60s.
	// 0 before an event was counted.
	LagP99 Measure = "lag-p99"
	// ProbeP99 is the delivery probe's (--probe) 99th percentile of write
	// to event over the whole run; 0 without a probe or before its first
	// sample. The probe is the run's, so every resource has the same.
	ProbeP99 Measure = "probe-p99"
	// Findings counts the findings of severity warning or worse that are
	// not ignored (--ignore-finding).
	Findings Measure = "findings"
)

// LagOverAMinute is LagP99's value when the p99 is in the >60s bucket.
const LagOverAMinute = math.MaxInt64

// FindingPrefix starts a measure of one finding, "finding:ID": its count
// (Finding.Count) once raised, 0 before and while ignored.
const FindingPrefix = "finding:"

// FindingMeasure is the measure of the finding id: "finding:missed-deletes".
func FindingMeasure(id findings.ID) Measure { return Measure(FindingPrefix + string(id)) }

// Finding is the finding a "finding:ID" measure counts, and whether m is one.
func (m Measure) Finding() (findings.ID, bool) {
	id, ok := strings.CutPrefix(string(m), FindingPrefix)
	return findings.ID(id), ok
}

// Measures returns every measure, in the order help and errors show them.
func Measures() []Measure {
	return []Measure{Relists, Gone, TooLarge, UIDMismatches, Duplicates, RVBackwards, Backoffs, WatchErrors, Missed, MissedDeletes, BookmarkAge, NoProgress, Sync, LagP99, ProbeP99, Findings}
}

// IsDuration reports whether m is an age (compared with a duration) rather than a count.
func (m Measure) IsDuration() bool {
	return m == BookmarkAge || m == NoProgress || m == Sync || m == LagP99 || m == ProbeP99
}

// Op is a rule's comparison.
type Op string

// The comparisons: a rule trips when the measure is above (or at least) its threshold.
const (
	Greater        Op = ">"
	GreaterOrEqual Op = ">="
)

// Rule is one parsed --fail-on rule.
type Rule struct {
	// Text is the rule as written, spaces trimmed ("" for a rule built in code).
	Text    string
	Measure Measure
	Op      Op
	// Threshold is the count, or for an age its duration in nanoseconds.
	Threshold int64
}

// String is the rule as written, or else in its canonical form.
func (r Rule) String() string {
	if r.Text != "" {
		return r.Text
	}
	return r.Canonical()
}

// Canonical is the rule in its canonical form: "relists>0", "bookmark-age>3m0s".
func (r Rule) Canonical() string { return string(r.Measure) + string(r.Op) + r.formatThreshold() }

// format renders a value of the rule's measure as FormatValue does, but
// never rounded across the threshold: a value that trips the rule reads as
// one that does ("bookmark-age is 2.04s" for bookmark-age>2s, not "is 2s"),
// and one that does not, as one that does not.
func (r Rule) format(v int64) string {
	if !r.Measure.IsDuration() || r.Measure == LagP99 && v == LagOverAMinute {
		return FormatValue(r.Measure, v)
	}
	d, unit := time.Duration(v), time.Second // FormatValue's units
	if d < time.Second {
		unit = time.Millisecond
	}
	for unit > 1 && r.Trips(int64(d.Round(unit))) != r.Trips(v) {
		unit /= 10
	}
	return d.Round(unit).String()
}

// formatThreshold renders the threshold as given, unrounded (2.5s, not 3s).
func (r Rule) formatThreshold() string {
	if !r.Measure.IsDuration() {
		return strconv.FormatInt(r.Threshold, 10)
	}
	return time.Duration(r.Threshold).String()
}

// FormatValue renders a value of measure m: a count, or a duration rounded to
// the second (to the millisecond below a second).
func FormatValue(m Measure, v int64) string {
	if !m.IsDuration() {
		return strconv.FormatInt(v, 10)
	}
	if m == LagP99 && v == LagOverAMinute {
		return ">1m0s"
	}
	d := time.Duration(v)
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// Trips reports whether value breaks the rule.
func (r Rule) Trips(value int64) bool {
	if r.Op == GreaterOrEqual {
		return value >= r.Threshold
	}
	return value > r.Threshold
}

// MeasureList is the measures as an error message lists them: "relists, gone, …".
func MeasureList() string {
	ms := Measures()
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = string(m)
	}
	return strings.Join(names, ", ") + ", finding:ID (IDs: " + findings.IDList() + ")"
}

// Parse reads one rule, "<measure><op><value>": a measure from Measures, >
// or >=, and a count (a non-negative integer) or, for an age, a Go duration
// such as 30s, 3m or 1h30m. Spaces around the parts are allowed.
func Parse(s string) (Rule, error) {
	text := strings.TrimSpace(s)
	i := strings.IndexAny(text, "<>=!")
	if i < 0 {
		return Rule{}, errors.New("no comparison: want MEASURE>VALUE such as relists>0 or bookmark-age>3m")
	}
	r := Rule{Text: text, Measure: Measure(strings.TrimSpace(text[:i]))}
	rest := text[i:]
	switch {
	case strings.HasPrefix(rest, ">="):
		r.Op, rest = GreaterOrEqual, rest[2:]
	case strings.HasPrefix(rest, ">"):
		r.Op, rest = Greater, rest[1:]
	default:
		end := 1
		for end < len(rest) && strings.ContainsRune("<>=!", rune(rest[end])) {
			end++
		}
		return Rule{}, fmt.Errorf("unsupported comparison %q: want > or >= (a rule says when something is too much)", rest[:end])
	}
	if r.Measure == "" {
		return Rule{}, errors.New("no measure before the comparison")
	}
	if id, ok := r.Measure.Finding(); ok && !findings.Known(id) {
		return Rule{}, fmt.Errorf("unknown finding %q", id)
	} else if !ok && !slices.Contains(Measures(), r.Measure) {
		return Rule{}, fmt.Errorf("unknown measure %q", r.Measure)
	}
	value := strings.TrimSpace(rest)
	if value == "" {
		return Rule{}, fmt.Errorf("no value after %s", r.Op)
	}
	if r.Measure.IsDuration() {
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return Rule{}, fmt.Errorf("%s takes a duration such as 30s, 3m or 1h, not %q", r.Measure, value)
		}
		r.Threshold = int64(d)
		return r, nil
	}
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil || n < 0 {
		return Rule{}, fmt.Errorf("%s takes a count (0 or more), not %q", r.Measure, value)
	}
	r.Threshold = n
	return r, nil
}

// ParseError is a rule that does not parse; its message names the rule and
// lists the measures.
type ParseError struct {
	Rule string
	Err  error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("invalid --fail-on %q: %v; measures: %s", e.Rule, e.Err, MeasureList())
}

func (e *ParseError) Unwrap() error { return e.Err }

// ParseAll parses every rule; the first that does not parse is a *ParseError.
// The same rule given twice (in any spelling) is kept once.
func ParseAll(texts []string) ([]Rule, error) {
	var out []Rule
	seen := map[string]bool{}
	for _, t := range texts {
		r, err := Parse(t)
		if err != nil {
			return nil, &ParseError{Rule: t, Err: err}
		}
		if !seen[r.Canonical()] {
			seen[r.Canonical()] = true
			out = append(out, r)
		}
	}
	return out, nil
}
