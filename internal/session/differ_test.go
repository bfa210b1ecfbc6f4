package session

import (
	"context"
	"fmt"
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
