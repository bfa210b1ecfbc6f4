package dashboard

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

func TestAlertRulesShowHowCloseEachIsAndATripShowsABanner(t *testing.T) {
	for _, sz := range sizes {
		m, clock := demoModel(t, sz.w, sz.h)
		rows := []program.AlertRow{
			{Rule: "relists>0", Resource: "configmaps.v1", Value: "0", Threshold: "> 0"},
			{Rule: "bookmark-age>3m0s", Resource: "configmaps.v1", Value: "2m30s", Threshold: "> 3m0s", Fraction: 150.0 / 180},
		}
		m = update(m, program.SnapshotMsg{At: clock.Time, Alerts: &program.Alerts{Rows: rows}})
		s := screen(m)
		tuitest.MustContain(t, s, "rules · --fail-on", "relists>0", "bookmark-age>3m0s", "2m30s", "> 3m0s", " 83%", "ok")
		tuitest.MustNotContain(t, s, "ALERT", "TRIPPED")

		rows[0].Value, rows[0].Tripped, rows[0].Fraction = "1", true, 1
		m = update(m, program.SnapshotMsg{At: clock.Time, Alerts: &program.Alerts{Rows: rows, Fatal: true,
			Banner: "relists>0 tripped on configmaps.v1: relists is 1; the run stopped (q exits with status 3)"}})
		got := tuitest.Lines(m.View().Content)
		if len(got) != sz.h {
			t.Errorf("%dx%d: %d lines, want %d", sz.w, sz.h, len(got), sz.h)
		}
		s = screen(m)
		tuitest.MustContain(t, s, " ALERT  relists>0 tripped on configmaps.v1", "TRIPPED")
		if first := ansi.Strip(got[3]); len(first) < 7 || first[:7] != " ALERT " {
			t.Errorf("%dx%d: the banner is not the first line under the header: %q", sz.w, sz.h, first)
		}
	}
}
