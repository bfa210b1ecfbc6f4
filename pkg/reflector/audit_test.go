package reflector

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// listedOnce answers an audit's LIST with one page and signals when it did.
type listedOnce struct {
	page   *Page
	listed chan struct{}
}

func (s *listedOnce) List(context.Context, RequestOptions) (*Page, error) {
	close(s.listed)
	return s.page, nil
}

func (s *listedOnce) Watch(context.Context, RequestOptions) (Stream, error) {
	return nil, errors.New("an audit does not watch")
}

// streamingRelistScript is a streaming list at 900, a 410 on the watch
// from it, and a streaming relist at 1200 that replaced a and removed b.
func streamingRelistScript(t *testing.T) *fakeSource {
	return newFake(t,
		call{verb: VerbWatch, events: []WatchEvent{
			ev(EventAdded, obj("a", "u-a", "800")),
			ev(EventAdded, obj("b", "u-b", "850")),
			bookmark("900", true),
		}, end: httpErr(410, metav1.StatusReasonGone, "too old resource version: 900 (1100)")},
		call{verb: VerbWatch, events: []WatchEvent{
			ev(EventAdded, obj("a", "u-a2", "1150")),
			bookmark("1200", true),
		}},
	)
}

// The bookmark that ends a streaming relist moves the cursor only with the
// list installed: until then the store serves the old snapshot, and a cursor
// already at the list's resourceVersion would say it holds the new one (a
// soak's audit stopped waiting on it and reported the old snapshot as drift).
func TestAStreamingRelistMovesTheCursorOnlyOnceItsListIsInstalled(t *testing.T) {
	st, w := store.New()
	var r *Reflector
	type seen struct{ cursor, store string }
	atEnd := make(chan seen, 1)
	cfg := Config{Source: streamingRelistScript(t), Strategy: StrategyStream, Backoff: Backoff{Initial: time.Millisecond},
		OnNote: func(n Note) {
			if n.Kind == NoteBookmark && n.Bookmark.ListEnd && n.Bookmark.ResourceVersion == "1200" {
				atEnd <- seen{r.ledger.Cursor(), sortedNames(st)}
			}
		}}
	r, err := New(cfg, w, st)
	if err != nil {
		t.Fatal(err)
	}
	run(t, r)
	select {
	case s := <-atEnd:
		if s.cursor == "1200" && s.store != "a" {
			t.Errorf("at the relist's end bookmark: cursor %s with the store still holding %q, the snapshot of 900", s.cursor, s.store)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the relist's end bookmark did not arrive")
	}
	waitFor(t, func() bool { return r.ledger.Cursor() == "1200" })
	if got := sortedNames(st); got != "a" {
		t.Errorf("store after the relist: got %q, want %q", got, "a")
	}
}

// An audit made while a streaming relist is between its end bookmark and
// its install waits for the install, as it waits for events in flight,
// instead of reporting the old snapshot as drift.
func TestAnAuditDuringAStreamingRelistWaitsForItsInstall(t *testing.T) {
	st, w := store.New()
	audit := &listedOnce{page: page("1200", "", obj("a", "u-a2", "1150")), listed: make(chan struct{})}
	var r *Reflector
	type result struct {
		rep *AuditReport
		err error
	}
	audited := make(chan result, 1)
	cfg := Config{Source: streamingRelistScript(t), AuditSource: audit, Strategy: StrategyStream, Backoff: Backoff{Initial: time.Millisecond},
		OnNote: func(n Note) {
			if n.Kind != NoteBookmark || !n.Bookmark.ListEnd || n.Bookmark.ResourceVersion != "1200" {
				return
			}
			// The reflector is held at the relist's end bookmark while an
			// audit lists and compares (its report is noted once this
			// listener returns).
			go func() {
				rep, err := r.Audit(context.Background(), 10*time.Second)
				audited <- result{rep, err}
			}()
			<-audit.listed
			time.Sleep(100 * time.Millisecond)
		}}
	r, err := New(cfg, w, st)
	if err != nil {
		t.Fatal(err)
	}
	run(t, r)
	select {
	case res := <-audited:
		if res.err != nil {
			t.Fatal(res.err)
		}
		if res.rep.Drift() {
			t.Errorf("audit: %s; want no drift: the relist at 1200 installs the listed state", res.rep)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the audit did not end")
	}
}
