package findings

import (
	"fmt"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

func TestLargeInitialListNeedsOneMeasureOverItsBound(t *testing.T) {
	list := func(objects int, bytes int64, took time.Duration) *feed {
		f := newFeed(t, Options{})
		f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialList})
		f.advance(2 * time.Minute) // waiting for --max-concurrent-lists: not the list's time
		began := f.now
		f.request(reflector.VerbList, reflector.RequestOptions{Limit: 500}, took, 0, nil, nil)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "20", Objects: objects, Bytes: bytes, Began: began})
		return f
	}
	for _, tc := range []struct {
		name    string
		objects int
		bytes   int64
		took    time.Duration
		want    bool
	}{
		{"just under every bound", 50000, 100 << 20, 30 * time.Second, false},
		{"bytes", 110, 100<<20 + 1, time.Second, true},
		{"objects", 50001, 0, time.Second, true},
		{"time", 10, 1 << 10, 31 * time.Second, true},
	} {
		f := list(tc.objects, tc.bytes, tc.took)
		got, ok := f.e.Get(LargeInitialList)
		if ok != tc.want {
			t.Errorf("%s: raised %v, want %v: %+v", tc.name, ok, tc.want, got)
			continue
		}
		if ok && (got.Severity != Warning || got.Evidence.Facts["bytes"] != fmt.Sprint(tc.bytes) || got.Evidence.Facts["objects"] != fmt.Sprint(tc.objects)) {
			t.Errorf("%s: want a warning with the measured size and count: %+v", tc.name, got)
		}
	}
	// Only the first list: a relist of any size raises nothing.
	f := list(10, 1<<10, time.Second)
	f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonGone})
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "30", Objects: 60000, Bytes: 200 << 20})
	if f.has(LargeInitialList) {
		t.Error("a relist raised large-initial-list")
	}
}

// The list's time counts from the request that began it (README: "from
// the request that began it"): a list-complete note that does not say
// when that was gives "time unknown", as a list without its bytes gives
// "size unknown", not 0s.
func TestLargeInitialListOfUnknownTimeSaysSo(t *testing.T) {
	f := newFeed(t, Options{})
	f.request(reflector.VerbList, reflector.RequestOptions{Limit: 500}, time.Minute, 0, nil, nil)
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "20", Objects: 60000})
	if got, ok := f.e.Get(LargeInitialList); !ok || got.Title != "the initial list is large: 60,000 objects, size unknown, time unknown" || got.Evidence.Text != "the first complete list was 60,000 objects over 50,000" {
		t.Fatalf("want the list's size and time said unknown, its objects grouped as the When's 50,000: %v %q: %q", ok, got.Title, got.Evidence.Text)
	}
}
