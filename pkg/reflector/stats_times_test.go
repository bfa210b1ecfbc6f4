package reflector

import (
	"reflect"
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

func TestAgesFollowTheirDefinitions(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	cases := []struct {
		name                         string
		st                           Stats
		now                          time.Time
		bookmark, noProgress, toSync time.Duration
	}{
		{"before Run", Stats{}, at(5), 0, 0, 0},
		{"listing, nothing received", Stats{Started: at(0)}, at(5), 0, 5 * time.Second, 5 * time.Second},
		{"synced, no bookmark yet", Stats{Started: at(0), Synced: at(2), LastReceived: at(2)}, at(10), 8 * time.Second, 8 * time.Second, 2 * time.Second},
		{"a bookmark, then an event", Stats{Started: at(0), Synced: at(2), BookmarkAt: at(4), LastReceived: at(7)}, at(10), 6 * time.Second, 3 * time.Second, 2 * time.Second},
		{"a clock behind the stats", Stats{Started: at(0), Synced: at(2), BookmarkAt: at(4), LastReceived: at(7)}, at(3), 0, 0, 2 * time.Second},
	}
	for _, tc := range cases {
		if got := tc.st.BookmarkAge(tc.now); got != tc.bookmark {
			t.Errorf("%s: BookmarkAge: got %s, want %s", tc.name, got, tc.bookmark)
		}
		if got := tc.st.NoProgress(tc.now); got != tc.noProgress {
			t.Errorf("%s: NoProgress: got %s, want %s", tc.name, got, tc.noProgress)
		}
		if got := tc.st.TimeToSync(tc.now); got != tc.toSync {
			t.Errorf("%s: TimeToSync: got %s, want %s", tc.name, got, tc.toSync)
		}
	}
}

// TestCountersAddSumsEveryField fills every field with a distinct count
// (through reflection, so a field added later is covered) and checks Add.
func TestCountersAddSumsEveryField(t *testing.T) {
	var a, b Counters
	va, vb := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	for i := range va.NumField() {
		va.Field(i).SetInt(int64(i + 1))
		vb.Field(i).SetInt(int64(100 * (i + 1)))
	}
	a.Add(b)
	for i := range va.NumField() {
		if got, want := va.Field(i).Int(), int64(101*(i+1)); got != want {
			t.Errorf("%s: got %d, want %d", va.Type().Field(i).Name, got, want)
		}
	}
}

// Each relist cause is counted in its own field, and Of reads it back; a
// cause of no field of its own counts as Error.
func TestRelistCountsKeepEachCauseApart(t *testing.T) {
	var r RelistCounts
	causes := []ListCause{CauseGone, CauseForced, CauseForced, CauseTooLarge, CauseTooLarge, CauseTooLarge, CauseFallback, CauseError, "unknown"}
	for _, c := range causes {
		*r.of(c)++
	}
	if want := (RelistCounts{Gone: 1, Forced: 2, TooLarge: 3, Fallback: 1, Error: 2}); r != want {
		t.Errorf("counts: got %+v, want %+v", r, want)
	}
	for c, want := range map[ListCause]int64{CauseGone: 1, CauseForced: 2, CauseTooLarge: 3, CauseFallback: 1, CauseError: 2} {
		if got := r.Of(c); got != want {
			t.Errorf("Of(%s): got %d, want %d", c, got, want)
		}
	}
}
