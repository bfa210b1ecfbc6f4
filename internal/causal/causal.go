// Package causal checks that what a run shows, line by line, is in the order
// it happened: a request's start, then its events (and the store changes they
// made), then its end, then the decisions it caused and the changes those made.
// Tests feed it the reflector's notes, the text and JSON lines, and the
// dashboard's log, live and replayed.
package causal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// Kind is what a line is about.
type Kind string

// The kinds of lines.
const (
	Started  Kind = "started"  // a request was sent
	Ended    Kind = "ended"    // a request ended
	Event    Kind = "event"    // a watch event was applied to the store
	Decision Kind = "decision" // the reflector decided something
	Audit    Kind = "audit"    // an audit compared the cache with a LIST
	Dropped  Kind = "dropped"  // lines are missing here
)

// Line is what the check needs of one line.
type Line struct {
	// Resource names the line's resource: each resource's lines are checked on their own.
	Resource string
	Seq      uint64
	Kind     Kind
	// Request is the request started or ended, or the one the line is about
	// or was caused by (0: none yet).
	Request int64
	// Verb is a started request's: list or watch.
	Verb string
	// Reason is a decision's.
	Reason reflector.Reason
	// Count is how many lines are missing from Seq on (Dropped).
	Count uint64
}

func (l Line) String() string {
	s := fmt.Sprintf("#%d %s request %d", l.Seq, l.Kind, l.Request)
	if l.Reason != "" {
		s += " " + string(l.Reason)
	}
	return s
}

// causedByTheEnd says whether a decision is one a request's end causes: it follows it.
func causedByTheEnd(r reflector.Reason) bool {
	switch r {
	case reflector.ReasonGone, reflector.ReasonContinueGone, reflector.ReasonTooLargeRV,
		reflector.ReasonWatchClosed, reflector.ReasonIdleTimeout, reflector.ReasonWatchError,
		reflector.ReasonRequestError, reflector.ReasonStreamRefused, reflector.ReasonInitialEventsEnd,
		reflector.ReasonBackoff, reflector.ReasonPermanentError, reflector.ReasonBadRequest, reflector.ReasonGaveUp:
		return true
	}
	return false
}

// Check returns the first line out of causal order, with why, or nil. The
// lines of each resource are checked on their own, in the order given.
func Check(lines []Line) error {
	byResource := map[string][]Line{}
	var order []string
	for _, l := range lines {
		if _, ok := byResource[l.Resource]; !ok {
			order = append(order, l.Resource)
		}
		byResource[l.Resource] = append(byResource[l.Resource], l)
	}
	for _, res := range order {
		if err := check(byResource[res]); err != nil {
			if res != "" {
				return fmt.Errorf("%s: %w", res, err)
			}
			return err
		}
	}
	return nil
}

func check(lines []Line) error {
	type req struct {
		verb  string
		ended bool
	}
	reqs := map[int64]*req{}
	var lastSeq uint64
	var lastReq int64
	var prev Line
	for i, l := range lines {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("line %d (%s): %s", i+1, l, fmt.Sprintf(format, args...))
		}
		if l.Seq <= lastSeq {
			return fail("sequence number %d after %d", l.Seq, lastSeq)
		}
		if l.Seq != lastSeq+1 && lastSeq > 0 && prev.Kind != Dropped {
			return fail("lines %d to %d are missing and nothing says they were dropped", lastSeq+1, l.Seq-1)
		}
		if prev.Kind == Dropped && l.Seq != prev.Seq+prev.Count {
			return fail("%d lines were dropped from %d, but the next is %d", prev.Count, prev.Seq, l.Seq)
		}
		lastSeq, prev = l.Seq, l
		if l.Kind == Dropped {
			lastSeq = l.Seq + l.Count - 1
			continue
		}
		r := reqs[l.Request]
		switch l.Kind {
		case Started:
			if r != nil {
				return fail("request %d started twice", l.Request)
			}
			if p := reqs[lastReq]; p != nil && !p.ended {
				return fail("request %d starts while request %d is still open", l.Request, lastReq)
			}
			if l.Request <= lastReq {
				return fail("request %d starts after request %d", l.Request, lastReq)
			}
			reqs[l.Request], lastReq = &req{verb: l.Verb}, l.Request
			continue
		case Audit:
			continue
		}
		if l.Request == 0 {
			if l.Kind != Decision {
				return fail("a %s line belongs to no request", l.Kind)
			}
			continue
		}
		if r == nil {
			return fail("about request %d, which has not started", l.Request)
		}
		switch l.Kind {
		case Ended:
			if r.ended {
				return fail("request %d ended twice", l.Request)
			}
			r.ended = true
		case Event:
			if r.ended {
				return fail("an event of request %d after its end", l.Request)
			}
		case Decision:
			listDone := l.Reason == reflector.ReasonListComplete && r.verb == string(reflector.VerbList)
			if (causedByTheEnd(l.Reason) || listDone) && !r.ended {
				return fail("%s before the end of request %d that caused it", l.Reason, l.Request)
			}
			if l.Reason == reflector.ReasonRelistDiff && i > 0 && lines[i-1].Reason != reflector.ReasonListComplete {
				return fail("a relist diff not right after its list-complete")
			}
		}
	}
	return nil
}

// FromNotes is the lines of notes.
func FromNotes(notes []reflector.Note) []Line {
	out := make([]Line, 0, len(notes))
	for _, n := range notes {
		if n.Kind.Fact() {
			continue // it shares the Seq of the note before it: nothing to order
		}
		l := Line{Seq: n.Seq, Request: n.RequestID, Reason: n.Reason()}
		switch n.Kind {
		case reflector.NoteRequestStarted:
			l.Kind, l.Request, l.Verb = Started, n.Request.ID, string(n.Request.Verb)
		case reflector.NoteRequestEnded:
			l.Kind, l.Request = Ended, n.Request.ID
		case reflector.NoteApplied:
			l.Kind = Event
		case reflector.NoteAudit:
			l.Kind = Audit
		default:
			l.Kind = Decision
		}
		out = append(out, l)
	}
	return out
}

// FromJSON reads JSON lines as -o json prints them (a summary object after
// them, if any, is ignored).
func FromJSON(data []byte) ([]Line, error) {
	var out []Line
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for n := 1; sc.Scan(); n++ {
		if !bytes.HasPrefix(sc.Bytes(), []byte(`{"seq"`)) {
			continue // the summary's lines
		}
		var j struct {
			Resource string `json:"resource"`
			Seq      uint64 `json:"seq"`
			Type     string `json:"type"`
			Request  int64  `json:"request"`
			ID       int64  `json:"id"`
			Verb     string `json:"verb"`
			Reason   string `json:"reason"`
			Dropped  uint64 `json:"dropped"`
		}
		if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		l := Line{Resource: j.Resource, Seq: j.Seq, Request: j.Request, Reason: reflector.Reason(j.Reason), Count: j.Dropped}
		switch j.Type {
		case "request-started":
			l.Kind, l.Request, l.Verb = Started, j.ID, j.Verb
		case "request":
			l.Kind, l.Request = Ended, j.ID
		case "event":
			l.Kind = Event
		case "audit":
			l.Kind = Audit
		case "dropped":
			l.Kind = Dropped
		case "decision":
			l.Kind = Decision
		case "finding", "diff":
			// Not a note: a finding follows the note that raised it, a
			// diff (--diff) its MODIFIED event's line, with its number.
			continue
		default:
			return nil, fmt.Errorf("line %d: unknown type %q", n, j.Type)
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

var (
	textHead    = regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d\d\d (\S+) +(\d+) (.*)$`)
	textRequest = regexp.MustCompile(`^request #(\d+) (LIST|WATCH) .*: (started|.+ after .+)$`)
	textVia     = regexp.MustCompile(` \[#(\d+)\]$`)
	textDropped = regexp.MustCompile(`^(\d+) lines dropped here`)
	textEvent   = regexp.MustCompile(`^(ADDED|MODIFIED|DELETED) `)
)

// FromText reads text lines as the line output prints them.
func FromText(data []byte) ([]Line, error) {
	var out []Line
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for n := 1; sc.Scan(); n++ {
		m := textHead.FindStringSubmatch(sc.Text())
		if m == nil {
			continue // the summary's lines
		}
		seq, _ := strconv.ParseUint(m[2], 10, 64)
		rest := m[3]
		if strings.HasPrefix(rest, "FINDING ") || strings.HasPrefix(rest, "DIFF ") {
			// Not a note: a finding follows the note that raised it, a
			// diff (--diff) its MODIFIED event's line, with its number.
			continue
		}
		l := Line{Resource: m[1], Seq: seq}
		if v := textVia.FindStringSubmatch(rest); v != nil {
			l.Request, _ = strconv.ParseInt(v[1], 10, 64)
		}
		dropped, r := textDropped.FindStringSubmatch(rest), textRequest.FindStringSubmatch(rest)
		switch {
		case dropped != nil:
			l.Kind = Dropped
			l.Count, _ = strconv.ParseUint(dropped[1], 10, 64)
		case r != nil:
			l.Request, _ = strconv.ParseInt(r[1], 10, 64)
			l.Kind, l.Verb = Ended, strings.ToLower(r[2])
			if r[3] == "started" {
				l.Kind = Started
			}
		case strings.HasPrefix(rest, "audit: "):
			l.Kind = Audit
		case textEvent.MatchString(rest):
			l.Kind = Event
		default:
			// "State reason: sentence [#N]"
			f := strings.Fields(rest)
			if len(f) < 2 || !strings.HasSuffix(f[1], ":") {
				return nil, fmt.Errorf("line %d: cannot read %q", n, sc.Text())
			}
			l.Kind, l.Reason = Decision, reflector.Reason(strings.TrimSuffix(f[1], ":"))
		}
		out = append(out, l)
	}
	return out, sc.Err()
}
