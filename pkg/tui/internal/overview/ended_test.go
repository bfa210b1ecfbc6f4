package overview

import (
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// isEnded says msg, or the resource message that wraps it, is the run's end.
func isEnded(msg tea.Msg) bool {
	if rm, ok := msg.(resourceMsg); ok {
		msg = rm.msg
	}
	_, ok := msg.(program.EndedMsg)
	return ok
}

// The overview of several resources holds its last screen the same way.
func TestAnEndedOverviewKeepsItsScreenToLookThroughUntilQ(t *testing.T) {
	ended := make(chan struct{})
	clock := tuitest.NewFakeClock()
	opts := tuitest.DemoOptions(clock)
	opts.Ended = ended
	// Moved on after the end without writing clock.Time, which the
	// pollers Init started may still read (a race).
	var later atomic.Int64
	opts.Now = func() time.Time { return clock.Time.Add(time.Duration(later.Load())) }
	var feeds [numOvDemo]program.Feed
	o := newOverview(opts, ovDemoResources(feeds))
	t.Cleanup(o.Close)
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 120, Height: 40})
	for _, msg := range ovDemoMessages() {
		o = ovUpdate(o, msg)
	}
	if _, cmd := o.Update(tuitest.KeyPress("j")); tuitest.Quits(cmd) {
		t.Fatal("j quit a running overview")
	}
	close(ended)
	o = ovUpdate(o, tuitest.EndedMsgOf(t, o.Init(), isEnded))
	tuitest.MustContain(t, ovScreen(o), "run ended", "LIVE ended")
	// Its clock stops there: ages and "for" stay as they were.
	frozen := ovScreen(o)
	later.Store(int64(10 * time.Minute))
	if o = ovUpdate(o, tickMsg{}); ovScreen(o) != frozen {
		t.Errorf("the ended overview changed 10 minutes on:\n%s\nthen:\n%s", frozen, ovScreen(o))
	}
	for _, k := range []string{"j", "enter", "k", "esc"} {
		next, cmd := o.Update(tuitest.KeyPress(k))
		if tuitest.Quits(cmd) {
			t.Fatalf("%s on the ended overview quit it", k)
		}
		o = next.(Overview)
	}
	// Opened on a resource, the same.
	o = ovUpdate(o, tuitest.KeyPress("enter"))
	if o.Shown < 0 {
		t.Fatal("enter on the ended overview opened no resource")
	}
	tuitest.MustContain(t, ovScreen(o), "run ended")
	if _, cmd := o.Update(tuitest.KeyPress("q")); !tuitest.Quits(cmd) {
		t.Error("q on an ended resource's dashboard: did not quit")
	}
}
