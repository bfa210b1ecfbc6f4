package overview

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// refreshOverview brings what the replay did to each of the overview's resources.
func refreshOverview(o Overview) Overview {
	for i := range o.subs {
		o.subs[i] = refresh(o.subs[i])
	}
	return o
}

func TestTheOverviewTakesThePlayerKeysOnAReplayOfTwoResources(t *testing.T) {
	r := tuitest.NewPlayerRig(t, "../../../trace/testdata/handwritten/two-resources.jsonl", 1)
	o := newOverview(r.Opts, r.Resources)
	t.Cleanup(o.Close)
	next, _ := o.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	o = next.(Overview)
	next, _ = o.Update(tuitest.KeyPress("space"))
	o = next.(Overview)
	if !r.Player.Paused() {
		t.Fatal("space on the overview did not pause the replay")
	}
	errc := r.Run()
	r.Held(-1)
	// Three steps: the two resources' first decisions, then the first request (at 1ms).
	var served int64
	for range 3 {
		next, _ = o.Update(tuitest.KeyPress("right"))
		o = next.(Overview)
		before := served
		served = r.Held(before)
		if got := tuitest.Marks(r.Kinds[before:served]); got != 1 {
			t.Errorf("a step served %v: %d requests and decisions, want 1", r.Kinds[before:served], got)
		}
	}
	if r.Kinds[served-1] != trace.KindRequest {
		t.Errorf("the third step ended at a %s line, want the first request", r.Kinds[served-1])
	}
	o = refreshOverview(o)
	view := tuitest.Plain(o.View())
	for _, want := range []string{"stepping to the next request or decision", "⏸ paused ×1", "2 resources"} {
		if !strings.Contains(view, want) {
			t.Errorf("the overview lacks %q:\n%s", want, view)
		}
	}
	next, _ = o.Update(tuitest.KeyPress("0"))
	o = next.(Overview)
	if view := tuitest.Plain(o.View()); !strings.Contains(view, "is behind the replay") {
		t.Errorf("0 after a step: the overview does not say the start is behind:\n%s", view)
	}
	for range 12 {
		next, _ = o.Update(tuitest.KeyPress("+"))
		o = next.(Overview)
	}
	next, _ = o.Update(tuitest.KeyPress("space"))
	o = next.(Overview)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if view := tuitest.Plain(o.View()); !strings.Contains(view, "replay resumed at ×max") {
		t.Errorf("the overview does not say the replay resumed:\n%s", view)
	}
	next, _ = o.Update(tuitest.KeyPress("?"))
	o = next.(Overview)
	if view := tuitest.Plain(o.View()); !strings.Contains(view, "pause, resume") || !strings.Contains(view, "jump to 0-90%") || !strings.Contains(view, "a replay only runs forward") {
		t.Errorf("the overview's help lacks the player keys:\n%s", view)
	}
}

// A replay whose resources failed (the API server refused their watches)
// ends as one whose resources stopped does: the header says "ended", and
// the player keys say so, once the last resource failed or stopped.
func TestTheReplayOfARunWhoseResourcesFailedEnds(t *testing.T) {
	r := tuitest.NewPlayerRig(t, "../../../trace/testdata/failed/two-forbidden.jsonl", 0)
	o := newOverview(r.Opts, r.Resources)
	t.Cleanup(o.Close)
	next, _ := o.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	o = next.(Overview)
	if err := <-r.Run(); err == nil || !strings.Contains(err.Error(), "403 Forbidden") {
		t.Fatalf("the replay of the forbidden watches: %v, want their 403s", err)
	}
	o = refreshOverview(o)
	view := tuitest.Plain(o.View())
	for _, want := range []string{"2 Failed", "100% ended"} {
		if !strings.Contains(view, want) {
			t.Errorf("the overview lacks %q:\n%s", want, view)
		}
	}
	next, _ = o.Update(tuitest.KeyPress("right"))
	o = next.(Overview)
	if view := tuitest.Plain(o.View()); !strings.Contains(view, "the replay has ended") {
		t.Errorf("→ on the ended replay does not say it ended:\n%s", view)
	}
	// One resource's dashboard alone says it too.
	d := refresh(o.subs[0])
	if view := tuitest.Plain(d.View()); !strings.Contains(view, "100% ended") {
		t.Errorf("the failed resource's dashboard does not say the replay ended:\n%s", view)
	}
	// On a narrow screen too: the badge's bar and clock give way to where
	// the replay is and that it ended (the line was cut at "· 100…").
	next, _ = o.Update(tea.WindowSizeMsg{Width: 64, Height: 24})
	o = next.(Overview)
	if view := tuitest.Plain(o.View()); !strings.Contains(view, "· 100% ended") {
		t.Errorf("at 64 columns the overview does not say the replay ended:\n%s", view)
	}
}

// A rewind from the overview's table hands the row selected and whether h
// showed the forgotten streams, for the next overview (Options.Reopen).
func TestARewindFromTheTableKeepsItsSelectionAndTheForgottenStreamsShown(t *testing.T) {
	r := tuitest.NewPlayerRig(t, "../../../trace/testdata/handwritten/two-resources.jsonl", 0)
	var view *program.View
	r.Opts.Rewind = func(_ time.Duration, v program.View) { view = &v }
	o := newOverview(r.Opts, r.Resources)
	t.Cleanup(o.Close)
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 120, Height: 40})
	if err := <-r.Run(); err != nil {
		t.Fatal(err)
	}
	o.ShowForgotten = true // h, as when a stream was forgotten
	ovKeys(o, "down", "2")
	want := program.View{Row: -1, Selected: 1, ShowForgotten: true}
	if view == nil || *view != want {
		t.Fatalf("Rewind got the view %+v, want %+v", view, want)
	}
	r.Opts.Reopen = view
	again := newOverview(r.Opts, r.Resources)
	t.Cleanup(again.Close)
	if again.Shown != -1 || again.selected() != 1 || !again.ShowForgotten {
		t.Errorf("after the rewind: shown %d, selected %d, forgotten shown %v; want the table, the second row, shown", again.Shown, again.selected(), again.ShowForgotten)
	}
}
