package overview

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// The proxy's overview with no stream yet says how to connect to it
// (Options.Connect), its uptime ticks with no row to poll, and its footer
// and help offer no r and a: they cannot act on another program's reflector.
func TestEmptyProxyOverviewSaysHowToConnectAndTicks(t *testing.T) {
	clock := tuitest.NewFakeClock()
	opts := tuitest.DemoOptions(clock)
	opts.Added = make(chan program.Resource)
	opts.Kind = program.Observing("proxy 127.0.0.1:34567")
	opts.Connect = []string{"the proxy serves on http://127.0.0.1:34567", "KUBECONFIG=proxy.kubeconfig ./my-controller"}
	o := newOverview(opts, nil)
	t.Cleanup(o.Close)
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 120, Height: 24})
	s := ovScreen(o)
	tuitest.MustContain(t, s, "no stream yet · the proxy serves on http://127.0.0.1:34567", "KUBECONFIG=proxy.kubeconfig ./my-controller", "up 0s")
	tuitest.MustNotContain(t, s, "no resources", "force relist", "audit now", "• r relist", "• a audit")
	if o.tickCmd() == nil {
		t.Fatal("an overview to which resources come has no tick: its uptime stands still with no row")
	}
	clock.Time = tuitest.At(7 * time.Second)
	o = ovUpdate(o, tickMsg{})
	tuitest.MustContain(t, ovScreen(o), "up 7.0s")
	help := ovScreen(ovKeys(ovPeek(o), "?"))
	tuitest.MustNotContain(t, help, "force relist", "audit now", "r and a act")
}

// A replay's dashboard and overview offer no r and a (they need a live
// reflector), but say why when pressed; a live one offers them.
func TestReplayOffersNoRelistOrAudit(t *testing.T) {
	for _, replay := range []bool{false, true} {
		clock := tuitest.NewFakeClock()
		opts := tuitest.DemoOptions(clock)
		opts.Replay = replay
		m := resize(newAlone(opts, tuitest.DemoResource(program.Feed{})), 160, 40)
		t.Cleanup(m.Close)
		o := newOverview(opts, ovDemoResources([numOvDemo]program.Feed{}))
		t.Cleanup(o.Close)
		o = ovUpdate(o, tea.WindowSizeMsg{Width: 160, Height: 40})
		screens := map[string]string{"dashboard": screen(m), "dashboard help": screen(update(peek(m), tuitest.KeyPress("?"))),
			"overview": ovScreen(o), "overview help": ovScreen(ovKeys(ovPeek(o), "?"))}
		for name, s := range screens {
			if replay {
				tuitest.MustNotContain(t, s, "• r relist", "• a audit", "r force relist", "a audit now", "force relist  ", "audit now")
			} else if name == "dashboard" || name == "overview" { // the footer's short words
				tuitest.MustContain(t, s, "• r relist", "• a audit")
			} else if name != "overview help" {
				tuitest.MustContain(t, s, "force relist", "audit now")
			}
		}
		if replay {
			tuitest.MustContain(t, screen(update(peek(m), tuitest.KeyPress("r"))), "force relist needs a live cluster: this is a replay")
		}
	}
}

// After an alert stopped the run, the frozen screen offers no r and a, and
// says why when they are pressed.
func TestFatalAlertOffersNoRelistOrAudit(t *testing.T) {
	m, _ := demoModel(t, 160, 40)
	tuitest.MustContain(t, screen(m), "• r relist", "• a audit")
	s := tuitest.DemoSnapshots()[len(tuitest.DemoSnapshots())-1]
	s.Alerts = &program.Alerts{Banner: "the run stopped, q exits with status 3: relists>0", Fatal: true}
	m = update(m, s)
	tuitest.MustNotContain(t, screen(m), "• r relist", "• a audit")
	tuitest.MustNotContain(t, screen(update(peek(m), tuitest.KeyPress("?"))), "force relist", "audit now")
	tuitest.MustContain(t, screen(update(peek(m), tuitest.KeyPress("r"))), "force relist is not available: an alert stopped the run")

	o := ovDemo(t, 160, 40, [numOvDemo]program.Feed{})
	tuitest.MustContain(t, ovScreen(o), "• r relist")
	o = ovUpdate(o, resourceMsg{i: 0, msg: s})
	tuitest.MustNotContain(t, ovScreen(o), "• r relist", "• a audit")
}
