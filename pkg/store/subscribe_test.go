package store

import (
	"slices"
	"strconv"
	"sync"
	"testing"
)

// drain reads a subscription until its channel is closed.
func drain(s *Subscription) []Outcome {
	var got []Outcome
	for r := range s.Changes() {
		got = append(got, r.Outcome)
	}
	return got
}

func TestSubscribersReceiveEveryChangeInOrder(t *testing.T) {
	st, w := New()
	first, second := st.Subscribe(64), st.Subscribe(64)
	a1 := obj("ns", "a", "uid-1", "1")
	applyAll(t, w, list("1", a1)...)
	applyAll(t, w,
		evApply(obj("ns", "a", "uid-1", "2")),  // Modified
		evApply(obj("ns", "a", "uid-1", "2")),  // Duplicate: not sent
		evBookmark("3"),                        // Ignored: not sent
		evDelete(obj("ns", "a", "uid-0", "4")), // StaleDelete: not sent
		evApply(obj("ns", "a", "uid-2", "5")),  // Replaced
		evDelete(obj("ns", "a", "uid-2", "6")), // Deleted
		evDelete(obj("ns", "a", "uid-2", "6")), // AbsentDelete: not sent
		evApply(obj("ns", "b", "uid-b", "7")),  // Added
	)
	w.Close()
	want := []Outcome{Relisted, Modified, Replaced, Deleted, Added}
	for i, s := range []*Subscription{first, second} {
		if got := drain(s); !slices.Equal(got, want) {
			t.Errorf("subscriber %d: got %v, want %v", i, got, want)
		}
		if got := s.Missed(); got != 0 {
			t.Errorf("subscriber %d missed %d changes, want 0", i, got)
		}
	}
}

func TestARelistReachesSubscribersAsOneChangeWithItsDiff(t *testing.T) {
	st, w := New()
	sub := st.Subscribe(8)
	applyAll(t, w, list("1", obj("ns", "a", "uid-a", "1"), obj("ns", "b", "uid-b", "1"))...)
	r := <-sub.Changes()
	if r.Outcome != Relisted || r.Diff == nil || r.Diff.After != 2 || r.Diff.Added != nil {
		t.Errorf("change: got %v with diff %+v, want Relisted with 2 objects, counted and not listed (the first list)", r.Outcome, r.Diff)
	}
}

func TestASlowSubscriberMissesChangesAndNeverBlocksTheWriter(t *testing.T) {
	st, w := New()
	slow := st.Subscribe(1) // never read until the end
	fast := st.Subscribe(1000)
	const changes = 100
	for i := range changes {
		applyAll(t, w, evApply(obj("ns", "a", "uid-a", strconv.Itoa(i))))
	}
	if got, want := slow.Missed(), int64(changes-1); got != want {
		t.Errorf("slow subscriber Missed: got %d, want %d", got, want)
	}
	if got := fast.Missed(); got != 0 {
		t.Errorf("fast subscriber Missed: got %d, want 0", got)
	}
	w.Close()
	if got := len(drain(slow)); got != 1 {
		t.Errorf("slow subscriber received %d changes, want the 1 its buffer held", got)
	}
	if got := len(drain(fast)); got != changes {
		t.Errorf("fast subscriber received %d changes, want %d", got, changes)
	}
}

func TestClosingASubscriptionStopsDeliveryAndClosesItsChannel(t *testing.T) {
	st, w := New()
	sub := st.Subscribe(8)
	applyAll(t, w, evApply(obj("ns", "a", "uid-a", "1")))
	sub.Close()
	sub.Close()
	applyAll(t, w, evApply(obj("ns", "b", "uid-b", "1")))
	if got, want := drain(sub), []Outcome{Added}; !slices.Equal(got, want) {
		t.Errorf("after Close: got %v, want the buffered %v and a closed channel", got, want)
	}
	if got := sub.Missed(); got != 0 {
		t.Errorf("Missed after Close: got %d, want 0 (a closed subscriber is not sent to)", got)
	}
}

func TestSubscribingAfterTheWriterClosedGivesAClosedChannel(t *testing.T) {
	st, w := New()
	w.Close()
	sub := st.Subscribe(1)
	if _, open := <-sub.Changes(); open {
		t.Error("Changes after Writer.Close: got an open channel, want a closed one")
	}
	sub.Close()
}

func TestSubscribersComingAndGoingNeverRaceTheWriter(t *testing.T) {
	st, w := New()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				s := st.Subscribe(2)
				select {
				case <-s.Changes():
				default:
				}
				s.Close()
			}
		})
	}
	for i := range 2000 {
		applyAll(t, w, evApply(obj("ns", "a", "uid-a", strconv.Itoa(i))))
	}
	wg.Wait()
	w.Close()
}
