// Package lines prints a reflector's notes as lines, for people (text) or
// scripts (JSON lines), in the order the reflector made them: the output of
// a run without the dashboard.
package lines

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// Output prints the notes of one or more reflectors as lines (-o text) or
// JSON lines (-o json), each naming its resource, each resource's in the
// order its reflector made them. Pushing never blocks a reflector: a full
// queue drops the line and counts it, and the output says how many lines
// were dropped at the place they are missing (the notes' sequence numbers
// have a gap there): lines are skipped, never reordered.
type Output struct {
	out     io.Writer
	json    bool
	queue   chan item
	dropped atomic.Int64
	done    chan struct{}
	lastSeq map[string]uint64         // by resource; owned by loop
	width   int                       // of the resource column in text
	keep    func(reflector.Note) bool // see Only; nil keeps every note
}

// item is one queued note and the resource it is about.
type item struct {
	resource string
	n        reflector.Note
	finding  *findings.Finding // a FINDING line instead of a note's
	end      bool              // Close's marker: the loop stops here
}

// lineQueue is how many notes may wait for a slow terminal or pipe.
const lineQueue = 65536

// NewOutput prints to out, as JSON lines when asJSON. resources are the full
// names of the resources whose notes it will print: text lines pad the
// resource column to the longest, so the columns after it line up.
func NewOutput(out io.Writer, asJSON bool, resources ...string) *Output {
	if !asJSON {
		// A line carries what a proxied client chose (its selectors, its
		// continue token): its control characters must not reach a terminal.
		out = format.Printable(out)
	}
	l := &Output{out: out, json: asJSON, queue: make(chan item, lineQueue), done: make(chan struct{}), lastSeq: map[string]uint64{}}
	for _, r := range resources {
		l.width = max(l.width, len(r))
	}
	go l.loop()
	return l
}

// Only prints only the notes keep keeps (findings always): a monitor's log
// of what matters. A gap in the sequence numbers then says nothing of lines
// dropped; Close still counts them. Call it before the first note.
func (l *Output) Only(keep func(reflector.Note) bool) { l.keep = keep }

// Significant keeps the notes a long-running monitor logs: a list complete
// (the first sync, each relist), what a relist found missed, a 410 and the
// other decisions on errors and faults, a --fail-on rule that tripped, the
// end of the run, and each request that ended with an error.
func Significant(n reflector.Note) bool {
	if n.Kind == reflector.NoteRequestEnded {
		return n.Request != nil && n.Request.End != nil && n.Request.End.Reason == reflector.EndError
	}
	switch n.Reason() {
	case reflector.ReasonListComplete, reflector.ReasonRelistDiff, reflector.ReasonGone, reflector.ReasonContinueGone,
		reflector.ReasonTooLargeRV, reflector.ReasonForcedRelist, reflector.ReasonWatchError, reflector.ReasonRequestError,
		reflector.ReasonRVBackwards, reflector.ReasonStreamRefused, reflector.ReasonInitialEventsEnd, reflector.ReasonBadRequest,
		reflector.ReasonPermanentError, reflector.ReasonGaveUp, reflector.ReasonStopped, reflector.ReasonFault, reflector.ReasonAlert:
		return true
	}
	return false
}

// For is the OnNote listener of the reflector of resource (its full name,
// "configmaps.v1"): it queues each note for printing.
func (l *Output) For(resource string) func(reflector.Note) {
	return func(n reflector.Note) {
		if n.Kind.Fact() {
			return // no line of its own; it leaves no gap in the Seq
		}
		if l.keep == nil || l.keep(n) {
			l.push(item{resource: resource, n: n})
		}
	}
}

// Finding is the findings engine's OnRaise listener for resource: it
// queues a FINDING line, printed after the line of the note that raised it.
func (l *Output) Finding(resource string) func(findings.Finding) {
	return func(f findings.Finding) { l.push(item{resource: resource, finding: &f}) }
}

// push queues it, or drops and counts it when the queue is full.
func (l *Output) push(it item) {
	select {
	case l.queue <- it:
	default:
		l.dropped.Add(1)
	}
}

// Close prints what is queued and returns how many lines were dropped. A
// line pushed after it is not printed, and pushing one is safe: a finding
// can be raised after the run (a FlowSchema named by a lookup that outlived
// it, pkg/live's FlowControlNames), so the queue is ended by a marker
// rather than closed, and the listeners stay as cheap as they were.
func (l *Output) Close() int64 {
	l.queue <- item{end: true}
	<-l.done
	return l.dropped.Load()
}

func (l *Output) loop() {
	defer close(l.done)
	for {
		it := <-l.queue
		if it.end {
			return
		}
		if it.finding != nil {
			l.writeFinding(it)
			continue
		}
		n, last := it.n, l.lastSeq[it.resource]
		// Notes are numbered from 1: a resource's first line numbered
		// after 1 follows lines dropped too.
		if n.Seq > last+1 && l.keep == nil {
			resource := it.resource
			if !l.json {
				resource = l.pad(resource)
			}
			l.write(droppedLine(l.json, resource, n.At, last+1, n.Seq-last-1))
		}
		if n.Seq > 0 {
			l.lastSeq[it.resource] = n.Seq
		}
		if l.json {
			b, err := jsonLine(it.resource, n)
			if err != nil {
				continue
			}
			l.write(string(b))
			if b, err := diffJSON(it.resource, n); err == nil && b != nil {
				l.write(string(b))
			}
		} else {
			resource := l.pad(it.resource)
			l.write(textLine(resource, n))
			if d := diffText(resource, n); d != "" {
				l.write(d)
			}
		}
	}
}

// diffText is the DIFF line that follows a diffed MODIFIED event's line
// ("" for other notes): each visible path changed, its old and new values
// (cut) and its manager, or why the event was not diffed.
func diffText(resource string, n reflector.Note) string {
	ch := n.Changes
	if n.Kind != reflector.NoteApplied || ch == nil {
		return ""
	}
	head := fmt.Sprintf("%s %s %6d %-8s %s rv=%s: ", n.At.Local().Format(timeFormat), resource, n.Seq, "DIFF", n.Applied.Object.Ref(), n.Applied.Object.ResourceVersion)
	if ch.Skipped != "" {
		return head + "not diffed: " + ch.Skipped
	}
	visible := ch.Visible()
	if len(visible) == 0 {
		return head + "nothing changed but resourceVersion and managedFields"
	}
	parts := make([]string, 0, len(visible))
	for _, c := range visible {
		p := c.Path + " " + string(c.Op)
		switch {
		case c.Old != nil && c.New != nil:
			p = fmt.Sprintf("%s %s→%s", c.Path, format.Clip(string(c.Old), 40), format.Clip(string(c.New), 40))
		case c.New != nil:
			p = fmt.Sprintf("%s added %s", c.Path, format.Clip(string(c.New), 40))
		case c.Old != nil:
			p = fmt.Sprintf("%s removed (was %s)", c.Path, format.Clip(string(c.Old), 40))
		}
		switch {
		case c.Manager == "":
		case c.Op == diff.Removed:
			// A removed path's manager is the one that had set it: who
			// removed it, the object no longer says.
			p += " last set by " + c.Writer()
		default:
			p += " by " + c.Writer()
		}
		parts = append(parts, p)
	}
	line := head + strings.Join(parts, ", ")
	if ch.TimestampOnly {
		line += " (timestamp-only)"
	}
	return line
}

// diffJSON is diffText as a JSON line (type diff; nil for other notes): the
// visible changes, with values when kept, and timestampOnly or skipped.
func diffJSON(resource string, n reflector.Note) ([]byte, error) {
	ch := n.Changes
	if n.Kind != reflector.NoteApplied || ch == nil {
		return nil, nil
	}
	o := n.Applied.Object
	j := jsonNote{Seq: n.Seq, Resource: resource, Time: n.At, Type: "diff", State: n.State.String(), Request: n.RequestID,
		Namespace: o.Namespace, Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion,
		Changes: ch.Visible(), TimestampOnly: ch.TimestampOnly, Skipped: ch.Skipped}
	if j.Changes == nil {
		j.Changes = []diff.Change{}
	}
	return marshal(j)
}

// writeFinding prints a FINDING line: its time is the finding's, its
// sequence number that of the last note printed of its resource: the note
// that raised it, unless that note was dropped or Only left it out (then an
// earlier one's).
func (l *Output) writeFinding(it item) {
	f, seq := it.finding, l.lastSeq[it.resource]
	if l.json {
		b, err := marshal(jsonNote{Seq: seq, Resource: it.resource, Time: f.FirstAt, Type: "finding", Finding: f})
		if err == nil {
			l.write(string(b))
		}
		return
	}
	l.write(findingText(l.pad(it.resource), seq, *f))
}

// findingText is a finding as a text line: "TIME RESOURCE SEQ FINDING
// severity id: title: evidence".
func findingText(resource string, seq uint64, f findings.Finding) string {
	line := fmt.Sprintf("%s %s %6d FINDING %s: %s", f.FirstAt.Local().Format(timeFormat), resource, seq, f, f.Evidence.Text)
	if f.Client != "" {
		line += " (client " + f.Client + ")"
	}
	return line
}

// lagText is an event line's " lag 2-5s": the passive delivery estimate's
// bucket (it is good to about ±2 s, so never milliseconds); "" when unknown.
func lagText(d reflector.Delivery) string {
	if !d.Known() {
		return ""
	}
	return " lag " + reflector.LagBucketName(reflector.LagBucketOf(d.Lag))
}

// write prints one line; a closed pipe (| head) is ignored, so the queue
// keeps draining and the reflector never waits.
func (l *Output) write(line string) { _, _ = io.WriteString(l.out, line+"\n") }

const timeFormat = "15:04:05.000"

// pad is resource right-padded with spaces to the column's width: text
// lines only (a JSON line's resource is as it is).
func (l *Output) pad(resource string) string {
	return resource + strings.Repeat(" ", max(l.width-len(resource), 0))
}

// droppedLine says where lines of resource are missing: count lines from seq on.
func droppedLine(asJSON bool, resource string, at time.Time, seq, count uint64) string {
	if asJSON {
		b, _ := marshal(jsonNote{Seq: seq, Resource: resource, Time: at, Type: "dropped", Dropped: count})
		return string(b)
	}
	return fmt.Sprintf("%s %s %6d %d lines dropped here: the output could not keep up", at.Local().Format(timeFormat), resource, seq, count)
}

// textLine is one note of resource as a line: its time, the resource, its
// sequence number, and what it says; lines about a request end with the
// request's number.
func textLine(resource string, n reflector.Note) string {
	head := fmt.Sprintf("%s %s %6d ", n.At.Local().Format(timeFormat), resource, n.Seq)
	via := ""
	if n.RequestID > 0 {
		via = fmt.Sprintf(" [#%d]", n.RequestID)
	}
	switch n.Kind {
	case reflector.NoteApplied:
		res := n.Applied
		return head + fmt.Sprintf("%-8s %s uid=%s rv=%s (%s)", n.Event, res.Object.Ref(), res.Object.UID, res.Object.ResourceVersion, strings.ToLower(res.Outcome.String())) + lagText(n.Delivery) + via
	case reflector.NoteRequestStarted:
		r := n.Request
		return head + fmt.Sprintf("request #%d %s %s: started", r.ID, strings.ToUpper(string(r.Verb)), r.Opts.Format(false))
	case reflector.NoteRequestEnded:
		r := n.Request
		count := format.PluralUngrouped(r.Items, "item")
		if r.Verb == reflector.VerbWatch {
			count = format.PluralUngrouped(r.Events, "event")
		}
		return head + fmt.Sprintf("request #%d %s %s: %s after %s, %s", r.ID, strings.ToUpper(string(r.Verb)), r.Opts.Format(false), r.End.Format(false), r.Duration.Round(time.Millisecond), count)
	case reflector.NoteAudit:
		return head + "audit: " + n.Audit.String()
	}
	state := n.State.String()
	if clientAway(n) {
		// The stream keeps the state its client left it in, which the
		// sentence says ("it was Watching"): the column says what the
		// dashboard's "○ left" does, not a watch that no client holds.
		state = "left"
	}
	return head + fmt.Sprintf("%-13s %s: %s", state, n.Reason(), n.Decision) + via
}

// clientAway says n is a decision made with an observed stream's client
// away: it left (client-left), or stayed away and was forgotten
// (client-gone).
func clientAway(n reflector.Note) bool {
	r := n.Reason()
	return r == reflector.ReasonClientLeft || r == reflector.ReasonClientGone
}

// jsonNote is the stable JSON form of one output line.
type jsonNote struct {
	Seq      uint64    `json:"seq"`
	Resource string    `json:"resource"`
	Time     time.Time `json:"time"`
	Type     string    `json:"type"` // decision, event, request-started, request (ended), audit, dropped, finding
	// Request is the request the line is about or was caused by.
	Request int64 `json:"request,omitempty"`
	// Dropped counts the lines missing from Seq on (type dropped).
	Dropped uint64 `json:"dropped,omitempty"`
	State   string `json:"state,omitempty"`
	// ClientAway marks a client-left or client-gone decision, whose State
	// is still the one the stream was in when its client left (text lines
	// say "left" in its column).
	ClientAway bool   `json:"clientAway,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Detail     string `json:"detail,omitempty"`
	// decision fields (resourceVersion below too)
	Objects *int     `json:"objects,omitempty"`
	Code    int32    `json:"code,omitempty"`
	WaitMS  *float64 `json:"waitMs,omitempty"`
	// event
	Event           string `json:"event,omitempty"`
	Outcome         string `json:"outcome,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	UID             string `json:"uid,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// Lag is the passive delivery estimate's bucket ("<2s", "2-5s", …),
	// when the event's object carried a write time.
	Lag string `json:"lag,omitempty"`
	// request
	ID         int64                     `json:"id,omitempty"`
	Verb       string                    `json:"verb,omitempty"`
	Opts       *reflector.RequestOptions `json:"opts,omitempty"`
	DurationMS *float64                  `json:"durationMs,omitempty"`
	Items      *int                      `json:"items,omitempty"`
	Events     *int                      `json:"events,omitempty"`
	End        *jsonEnd                  `json:"end,omitempty"`
	// finding (type finding): as in the summary's findings
	Finding *findings.Finding `json:"finding,omitempty"`
	// diff (type diff, after a MODIFIED event's line with --diff): the
	// changed paths (metadata.resourceVersion and managedFields left out),
	// whether only times changed, or why the event was not diffed.
	Changes       []diff.Change `json:"changes,omitempty"`
	TimestampOnly bool          `json:"timestampOnly,omitempty"`
	Skipped       string        `json:"skipped,omitempty"`
}

type jsonEnd struct {
	Reason  string `json:"reason"`
	Code    int32  `json:"code,omitempty"`
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}

// jsonLine is one note of resource as a JSON line (without its newline).
func jsonLine(resource string, n reflector.Note) ([]byte, error) {
	j := jsonNote{Seq: n.Seq, Resource: resource, Time: n.At, State: n.State.String(), Request: n.RequestID}
	switch n.Kind {
	case reflector.NoteApplied:
		o := n.Applied.Object
		j.Type, j.Event, j.Outcome = "event", string(n.Event), n.Applied.Outcome.String()
		j.Namespace, j.Name, j.UID, j.ResourceVersion = o.Namespace, o.Name, o.UID, o.ResourceVersion
		if n.Delivery.Known() {
			j.Lag = reflector.LagBucketName(reflector.LagBucketOf(n.Delivery.Lag))
		}
	case reflector.NoteRequestStarted:
		r := n.Request
		opts := r.Opts
		j.Type, j.ID, j.Verb, j.Opts = "request-started", r.ID, string(r.Verb), &opts
	case reflector.NoteAudit:
		j.Type, j.Detail = "audit", n.Audit.String()
	case reflector.NoteRequestEnded:
		r := n.Request
		ms := float64(r.Duration) / float64(time.Millisecond)
		opts := r.Opts
		j.Type, j.ID, j.Verb, j.Opts, j.DurationMS = "request", r.ID, string(r.Verb), &opts, &ms
		if r.Verb == reflector.VerbWatch {
			j.Events = &r.Events
		} else {
			j.Items = &r.Items
		}
		if e := r.End; e != nil {
			j.End = &jsonEnd{Reason: string(e.Reason)}
			if e.Status != nil {
				j.End.Code, j.End.Status, j.End.Message = e.Status.Code, string(e.Status.Reason), e.Status.Message
			}
			if e.Err != nil {
				j.End.Error = e.Err.Error()
			}
		}
	default:
		j.Type, j.Reason, j.ClientAway = "decision", string(n.Reason()), clientAway(n)
		if d := n.Decision; d != nil {
			j.Detail, j.ResourceVersion, j.Code = d.String(), d.ResourceVersion, d.Code
			if d.Reason == reflector.ReasonListComplete {
				objects := d.Objects
				j.Objects = &objects
			}
			if d.Wait > 0 {
				ms := float64(d.Wait) / float64(time.Millisecond)
				j.WaitMS = &ms
			}
		}
	}
	return marshal(j)
}

// marshal is json.Marshal without HTML escaping: a line says "sync>1ms"
// and "<2s" as a person greps for them, not "sync\u003e1ms".
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
