package tui

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
)

// The scenarios' clusters start on the first end-to-end test that asks for them.
var (
	withCache    = testcluster.NewLazy(testcluster.Options{})
	withoutCache = testcluster.NewLazy(testcluster.Options{DisableWatchCache: true})
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, withCache, withoutCache)) }

// outputs are everything a run shows: the reflector's notes as they came,
// the text and JSON lines, and (built from the notes afterwards) the
// dashboard's log.
type outputs struct {
	mu                 sync.Mutex
	notes              []reflector.Note
	textBuf, jsonBuf   bytes.Buffer
	textOut, jsonOut   *lineout.Output
	textLost, jsonLost int64
}

func newOutputs() *outputs {
	o := &outputs{}
	o.textOut, o.jsonOut = lineout.NewOutput(&o.textBuf, false), lineout.NewOutput(&o.jsonBuf, true)
	return o
}

func (o *outputs) listeners() []func(reflector.Note) {
	return []func(reflector.Note){func(n reflector.Note) {
		o.mu.Lock()
		o.notes = append(o.notes, n)
		o.mu.Unlock()
	}, o.textOut.Push, o.jsonOut.Push}
}

func (o *outputs) close() { o.textLost, o.jsonLost = o.textOut.Close(), o.jsonOut.Close() }

// check asserts the causal order on every line of every output.
func (o *outputs) check(t *testing.T, run string) {
	t.Helper()
	if o.textLost+o.jsonLost > 0 {
		t.Logf("%s: %d text and %d JSON lines dropped (marked where they are missing)", run, o.textLost, o.jsonLost)
	}
	if err := causal.Check(causal.FromNotes(o.notes)); err != nil {
		t.Errorf("%s, the notes: %v", run, err)
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
	if len(text) != len(o.notes) || len(js) != len(o.notes) {
		t.Errorf("%s: %d notes, %d text lines, %d JSON lines", run, len(o.notes), len(text), len(js))
	}
	// The dashboard takes the notes in batches, as its reader delivers them.
	m := New(Options{LogSize: 1 << 20, TrackedObjects: 100}, Resource{})
	defer m.Close()
	for rest := o.notes; len(rest) > 0; {
		n := min(len(rest), maxBatch)
		m = update(m, notesMsg{notes: rest[:n]})
		rest = rest[n:]
	}
	if err := causal.Check(logLines(m)); err != nil {
		t.Errorf("%s, the dashboard's log: %v", run, err)
	}
}

// logLines reads the dashboard's log for the check.
func logLines(m Model) []causal.Line {
	out := make([]causal.Line, 0, m.log.entries.len())
	for i := range m.log.entries.len() {
		e := m.log.entries.at(i)
		l := causal.Line{Seq: e.seq, Request: e.req}
		switch {
		case e.dropped > 0:
			l.Kind, l.Count = causal.Dropped, e.dropped
		case e.note != nil:
			l = causal.FromNotes([]reflector.Note{*e.note})[0]
		case e.kind == kindList:
			l.Kind, l.Reason = causal.Decision, reflector.ReasonListComplete
		case e.kind == kindRelist:
			l.Kind, l.Reason = causal.Decision, reflector.ReasonRelistDiff
		case e.kind == kindAudit:
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
			if _, err := sc.Record(ctx, c, path, live.listeners()...); err != nil {
				t.Fatal(err)
			}
			live.close()
			live.check(t, "live")

			replayed := newOutputs()
			sess, err := session.NewReplay(path, 0, replayed.listeners()...)
			if err != nil {
				t.Fatal(err)
			}
			if err := sess.Run(ctx); err != nil {
				t.Fatalf("replay: %v", err)
			}
			replayed.close()
			replayed.check(t, "replayed")
			if len(live.notes) == 0 || len(replayed.notes) == 0 {
				t.Fatalf("%d live and %d replayed notes", len(live.notes), len(replayed.notes))
			}
		})
	}
}
