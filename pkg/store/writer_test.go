package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestWriterAppliesEventsByTheReflectorRules(t *testing.T) {
	a10 := obj("default", "a", "uid-a", "10")
	a11 := obj("default", "a", "uid-a", "11")
	a12 := obj("default", "a", "uid-a", "12")
	b10 := obj("default", "b", "uid-b", "10")
	c122 := obj("default", "c", "uid-c", "122")
	w1 := obj("jobs", "worker-a", "uid-1", "20")
	w1del := obj("jobs", "worker-a", "uid-1", "21")
	w2 := obj("jobs", "worker-a", "uid-2", "22")

	tests := []struct {
		name        string
		events      []Event
		want        []Outcome
		wantObjects []string
	}{
		{
			name: "a list then watch events leave the listed objects updated by the watch",
			events: append(list("120",
				obj("default", "a", "uid-a", "100"), obj("default", "b", "uid-b", "101")),
				evApply(obj("default", "a", "uid-a", "121")), evApply(c122)),
			want:        []Outcome{RelistStarted, Buffered, Buffered, Relisted, Modified, Added},
			wantObjects: []string{"default/a uid-a 121", "default/b uid-b 101", "default/c uid-c 122"},
		},
		{
			name:        "a late delete of an older uid leaves the new instance and counts one mismatch",
			events:      append(list("19", w1), evDelete(w1del), evApply(w2), evDelete(w1del)),
			want:        []Outcome{RelistStarted, Buffered, Relisted, Deleted, Added, StaleDelete},
			wantObjects: []string{"jobs/worker-a uid-2 22"},
		},
		{
			name:        "the same apply delivered twice changes nothing and counts a duplicate",
			events:      []Event{evApply(a10), evApply(obj("default", "a", "uid-a", "10"))},
			want:        []Outcome{Added, Duplicate},
			wantObjects: []string{"default/a uid-a 10"},
		},
		{
			name:        "an apply with another uid replaces the entry and counts a mismatch",
			events:      []Event{evApply(w1), evApply(w2)},
			want:        []Outcome{Added, Replaced},
			wantObjects: []string{"jobs/worker-a uid-2 22"},
		},
		{
			name:        "an apply whose resourceVersion looks older is applied all the same",
			events:      []Event{evApply(a12), evApply(a11)},
			want:        []Outcome{Added, Modified},
			wantObjects: []string{"default/a uid-a 11"},
		},
		{
			name:   "a delete of the same uid removes the entry whatever its resourceVersion",
			events: []Event{evApply(a10), evDelete(a12)},
			want:   []Outcome{Added, Deleted},
		},
		{
			name:   "a delete without an entry changes nothing",
			events: []Event{evApply(b10), evDelete(a10), evDelete(b10), evDelete(b10)},
			want:   []Outcome{Added, AbsentDelete, Deleted, AbsentDelete},
		},
		{
			name: "a bookmark never changes stored objects",
			// LIST rv=10, MODIFIED rv=11, DELETED rv=12, BOOKMARK rv=12.
			events:      append(list("10", a10, b10), evApply(a11), evDelete(obj("default", "b", "uid-b", "12")), evBookmark("12")),
			want:        []Outcome{RelistStarted, Buffered, Buffered, Relisted, Modified, Deleted, Ignored},
			wantObjects: []string{"default/a uid-a 11"},
		},
		{
			name: "applies and deletes during a relist act at once and the list then replaces them",
			events: append(list("10", a10),
				evInit(), evInitApply(a12), evApply(b10), evDelete(a10), evInitDone("12")),
			want:        []Outcome{RelistStarted, Buffered, Relisted, RelistStarted, Buffered, Added, Deleted, Relisted},
			wantObjects: []string{"default/a uid-a 12"},
		},
		{
			name:        "an init during a relist restarts the buffer",
			events:      []Event{evInit(), evInitApply(a10), evInit(), evInitApply(b10), evInitDone("10")},
			want:        []Outcome{RelistStarted, Buffered, RelistStarted, Buffered, Relisted},
			wantObjects: []string{"default/b uid-b 10"},
		},
		{
			name:        "a relist drops the objects missing from the new list",
			events:      append(list("10", a10, b10, w1), list("30", b10)...),
			want:        []Outcome{RelistStarted, Buffered, Buffered, Buffered, Relisted, RelistStarted, Buffered, Relisted},
			wantObjects: []string{"default/b uid-b 10"},
		},
		{
			name:        "the later of two listed objects under one ref wins",
			events:      list("12", a10, a12),
			want:        []Outcome{RelistStarted, Buffered, Buffered, Relisted},
			wantObjects: []string{"default/a uid-a 12"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, w := New()
			got := applyAll(t, w, tt.events...)
			if !slices.Equal(got, tt.want) {
				t.Errorf("outcomes: got %v, want %v", got, tt.want)
			}
			if got := describe(st.List()); !slices.Equal(got, tt.wantObjects) {
				t.Errorf("objects: got %q, want %q", got, tt.wantObjects)
			}
			if got, want := st.Counters().Objects, len(tt.wantObjects); got != want {
				t.Errorf("Counters.Objects: got %d, want %d", got, want)
			}
			if got, want := st.Len(), len(tt.wantObjects); got != want {
				t.Errorf("Len: got %d, want %d", got, want)
			}
		})
	}
}

func TestADuplicateApplyKeepsTheCachedObject(t *testing.T) {
	st, w := New()
	first := obj("default", "a", "uid-a", "10")
	again := obj("default", "a", "uid-a", "10")
	applyAll(t, w, evApply(first))
	r, err := w.ApplyEvent(evApply(again))
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != Duplicate || r.Previous != first {
		t.Errorf("result: got %v previous %p, want Duplicate previous %p", r.Outcome, r.Previous, first)
	}
	if got, _ := st.Get(first.Ref()); got != first {
		t.Errorf("Get: got %p, want the first object %p", got, first)
	}
}

func TestReadersKeepTheOldSnapshotUntilInitDone(t *testing.T) {
	st, w := New()
	a := obj("default", "a", "uid-a", "10")
	b := obj("default", "b", "uid-b", "10")
	c := obj("default", "c", "uid-c", "20")
	applyAll(t, w, list("10", a, b)...)

	applyAll(t, w, evInit(), evInitApply(c))
	if got, want := describe(st.List()), []string{"default/a uid-a 10", "default/b uid-b 10"}; !slices.Equal(got, want) {
		t.Errorf("during the relist List: got %q, want the old snapshot %q", got, want)
	}
	if _, ok := st.Get(c.Ref()); ok {
		t.Errorf("during the relist Get(%s): found a buffered object", c.Ref())
	}
	if got, want := st.Len(), 2; got != want {
		t.Errorf("during the relist Len: got %d, want %d", got, want)
	}
	if !st.Ready() {
		t.Errorf("during the relist Ready: got false, want true (a ready cache stays ready)")
	}

	applyAll(t, w, evInitDone("20"))
	if got, want := describe(st.List()), []string{"default/c uid-c 20"}; !slices.Equal(got, want) {
		t.Errorf("after InitDone List: got %q, want %q", got, want)
	}
}

func TestRelistDiffNamesMissedDeletesRecreatesUpdatesAndAdds(t *testing.T) {
	_, w := New()
	applyAll(t, w, list("100",
		obj("ns", "gone", "uid-g", "1"),
		obj("ns", "recreated", "uid-r1", "2"),
		obj("ns", "updated", "uid-u", "3"),
		obj("ns", "same", "uid-s", "4"),
		obj("a", "gone-too", "uid-g2", "5"),
	)...)
	evs := list("200",
		obj("ns", "recreated", "uid-r2", "150"),
		obj("ns", "updated", "uid-u", "160"),
		obj("ns", "same", "uid-s", "4"),
		obj("ns", "new", "uid-n", "170"),
	)
	var r Result
	for _, ev := range evs {
		var err error
		if r, err = w.ApplyEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	want := &RelistDiff{
		ResourceVersion: "200",
		Before:          5,
		After:           4,
		Deleted: []DiffEntry{
			{Ref: Ref{"a", "gone-too"}, OldUID: "uid-g2", OldResourceVersion: "5"},
			{Ref: Ref{"ns", "gone"}, OldUID: "uid-g", OldResourceVersion: "1"},
		},
		Recreated: []DiffEntry{{Ref: Ref{"ns", "recreated"}, OldUID: "uid-r1", NewUID: "uid-r2", OldResourceVersion: "2", NewResourceVersion: "150"}},
		Updated:   []DiffEntry{{Ref: Ref{"ns", "updated"}, OldUID: "uid-u", NewUID: "uid-u", OldResourceVersion: "3", NewResourceVersion: "160"}},
		Added:     []DiffEntry{{Ref: Ref{"ns", "new"}, NewUID: "uid-n", NewResourceVersion: "170"}},
		Unchanged: 1,
	}
	if r.Outcome != Relisted {
		t.Fatalf("InitDone outcome: got %v, want Relisted", r.Outcome)
	}
	if !diffEqual(r.Diff, want) {
		t.Errorf("diff:\n got %+v\nwant %+v", r.Diff, want)
	}
	if got, want := r.Diff.Missed(), 5; got != want {
		t.Errorf("Missed: got %d, want %d", got, want)
	}
}

func diffEqual(a, b *RelistDiff) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ResourceVersion == b.ResourceVersion && a.Before == b.Before && a.After == b.After &&
		a.Unchanged == b.Unchanged && slices.Equal(a.Deleted, b.Deleted) &&
		slices.Equal(a.Recreated, b.Recreated) && slices.Equal(a.Updated, b.Updated) &&
		slices.Equal(a.Added, b.Added)
}

func TestInvalidEventsAreRejectedAndChangeNothing(t *testing.T) {
	tests := []struct {
		name string
		ev   Event
	}{
		{"an InitApply without Init", evInitApply(obj("ns", "a", "u", "1"))},
		{"an InitDone without Init", evInitDone("1")},
		{"an Apply without an object", Event{Type: Apply}},
		{"a Delete without an object", Event{Type: Delete}},
		{"an Apply of an object without a name", evApply(obj("ns", "", "u", "1"))},
		{"an unknown event type", Event{Type: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, w := New()
			applyAll(t, w, list("1", obj("ns", "kept", "uid-k", "1"))...)
			before := st.Counters()
			_, err := w.ApplyEvent(tt.ev)
			if !errors.Is(err, ErrInvalidEvent) {
				t.Fatalf("error: got %v, want one wrapping ErrInvalidEvent", err)
			}
			if got := st.Counters(); got != before {
				t.Errorf("counters changed: got %+v, want %+v", got, before)
			}
			if got, want := describe(st.List()), []string{"ns/kept uid-k 1"}; !slices.Equal(got, want) {
				t.Errorf("objects: got %q, want %q", got, want)
			}
		})
	}
}

func TestListReturnsASnapshotThatNeverChangesAfterwards(t *testing.T) {
	st, w := New()
	applyAll(t, w, list("1", obj("ns", "a", "uid-a", "1"), obj("ns", "b", "uid-b", "1"))...)
	snap := st.List()
	want := describe(snap)
	applyAll(t, w, evApply(obj("ns", "a", "uid-a", "2")), evDelete(obj("ns", "b", "uid-b", "3")),
		evApply(obj("ns", "c", "uid-c", "4")))
	applyAll(t, w, list("9", obj("ns", "z", "uid-z", "9"))...)
	if got := describe(snap); !slices.Equal(got, want) {
		t.Errorf("snapshot changed: got %q, want %q", got, want)
	}
}

func TestStoreIsReadyOnlyAfterTheFirstInitDone(t *testing.T) {
	st, w := New()
	if st.Ready() {
		t.Fatal("Ready right after New: got true, want false")
	}
	if got := st.List(); len(got) != 0 {
		t.Fatalf("List right after New: got %d objects, want none", len(got))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := st.WaitUntilReady(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitUntilReady with a canceled context: got %v, want one wrapping context.Canceled", err)
	}
	applyAll(t, w, evInit(), evInitApply(obj("ns", "a", "u", "1")))
	if st.Ready() {
		t.Error("Ready during the first list: got true, want false")
	}

	done := make(chan error, 1)
	go func() { done <- st.WaitUntilReady(context.Background()) }()
	applyAll(t, w, evInitDone("1"))
	if err := <-done; err != nil {
		t.Errorf("WaitUntilReady: got %v, want nil", err)
	}
	if !st.Ready() || st.Len() != 1 {
		t.Errorf("after the first InitDone: Ready %v Len %d, want true 1", st.Ready(), st.Len())
	}
}

func TestWaitUntilReadyEndsWhenTheWriterClosesFirst(t *testing.T) {
	st, w := New()
	done := make(chan error, 1)
	go func() { done <- st.WaitUntilReady(context.Background()) }()
	w.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("WaitUntilReady: got %v, want one wrapping ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitUntilReady still waiting after Writer.Close")
	}
}

func TestAClosedWriterRejectsEventsAndKeepsTheLastSnapshot(t *testing.T) {
	st, w := New()
	applyAll(t, w, list("1", obj("ns", "a", "uid-a", "1"))...)
	w.Close()
	w.Close()
	if _, err := w.ApplyEvent(evApply(obj("ns", "b", "uid-b", "2"))); !errors.Is(err, ErrClosed) {
		t.Errorf("Apply after Close: got %v, want one wrapping ErrClosed", err)
	}
	if err := st.WaitUntilReady(context.Background()); err != nil {
		t.Errorf("WaitUntilReady after a ready cache was closed: got %v, want nil", err)
	}
	if got, want := describe(st.List()), []string{"ns/a uid-a 1"}; !slices.Equal(got, want) {
		t.Errorf("List after Close: got %q, want %q", got, want)
	}
}

func TestCopiesOfAStoreReadTheSameCache(t *testing.T) {
	st, w := New()
	cp := *st
	applyAll(t, w, list("1", obj("ns", "a", "uid-a", "1"))...)
	if !cp.Ready() || cp.Len() != 1 {
		t.Errorf("copy: Ready %v Len %d, want true 1", cp.Ready(), cp.Len())
	}
}

func TestBytesHeldFollowsTheLiveObjects(t *testing.T) {
	st, w := New()
	small := obj("ns", "a", "uid-a", "1")
	big := obj("ns", "a", "uid-a", "2")
	big.Body = make([]byte, 10_000)
	big.Labels = MakeLabels(map[string]string{"app": "web"})

	applyAll(t, w, evApply(small))
	smallBytes := st.Counters().BytesHeld
	if smallBytes <= 0 {
		t.Fatalf("BytesHeld with one object: got %d, want > 0", smallBytes)
	}
	applyAll(t, w, evApply(big))
	if got := st.Counters().BytesHeld; got < smallBytes+10_000 {
		t.Errorf("BytesHeld with a 10 kB body: got %d, want at least %d", got, smallBytes+10_000)
	}
	applyAll(t, w, evInit(), evInitApply(small), evInitDone("3"))
	if got := st.Counters().BytesHeld; got != smallBytes {
		t.Errorf("BytesHeld after a relist back to the small object: got %d, want %d", got, smallBytes)
	}
	// A list that names one ref twice holds the later object only.
	applyAll(t, w, evInit(), evInitApply(big), evInitApply(small), evInitDone("4"))
	if got := st.Counters().BytesHeld; got != smallBytes || st.Len() != 1 {
		t.Errorf("BytesHeld after a list of the big then the small object under one ref: got %d (%d objects), want %d", got, st.Len(), smallBytes)
	}
	applyAll(t, w, evDelete(small))
	if got := st.Counters().BytesHeld; got != 0 {
		t.Errorf("BytesHeld of an empty cache: got %d, want 0", got)
	}
}
