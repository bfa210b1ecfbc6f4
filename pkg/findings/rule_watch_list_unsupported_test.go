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

// README promises "the server's answer and what the LIST cost": a relist
// that streams again and is refused again (--initial-list=stream, or an
// observed client that streams every relist) keeps the first refusal and
// its LIST's cost.
func TestASecondStreamRefusalKeepsWhatTheLISTCost(t *testing.T) {
	f := newFeed(t, Options{StreamAsked: true})
	refuse := func() {
		f.request(reflector.VerbWatch, reflector.RequestOptions{SendInitialEvents: true, AllowWatchBookmarks: true}, 5*time.Millisecond, 0,
			&reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 422}}, nil)
		f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonStreamRefused, Cause: "422 Invalid"})
		f.request(reflector.VerbList, reflector.RequestOptions{Limit: 500}, 2*time.Second, 0, nil, nil)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, Objects: 1200, Bytes: 5 << 20})
	}
	refuse()
	first, _ := f.e.Get(WatchListUnsupported)
	refuse()
	got, _ := f.e.Get(WatchListUnsupported)
	if got.Evidence.Text != first.Evidence.Text || got.Evidence.Facts["listObjects"] != "1200" {
		t.Fatalf("the second refusal changed the evidence:\n first: %s\n then:  %s", first.Evidence.Text, got.Evidence.Text)
	}
}

// README promises "what the LIST cost": a list-complete note that does not
// say when its LIST began says its time is unknown, not 0s.
func TestAStreamRefusalsLISTOfUnknownTimeSaysSo(t *testing.T) {
	f := newFeed(t, Options{})
	f.request(reflector.VerbWatch, reflector.RequestOptions{SendInitialEvents: true, AllowWatchBookmarks: true}, 5*time.Millisecond, 0,
		&reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 422}}, nil)
	f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonStreamRefused, Cause: "422 Invalid"})
	f.request(reflector.VerbList, reflector.RequestOptions{Limit: 500}, 2*time.Second, 0, nil, nil)
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, Objects: 1200})
	got, _ := f.e.Get(WatchListUnsupported)
	if !strings.HasSuffix(got.Evidence.Text, "brought 1200 objects, time unknown") || got.Evidence.Facts["listSeconds"] != "" {
		t.Fatalf("want the LIST's time said unknown, and no listSeconds: %q %v", got.Evidence.Text, got.Evidence.Facts)
	}
}

func TestAStalledStreamingListIsNotTheLISTsTime(t *testing.T) {
	f := newFeed(t, Options{})
	f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialList})
	f.request(reflector.VerbWatch, reflector.RequestOptions{SendInitialEvents: true, AllowWatchBookmarks: true}, time.Minute, 0,
		&reflector.RequestEnd{Reason: reflector.EndCanceled}, nil)
	f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonInitialEventsEnd, Wait: time.Minute})
	began := f.now
	f.request(reflector.VerbList, reflector.RequestOptions{Limit: 500}, 200*time.Millisecond, 0, nil, nil)
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, Objects: 12, Bytes: 20 << 10, Began: began})
	if f.has(LargeInitialList) {
		got, _ := f.e.Get(LargeInitialList)
		t.Errorf("a 200ms LIST of 12 objects after a stalled streaming list raised %s", got.Detail())
	}
	got, ok := f.e.Get(WatchListUnsupported)
	if !ok || got.Evidence.Facts["listSeconds"] != "0.2" || !strings.Contains(got.Title, "stalled") {
		t.Errorf("want the stall, and the LIST's own 0.2s: %+v", got)
	}
}

// An observed client's streaming list that stalls (the observing proxy
// withheld its initial-events-end bookmark, or it ran to its timeout
// without one) is said at once, without a LIST to wait for; the injected
// fault is named as the cause, and a streaming list that ended, or that
// another fault acted on, raises nothing.
func TestAnObservedClientsStalledStreamingListIsSaid(t *testing.T) {
	stream := reflector.RequestOptions{SendInitialEvents: true, AllowWatchBookmarks: true, TimeoutSeconds: 300}
	withheld := reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonFault, Fault: "stall-initial-list",
		Cause: "withheld the initial-events-end BOOKMARK at resourceVersion 12: the streaming list never completes", Count: 1}

	f := newFeed(t, Options{})
	f.request(reflector.VerbWatch, stream, 20*time.Second, 3, nil, func() { f.advance(2 * time.Second); f.decide(withheld) })
	got, ok := f.e.Get(WatchListUnsupported)
	if !ok || !strings.Contains(got.Title, "never came") || got.Severity != Warning || !strings.Contains(got.Action, "KUBE_FEATURE_WatchListClient=false") ||
		got.Evidence.Text != "request #1, a streaming list, stalled: its initial-events-end bookmark was held back 2s after it started, and never came; its client's list does not complete until then (a client-go informer does not sync: it waits for the watch's timeout, 5 to 10 minutes, and streams again)" ||
		!strings.HasPrefix(got.Cause, "caused by --fault stall-initial-list (injected by the observing proxy). the streaming list's initial-events-end bookmark did not reach the client") {
		t.Errorf("the withheld bookmark: %v %+v", ok, got)
	}

	f = newFeed(t, Options{})
	f.request(reflector.VerbWatch, stream, 300*time.Second, 3, nil, nil)
	got, ok = f.e.Get(WatchListUnsupported)
	if !ok || !strings.Contains(got.Evidence.Text, "it ran to its timeout (5m0s) without it") || strings.Contains(got.Cause, "--fault") {
		t.Errorf("a streaming list that ran to its timeout without its end: %v %+v", ok, got)
	}

	for what, during := range map[string]func(){
		"ended": func() {
			f.note(reflector.Note{Kind: reflector.NoteBookmark, Bookmark: &reflector.Bookmark{ResourceVersion: "12", ListEnd: true}})
		},
		"cut early": nil,
		"another fault": func() {
			f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonFault, Fault: "no-bookmarks", Cause: "dropped BOOKMARK", Count: 1})
		},
	} {
		f = newFeed(t, Options{})
		d := 10 * time.Second
		if what == "ended" {
			d = 300 * time.Second
		}
		f.request(reflector.VerbWatch, stream, d, 3, nil, during)
		if got, ok := f.e.Get(WatchListUnsupported); ok {
			t.Errorf("%s: raised %+v", what, got)
		}
	}
}
