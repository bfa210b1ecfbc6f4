package findings

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

func TestFlappingCountsOnlyWatchesThatWereOpen(t *testing.T) {
	f := newFeed(t, Options{})
	refused := &reflector.RequestEnd{Reason: reflector.EndError, Err: errors.New(`Get "https://127.0.0.1:6443/api/v1/configmaps?watch=true": dial tcp 127.0.0.1:6443: connect: connection refused`)}
	unavailable := &reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 503, Message: "unavailable"}}
	short := reflector.RequestOptions{ResourceVersion: "10", TimeoutSeconds: 2}
	for range 6 {
		f.request(reflector.VerbWatch, bookmarked, time.Millisecond, 0, refused, nil)
		f.request(reflector.VerbWatch, bookmarked, time.Millisecond, 0, unavailable, nil)
		f.request(reflector.VerbWatch, short, 2*time.Second, 0, nil, nil) // ran to the timeout it asked for
		f.advance(10 * time.Second)
	}
	if f.has(WatchFlapping) {
		t.Fatalf("watch-flapping raised on refused connections, error answers and short timeouts: %+v", f.e.List())
	}
	cut := &reflector.RequestEnd{Reason: reflector.EndError, Err: errors.New("reading watch stream: unexpected EOF")}
	for i := range 5 {
		f.request(reflector.VerbWatch, bookmarked, 2*time.Second, 0, cut, nil)
		if i < 4 && f.has(WatchFlapping) {
			t.Fatalf("watch-flapping raised after %d cuts", i+1)
		}
	}
	got, ok := f.e.Get(WatchFlapping)
	if !ok || got.Count != 5 || got.Evidence.Facts["typicalLifetime"] != "2s" {
		t.Fatalf("want watch-flapping over 5 watches of 2s, got %v %+v", ok, got)
	}
	// Three more (8), then the first four out of the window: the next cut
	// raises it over the 5 in the window, and its count stays 8 (a count
	// never goes down: a --fail-on of it sampled live and in a replay must
	// read the same).
	for range 3 {
		f.request(reflector.VerbWatch, bookmarked, 2*time.Second, 0, cut, nil)
	}
	f.advance(flapWindow - 9*time.Second)
	f.request(reflector.VerbWatch, bookmarked, 2*time.Second, 0, cut, nil)
	if got, _ := f.e.Get(WatchFlapping); got.Count != 8 || got.Title[:1] != "5" {
		t.Errorf("after the window moved on: count %d (%q), want it to stay 8, the title saying the 5 in the window", got.Count, got.Title)
	}
}

// README promises watch-flapping when "no 410 Gone came (to a watch or a
// LIST) in the 5 minutes before the last of them": a LIST's 410 before the
// cuts, none of them a 410, holds it back until it is 5 minutes old.
func TestFlappingWaitsOutA410InTheWindow(t *testing.T) {
	f := newFeed(t, Options{})
	gone := &reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired}}
	f.request(reflector.VerbList, reflector.RequestOptions{ResourceVersion: "5"}, 100*time.Millisecond, 0, gone, nil)
	f.decide(reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonGone, ResourceVersion: "5"})
	f.advance(time.Minute)
	cut := &reflector.RequestEnd{Reason: reflector.EndError, Err: errors.New("reading watch stream: unexpected EOF")}
	for range 5 {
		f.request(reflector.VerbWatch, bookmarked, 2*time.Second, 0, cut, nil)
	}
	if f.has(WatchFlapping) {
		t.Fatal("watch-flapping raised on 5 cuts a minute after a 410")
	}
	f.advance(4 * time.Minute)
	f.request(reflector.VerbWatch, bookmarked, 2*time.Second, 0, cut, nil)
	if got, ok := f.e.Get(WatchFlapping); !ok || got.Count != 6 {
		t.Fatalf("want watch-flapping over 6 cuts once the 410 is 5 minutes old, got %v %+v", ok, got)
	}
}
