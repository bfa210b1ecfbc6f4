package dashboard

import (
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// goldenScreen runs the dashboard as a program at w x h with the plain
// color profile and a clock fixed at the demo's last poll, sends msgs, quits,
// and returns the final screen as plain text. Regenerate the goldens with
// go test ./pkg/tui/internal/dashboard ./pkg/tui/internal/overview -run Golden -update.
func goldenScreen(t *testing.T, w, h int, opts func(*program.Options), msgs ...tea.Msg) []byte {
	t.Helper()
	return goldenScreenOf(t, w, h, program.Feed{}, opts, msgs...)
}

// goldenScreenOf is goldenScreen of the demo resource with feed.
func goldenScreenOf(t *testing.T, w, h int, feed program.Feed, opts func(*program.Options), msgs ...tea.Msg) []byte {
	t.Helper()
	o := tuitest.GoldenOptions(opts)
	m := newAlone(o, tuitest.DemoResource(feed))
	t.Cleanup(m.Close)
	tm := tuitest.GoldenProgram(t, m, w, h)
	for _, s := range tuitest.DemoSnapshots() {
		tm.Send(s)
	}
	tm.Send(program.NotesMsg{Notes: tuitest.DemoNotes()})
	tm.Send(tuitest.DemoChanges())
	for _, msg := range msgs {
		tm.Send(msg)
	}
	return tuitest.FinalScreen(t, tm)
}

func TestGoldenDashboard80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenScreen(t, 80, 24, nil))
}

func TestGoldenDashboard160x48(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenScreen(t, 160, 48, nil))
}

func TestGoldenReplayRequests120x40(t *testing.T) {
	replay := func(o *program.Options) {
		o.Replay, o.Trace = true, "testdata/traces/demo.jsonl"
	}
	snaps := tuitest.DemoSnapshots()
	snap := snaps[len(snaps)-1] // the same stats (and diff) as the last poll
	teatest.RequireEqualOutput(t, goldenScreen(t, 120, 40, replay, snap, tuitest.KeyPress("tab"), tuitest.KeyPress("up")))
}

func TestGoldenObjectDetail80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenScreen(t, 80, 24, nil, tuitest.KeyPress("up"), tuitest.KeyPress("up"), tuitest.KeyPress("enter")))
}

func TestGoldenHelp80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenScreen(t, 80, 24, nil, tuitest.KeyPress("?")))
}
