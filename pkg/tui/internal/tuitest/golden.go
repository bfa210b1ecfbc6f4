package tuitest

import (
	"bytes"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// GoldenOptions are the demo's options for a golden screen, changed by
// opts (if not nil): the clock is fixed at the demo's last poll, as the
// program's goroutines read it.
func GoldenOptions(opts func(*program.Options)) program.Options {
	o := DemoOptions(NewFakeClock())
	end := At(110 * time.Second)
	o.Now = func() time.Time { return end } // read by the program's goroutines: fixed, so no race
	if opts != nil {
		opts(&o)
	}
	return o
}

// GoldenProgram runs m as a program at w x h with the plain color profile.
func GoldenProgram(t *testing.T, m tea.Model, w, h int) *teatest.TestModel {
	t.Helper()
	return teatest.NewTestModel(t, m,
		teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
}

// FinalScreen quits tm and is its final screen as plain text, ended by a
// newline.
func FinalScreen(t *testing.T, tm *teatest.TestModel) []byte {
	t.Helper()
	tm.Send(KeyPress("ctrl+c"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second))
	var out bytes.Buffer
	plainText := &colorprofile.Writer{Forward: &out, Profile: colorprofile.NoTTY}
	if _, err := plainText.Write([]byte(final.View().Content)); err != nil {
		t.Fatal(err)
	}
	return append(out.Bytes(), '\n')
}
