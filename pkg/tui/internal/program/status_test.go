package program

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
)

// A status goes 10 s after it was made on the run's clock, a replay's on
// the wall clock: a replay's clock stands still while it is paused and once
// it has ended (the footer must not keep an action's report for ever), and
// runs at its speed (at ×8 a report went in 1.2 s, too soon to read).
func TestAStatusGoesAfterItsTimeOnTheRunsClockOrTheWallClock(t *testing.T) {
	at := time.Date(2026, 12, 6, 3, 43, 16, 0, time.UTC)
	s := NewStatus("force relist needs a live cluster: this is a replay", common.SevNone, at, false)
	s.Expire(at.Add(statusFor))
	if s.Text == "" {
		t.Fatal("a status made just now went at once")
	}
	s.Expire(at.Add(statusFor + time.Second))
	if s.Text != "" {
		t.Errorf("a status %s old on the run's clock stayed", statusFor+time.Second)
	}

	s = NewStatus("force relist is not available: the run has ended", common.SevWarn, at, false)
	s.made = time.Now().Add(-statusFor - time.Second) // made 11 s ago: the ended run's clock stood still since
	s.Expire(at)
	if s.Text != "" {
		t.Errorf("a live status %s old on the wall clock stayed after the run's clock stopped at its end", statusFor+time.Second)
	}

	s = NewStatus("replay speed ×8", common.SevNone, at, true)
	s.Expire(at.Add(statusFor + time.Second)) // the replay's clock ran 11 s, at ×8
	if s.Text == "" {
		t.Fatal("a replay's status went after 11 s of its clock, made just now")
	}
	s.made = time.Now().Add(-statusFor - time.Second) // made 11 s ago on the wall clock
	s.Expire(at)                                      // the replay's clock has not moved
	if s.Text != "" {
		t.Errorf("a status %s old on the wall clock stayed while the replay's clock stood still", statusFor+time.Second)
	}
}

// A replay started again to rewind says so as it opens (the dashboard
// that said "rewinding" quit for it), until its status time is over.
func TestANoticeIsTheStatusARunOpensWith(t *testing.T) {
	at := time.Date(2026, 12, 6, 3, 43, 5, 0, time.UTC)
	c := newChrome(Options{Notice: "rewound to 03:43:05: the replay started again and ran to it", NoticeAt: at}, common.Styles{})
	c.Status.Expire(at.Add(time.Second))
	if c.Status.Text != "rewound to 03:43:05: the replay started again and ran to it" {
		t.Errorf("status %q, want the notice", c.Status.Text)
	}
	c = newChrome(Options{Warning: "namespace \"x\" not found", Notice: "rewound", NoticeAt: at}, common.Styles{})
	if c.Status.Text != "warning: namespace \"x\" not found" {
		t.Errorf("status %q, want the warning first", c.Status.Text)
	}
}

// A replay whose decisions differ from the recorded ones says so in its
// badge as they come (it was said only at exit), compact on a narrow screen.
func TestAReplaysBadgeCountsTheDecisionsThatDiffered(t *testing.T) {
	n := 0
	c := newChrome(Options{Replay: true, Differences: func() int { return n }}, common.Styles{})
	if b := c.badge(false, false); strings.Contains(b, "differ") {
		t.Errorf("badge %q with no difference", b)
	}
	n = 3
	if b := c.badge(false, false); !strings.Contains(b, "3 decisions differ") {
		t.Errorf("badge %q, want it to say 3 decisions differ", b)
	}
	if b := c.badge(false, true); !strings.Contains(b, "3 differ") {
		t.Errorf("compact badge %q, want it to say 3 differ", b)
	}
}

// A replay whose recording was cut (its run killed, its file cut short)
// says so on its badge once it ended, not only in the line after q.
func TestAReplaysBadgeSaysItsRecordingWasCut(t *testing.T) {
	cut := false
	c := newChrome(Options{Replay: true, EndedEarly: func() bool { return cut }}, common.Styles{})
	if b := c.badge(true, false); !strings.HasSuffix(b, " ended") {
		t.Errorf("badge %q of a whole recording, want it to end with ended", b)
	}
	cut = true
	if b := c.badge(true, false); !strings.Contains(b, "ended early: before its run's stop") {
		t.Errorf("badge %q, want it to say it ended before its run's stop", b)
	}
	if b := c.badge(true, true); !strings.HasSuffix(b, " ended early") {
		t.Errorf("compact badge %q, want it to say ended early", b)
	}
	if b := c.badge(false, false); strings.Contains(b, "ended") {
		t.Errorf("badge %q of a replay still running", b)
	}
}

// A state that just fits beside the findings' count stays two cells from
// it: "…0 events  no findings", never "…0 events no findings".
func TestTheStateLineKeepsTheStateApartFromTheFindings(t *testing.T) {
	c := newChrome(Options{}, common.Styles{})
	state, findings := "● Watching for 0s · watch #9 running 0s, 0 events", "no findings"
	for width := 60; width <= 80; width++ {
		line := c.Header(width, time.Time{}, nil, state, findings, false)[2]
		if strings.Contains(line, "events no") || strings.Contains(line, "… no") {
			t.Errorf("at %d: %q", width, line)
		}
	}
}
