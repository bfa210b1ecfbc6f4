package findings

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

func TestRelistStormNeedsThreeRelistsInTheWindow(t *testing.T) {
	f := newFeed(t, Options{})
	relist := func() {
		f.decide(reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonGone, ResourceVersion: "5"})
		f.request(reflector.VerbList, reflector.RequestOptions{}, 100*time.Millisecond, 0, nil, nil)
		f.listBegan(reflector.CauseGone)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "20"})
	}
	relist()
	f.advance(6 * time.Minute)
	relist()
	f.advance(6 * time.Minute) // the first is out of the window now
	relist()
	if f.has(RelistStorm) {
		t.Fatal("relist-storm raised on 2 relists within 10 minutes")
	}
	f.advance(time.Minute)
	relist()
	got, ok := f.e.Get(RelistStorm)
	if !ok || got.Count != 3 || got.Severity != Error {
		t.Fatalf("want relist-storm with 3 relists, got %v %+v", ok, got)
	}
	if got.Evidence.Window == nil || got.Evidence.Window.Seconds < 7*60 {
		t.Fatalf("the window should span the three relists: %+v", got.Evidence.Window)
	}
}

// A request-started note without its request (a Ledger always sets it;
// Observe is exported, and the track guards it) is read without a panic.
func TestRelistStormReadsARequestStartedWithoutItsRequest(t *testing.T) {
	f := newFeed(t, Options{})
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("a request-started note without its request: %v", p)
		}
	}()
	f.note(reflector.Note{Kind: reflector.NoteRequestStarted})
}

func TestRelistStormSaysThe410sCameOnReconnect(t *testing.T) {
	f := newFeed(t, Options{})
	gone := &reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired}}
	for range 3 {
		// A watch that ran a minute, cut by a restart; the reconnect's
		// watch waits 3 s for the restarted server's watch cache, then 410.
		f.request(reflector.VerbWatch, bookmarked, time.Minute, 5, &reflector.RequestEnd{Reason: reflector.EndError, Err: errors.New("connection reset by peer")}, nil)
		f.advance(time.Second)
		f.request(reflector.VerbWatch, bookmarked, 3*time.Second, 0, gone, nil)
		f.decide(reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonGone, ResourceVersion: "5"})
		f.request(reflector.VerbList, reflector.RequestOptions{}, 100*time.Millisecond, 0, nil, nil)
		f.listBegan(reflector.CauseGone)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "20"})
	}
	got, ok := f.e.Get(RelistStorm)
	if !ok || !strings.Contains(got.Cause, "3 410 Gone came right after a reconnect: the server no longer had the history from the resourceVersion the watch resumed from") {
		t.Fatalf("want the 410s on reconnect as the cause: %v %+v", ok, got)
	}
	// A reconnect a second after a cut does not show a compaction (a
	// restarted server's watch cache starts newer): the cause does not
	// assert one (a reviewer read "compacted away" of 410s a proxy's cut
	// and a plain restart provoked).
	if strings.Contains(got.Cause, "compacted away") {
		t.Errorf("cause %q asserts a compaction", got.Cause)
	}
}

// README promises the cause "says whether the 410s came right after
// reconnects": a LIST's 410 is no reconnect's, though the watch before it
// was short and quiet.
func TestRelistStormCountsNoLISTs410AsAReconnects(t *testing.T) {
	f := newFeed(t, Options{})
	gone := &reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired}}
	for range 3 {
		// A watch quiet for 3 s, cut; the LIST from its resourceVersion is answered 410.
		f.request(reflector.VerbWatch, bookmarked, 3*time.Second, 0, &reflector.RequestEnd{Reason: reflector.EndError, Err: errors.New("connection reset by peer")}, nil)
		f.request(reflector.VerbList, reflector.RequestOptions{ResourceVersion: "5"}, 100*time.Millisecond, 0, gone, nil)
		f.decide(reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonGone, ResourceVersion: "5"})
		f.request(reflector.VerbList, reflector.RequestOptions{}, 100*time.Millisecond, 0, nil, nil)
		f.listBegan(reflector.CauseGone)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "20"})
	}
	got, ok := f.e.Get(RelistStorm)
	if !ok || strings.Contains(got.Cause, "right after a reconnect") {
		t.Fatalf("want relist-storm without the LISTs' 410s counted as a reconnect's: %v %+v", ok, got)
	}
}

// README promises the cause says whether the 410s came "after long
// outages": a watch down past etcd's default compaction interval.
func TestRelistStormSaysThe410sCameAfterLongOutages(t *testing.T) {
	f := newFeed(t, Options{StormWindow: time.Hour})
	gone := &reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired}}
	for range 3 {
		f.request(reflector.VerbWatch, bookmarked, time.Minute, 1, &reflector.RequestEnd{Reason: reflector.EndError, Err: errors.New("connection reset by peer")}, func() {
			f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
		})
		f.advance(6 * time.Minute)
		f.request(reflector.VerbWatch, bookmarked, time.Minute, 0, gone, nil)
		f.decide(reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonGone, ResourceVersion: "5"})
		f.request(reflector.VerbList, reflector.RequestOptions{}, 100*time.Millisecond, 0, nil, nil)
		f.listBegan(reflector.CauseGone)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "20"})
	}
	got, ok := f.e.Get(RelistStorm)
	if want := "3 times the watch was down longer than the server keeps history (etcd compacts every 5 minutes by default)"; !ok || !strings.Contains(got.Cause, want) {
		t.Fatalf("want %q in the cause: %v %q", want, ok, got.Cause)
	}
}

// 410s the observing proxy answered (--fault gone) are its own: the cause
// names the fault and says nothing was compacted, not both.
func TestRelistStormOfInjected410sBlamesNoCompaction(t *testing.T) {
	f := newFeed(t, Options{})
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonFault, Fault: "gone@every=12s", Cause: "acted", Count: 1})
	gone := &reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired}}
	for range 3 {
		f.request(reflector.VerbWatch, bookmarked, time.Minute, 5, &reflector.RequestEnd{Reason: reflector.EndError, Err: errors.New("connection reset by peer")}, nil)
		f.advance(time.Second)
		f.request(reflector.VerbWatch, bookmarked, time.Second, 0, gone, nil)
		f.request(reflector.VerbList, reflector.RequestOptions{}, 100*time.Millisecond, 0, nil, nil)
		f.listBegan(reflector.CauseGone)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "20"})
	}
	got, ok := f.e.Get(RelistStorm)
	if !ok || !strings.HasPrefix(got.Cause, "caused by --fault gone@every=12s") || strings.Contains(got.Cause, "compacted away") || !strings.Contains(got.Cause, "were the proxy's") || strings.Contains(got.Cause, "bookmark") {
		t.Fatalf("want the injected 410s as the cause, no compaction and no bookmarks: %v %q", ok, got.Cause)
	}
}

func TestRelistsTheUserForcedAreNoStorm(t *testing.T) {
	f := newFeed(t, Options{})
	for range 4 {
		f.decide(reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonForcedRelist})
		f.request(reflector.VerbList, reflector.RequestOptions{}, 100*time.Millisecond, 0, nil, nil)
		f.listBegan(reflector.CauseForced)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "20"})
		f.advance(time.Minute)
	}
	if f.has(RelistStorm) {
		t.Fatalf("4 relists the user forced raised relist-storm: %+v", f.e.List())
	}
}

// A threshold of one relist (--relist-storm 1/10m) says "1 relist", not "1 relists".
func TestARelistStormOfOneSaysOneRelist(t *testing.T) {
	f := newFeed(t, Options{StormRelists: 1})
	f.decide(reflector.Decision{State: reflector.StateRelisting, Reason: reflector.ReasonGone, ResourceVersion: "5"})
	f.request(reflector.VerbList, reflector.RequestOptions{}, 100*time.Millisecond, 0, nil, nil)
	f.listBegan(reflector.CauseGone)
	f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "20"})
	got, ok := f.e.Get(RelistStorm)
	if !ok || got.Title != "1 relist within 10m0s" || !strings.HasPrefix(got.Evidence.Text, "1 relist (") {
		t.Fatalf("got %v %q, %q", ok, got.Title, got.Evidence.Text)
	}
}

// Watches cut by a 410 a few seconds in got no bookmark, and that says
// nothing: none was due. The cause blames bookmarks only once no-bookmarks
// has its evidence.
func TestRelistStormBlamesBookmarksOnlyWithNoBookmarksEvidence(t *testing.T) {
	f := newFeed(t, Options{})
	gone := &reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired}}
	for range 3 {
		f.request(reflector.VerbWatch, bookmarked, 5*time.Second, 2, gone, nil)
		f.request(reflector.VerbList, reflector.RequestOptions{}, 100*time.Millisecond, 0, nil, nil)
		f.listBegan(reflector.CauseGone)
		f.decide(reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonListComplete, ResourceVersion: "20"})
	}
	got, ok := f.e.Get(RelistStorm)
	if !ok || f.has(NoBookmarks) || strings.Contains(got.Cause, "bookmark") {
		t.Fatalf("watches of 5 s: want a relist storm whose cause says nothing of bookmarks: %v %q", ok, got.Cause)
	}
	// A watch open 90 s with events and no bookmark is the evidence.
	f.request(reflector.VerbWatch, bookmarked, 90*time.Second, 1, nil, func() {
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified}})
	})
	f.request(reflector.VerbWatch, bookmarked, 5*time.Second, 2, gone, nil)
	f.request(reflector.VerbList, reflector.RequestOptions{}, 100*time.Millisecond, 0, nil, nil)
	f.listBegan(reflector.CauseGone)
	if got, _ := f.e.Get(RelistStorm); !f.has(NoBookmarks) || !strings.Contains(got.Cause, "got none (no-bookmarks)") {
		t.Fatalf("after no-bookmarks: want the cause to say so: %v %q", f.has(NoBookmarks), got.Cause)
	}

	// A client whose watches never ask for them (one the proxy observes).
	f = newFeed(t, Options{})
	for range 3 {
		f.request(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: "10"}, 5*time.Second, 2, gone, nil)
		f.request(reflector.VerbList, reflector.RequestOptions{}, 100*time.Millisecond, 0, nil, nil)
		f.listBegan(reflector.CauseGone)
	}
	if got, _ := f.e.Get(RelistStorm); !strings.Contains(got.Cause, "no watch asked for bookmarks") {
		t.Fatalf("watches that asked for no bookmarks: want the cause to say so: %q", got.Cause)
	}
}
