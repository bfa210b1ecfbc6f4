package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

const demoTrace = "../../../../testdata/traces/demo.jsonl"

// refresh brings what the replay did to model i: its notes so far, then a poll.
func refresh(m Model) Model {
	for {
		if notes := m.Feed.Notes.Take(1); len(notes) > 0 {
			m = update(m, program.NotesMsg{Notes: notes})
			continue
		}
		return update(m, takeSnapshot(m.Opts, m.Feed))
	}
}

func TestThePlayerKeysPauseStepSpeedUpAndJumpAReplayOfTheDemoTrace(t *testing.T) {
	r := tuitest.NewPlayerRig(t, demoTrace, 1)
	m := newAlone(r.Opts, r.Resources[0])
	t.Cleanup(m.Close)
	m = resize(m, 120, 40)

	// space pauses before anything is served: the replay holds its first line.
	m = update(m, tuitest.KeyPress("space"))
	tuitest.MustContain(t, screen(m), "replay paused: space resumes", "⏸ paused ×1", "03:43:03 / 03:43:16 · 0%")
	errc := r.Run()
	r.Held(-1)
	if n := r.Served(); n != 0 {
		t.Fatalf("paused before the start, the replay served %d lines", n)
	}

	// → serves exactly one request or decision each time, then holds again.
	var served int64
	sawRequest := false
	for step := 1; step <= 8; step++ {
		m = update(m, tuitest.KeyPress("right"))
		tuitest.MustContain(t, screen(m), "stepping to the next request or decision")
		before := served
		served = r.Held(before)
		if got := tuitest.Marks(r.Kinds[before:served]); got != 1 {
			t.Fatalf("step %d served lines %d-%d %v: %d requests and decisions, want 1", step, before+1, served, r.Kinds[before:served], got)
		}
		m = refresh(m)
		tuitest.MustContain(t, screen(m), "⏸ paused")
		if last := r.Kinds[served-1]; last == trace.KindRequest {
			sawRequest = true
			// The request the step stopped at is the one running now: the
			// reflector takes the served line on its own goroutine, so wait
			// for it (and fail if it never comes).
			tuitest.WaitUntil(t, fmt.Sprintf("step %d's request to be running", step), func() bool {
				m = refresh(m)
				return m.Stats.Current != nil
			})
		}
	}
	if !sawRequest {
		t.Error("no step stopped at a request")
	}

	// + and - double and halve the speed, and say so.
	m = update(m, tuitest.KeyPress("+"))
	m = update(m, tuitest.KeyPress("+"))
	tuitest.MustContain(t, screen(m), "replay speed ×4", "⏸ paused ×4")
	m = update(m, tuitest.KeyPress("-"))
	tuitest.MustContain(t, screen(m), "replay speed ×2", "⏸ paused ×2")
	if s := r.Player.Speed(); s != 2 {
		t.Errorf("speed: got %v, want 2", s)
	}

	// 5 jumps to half of the recorded time, then goes on at ×2.
	end, _ := r.Player.End()
	m = update(m, tuitest.KeyPress("5"))
	tuitest.MustContain(t, screen(m), "jumping to 50% (03:43:09), then on at ×2")
	tuitest.WaitUntil(t, "the jump to 50%", func() bool { pos, _ := r.Player.Position(); return pos >= end/2 })
	m = update(m, tuitest.KeyPress("space"))
	r.Held(0)
	m = refresh(m)
	pos, _ := r.Player.Position()
	pct := int(pos * 100 / end)
	if pct < 50 {
		t.Fatalf("after jumping to 50%%: at %d%%", pct)
	}
	tuitest.MustContain(t, screen(m), "⏸ paused ×2", "· "+itoa(pct)+"%")

	// Back is refused: a replay only runs forward.
	m = update(m, tuitest.KeyPress("2"))
	tuitest.MustContain(t, screen(m), "20% (03:43:05) is behind the replay", "a replay only runs forward")
	if p, _ := r.Player.Position(); p != pos || !r.Player.Paused() {
		t.Errorf("a refused jump moved the replay to %v (paused %v), want it still at %v, paused", p, r.Player.Paused(), pos)
	}

	// + up to ×max, then space resumes: the rest goes as fast as possible.
	for range 10 {
		m = update(m, tuitest.KeyPress("+"))
	}
	tuitest.MustContain(t, screen(m), "replay speed ×max")
	m = update(m, tuitest.KeyPress("space"))
	tuitest.MustContain(t, screen(m), "replay resumed at ×max")
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	m = refresh(m)
	tuitest.MustContain(t, screen(m), "03:43:16 / 03:43:16 · 100%", "ended")
	if shown, n := r.Replay.Differences(5); n != 0 {
		t.Errorf("the replay, paused, stepped, sped up and jumped, decided differently: %v", shown)
	}
	// Once it has ended, the footer no longer offers the keys that play on
	// (this replay cannot rewind: no jump either), and they say so, not what
	// they would do.
	m.Status, m.Chrome.Status = program.Status{}, program.Status{} // the last key's status gone
	tuitest.MustNotContain(t, screen(m), "space pause, resume", "→ step", "0-9 jump")
	for _, k := range []string{"right", "space", "+", "-"} {
		m = update(m, tuitest.KeyPress(k))
		tuitest.MustContain(t, screen(m), "the replay has ended: q quits")
		tuitest.MustNotContain(t, screen(m), "stepping to", "replay resumed", "replay paused", "replay speed")
	}

	// ? lists the player's keys, and what they do.
	m = update(m, tuitest.KeyPress("?"))
	tuitest.MustContain(t, screen(m), "space", "pause, resume", "→", "step", "faster ×2", "slower ÷2", "0-9", "jump to 0-90%")
	m = update(m, tuitest.KeyPress("G")) // the help's end
	tuitest.MustContain(t, screen(m), "a replay only runs forward")
}

func itoa(n int) string { return strings.TrimSpace(format.Count(int64(n))) }

func TestWithoutAPlayerSpacePausesTheLogAndThePlayerKeysAreNotInTheHelp(t *testing.T) {
	m, _ := demoModel(t, 120, 40)
	m = update(m, tuitest.KeyPress("space"))
	if !m.Log.Paused {
		t.Error("space did not pause the log")
	}
	for _, k := range []string{"right", "+", "-", "5"} {
		m = update(m, tuitest.KeyPress(k))
	}
	tuitest.MustNotContain(t, screen(m), "replay speed", "jumping")
	m = update(m, tuitest.KeyPress("?"))
	tuitest.MustNotContain(t, screen(m), "pause, resume", "jump to 0-90%")
	tuitest.MustContain(t, screen(m), "resume log") // paused: space resumes it
}

// With Options.Rewind, a jump behind the replay hands the target to the
// caller, which starts the replay again, and ends the dashboard; a jump
// ahead still seeks. It hands where the dashboard was too (its row, its
// log's filters), for the next one to open there (Options.Reopen).
func TestAJumpBackRewindsWhenTheCallerCan(t *testing.T) {
	r := tuitest.NewPlayerRig(t, demoTrace, 0)
	rewound, view := time.Duration(-1), program.View{}
	r.Opts.Rewind = func(at time.Duration, v program.View) { rewound, view = at, v }
	m := newAlone(r.Opts, r.Resources[0])
	t.Cleanup(m.Close)
	m = resize(m, 120, 40)
	m.Reopen(program.View{Filter: "Web-2", TypeIdx: 1})
	m.ShowForgotten = true // the overview's h, kept across the rewind
	if err := <-r.Run(); err != nil {
		t.Fatal(err)
	}
	// Ended at ×max: - sets the speed the jump back replays at (a
	// reviewer's 0 ran it to the end again at once, and - did nothing).
	m = refresh(m)
	speed := r.Player.Speed()
	m = update(m, tuitest.KeyPress("-"))
	tuitest.MustContain(t, screen(m), ": 0-9 replays it again from that point at it")
	if r.Player.Speed() == speed {
		t.Errorf("- after the end left the speed at %v", speed)
	}
	end, _ := r.Player.End()
	next, cmd := m.Update(tuitest.KeyPress("2"))
	m = next.(Model)
	if rewound != end*2/10 {
		t.Fatalf("Rewind got %v, want 20%% of %v", rewound, end)
	}
	if want := (program.View{Row: 0, Filter: "Web-2", TypeIdx: 1, ShowForgotten: true}); view != want || m.Log.Filter != "web-2" {
		t.Errorf("Rewind got the view %+v (the log filters %q), want %+v", view, m.Log.Filter, want)
	}
	if cmd == nil {
		t.Fatal("a rewind leaves the dashboard running")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Errorf("a rewind's command: got %T, want tea.QuitMsg", cmd())
	}
	tuitest.MustContain(t, screen(m), "rewinding to 20%")
}

// The player's keys work on the panes over the dashboard (findings, a
// detail, the churn) as on it: a reviewer's space and digits did nothing
// there, with no word; not on the help, whose space scrolls it.
func TestThePlayerKeysWorkOnThePanes(t *testing.T) {
	for _, pane := range []program.ViewState{program.StateFindings, program.StateDetail, program.StateChurn, program.StateHelp} {
		r := tuitest.NewPlayerRig(t, demoTrace, 1)
		m := newAlone(r.Opts, r.Resources[0])
		t.Cleanup(m.Close)
		m = resize(m, 120, 40)
		m.State = pane
		m = update(m, tuitest.KeyPress("space"))
		if paused := strings.Contains(m.Chrome.Status.Text, "replay paused"); paused != (pane != program.StateHelp) {
			t.Errorf("space on the %s: paused %v (status %q)", pane, paused, m.Chrome.Status.Text)
		}
	}
}
