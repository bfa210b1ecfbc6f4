package store

import (
	"fmt"
	"slices"
	"testing"
)

func obj(ns, name, uid, rv string) *Object {
	return &Object{Namespace: ns, Name: name, UID: uid, ResourceVersion: rv}
}

func evInit() Event               { return Event{Type: Init} }
func evInitApply(o *Object) Event { return Event{Type: InitApply, Object: o} }
func evInitDone(rv string) Event  { return Event{Type: InitDone, ResourceVersion: rv} }
func evApply(o *Object) Event     { return Event{Type: Apply, Object: o} }
func evDelete(o *Object) Event    { return Event{Type: Delete, Object: o} }
func evBookmark(rv string) Event  { return Event{Type: Bookmark, ResourceVersion: rv} }
func list(rv string, objs ...*Object) []Event {
	evs := []Event{evInit()}
	for _, o := range objs {
		evs = append(evs, evInitApply(o))
	}
	return append(evs, evInitDone(rv))
}

// applyAll applies events that must all be valid and returns their outcomes.
func applyAll(t *testing.T, w *Writer, evs ...Event) []Outcome {
	t.Helper()
	var got []Outcome
	for i, ev := range evs {
		r, err := w.ApplyEvent(ev)
		if err != nil {
			t.Fatalf("event %d (%v): %v", i, ev.Type, err)
		}
		got = append(got, r.Outcome)
	}
	return got
}

// describe renders objects as sorted "ref uid rv" lines for comparisons.
func describe(objs []*Object) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, fmt.Sprintf("%s %s %s", o.Ref(), o.UID, o.ResourceVersion))
	}
	slices.Sort(out)
	return out
}
