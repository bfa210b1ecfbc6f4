package program

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/detail"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
)

// Root is the dashboard's one root: the options, the styles, the chrome
// (size, keys, help, the player and its status), the state of the screen,
// which resource's dashboard shows, the findings pane and the detail. There
// is one per run: the Overview holds it and hands it to each resource's
// dashboard (Model), a component that reads and moves the same state, as
// gh-dash's components share its program context. It handles the screens
// over a component's own: the help, the findings pane and a detail, with
// their keys, bodies and footer hints.
type Root struct {
	// Opts are the run's options, with their defaults.
	Opts Options
	// St are the styles of every screen.
	St common.Styles
	// Chrome frames every screen: size, status, help, the player.
	Chrome Chrome
	// State is what the screen shows.
	State ViewState
	// Shown is the row whose dashboard shows, -1 for none: the overview's
	// table (0 for a dashboard built alone).
	Shown int
	// FindingsPane is the findings pane's cursor and window.
	FindingsPane findingspane.Pane
	// Detail is the detail open (StateDetail), or the last one.
	Detail DetailView
	// ShowForgotten says the overview's table lists the streams the proxy
	// forgot too (h); a rewind keeps it.
	ShowForgotten bool
}

// NewRoot is the root of a run of opts, which must have their defaults,
// showing the dashboard of row shown (-1: the overview's table).
func NewRoot(opts Options, shown int) *Root {
	st := common.NewStyles()
	return &Root{Opts: opts, St: st, Chrome: newChrome(opts, st), Shown: shown,
		ShowForgotten: opts.Reopen != nil && opts.Reopen.ShowForgotten}
}

// Framed is what the root asks of the component shown: its header and
// footer, the help's lines, the findings as its pane lists them, and the
// detail's title and lines, all at width.
type Framed interface {
	Header(width int) []string
	Footer(width int) string
	HelpLines(width int) []string
	FindingRows() []findingspane.Row
	DetailContent(width int) (string, []string)
}

// Frame frames s's screen: its header, the body of the help, the findings
// pane (where and now as overlayBody's) or a detail, else own's, and its footer.
func (r *Root) Frame(s Framed, where func(int) string, now time.Time, own func() []string) tea.View {
	return r.Chrome.view(func() (header, body []string, footer string) {
		width, _, _ := r.Chrome.Size()
		body, ok := r.overlayBody(s, where, now)
		if !ok {
			body = own()
		}
		return s.Header(width), body, s.Footer(width)
	})
}

// OnPane says the screen is a pane over the dashboard or the overview (the
// findings, a detail, the churn): the player's keys work there too, as on
// the screen under it; not on the help, whose space scrolls it.
func (r *Root) OnPane() bool {
	return r.State == StateFindings || r.State == StateDetail || r.State == StateChurn
}

// OverlayKey handles a key on the help, the findings pane or a detail: q
// quits, ? opens the help, esc goes back, and the rest move the help's
// lines, the pane's cursor or the detail. ok is false on s's own screens,
// whose keys are s's.
func (r *Root) OverlayKey(s Framed, k tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	width, _, body := r.Chrome.Size()
	switch r.State {
	case StateHelp:
		cmd, closed := r.Chrome.helpKey(k, len(s.HelpLines(width)))
		if closed {
			r.State = StateDashboard
		}
		return cmd, true
	case StateFindings, StateDetail:
	default:
		return nil, false
	}
	switch {
	case key.Matches(k, r.Chrome.Keys.Quit):
		return tea.Quit, true
	case key.Matches(k, r.Chrome.Keys.Help):
		r.State = StateHelp
	case r.State == StateDetail && key.Matches(k, r.Chrome.Keys.Close):
		r.State = r.Detail.Back
	case r.State == StateDetail:
		// The detail shows body-1 lines under its title.
		common.ScrollText(&r.Detail.Offset, k, body-1, func() int { _, text := s.DetailContent(width); return len(text) - (body - 1) })
	default:
		rows := s.FindingRows()
		switch r.FindingsPane.Key(k, len(rows), max(body-2, 1)) {
		case findingspane.ActionClose:
			r.State = StateDashboard
		case findingspane.ActionOpen:
			row, _ := r.FindingsPane.Selected(rows)
			r.Detail = DetailView{Kind: DetailFinding, Finding: row.Finding, Res: row.Res, Back: StateFindings}
			r.State = StateDetail
		}
	}
	return nil, true
}

// overlayBody is the body of the help, the findings pane (where names a
// row's resource, nil for none) or a detail, at now; ok is false on s's
// own screens.
func (r *Root) overlayBody(s Framed, where func(int) string, now time.Time) (body []string, ok bool) {
	width, _, lines := r.Chrome.Size()
	switch r.State {
	case StateHelp:
		return r.Chrome.helpScreen.Window(s.HelpLines(width)), true
	case StateFindings:
		return r.FindingsPane.Lines(r.St, s.FindingRows(), where, now, width, lines), true
	case StateDetail:
		title, text := s.DetailContent(width)
		return detail.Frame(r.St, title, text, r.Detail.Offset, width, lines), true
	}
	return nil, false
}

// OverlayHint is the footer's hint under the help, the findings pane or a
// detail; ok is false on s's own screens.
func (r *Root) OverlayHint(s Framed) (hint string, ok bool) {
	switch r.State {
	case StateHelp:
		width, _, _ := r.Chrome.Size()
		return r.Chrome.helpHintFor(len(s.HelpLines(width))), true
	case StateFindings:
		return findingspane.Hint, true
	case StateDetail:
		if r.Detail.Kind == DetailFinding {
			return findingspane.DetailHint, true
		}
		return "esc back · ↑/↓ pgup/pgdn scroll · ? help · q quit", true
	}
	return "", false
}
