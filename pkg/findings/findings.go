// Package findings reads a reflector's notes, in order, and says what they
// mean: what is wrong, why, and what to do. An Engine is fed the notes of one
// reflector (ours, its replay, or a client's reflector the observing proxy
// rebuilds) and raises Findings from a fixed catalogue (Catalogue), each once,
// updated as its evidence grows.
//
// The engine decides only on notes and on the counters they move, so a replay
// of a trace raises what the recorded run raised, at the same points.
package findings

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// Severity is how bad a finding is.
type Severity string

// The severities, from the mildest.
const (
	Info    Severity = "info"
	Warning Severity = "warning"
	Error   Severity = "error"
)

// rank orders severities: info 0, warning 1, error 2.
func (s Severity) rank() int { return max(0, slices.Index([]Severity{Info, Warning, Error}, s)) }

// AtLeast reports whether s is as bad as o or worse.
func (s Severity) AtLeast(o Severity) bool { return s.rank() >= o.rank() }

// ID names a finding. The ids are stable: scripts, --ignore-finding and
// --fail-on use them. Each is declared with its rule (rule_*.go).
type ID string

// Entry is one finding of the catalogue: its id, its usual severity and what
// raises it.
type Entry struct {
	ID       ID
	Severity Severity
	// When says, for people, what raises it, with the rule's thresholds
	// (in Markdown: README.md's table of the findings is these).
	When string
}

// Finding is one thing wrong with a watch, with its evidence: the summary's
// `findings` entries, the FINDING lines, the dashboard's pane and the
// report's section all show this.
type Finding struct {
	ID       ID       `json:"id"`
	Severity Severity `json:"severity"`
	// Resource is what the reflector watches ("configmaps.v1"); Client, for
	// a stream the proxy observed, whose reflector it is.
	Resource string `json:"resource,omitempty"`
	Client   string `json:"client,omitempty"`
	// Title is one line: what is wrong, with its main number.
	Title    string   `json:"title"`
	Evidence Evidence `json:"evidence"`
	// Cause is why, in watch terms; Action what to do about it.
	Cause  string `json:"cause"`
	Action string `json:"action"`
	// Docs is the Kubernetes documentation that explains it, when there is a page.
	Docs string `json:"docs,omitempty"`
	// FirstAt and LastAt are when it was raised and last updated (the
	// session's clock: the recorded time in a replay); Count is how many
	// times its condition was seen (each finding says what it counts).
	FirstAt time.Time `json:"firstAt"`
	LastAt  time.Time `json:"lastAt"`
	Count   int64     `json:"count"`
	// Ignored is set when the user silenced the id (--ignore-finding): it
	// is kept, shown as ignored, and no --fail-on rule counts it.
	Ignored bool `json:"ignored,omitempty"`
}

// Evidence is what a finding rests on: the requests (their ids, as on the
// dashboard, in the line output and the trace), the objects, the window of
// time, and named facts (a Retry-After, a FlowSchema).
type Evidence struct {
	// Text says the evidence in one sentence, with its numbers.
	Text string `json:"text"`
	// Requests are the ids of the requests it rests on (the last 20).
	Requests []int64 `json:"requests,omitempty"`
	// Objects are the objects concerned (the first 50; ObjectsTotal counts them all).
	Objects      []Object `json:"objects,omitempty"`
	ObjectsTotal int      `json:"objectsTotal,omitempty"`
	// Window is the span of time it is about (a watch down, a storm).
	Window *Window `json:"window,omitempty"`
	// Facts are named values, such as "retryAfter", "flowSchema", "typicalLifetime".
	Facts map[string]string `json:"facts,omitempty"`
}

// Object names one object of the evidence, with its UIDs where they matter.
type Object struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// What happened to it: "deleted", "recreated" (missed-deletes),
	// "replaced", "stale delete" (uid-mismatch: a delete of another UID
	// than the cached one's, ignored), "missing", "extra", "different"
	// (cache-drift).
	What   string `json:"what"`
	OldUID string `json:"oldUID,omitempty"`
	NewUID string `json:"newUID,omitempty"`
}

// String is "namespace/name" (or "name").
func (o Object) String() string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

// Window is a span of time; Seconds is its length.
type Window struct {
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Seconds float64   `json:"seconds"`
}

// Length is the window's length as the evidence says it: to the tenth of a
// second (to the millisecond under one), "36.9s".
func (w Window) Length() string { return roundSeconds(w.Seconds) }

// Where names whose finding it is, for a line: "configmaps.v1" or
// "configmaps.v1 (client kubectl/v1.37 127.0.0.1:5678)".
func (f Finding) Where() string {
	if f.Client == "" {
		return f.Resource
	}
	return f.Resource + " (client " + f.Client + ")"
}

// String is the finding in one line, for the line output and logs.
func (f Finding) String() string {
	s := fmt.Sprintf("%s %s: %s", f.Severity, f.ID, f.Title)
	if f.Ignored {
		s += " (ignored)"
	}
	return s
}

// Detail is the finding for people, on several lines: title, evidence,
// cause, what to do, documentation.
func (f Finding) Detail() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", f.String())
	fmt.Fprintf(&b, "  evidence: %s\n", f.Evidence.Text)
	if len(f.Evidence.Requests) > 0 {
		ids := make([]string, len(f.Evidence.Requests))
		for i, id := range f.Evidence.Requests {
			ids[i] = fmt.Sprintf("#%d", id)
		}
		fmt.Fprintf(&b, "  requests: %s\n", strings.Join(ids, " "))
	}
	if len(f.Evidence.Objects) > 0 {
		names := make([]string, 0, len(f.Evidence.Objects))
		for _, o := range f.Evidence.Objects {
			n := o.String() + " (" + o.What
			if o.OldUID != "" || o.NewUID != "" {
				n += ", uid " + store.ShortUID(o.OldUID) + "→" + store.ShortUID(o.NewUID)
			}
			names = append(names, n+")")
		}
		more := ""
		if f.Evidence.ObjectsTotal > len(f.Evidence.Objects) {
			more = fmt.Sprintf(" … and %d more", f.Evidence.ObjectsTotal-len(f.Evidence.Objects))
		}
		fmt.Fprintf(&b, "  objects: %s%s\n", strings.Join(names, ", "), more)
	}
	if w := f.Evidence.Window; w != nil {
		fmt.Fprintf(&b, "  window: %s → %s (%s)\n", w.From.UTC().Format("15:04:05.000"), w.To.UTC().Format("15:04:05.000"), w.Length())
	}
	for _, k := range slices.Sorted(maps.Keys(f.Evidence.Facts)) {
		fmt.Fprintf(&b, "  %s: %s\n", k, f.Evidence.Facts[k])
	}
	fmt.Fprintf(&b, "  cause: %s\n", f.Cause)
	fmt.Fprintf(&b, "  what to do: %s\n", f.Action)
	if f.Docs != "" {
		fmt.Fprintf(&b, "  docs: %s\n", f.Docs)
	}
	return b.String()
}

func roundSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// Worst is the worst severity among findings that are not ignored, and
// whether there is one.
func Worst(fs []Finding) (worst Severity, found bool) {
	for _, f := range fs {
		if !f.Ignored && (!found || f.Severity.rank() > worst.rank()) {
			worst, found = f.Severity, true
		}
	}
	return worst, found
}

// CountAtLeast counts the findings of severity s or worse that are not ignored.
func CountAtLeast(fs []Finding, s Severity) int {
	n := 0
	for _, f := range fs {
		if !f.Ignored && f.Severity.AtLeast(s) {
			n++
		}
	}
	return n
}
