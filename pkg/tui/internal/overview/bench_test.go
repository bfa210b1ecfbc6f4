package overview

import (
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// BenchmarkOverviewView160x48 is the cost of a frame of the overview's
// table: four resources, a failed one's reason line, and the log's glimpse.
func BenchmarkOverviewView160x48(b *testing.B) {
	o := ovDemo(b, 160, 48, [numOvDemo]program.Feed{})
	b.ReportAllocs()
	for b.Loop() {
		_ = o.View()
	}
}

// BenchmarkOverviewPoll is the cost of one resource's poll reaching the
// overview: its Model takes it, and the table keeps its selection in view.
func BenchmarkOverviewPoll(b *testing.B) {
	o := ovDemo(b, 160, 48, [numOvDemo]program.Feed{})
	snaps := ovDemoSnapshots(ovPods)
	msg := resourceMsg{i: ovPods, msg: snaps[len(snaps)-1]}
	b.ReportAllocs()
	for b.Loop() {
		o = ovUpdate(o, msg)
	}
}
