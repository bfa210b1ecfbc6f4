package tui

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/detail"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
)

// root is the dashboard's one root: the options, the styles, the chrome
// (size, keys, help, the player and its status), the state of the screen,
// which resource's dashboard shows, the findings pane and the detail. There
// is one per run: the Overview holds it and hands it to each resource's
// dashboard (Model), a component that reads and moves the same state, as
// gh-dash's components share its program context. It handles the screens
// over a component's own: the help, the findings pane and a detail, with
// their keys, bodies and footer hints.
type root struct {
	opts   Options
	st     common.Styles
	chrome chrome
	state  viewState
	// shown is the row whose dashboard shows, -1 for none: the overview's
	// table (0 for a Model built alone).
	shown  int
	fpane  findingspane.Pane
	detail detailView
}

// newRoot is the root of a run of opts, which must have their defaults,
// showing the dashboard of row shown (-1: the overview's table).
func newRoot(opts Options, shown int) *root {
	st := common.NewStyles()
	return &root{opts: opts, st: st, chrome: newChrome(opts, st), shown: shown}
}

// framed is what the root asks of the component shown: its header and
// footer, the help's lines, the findings as its pane lists them, and the
// detail's title and lines, all at width.
type framed interface {
	header(width int) []string
	footer(width int) string
	helpLines(width int) []string
	findingRows() []findingspane.Row
	detailContent(width int) (string, []string)
}

// view frames s's screen: its header, the body of the help, the findings
// pane (where and now as overlayBody's) or a detail, else own's, and its footer.
func (r *root) view(s framed, where func(int) string, now time.Time, own func() []string) tea.View {
	return r.chrome.view(func() (header, body []string, footer string) {
		width, _, _ := r.chrome.size()
		body, ok := r.overlayBody(s, where, now)
		if !ok {
			body = own()
		}
		return s.header(width), body, s.footer(width)
	})
}

// overlayKey handles a key on the help, the findings pane or a detail: q
// quits, ? opens the help, esc goes back, and the rest move the help's
// lines, the pane's cursor or the detail. ok is false on s's own screens,
// whose keys are s's.
func (r *root) overlayKey(s framed, k tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	width, _, body := r.chrome.size()
	switch r.state {
	case stateHelp:
		cmd, closed := r.chrome.helpKey(k, len(s.helpLines(width)))
		if closed {
			r.state = stateDashboard
		}
		return cmd, true
	case stateFindings, stateDetail:
	default:
		return nil, false
	}
	switch {
	case key.Matches(k, r.chrome.keys.Quit):
		return tea.Quit, true
	case key.Matches(k, r.chrome.keys.Help):
		r.state = stateHelp
	case r.state == stateDetail && key.Matches(k, r.chrome.keys.Close):
		r.state = r.detail.back
	case r.state == stateDetail:
		r.detail.scroll(k, body, func() int { _, text := s.detailContent(width); return len(text) })
	default:
		rows := s.findingRows()
		switch r.fpane.Key(k, len(rows), max(body-2, 1)) {
		case findingspane.ActionClose:
			r.state = stateDashboard
		case findingspane.ActionOpen:
			row, _ := r.fpane.Selected(rows)
			r.detail = detailView{kind: detailFinding, finding: row.Finding, res: row.Res, back: stateFindings}
			r.state = stateDetail
		}
	}
	return nil, true
}

// overlayBody is the body of the help, the findings pane (where names a
// row's resource, nil for none) or a detail, at now; ok is false on s's
// own screens.
func (r *root) overlayBody(s framed, where func(int) string, now time.Time) (body []string, ok bool) {
	width, _, lines := r.chrome.size()
	switch r.state {
	case stateHelp:
		return r.chrome.helpScreen.Window(s.helpLines(width)), true
	case stateFindings:
		return r.fpane.Lines(r.st, s.findingRows(), where, now, width, lines), true
	case stateDetail:
		title, text := s.detailContent(width)
		return detail.Frame(r.st, title, text, r.detail.offset, width, lines), true
	}
	return nil, false
}

// overlayHint is the footer's hint under the help, the findings pane or a
// detail; ok is false on s's own screens.
func (r *root) overlayHint(s framed) (hint string, ok bool) {
	switch r.state {
	case stateHelp:
		width, _, _ := r.chrome.size()
		return r.chrome.helpHintFor(len(s.helpLines(width))), true
	case stateFindings:
		return findingspane.Hint, true
	case stateDetail:
		if r.detail.kind == detailFinding {
			return findingspane.DetailHint, true
		}
		return "esc back · ↑/↓ pgup/pgdn scroll · ? help · q quit", true
	}
	return "", false
}
