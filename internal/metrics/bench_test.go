package metrics_test

import (
	"io"
	"net/http/httptest"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// BenchmarkScrape is the cost of one scrape of a run's registry (the
// plugin's metrics of one resource, the Go runtime's and the process's).
func BenchmarkScrape(b *testing.B) {
	m := metrics.New(false)
	replayWithMetrics(b, m, traces+"demo.jsonl")
	h := m.Handler()
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		_, _ = io.Copy(io.Discard, rec.Body)
	}
}

// BenchmarkNoteApplied is what a watch event costs the metrics: nothing but a branch.
func BenchmarkNoteApplied(b *testing.B) {
	m := metrics.New(false)
	r, err := m.Add(metrics.Labels{Resource: "configmaps.v1"})
	if err != nil {
		b.Fatal(err)
	}
	n := reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified}
	for b.Loop() {
		r.Note(n)
	}
}
