package player

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// seekPlayer is a player of a 40s trace that records where it was sent.
type seekPlayer struct{ at time.Duration }

func (p *seekPlayer) TogglePause() bool                { return false }
func (p *seekPlayer) Step()                            {}
func (p *seekPlayer) Faster() float64                  { return 1 }
func (p *seekPlayer) Slower() float64                  { return 1 }
func (p *seekPlayer) Seek(at time.Duration) error      { p.at = at; return nil }
func (p *seekPlayer) Paused() bool                     { return false }
func (p *seekPlayer) Speed() float64                   { return 1 }
func (p *seekPlayer) Position() (time.Duration, int64) { return 0, 0 }
func (p *seekPlayer) Reached() time.Duration           { return 0 }
func (p *seekPlayer) End() (time.Duration, bool)       { return 40 * time.Second, true }

// A digit jumps whether its key press carries the text a terminal sends
// or only its code, as a program's own message may.
func TestADigitJumpsWithOrWithoutItsText(t *testing.T) {
	keys := NewKeys()
	keys.Enable()
	for _, k := range []tea.KeyPressMsg{{Code: '5', Text: "5"}, {Code: '5'}} {
		p := &seekPlayer{}
		_, text, _, ok := Act(p, keys, k, time.Time{}, nil, false)
		if !ok || p.at != 20*time.Second || !strings.HasPrefix(text, "jumping to 50%") {
			t.Errorf("%#v: ok %v, sought %v, said %q; want 50%%, 20s", k, ok, p.at, text)
		}
	}
}
