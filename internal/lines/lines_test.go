package lines

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// Text lines of several resources pad the resource column to the longest
// name, so the sequence numbers and what follows line up; JSON lines carry
// the name as it is.
func TestTheResourceColumnLinesUp(t *testing.T) {
	names := []string{"configmaps.v1", "widgets.v1.example.com"}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	note := func(seq uint64) reflector.Note {
		return reflector.Note{Seq: seq, At: at, Kind: reflector.NoteDecision,
			Decision: &reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialList}}
	}
	for _, asJSON := range []bool{false, true} {
		var buf bytes.Buffer
		out := NewOutput(&buf, asJSON, names...)
		out.For(names[0])(note(1))
		out.For(names[1])(note(1))
		if dropped := out.Close(); dropped != 0 {
			t.Fatalf("dropped %d lines", dropped)
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("got %d lines, want 2:\n%s", len(lines), buf.String())
		}
		if asJSON {
			if !strings.Contains(lines[0], `"resource":"configmaps.v1"`) {
				t.Errorf("JSON line: got %s, want the name unpadded", lines[0])
			}
			continue
		}
		for i, l := range lines {
			if !strings.Contains(l, names[i]) {
				t.Errorf("line %d lacks %s: %q", i, names[i], l)
			}
		}
		if a, b := strings.Index(lines[0], " 1 "), strings.Index(lines[1], " 1 "); a != b || a < 0 {
			t.Errorf("the sequence numbers are at columns %d and %d:\n%s", a, b, buf.String())
		}
	}
}

func TestAnEventLineSaysItsLagBucketWhenKnown(t *testing.T) {
	res := &store.Result{Outcome: store.Modified, Object: &store.Object{Namespace: "ns", Name: "a", UID: "u", ResourceVersion: "7"}}
	n := reflector.Note{Seq: 1, Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: res,
		Delivery: reflector.Delivery{Written: time.Unix(1, 0), Lag: 4200 * time.Millisecond}}
	if got := textLine("configmaps.v1", n); !strings.Contains(got, "(modified) lag 2-5s") {
		t.Errorf("text line %q, want the lag's bucket", got)
	}
	b, err := jsonLine("configmaps.v1", n)
	if err != nil || !strings.Contains(string(b), `"lag":"2-5s"`) {
		t.Errorf("JSON line %s (%v), want the lag's bucket", b, err)
	}
	n.Delivery = reflector.Delivery{}
	if got := textLine("configmaps.v1", n); strings.Contains(got, "lag") {
		t.Errorf("an event without a write time: %q", got)
	}
}

// A diffed event's line names who wrote each change; a removed path's
// manager is the one that had set it (the object does not say who removed
// it), and the line says so.
func TestADiffLineSaysWhoSetARemovedPath(t *testing.T) {
	res := &store.Result{Outcome: store.Modified, Object: &store.Object{Namespace: "ns", Name: "c1", UID: "u", ResourceVersion: "9"}}
	n := reflector.Note{Seq: 1, Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: res, Changes: &diff.Changes{Paths: []diff.Change{
		{Path: ".data.k", Op: diff.Removed, Old: []byte(`"v"`), Manager: "kubectl-create", Operation: "Update"},
		{Path: ".data.n", Op: diff.Changed, Old: []byte(`"1"`), New: []byte(`"2"`), Manager: "kubectl-patch", Operation: "Update"},
	}}}
	got := diffText("configmaps.v1", n)
	if !strings.Contains(got, `.data.k removed (was "v") last set by kubectl-create`) || !strings.Contains(got, `.data.n "1"→"2" by kubectl-patch`) {
		t.Errorf("line %q", got)
	}
}

// A JSON line says what the text line says, as a person greps for it:
// "sync>1ms" and "<2s", not "sync\u003e1ms" and "\u003c2s".
func TestJSONLinesDoNotEscapeWhatAPersonGrepsFor(t *testing.T) {
	alert := reflector.Note{Seq: 3, Kind: reflector.NoteDecision, Decision: &reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonAlert,
		Cause: "sync>1ms tripped on configmaps.v1 in namespace h43: sync is 12ms"}}
	event := reflector.Note{Seq: 4, Kind: reflector.NoteApplied, Event: reflector.EventModified,
		Applied:  &store.Result{Outcome: store.Modified, Object: &store.Object{Namespace: "ns", Name: "a&b", UID: "u", ResourceVersion: "7"}},
		Delivery: reflector.Delivery{Written: time.Unix(1, 0), Lag: time.Second}}
	for _, c := range []struct {
		n    reflector.Note
		want string
	}{{alert, "--fail-on sync>1ms tripped"}, {event, `"lag":"<2s"`}, {event, `"a&b"`}} {
		b, err := jsonLine("configmaps.v1", c.n)
		if err != nil || !strings.Contains(string(b), c.want) || bytes.Contains(b, []byte(`\u00`)) {
			t.Errorf("JSON line %s (%v), want %s as it is", b, err, c.want)
		}
	}
}

// A client-left or client-gone line's state column says the client left,
// as the dashboard's "○ left" does: the stream keeps the state it was in
// ("it was Watching" in the sentence), which no client holds any more. Its
// JSON line keeps that state and adds clientAway.
func TestAClientThatLeftIsLeftInTheStateColumn(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, d := range []*reflector.Decision{
		{State: reflector.StateWatching, Reason: reflector.ReasonClientLeft, Wait: 5 * time.Second, Cause: "Watching"},
		{State: reflector.StateWatching, Reason: reflector.ReasonClientGone, Wait: time.Minute, Objects: 3},
	} {
		n := reflector.Note{Seq: 9, At: at, Kind: reflector.NoteDecision, State: d.State, Decision: d}
		text := textLine("pods.v1", n)
		if _, rest, _ := strings.Cut(text, "pods.v1      9 "); !strings.HasPrefix(rest, "left          "+string(d.Reason)+": ") {
			t.Errorf("%s: got %q, want the state column to read left", d.Reason, text)
		}
		b, err := jsonLine("pods.v1", n)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(b); !strings.Contains(s, `"state":"Watching","clientAway":true,"reason":"`+string(d.Reason)+`"`) {
			t.Errorf("%s: JSON line %s, want state Watching (as before) and clientAway", d.Reason, s)
		}
	}
	// The client back, its stream goes on in its state.
	back := reflector.Note{Seq: 10, At: at, Kind: reflector.NoteDecision, State: reflector.StateWatching,
		Decision: &reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonClientBack, Wait: time.Second}}
	if text := textLine("pods.v1", back); !strings.Contains(text, "Watching      client-back: ") {
		t.Errorf("client-back: got %q", text)
	}
	if b, _ := jsonLine("pods.v1", back); strings.Contains(string(b), "clientAway") {
		t.Errorf("client-back: JSON line %s has clientAway", b)
	}
}

// A finding can be raised after the run's output is closed (a FlowSchema
// named by a lookup that outlived the run): pushing it, or a note, after
// Close neither panics nor prints.
func TestALinePushedAfterCloseIsNotPrinted(t *testing.T) {
	var buf bytes.Buffer
	out := NewOutput(&buf, false, "configmaps.v1")
	out.Close()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("a push after Close panicked: %v", r)
		}
	}()
	out.Finding("configmaps.v1")(findings.Finding{ID: findings.Throttled})
	out.For("configmaps.v1")(reflector.Note{Seq: 1, Kind: reflector.NoteDecision,
		Decision: &reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialList}})
	if buf.Len() != 0 {
		t.Errorf("printed after Close:\n%s", buf.String())
	}
}

// The first lines of a resource dropped are said too: its notes are
// numbered from 1, so a first line numbered 3 follows two dropped.
func TestTheFirstLinesDroppedAreSaid(t *testing.T) {
	note := reflector.Note{Seq: 3, Kind: reflector.NoteDecision,
		Decision: &reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialList}}
	for asJSON, want := range map[bool]string{false: "configmaps.v1      1 2 lines dropped here", true: `{"seq":1,"resource":"configmaps.v1",`} {
		var buf bytes.Buffer
		out := NewOutput(&buf, asJSON, "configmaps.v1")
		out.For("configmaps.v1")(note)
		out.Close()
		if first, _, _ := strings.Cut(buf.String(), "\n"); !strings.Contains(first, want) || (asJSON && !strings.Contains(first, `"type":"dropped","dropped":2`)) {
			t.Errorf("JSON %v: the first line is %q, want the 2 lines from 1 said dropped", asJSON, first)
		}
	}
}

// A text line carries what a proxied client chose: its control characters
// are escaped, never written to the terminal.
func TestATextLineEscapesTheControlCharactersAClientSent(t *testing.T) {
	var buf bytes.Buffer
	out := NewOutput(&buf, false, "configmaps.v1")
	out.For("configmaps.v1")(reflector.Note{Seq: 1, Kind: reflector.NoteRequestStarted,
		Request: &reflector.RequestInfo{ID: 1, Verb: reflector.VerbList, Opts: reflector.RequestOptions{Limit: 1, Continue: "\x1b]0;PWNED\a\x1b[31mCONT"}}})
	out.Close()
	if got := buf.String(); strings.ContainsAny(got, "\x1b\a") || !strings.Contains(got, `continue=\x1b]0;PWNED\x07\x1b[31mCONT`) {
		t.Errorf("got %q, want the continue token's ESC and BEL escaped", got)
	}
}
