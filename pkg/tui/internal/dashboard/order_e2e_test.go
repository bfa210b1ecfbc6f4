package dashboard

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/causal"
	lineout "github.com/kubectl-watchcache/kubectl-watchcache/internal/lines"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/scenarios"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/logpane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// The scenarios' clusters start on the first end-to-end test that asks for them.
var (
	withCache    = testcluster.NewLazy(testcluster.Options{})
	withoutCache = testcluster.NewLazy(testcluster.Options{DisableWatchCache: true})
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, withCache, withoutCache)) }

// outputs are everything a run shows: each resource's notes as they came,
// the text and JSON lines, and (built from the notes afterwards) each
// resource's dashboard log.
type outputs struct {
	mu                 sync.Mutex
	names              []string
	notes              map[int][]reflector.Note
	textBuf, jsonBuf   bytes.Buffer
	textOut, jsonOut   *lineout.Output
	textLost, jsonLost int64
}

func newOutputs() *outputs {
	o := &outputs{notes: map[int][]reflector.Note{}}
	o.textOut, o.jsonOut = lineout.NewOutput(&o.textBuf, false), lineout.NewOutput(&o.jsonBuf, true)
	return o
}

// listen is the listener of resource i's notes.
func (o *outputs) listen(names []string) func(int, reflector.Note) {
	o.names = names
	text, js := make([]func(reflector.Note), len(names)), make([]func(reflector.Note), len(names))
	for i, name := range names {
		text[i], js[i] = o.textOut.For(name), o.jsonOut.For(name)
	}
	return func(i int, n reflector.Note) {
		o.mu.Lock()
		o.notes[i] = append(o.notes[i], n)
		o.mu.Unlock()
		text[i](n)
		js[i](n)
	}
}

func (o *outputs) close() { o.textLost, o.jsonLost = o.textOut.Close(), o.jsonOut.Close() }

// check asserts the causal order on every line of every output.
func (o *outputs) check(t *testing.T, run string) {
	t.Helper()
	if o.textLost+o.jsonLost > 0 {
		t.Logf("%s: %d text and %d JSON lines dropped (marked where they are missing)", run, o.textLost, o.jsonLost)
	}
	total := 0
	for i, name := range o.names {
		notes := o.notes[i]
		lines := causal.FromNotes(notes) // fact notes share their Seq and print no line
		total += len(lines)
		for j := range lines {
			lines[j].Resource = name
		}
		if err := causal.Check(lines); err != nil {
			t.Errorf("%s, the notes: %v", run, err)
		}
		// The dashboard takes the notes in batches, as its reader delivers them.
		m := newAlone(program.Options{LogSize: 1 << 20, TrackedObjects: 100}, program.Resource{})
		for rest := notes; len(rest) > 0; {
			n := min(len(rest), maxBatch)
			m = update(m, program.NotesMsg{Notes: rest[:n]})
			rest = rest[n:]
		}
		if err := causal.Check(logLines(m)); err != nil {
			t.Errorf("%s, %s's dashboard log: %v", run, name, err)
		}
		m.Close()
	}
	text, err := causal.FromText(o.textBuf.Bytes())
	if err != nil {
		t.Fatalf("%s, reading the text lines: %v", run, err)
	}
	if err := causal.Check(text); err != nil {
		t.Errorf("%s, the text lines: %v", run, err)
	}
	js, err := causal.FromJSON(o.jsonBuf.Bytes())
	if err != nil {
		t.Fatalf("%s, reading the JSON lines: %v", run, err)
	}
	if err := causal.Check(js); err != nil {
		t.Errorf("%s, the JSON lines: %v", run, err)
	}
	if len(text) != total || len(js) != total {
		t.Errorf("%s: %d notes that print, %d text lines, %d JSON lines", run, total, len(text), len(js))
	}
}

// logLines reads the dashboard's log for the check.
func logLines(m Model) []causal.Line {
	out := make([]causal.Line, 0, m.Log.Entries.Len())
	for i := range m.Log.Entries.Len() {
		e := m.Log.Entries.At(i)
		l := causal.Line{Seq: e.Seq, Request: e.Req}
		switch {
		case e.Dropped > 0:
			l.Kind, l.Count = causal.Dropped, e.Dropped
		case e.Note != nil:
			l = causal.FromNotes([]reflector.Note{*e.Note})[0]
		case e.Kind == logpane.KindList:
			l.Kind, l.Reason = causal.Decision, reflector.ReasonListComplete
		case e.Kind == logpane.KindRelist:
			l.Kind, l.Reason = causal.Decision, reflector.ReasonRelistDiff
		case e.Kind == logpane.KindAudit:
			l.Kind = causal.Audit
		default:
			l.Kind = causal.Event
		}
		out = append(out, l)
	}
	return out
}

// TestE2EEveryLineIsInCausalOrderLiveAndReplayed records each scenario from
// a real kube-apiserver, then replays its trace, and checks every line each
// run showed: the notes, the text lines, the JSON lines and the dashboard's
// log. A request's start comes before its events, its events before its end,
// and the decisions it caused (a 410, a relist's result) after it.
func TestE2EEveryLineIsInCausalOrderLiveAndReplayed(t *testing.T) {
	for _, sc := range scenarios.All() {
		t.Run(sc.Name, func(t *testing.T) {
			c := withCache.Get(t)
			if sc.NeedsNoWatchCache {
				c = withoutCache.Get(t)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			path := filepath.Join(t.TempDir(), sc.Name+".jsonl")
			live := newOutputs()
			var onNote func(int, reflector.Note)
			names := func(h trace.Header) []string {
				var out []string
				for _, r := range h.Resources {
					out = append(out, r.Resource.String())
				}
				return out
			}
			// The live run's resources are known once it started: take them from its trace.
			liveNotes := map[int][]reflector.Note{}
			var mu sync.Mutex
			onNote = func(i int, n reflector.Note) {
				mu.Lock()
				liveNotes[i] = append(liveNotes[i], n)
				mu.Unlock()
			}
			if _, err := sc.Record(ctx, c, path, onNote); err != nil {
				t.Fatal(err)
			}
			rd, err := trace.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			resourceNames := names(rd.Header())
			_ = rd.Close()
			push := live.listen(resourceNames)
			for i := range resourceNames {
				for _, n := range liveNotes[i] {
					push(i, n)
				}
			}
			live.close()
			live.check(t, "live")

			replayed := newOutputs()
			sess, err := session.NewReplay(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			push = replayed.listen(resourceNames)
			for i, r := range sess.Resources {
				r.OnNote(func(n reflector.Note) { push(i, n) })
			}
			if err := sess.Run(ctx); err != nil {
				t.Fatalf("replay: %v", err)
			}
			replayed.close()
			replayed.check(t, "replayed")
			if len(live.notes[0]) == 0 || len(replayed.notes[0]) == 0 {
				t.Fatalf("%d live and %d replayed notes", len(live.notes[0]), len(replayed.notes[0]))
			}
		})
	}
}
