package tui

import (
	"bytes"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// goldenScreen runs the dashboard as a program at w x h with the plain
// color profile and a clock fixed at the demo's last poll, sends msgs, quits,
// and returns the final screen as plain text. Regenerate the goldens with
// go test ./pkg/tui -run Golden -update.
func goldenScreen(t *testing.T, w, h int, opts func(*Options), msgs ...tea.Msg) []byte {
	t.Helper()
	o := demoOptions(newFakeClock())
	end := at(110 * time.Second)
	o.Now = func() time.Time { return end } // read by the program's goroutines: fixed, so no race
	if opts != nil {
		opts(&o)
	}
	m := New(o, demoResource(Feed{}))
	t.Cleanup(m.Close)
	tm := teatest.NewTestModel(t, m,
		teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	for _, s := range demoSnapshots() {
		tm.Send(s)
	}
	tm.Send(notesMsg{notes: demoNotes()})
	tm.Send(demoChanges())
	for _, msg := range msgs {
		tm.Send(msg)
	}
	tm.Send(keyPress("ctrl+c"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	var out bytes.Buffer
	plainText := &colorprofile.Writer{Forward: &out, Profile: colorprofile.NoTTY}
	if _, err := plainText.Write([]byte(final.View().Content)); err != nil {
		t.Fatal(err)
	}
	return append(out.Bytes(), '\n')
}

// goldenOverview runs the overview of the demo's four resources as a
// program at w x h, like goldenScreen, sends the demo's messages and then
// keys, quits, and returns the final screen as plain text.
func goldenOverview(t *testing.T, w, h int, keys ...string) []byte {
	t.Helper()
	o := demoOptions(newFakeClock())
	end := at(110 * time.Second)
	o.Now = func() time.Time { return end } // read by the program's goroutines: fixed, so no race
	m := NewOverview(o, ovDemoResources([numOvDemo]Feed{}))
	t.Cleanup(m.Close)
	// A program renders a frame after every message, and under -race a frame
	// of the overview costs a tenth of a second: the demo's first minute of
	// polls goes to Update before the program starts (the same calls in the
	// same order), and the program gets the last round of polls and what follows.
	msgs := ovDemoMessages()
	last := len(msgs) - numOvDemo - 2
	m = ovUpdate(m, tea.WindowSizeMsg{Width: w, Height: h})
	for _, msg := range msgs[:last] {
		m = ovUpdate(m, msg)
	}
	tm := teatest.NewTestModel(t, m,
		teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	for _, msg := range msgs[last:] {
		tm.Send(msg)
	}
	for _, k := range keys {
		tm.Send(keyPress(k))
	}
	tm.Send(keyPress("ctrl+c"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Overview)
	var out bytes.Buffer
	plainText := &colorprofile.Writer{Forward: &out, Profile: colorprofile.NoTTY}
	if _, err := plainText.Write([]byte(final.View().Content)); err != nil {
		t.Fatal(err)
	}
	return append(out.Bytes(), '\n')
}

func TestGoldenOverview80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenOverview(t, 80, 24))
}

func TestGoldenOverview160x48(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenOverview(t, 160, 48))
}

func TestGoldenOverviewHelp80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenOverview(t, 80, 24, "?"))
}

func TestGoldenDashboard80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenScreen(t, 80, 24, nil))
}

func TestGoldenDashboard160x48(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenScreen(t, 160, 48, nil))
}

func TestGoldenReplayRequests120x40(t *testing.T) {
	replay := func(o *Options) {
		o.Replay, o.Trace = true, "testdata/traces/demo.jsonl"
	}
	snaps := demoSnapshots()
	snap := snaps[len(snaps)-1] // the same stats (and diff) as the last poll, now with a position
	snap.hasProgress, snap.done, snap.total = true, 3120, 4800
	teatest.RequireEqualOutput(t, goldenScreen(t, 120, 40, replay, snap, keyPress("tab"), keyPress("up")))
}

func TestGoldenObjectDetail80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenScreen(t, 80, 24, nil, keyPress("up"), keyPress("up"), keyPress("enter")))
}

func TestGoldenHelp80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenScreen(t, 80, 24, nil, keyPress("?")))
}
