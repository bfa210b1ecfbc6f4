package findings

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

func TestStreamRefusalIsInfoUnlessAskedFor(t *testing.T) {
	for _, asked := range []bool{false, true} {
		f := newFeed(t, Options{StreamAsked: asked})
		f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialList})
		f.request(reflector.VerbWatch, reflector.RequestOptions{SendInitialEvents: true, AllowWatchBookmarks: true}, 5*time.Millisecond, 0,
			&reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 422}}, nil)
		f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonStreamRefused, Cause: "422 Invalid: sendInitialEvents is forbidden"})
		f.request(reflector.VerbList, reflector.RequestOptions{Limit: 500}, 2*time.Second, 0, nil, nil)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, Objects: 1200})
		got, ok := f.e.Get(WatchListUnsupported)
		want := Info
		if asked {
			want = Warning
		}
		if !ok || got.Severity != want || got.Evidence.Facts["listObjects"] != "1200" {
			t.Fatalf("asked=%v: want %s with the LIST's cost, got %v %+v", asked, want, ok, got)
		}
	}
}

func TestAStalledStreamingListIsNotTheLISTsTime(t *testing.T) {
	f := newFeed(t, Options{})
	f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialList})
	f.request(reflector.VerbWatch, reflector.RequestOptions{SendInitialEvents: true, AllowWatchBookmarks: true}, time.Minute, 0,
		&reflector.RequestEnd{Reason: reflector.EndCanceled}, nil)
	f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialEventsEnd, Wait: time.Minute})
	f.request(reflector.VerbList, reflector.RequestOptions{Limit: 500}, 200*time.Millisecond, 0, nil, nil)
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, Objects: 12, Bytes: 20 << 10})
	if f.has(LargeInitialList) {
		got, _ := f.e.Get(LargeInitialList)
		t.Errorf("a 200ms LIST of 12 objects after a stalled streaming list raised %s", got.Detail())
	}
	got, ok := f.e.Get(WatchListUnsupported)
	if !ok || got.Evidence.Facts["listSeconds"] != "0.2" || !strings.Contains(got.Title, "stalled") {
		t.Errorf("want the stall, and the LIST's own 0.2s: %+v", got)
	}
}
