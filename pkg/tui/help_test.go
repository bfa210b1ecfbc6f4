package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The help explains every gauge a reader may stop at and each END of the
// requests table; at 80x24 it does not fit, and ↓/G scroll to its end.
func TestHelpExplainsTheGaugesAndTheEndsAndScrolls(t *testing.T) {
	m, _ := demoModel(t, 160, 60)
	all := strings.Join(strings.Fields(ansi.Strip(strings.Join(m.HelpLines(160), "\n"))), " ")
	mustContain(t, all, "watch restarts:", "duplicates:", "UID mismatch:", "apply latency:", "the bookmark's rv",
		"closed by the server", "timeout:", "error:", "canceled:", "stopped: the run ended it")

	m, _ = demoModel(t, 80, 24)
	m = update(m, keyPress("?"))
	s := screen(m)
	mustContain(t, s, "Keys", "scroll · esc or ? closes the help")
	mustNotContain(t, s, "--once, an alert")
	m = update(m, keyPress("G"))
	s = screen(m)
	mustContain(t, s, "--once, an alert")
	mustNotContain(t, s, " Keys ")
	m = update(m, keyPress("g"))
	mustContain(t, screen(m), " Keys ")
	// Closed and opened again, it starts at the top.
	m = update(m, keyPress("G"))
	m = update(m, keyPress("?"))
	m = update(m, keyPress("?"))
	mustContain(t, screen(m), " Keys ")
}
