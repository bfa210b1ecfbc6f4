package dashboard

import (
	"context"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// The help explains every gauge a reader may stop at and each END of the
// requests table; at 80x24 it does not fit, and ↓/G scroll to its end.
func TestHelpExplainsTheGaugesAndTheEndsAndScrolls(t *testing.T) {
	m, _ := demoModel(t, 160, 60)
	all := strings.Join(strings.Fields(ansi.Strip(strings.Join(m.HelpLines(160), "\n"))), " ")
	tuitest.MustContain(t, all, "watch restarts:", "duplicates:", "UID mismatch:", "apply latency:", "the bookmark's rv",
		"closed by the server", "timeout:", "error:", "canceled:", "stopped: the run ended it")

	m, _ = demoModel(t, 80, 24)
	m = update(m, tuitest.KeyPress("?"))
	s := screen(m)
	tuitest.MustContain(t, s, "Keys", "scroll · esc or ? closes the help")
	tuitest.MustNotContain(t, s, "--once, an alert")
	m = update(m, tuitest.KeyPress("G"))
	s = screen(m)
	tuitest.MustContain(t, s, "--once, an alert")
	tuitest.MustNotContain(t, s, " Keys ")
	m = update(m, tuitest.KeyPress("g"))
	tuitest.MustContain(t, screen(m), " Keys ")
	// Closed and opened again, it starts at the top.
	m = update(m, tuitest.KeyPress("G"))
	m = update(m, tuitest.KeyPress("?"))
	m = update(m, tuitest.KeyPress("?"))
	tuitest.MustContain(t, screen(m), " Keys ")
}

// At 120 columns a live dashboard's footer offers every key it acts on,
// the actions too (a reviewer found t, r and a cut off).
func TestTheFooterOffersEveryActionAt120Columns(t *testing.T) {
	clock := tuitest.NewFakeClock()
	feed := program.Feed{ForceRelist: func() {}, Audit: func(context.Context) (*reflector.AuditReport, error) { return &reflector.AuditReport{}, nil }}
	m := resize(newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(feed)), 120, 40)
	t.Cleanup(m.Close)
	m = tuitest.FeedDemo(m, clock, update)
	lines := tuitest.Lines(screen(m))
	footer := lines[len(lines)-1]
	for _, want := range []string{"? help", "q quit", "space pause", "/ filter", "t type", "tab pane", "enter open", "r relist", "a audit"} {
		if !strings.Contains(footer, want) {
			t.Errorf("footer %q lacks %q", footer, want)
		}
	}
	if strings.Contains(footer, "…") {
		t.Errorf("footer %q is cut", footer)
	}
}

// The help says where the run serves its metrics, a port chosen for :0
// too (a reviewer found it only on stderr, under the dashboard).
func TestTheHelpSaysWhereTheMetricsAreServed(t *testing.T) {
	m := polledModel(t, 120, 40, func(o *program.Options) { o.Metrics = "http://127.0.0.1:37415/metrics" }, func(*reflector.Stats) {})
	tuitest.MustContain(t, screen(update(m, tuitest.KeyPress("?"))), "metrics", "served at http://127.0.0.1:37415/metrics (--metrics-address)")
	m = polledModel(t, 120, 40, nil, func(*reflector.Stats) {})
	tuitest.MustNotContain(t, screen(update(m, tuitest.KeyPress("?"))), "served at")
}
