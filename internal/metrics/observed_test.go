package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// Two clients of an observing proxy watching the same resource have a
// series each, told apart by their client label.
func TestObservedMetricsTellClientsApart(t *testing.T) {
	m := NewObserved()
	for _, c := range []string{"ctrl/1 #1", "kubectl/1.37 #2"} {
		r, err := m.Add(Labels{Resource: "pods.v1", Namespace: "ns", Client: c})
		if err != nil {
			t.Fatal(err)
		}
		n := int64(len(c))
		r.Attach(Source{Stats: func() reflector.Stats { return reflector.Stats{Counters: reflector.Counters{Watches: n}} }})
	}
	if _, err := m.Add(Labels{Resource: "pods.v1", Namespace: "ns", Client: "ctrl/1 #1"}); err == nil {
		t.Error("the same client and resource were added twice")
	}
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(w.Body)
	for _, want := range []string{
		`watchcache_watches_total{client="ctrl/1 #1",field_selector="",label_selector="",namespace="ns",resource="pods.v1"} 9`,
		`watchcache_watches_total{client="kubectl/1.37 #2",field_selector="",label_selector="",namespace="ns",resource="pods.v1"} 15`,
		`watchcache_gone_total{client="ctrl/1 #1",field_selector="",label_selector="",namespace="ns",on="watch",resource="pods.v1"} 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the scrape lacks %s", want)
		}
	}
	// The plugin's own metrics have no client label.
	plain := New()
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
