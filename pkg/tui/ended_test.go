package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// quits says whether cmd ends the program.
func quits(cmd tea.Cmd) bool {
	for _, msg := range runCmd(cmd) {
		if _, ok := msg.(tea.QuitMsg); ok {
			return true
		}
	}
	return false
}

// endedMsgOf waits for the model's Init to report that Options.Ended closed.
func endedMsgOf(t *testing.T, init tea.Cmd) tea.Msg {
	t.Helper()
	ch := make(chan tea.Msg, 16)
	go func() {
		for _, msg := range runCmdsUntil(init, func(m tea.Msg) bool { return isEnded(m) }) {
			ch <- msg
		}
		close(ch)
	}()
	select {
	case msg, ok := <-ch:
		if !ok {
			t.Fatal("Init never said the run ended")
		}
		return msg
	case <-time.After(5 * time.Second):
		t.Fatal("Init never said the run ended")
	}
	return nil
}

func isEnded(msg tea.Msg) bool {
	if rm, ok := msg.(resourceMsg); ok {
		msg = rm.msg
	}
	_, ok := msg.(program.EndedMsg)
	return ok
}

// runCmdsUntil runs the commands of init's batch, each on its own goroutine
// (a poller's waits), and returns the first message that matches.
func runCmdsUntil(init tea.Cmd, match func(tea.Msg) bool) []tea.Msg {
	msg := init()
	b, ok := msg.(tea.BatchMsg)
	if !ok {
		b = tea.BatchMsg{func() tea.Msg { return msg }}
	}
	found := make(chan tea.Msg, len(b))
	for _, c := range b {
		if c == nil {
			continue
		}
		go func() {
			for _, m := range runCmd(c) {
				if match(m) {
					found <- m
					return
				}
			}
		}()
	}
	return []tea.Msg{<-found}
}

// A live run that ends by itself (--once, --duration) keeps its last screen:
// the footer says it ended and any key quits; until then keys do their usual.
func TestAnEndedLiveRunKeepsItsScreenUntilAKey(t *testing.T) {
	clock := newFakeClock()
	ended := make(chan struct{})
	opts := demoOptions(clock)
	opts.Ended = ended
	m := resize(New(opts, demoResource(program.Feed{})), 120, 40)
	t.Cleanup(m.Close)
	for _, s := range demoSnapshots() {
		clock.now = s.At
		m = update(m, s)
	}
	mustNotContain(t, screen(m), "ended")
	if _, cmd := m.Update(keyPress("j")); quits(cmd) {
		t.Fatal("j quit a running dashboard")
	}
	close(ended)
	m = update(m, endedMsgOf(t, m.Init()))
	s := screen(m)
	mustContain(t, s, "ended: press any key to quit", "LIVE ended")
	if last := lines(s)[len(lines(s))-1]; !strings.Contains(last, "ended: press any key to quit") {
		t.Errorf("footer: got %q, want it to say the run ended", last)
	}
	for _, k := range []string{"j", "q", "space", "enter", "x"} {
		if _, cmd := m.Update(keyPress(k)); !quits(cmd) {
			t.Errorf("key %s on the ended run's screen: did not quit", k)
		}
	}
}

// The overview of several resources holds its last screen the same way.
func TestAnEndedOverviewKeepsItsScreenUntilAKey(t *testing.T) {
	ended := make(chan struct{})
	clock := newFakeClock()
	opts := demoOptions(clock)
	opts.Ended = ended
	var feeds [numOvDemo]program.Feed
	o := NewOverview(opts, ovDemoResources(feeds))
	t.Cleanup(o.Close)
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 120, Height: 40})
	for _, msg := range ovDemoMessages() {
		o = ovUpdate(o, msg)
	}
	if _, cmd := o.Update(keyPress("j")); quits(cmd) {
		t.Fatal("j quit a running overview")
	}
	close(ended)
	o = ovUpdate(o, endedMsgOf(t, o.Init()))
	mustContain(t, ovScreen(o), "ended: press any key to quit", "LIVE ended")
	if _, cmd := o.Update(keyPress("j")); !quits(cmd) {
		t.Error("j on the ended overview: did not quit")
	}
	// Opened on a resource, the same.
	o.Shown = o.tbl.Selected()
	mustContain(t, ovScreen(o), "ended: press any key to quit")
	if _, cmd := o.Update(keyPress("k")); !quits(cmd) {
		t.Error("k on an ended resource's dashboard: did not quit")
	}
}

// TestAResourceThatFailedBeforeItsFirstListSaysSo: a reflector that failed
// (a 403, say) before any list will never list; its objects gauge said it
// was "waiting for the first list"; it says it never listed.
func TestAResourceThatFailedBeforeItsFirstListSaysSo(t *testing.T) {
	for _, tc := range []struct {
		state reflector.State
		want  string
	}{
		{reflector.StateFailed, "failed, never listed"},
		{reflector.StateStopped, "stopped, never listed"},
		{reflector.StateListing, "waiting for the first"},
	} {
		cache, _ := store.New()
		m := New(demoOptions(newFakeClock()), demoResource(program.Feed{Store: cache}))
		m = resize(m, 120, 24)
		st := demoStats()
		st.State = tc.state
		s := demoSnapshot(time.Second, st)
		s.StoreReady, s.Counters = false, store.Counters{}
		m = update(m, s)
		mustContain(t, screen(m), tc.want)
		m.Close()
	}
}
