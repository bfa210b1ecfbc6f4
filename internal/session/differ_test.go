package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// scripted is a Source whose list and watch answer what a test says.
type scripted struct {
	page   *reflector.Page
	events []reflector.WatchEvent
}

func (s *scripted) List(context.Context, reflector.RequestOptions) (*reflector.Page, error) {
	return s.page, nil
}

func (s *scripted) Watch(context.Context, reflector.RequestOptions) (reflector.Stream, error) {
	return &scriptedStream{events: s.events}, nil
}

type scriptedStream struct{ events []reflector.WatchEvent }

func (s *scriptedStream) Next() (reflector.WatchEvent, error) {
	if len(s.events) == 0 {
		return reflector.WatchEvent{}, &reflector.RequestEnd{Reason: reflector.EndClosed}
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

func (s *scriptedStream) Close() {}

func item(name, uid, rv, value string) reflector.Item {
	return reflector.Item{Object: &store.Object{Namespace: "ns", Name: name, UID: uid, ResourceVersion: rv},
		Raw: []byte(fmt.Sprintf(`{"metadata":{"name":%q,"uid":%q,"resourceVersion":%q},"data":{"v":%q}}`, name, uid, rv, value))}
}

func ev(typ reflector.EventType, it reflector.Item) reflector.WatchEvent {
	return reflector.WatchEvent{Type: typ, Item: it}
}

func TestDifferDiffsOnlyTheSameObjectAndHoldsNoMoreThanItsCap(t *testing.T) {
	src := &scripted{
		page: &reflector.Page{Items: []reflector.Item{item("a", "u1", "1", "x"), item("b", "u2", "2", "x")}},
		events: []reflector.WatchEvent{
			ev(reflector.EventModified, item("a", "u1", "3", "y")), // diffed
			ev(reflector.EventModified, item("b", "u9", "4", "y")), // a recreate whose delete was missed
			ev(reflector.EventDeleted, item("a", "u1", "5", "y")),  // forgotten
			ev(reflector.EventModified, item("a", "u1", "6", "z")), // nothing held
			ev(reflector.EventAdded, item("c", "u3", "7", "x")),    // over the cap of 2: not held
			ev(reflector.EventModified, item("c", "u3", "8", "y")), // so not diffed
			ev(reflector.EventModified, item("b", "u9", "9", "z")), // held since its recreate
		},
	}
	d := newDiffer(src, DiffOptions{MaxObjects: 2}, reflector.Resource{})
	if _, err := d.List(context.Background(), reflector.RequestOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := d.Watch(context.Background(), reflector.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []*diff.Changes
	for {
		e, err := st.Next()
		if err != nil {
			break
		}
		if e.Type == reflector.EventModified {
			got = append(got, e.Changes)
		}
	}
	want := []string{"", diff.SkipOtherUID, diff.SkipNoPrevious, diff.SkipCap, ""}
	if len(got) != len(want) {
		t.Fatalf("%d MODIFIED events, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i] == nil || got[i].Skipped != w {
			t.Errorf("event %d: %+v, want skipped %q", i, got[i], w)
		}
	}
	if v := got[0].Visible(); len(v) != 1 || v[0].Path != ".data.v" || string(v[0].Old) != `"x"` || string(v[0].New) != `"y"` {
		t.Errorf("the diff of a: %+v", got[0])
	}
	if v := got[4].Visible(); len(v) != 1 || string(v[0].Old) != `"y"` {
		t.Errorf("b after its recreate: %+v", got[4])
	}
	// A relist starts afresh: what is not listed again is not held.
	src.page = &reflector.Page{Items: []reflector.Item{item("b", "u9", "10", "z")}}
	if _, err := d.List(context.Background(), reflector.RequestOptions{}); err != nil {
		t.Fatal(err)
	}
	if d.v.Len() != 1 {
		t.Errorf("after a relist of one object, %d held", d.v.Len())
	}
}

func TestDifferPassesRecordedChangesAsTheyCame(t *testing.T) {
	recorded := &diff.Changes{Paths: []diff.Change{{Path: ".data.v", Op: diff.Changed}}}
	e := ev(reflector.EventModified, item("a", "u1", "3", "y"))
	e.Changes = recorded
	d := newDiffer(&scripted{page: &reflector.Page{}, events: []reflector.WatchEvent{e}}, DiffOptions{}, reflector.Resource{})
	st, _ := d.Watch(context.Background(), reflector.RequestOptions{})
	got, err := st.Next()
	if err != nil || got.Changes != recorded {
		t.Fatalf("%+v %v", got.Changes, err)
	}
}

// A replay with --diff of a recording stopped during a backoff stops there,
// as the replay without it does: the differ passes on its source's
// reflector.Stopper, so no WATCH the recording never made is sent.
func TestAReplayWithDiffStopsWhereTheRecordingStopped(t *testing.T) {
	b, err := os.ReadFile("../../testdata/traces/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// The demo with whole objects (a diffing replay needs them), cut after
	// its first backoff, where the run is then stopped.
	var cut []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if len(cut) == 0 {
			l = strings.Replace(l, `"objects":"metadata"`, `"objects":"full"`, 1)
		}
		cut = append(cut, l)
		if strings.Contains(l, `"reason":"backoff"`) {
			break
		}
	}
	if !strings.Contains(cut[len(cut)-1], `"reason":"backoff"`) || !strings.Contains(cut[0], `"objects":"full"`) {
		t.Fatal("the demo trace has no backoff, or its header no objects")
	}
	cut = append(cut, `{"k":"note","at":5400000000,"reason":"stopped","state":"Stopped","detail":"stopped"}`+"\n")
	path := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(cut, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	replay := func(d *DiffOptions) (reflector.Stats, []string) {
		s, err := NewReplayDiffing(path, 0, d)
		if err != nil {
			t.Fatal(err)
		}
		var decisions []string
		s.Resources[0].OnNote(func(n reflector.Note) {
			if n.Decision != nil {
				decisions = append(decisions, string(n.Decision.Reason))
			}
		})
		if err := s.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if d != nil && s.Replay.DifferencesSoFar() != 0 {
			t.Errorf("the replay with --diff diverged from the recording %d times", s.Replay.DifferencesSoFar())
		}
		return s.Resources[0].Stats(), decisions
	}
	plain, plainDecisions := replay(nil)
	diffed, diffedDecisions := replay(&DiffOptions{MaxObjects: DefaultDiffMaxObjects})
	if diffed.Counters.Watches != plain.Counters.Watches {
		t.Errorf("%d WATCHes with --diff, %d without", diffed.Counters.Watches, plain.Counters.Watches)
	}
	if !slices.Equal(diffedDecisions, plainDecisions) {
		t.Errorf("decisions with --diff:\n%v\nwithout:\n%v", diffedDecisions, plainDecisions)
	}
}
