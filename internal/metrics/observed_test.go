package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// Two clients of an observing proxy watching the same resource have a
// series each, told apart by their client label (the User-Agent); two
// streams of one client watching the same thing share theirs: counters and
// store sizes add up, the state counts the streams in each state, and the
// ages are the open streams' worst.
func TestObservedMetricsTellClientsApart(t *testing.T) {
	m := New(true)
	now := time.Unix(1000, 0)
	add := func(c string, st reflector.Stats, objects int) {
		t.Helper()
		r, err := m.Add(Labels{Resource: "pods.v1", Namespace: "ns", Client: c})
		if err != nil {
			t.Fatal(err)
		}
		r.Attach(Source{Stats: func() reflector.Stats { return st }, Store: func() store.Counters { return store.Counters{Objects: objects} },
			Now: func() time.Time { return now }})
	}
	watching := func(watches int64, bookmarkAgo time.Duration) reflector.Stats {
		return reflector.Stats{State: reflector.StateWatching, BookmarkAt: now.Add(-bookmarkAgo), Counters: reflector.Counters{Watches: watches}}
	}
	add("ctrl/1", watching(9, 10*time.Second), 3)
	add("kubectl/1.37", watching(15, time.Second), 1)
	add("ctrl/1", watching(4, 30*time.Second), 5)
	add("ctrl/1", reflector.Stats{State: reflector.StateStopped, BookmarkAt: now.Add(-time.Hour), Counters: reflector.Counters{Watches: 1}}, 0)
	// A stream whose client left counts as Stopped, its age not among the
	// open streams', and its cache not in the store's: its client holds
	// none now (a reviewer saw 140 objects for a cluster of 42, two
	// restarted clients' caches counted with the live one's).
	left := watching(2, 2*time.Hour)
	left.ClientLeft, left.ClientLeftState, left.ClientLeftWas = now.Add(-time.Minute), reflector.StateWatching, "Watching"
	add("ctrl/1", left, 31)
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(w.Body)
	if w.Code != 200 {
		t.Fatalf("scrape: %d\n%s", w.Code, body)
	}
	for _, want := range []string{
		`watchcache_watches_total{client="ctrl/1",field_selector="",label_selector="",namespace="ns",resource="pods.v1"} 16`,
		`watchcache_watches_total{client="kubectl/1.37",field_selector="",label_selector="",namespace="ns",resource="pods.v1"} 15`,
		`watchcache_store_objects{client="ctrl/1",field_selector="",label_selector="",namespace="ns",resource="pods.v1"} 8`,
		`watchcache_state{client="ctrl/1",field_selector="",label_selector="",namespace="ns",resource="pods.v1",state="Watching"} 2`,
		`watchcache_state{client="ctrl/1",field_selector="",label_selector="",namespace="ns",resource="pods.v1",state="Stopped"} 2`,
		`watchcache_bookmark_age_seconds{client="ctrl/1",field_selector="",label_selector="",namespace="ns",resource="pods.v1"} 30`,
		`watchcache_gone_total{client="ctrl/1",field_selector="",label_selector="",namespace="ns",on="watch",resource="pods.v1"} 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the scrape lacks %s", want)
		}
	}
	if n := strings.Count(string(body), "watchcache_watches_total{"); n != 2 {
		t.Errorf("%d watches_total series, want 2: one per client", n)
	}
	// The plugin's own metrics have no client label.
	plain := New(false)
	if _, err := plain.Add(Labels{Resource: "pods.v1", Client: "ignored"}); err != nil {
		t.Fatal(err)
	}
	w = httptest.NewRecorder()
	plain.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	body, _ = io.ReadAll(w.Body)
	if strings.Contains(string(body), "client=") {
		t.Error("a run's metrics carry a client label")
	}
}
