package dashboard

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// A live run that ends by itself (--once, --duration) keeps its last screen:
// the footer says it ended; its keys still look through it (the findings,
// a request's detail); actions that need the run say it ended; q quits.
func TestAnEndedLiveRunKeepsItsScreenToLookThroughUntilQ(t *testing.T) {
	clock := tuitest.NewFakeClock()
	ended := make(chan struct{})
	opts := tuitest.DemoOptions(clock)
	opts.Ended = ended
	m := resize(newAlone(opts, tuitest.DemoResource(program.Feed{})), 120, 40)
	t.Cleanup(m.Close)
	for _, s := range tuitest.DemoSnapshots() {
		clock.Time = s.At
		m = update(m, s)
	}
	tuitest.MustNotContain(t, screen(m), "ended")
	if _, cmd := m.Update(tuitest.KeyPress("j")); tuitest.Quits(cmd) {
		t.Fatal("j quit a running dashboard")
	}
	close(ended)
	m = update(m, tuitest.EndedMsgOf(t, m.Init(), isEnded))
	s := screen(m)
	tuitest.MustContain(t, s, "run ended", "LIVE ended")
	if last := tuitest.Lines(s)[len(tuitest.Lines(s))-1]; !strings.Contains(last, "run ended") || !strings.Contains(last, "q quit") {
		t.Errorf("footer: got %q, want it to say the run ended", last)
	}
	// The uptime stops where the run ended, and says the run ran that
	// long (beside "Stopped for"); the screen still redraws.
	up := func(s string) string {
		first := tuitest.Lines(s)[0]
		if !strings.Contains(first, " ran ") {
			t.Fatalf("header: got %q, want it to say how long the run ran", first)
		}
		return first[strings.LastIndex(first, " ran "):]
	}
	before := up(s)
	m = update(m, tuitest.DemoSnapshot(15*time.Minute, tuitest.DemoStats()))
	if after := up(screen(m)); after != before {
		t.Errorf("the uptime went on after the run ended: %q, then %q", before, after)
	}
	// The whole screen stays as it was when the run ended: the bookmark's
	// age, the state's "for", the rates (README: frozen at the moment of
	// the trip); a reviewer saw the ages grow past what tripped.
	if after := screen(m); after != s {
		t.Errorf("the ended run's screen changed 15 minutes on:\n%s\nthen:\n%s", s, after)
	}
	for _, k := range []string{"j", "space", "enter", "esc", "?", "esc", "x", "tab"} {
		next, cmd := m.Update(tuitest.KeyPress(k))
		if tuitest.Quits(cmd) {
			t.Fatalf("key %s on the ended run's screen quit it", k)
		}
		m = next.(Model)
	}
	if m.State != program.StateDashboard {
		t.Errorf("after ? and esc: state %v, want the dashboard", m.State)
	}
	m = update(m, tuitest.KeyPress("?"))
	tuitest.MustContain(t, screen(m), "Reading the screen")
	m = update(m, tuitest.KeyPress("esc"))
	tuitest.MustContain(t, screen(m), "run ended")
	// r and a are not offered (they need the run); pressed, they say why,
	// and the footer still says the run ended.
	tuitest.MustNotContain(t, screen(m), "• r relist", "• a audit")
	m = update(m, tuitest.KeyPress("r"))
	tuitest.MustContain(t, screen(m), "force relist is not available: the run has ended")
	if last := tuitest.Lines(screen(m))[len(tuitest.Lines(screen(m)))-1]; !strings.Contains(last, "run ended") {
		t.Errorf("footer %q: the status hid that the run ended", last)
	}
	if _, cmd := m.Update(tuitest.KeyPress("q")); !tuitest.Quits(cmd) {
		t.Error("q on the ended run's screen: did not quit")
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
		m := newAlone(tuitest.DemoOptions(tuitest.NewFakeClock()), tuitest.DemoResource(program.Feed{Store: cache}))
		m = resize(m, 120, 24)
		st := tuitest.DemoStats()
		st.State = tc.state
		s := tuitest.DemoSnapshot(time.Second, st)
		s.StoreReady, s.Counters = false, store.Counters{}
		m = update(m, s)
		tuitest.MustContain(t, screen(m), tc.want)
		m.Close()
	}
}

// isEnded says msg is the run's end.
func isEnded(msg tea.Msg) bool {
	_, ok := msg.(program.EndedMsg)
	return ok
}

// newAlone builds the dashboard of one resource alone, with a root of its
// own, as the tests look at it; Close stops its background reads.
func newAlone(opts program.Options, res program.Resource) Model {
	return New(context.Background(), program.NewRoot(opts.WithDefaults(), 0), res, 0)
}

// Recording that stopped on a write error (a full disk) is said where the
// header named the trace being recorded, and once in the log: the run goes
// on, and a person watching a long run must see nothing is recorded.
func TestAStoppedRecordingIsSaidInTheHeader(t *testing.T) {
	m := polledModel(t, 120, 36, func(o *program.Options) { o.Trace = "run.jsonl" }, func(*reflector.Stats) {})
	tuitest.MustContain(t, screen(m), "recording run.jsonl")
	cause := "recording stopped: writing trace: write run.jsonl: no space left on device; the live view goes on, the trace is incomplete"
	m = update(m, program.NotesMsg{Notes: []reflector.Note{{At: tuitest.At(time.Minute), Seq: 1, Kind: reflector.NoteDecision, State: reflector.StateWatching,
		Decision: &reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonTraceWriteError, Cause: cause}}}})
	s := screen(m)
	tuitest.MustContain(t, s, "recording stopped run.jsonl", "trace-write-error: recording stopped: writing trace")
	tuitest.MustNotContain(t, s, "trace-write-error: trace-write-error")
}

// A watch the server has not answered for a second (a hung connection, a
// TLS handshake that does not end) is no watch yet: the state line says so,
// in yellow, not "running, 0 events".
func TestAWatchTheServerHasNotAnsweredIsSaidToWait(t *testing.T) {
	clock := tuitest.NewFakeClock()
	m := resize(newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{})), 120, 40)
	t.Cleanup(m.Close)
	stats := tuitest.DemoStats()
	stats.Current.Awaiting, stats.Current.Events, stats.Current.Started = true, 0, tuitest.At(100*time.Second)
	for _, tc := range []struct {
		at   time.Duration
		want string
	}{
		{100*time.Second + 500*time.Millisecond, "watch #5 running 500ms, 0 events"}, // a normal answer takes this long
		{109 * time.Second, "watch #5 sent 9.0s ago: no answer from the server yet"},
	} {
		clock.Time = tuitest.At(tc.at)
		m = update(m, tuitest.DemoSnapshot(tc.at, stats))
		tuitest.MustContain(t, screen(m), tc.want)
	}
}
