package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// poll takes one snapshot of m's feed, as its poller does.
func poll(t *testing.T, m Model) Model {
	t.Helper()
	msgs := tuitest.RunCmd(m.PollCmd(0))
	if len(msgs) != 1 {
		t.Fatalf("a poll gave %d messages, want 1", len(msgs))
	}
	return update(m, msgs[0])
}

// The findings pane: the header counts the findings that are not ignored,
// colored by the worst; f lists them newest first, the ignored one marked;
// enter shows the selected one's evidence as the engine updates it; esc
// goes back to the pane, esc or f closes it.
func TestFindingsPaneListsNewestFirstAndShowsEvidence(t *testing.T) {
	feed := &tuitest.FindingsFeed{}
	clock := tuitest.NewFakeClock()
	m := newAlone(tuitest.DemoOptions(clock), tuitest.DemoResource(program.Feed{Findings: feed.List}))
	t.Cleanup(m.Close)
	m = resize(m, 120, 40)
	clock.Time = tuitest.At(110 * time.Second)
	m = poll(t, m)
	s := screen(m)
	tuitest.MustContain(t, s, "no findings", "f findings")

	feed.Set(tuitest.DemoFindings()...)
	m = poll(t, m)
	s = screen(m)
	tuitest.MustContain(t, s, "2 findings (error)", "+1 ignored")

	m = update(m, tuitest.KeyPress("f"))
	if m.State != program.StateFindings {
		t.Fatalf("f left the dashboard in state %v, want findings", m.State)
	}
	s = screen(m)
	tuitest.MustContain(t, s, "findings · 2 findings (+1 ignored) · newest first", "(ignored) the streaming list was refused", findingspane.Hint)
	storm, ignored, missed := strings.Index(s, "relist-storm"), strings.Index(s, "watch-list-unsupported"), strings.Index(s, "missed-deletes")
	if storm < 0 || ignored < 0 || missed < 0 || storm >= ignored || ignored >= missed {
		t.Errorf("want relist-storm, watch-list-unsupported, missed-deletes, newest first:\n%s", s)
	}
	tuitest.MustNotContain(t, s, "objects ", "event rates") // the pane is over the dashboard

	m = update(update(update(m, tuitest.KeyPress("down")), tuitest.KeyPress("down")), tuitest.KeyPress("enter"))
	if m.State != program.StateDetail {
		t.Fatalf("enter on a finding left state %v, want detail", m.State)
	}
	s = screen(m)
	tuitest.MustContain(t, s, "Finding missed-deletes  warning  configmaps.v1", "the relist at resourceVersion 1250",
		"#3 #4", "default/web-config-2", "1b2c3d4e → 9e8d7c6b", "(1m24s)", "the watch was down past the server's history",
		"handle DeletedFinalStateUnknown", "https://kubernetes.io/docs/reference/using-api/api-concepts/", findingspane.DetailHint)

	// The evidence grows while it is shown.
	grown := tuitest.DemoFindings()
	grown[0].Evidence.Text = "the relist at resourceVersion 1400 found 5 objects deleted"
	feed.Set(grown...)
	m = poll(t, m)
	tuitest.MustContain(t, screen(m), "the relist at resourceVersion 1400 found 5 objects deleted")

	m = update(m, tuitest.KeyPress("esc"))
	if m.State != program.StateFindings {
		t.Fatalf("esc from a finding's evidence left state %v, want the findings pane", m.State)
	}
	for _, close := range []string{"esc", "f"} {
		m.State = program.StateFindings
		if m = update(m, tuitest.KeyPress(close)); m.State != program.StateDashboard {
			t.Errorf("%s on the findings pane left state %v, want the dashboard", close, m.State)
		}
	}
	help := update(peek(m), tuitest.KeyPress("?"))
	tuitest.MustContain(t, screen(help), "findings", "f ")
	tuitest.MustContain(t, screen(update(help, tuitest.KeyPress("G"))), "what the notes mean") // the help's end
}
