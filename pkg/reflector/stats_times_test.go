package reflector

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStatsSayWhenTheRunStartedSyncedAndLastReceivedData(t *testing.T) {
	clock := newManualClock()
	start := clock.Now()
	h := runFake(t, Config{Clock: clock},
		// The first list is instant (gaps apply to watches), then a watch whose
		// events come 2s apart, an ERROR event last, which is not data.
		call{verb: VerbList, page: page("10", "", obj("a", "u-a", "5"))},
		call{verb: VerbWatch, gap: 2 * time.Second, events: []WatchEvent{
			ev(EventModified, obj("a", "u-a", "11")),
			bookmark("12", false),
			errorEvent(410, metav1.StatusReasonExpired, "too old resource version: 12 (20)"),
		}},
		// The relist after the 410 does not move Synced.
		call{verb: VerbList, page: page("20", "", obj("a", "u-a", "11"))},
	)
	st := h.r.Stats()
	if !st.Started.Equal(start) {
		t.Errorf("Started: got %s, want %s", st.Started, start)
	}
	if !st.Synced.Equal(start) {
		t.Errorf("Synced: got %s, want the first list's %s", st.Synced, start)
	}
	// MODIFIED at +2s, BOOKMARK at +4s, ERROR at +6s (not data); the relist's page at +6s is.
	if want := start.Add(6 * time.Second); !st.LastReceived.Equal(want) {
		t.Errorf("LastReceived: got %s, want %s", st.LastReceived, want)
	}
	if got := h.r.Counters(); got != st.Counters {
		t.Errorf("Counters: got %+v, want Stats().Counters %+v", got, st.Counters)
	}
}

func TestAnErrorEventIsNotReceivedData(t *testing.T) {
	clock := newManualClock()
	start := clock.Now()
	h := runFake(t, Config{Clock: clock},
		call{verb: VerbList, page: page("10", "")},
		call{verb: VerbWatch, gap: 2 * time.Second, events: []WatchEvent{
			bookmark("11", false),
			errorEvent(500, metav1.StatusReasonInternalError, "boom"),
		}},
	)
	if want := start.Add(2 * time.Second); !h.r.Stats().LastReceived.Equal(want) {
		t.Errorf("LastReceived: got %s, want the bookmark's %s", h.r.Stats().LastReceived, want)
	}
}
