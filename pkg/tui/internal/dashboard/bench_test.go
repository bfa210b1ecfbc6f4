package dashboard

import (
	"fmt"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// fullModel is the demo dashboard with a full event log.
func fullModel(b *testing.B, w, h int) Model {
	clock := tuitest.NewFakeClock()
	m := newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{}))
	b.Cleanup(m.Close)
	m = resize(m, w, h)
	for _, s := range tuitest.DemoSnapshots() {
		m = update(m, s)
	}
	results := make([]store.Result, program.DefaultLogSize)
	for i := range results {
		results[i] = store.Result{Outcome: store.Modified, Object: tuitest.Obj("default", fmt.Sprintf("cm-%04d", i), "uid", fmt.Sprint(i))}
	}
	return update(m, tuitest.Applied(tuitest.At(110*time.Second), results...))
}

func BenchmarkView160x48(b *testing.B) {
	m := fullModel(b, 160, 48)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

func BenchmarkViewFiltered160x48(b *testing.B) {
	m := typeText(update(fullModel(b, 160, 48), tuitest.KeyPress("/")), "cm-01")
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkChangesBatch is the cost of taking in one full batch of store changes.
func BenchmarkChangesBatch(b *testing.B) {
	m := fullModel(b, 160, 48)
	results := make([]store.Result, maxBatch)
	for i := range results {
		o := tuitest.Obj("default", fmt.Sprintf("cm-%05d", i%5000), "uid", fmt.Sprint(i))
		results[i] = store.Result{Outcome: store.Modified, Object: o, Previous: o}
	}
	msg := tuitest.Applied(tuitest.At(111*time.Second), results...)
	b.ReportAllocs()
	for b.Loop() {
		m = update(m, msg)
	}
}
