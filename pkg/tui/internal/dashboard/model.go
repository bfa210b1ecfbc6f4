package dashboard

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/churn"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/history"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/logpane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/panes"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/prompt"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/rates"
)

// Model is the dashboard of one resource, a tea.Model. Build it with New;
// release it with Close. The overview holds one Model for each of its
// resources, a component that shares the overview's root. Its exported
// fields are what the overview reads of it, for its rows, header and
// footer; the Model writes them, but for Stopped, which the overview sets
// on a stream the proxy forgot once the replay served its last line (that
// stream is polled no more, and hears no stop).
//
// A Model's copies share its root (the screen's state, chrome, findings
// pane and detail): use the value Update returns, as bubbletea does, and
// not an older copy.
type Model struct {
	*program.Root     // the run's: the chrome, the state, the findings pane and the detail
	row           int // the resource's row on the overview (0 alone)
	res           program.Resource
	// Feed is res.Feed.
	Feed program.Feed
	// ctx is the Model's life, which its copies share: Close ends it.
	ctx    context.Context
	cancel context.CancelFunc
	// Keys.ToOverview is on when the model is one of several behind an
	// Overview: its help and footer say that esc goes back to the overview.
	Keys  keyMap
	focus panes.Pane

	// Now is the model's clock: opts.Now at the last message that carried time.
	Now time.Time
	// Stopped says the resource's reflector returned (its stop or failure
	// was noted), or, for a stream the proxy forgot, that the replay
	// served its last line: a replay's badge then says it ended.
	Stopped bool
	// Status reports this resource's last action (r, a), in its footer and,
	// named, on the overview's table; the player's is the root's.
	Status program.Status
	// Stats are the feed's, as last polled (HaveStats: once polled).
	Stats     reflector.Stats
	HaveStats bool
	// Counters and StoreReady are the store's, as last polled.
	Counters   store.Counters
	StoreReady bool
	// NotesLost is how many notes the NoteBuffer dropped.
	NotesLost int64
	// lastSeq is the last note's sequence number, to show where notes were
	// dropped: 0 before the first, as a reflector numbers its notes from 1.
	lastSeq uint64

	// Rates are the events per second of the last minute.
	Rates rates.Window
	// Log is the event log.
	Log      logpane.Pane
	requests panes.RequestsPane
	diff     panes.DiffPane
	history  *history.Objects
	filter   prompt.Prompt

	// Alerts are the feed's, as last polled.
	Alerts program.Alerts

	// Findings are the feed's, as last polled (HaveFindings: it has an engine).
	Findings     []findings.Finding
	HaveFindings bool

	// churn is the churn pane (c), with the feed's Churn as last read
	// while it was open; diffed says a note carried Changes (the footer
	// offers c from then on; the help always lists it).
	churn  churn.Pane
	diffed bool

	// Auditing says an audit (a) runs.
	Auditing bool
}

// New builds the Model of the resource on row under ctx, sharing r (whose
// Opts have their defaults); Close stops its background reads.
func New(ctx context.Context, r *program.Root, res program.Resource, row int) Model {
	opts := r.Opts
	ctx, cancel := context.WithCancel(ctx)
	keys := newKeyMap()
	if opts.Player != nil {
		keys.Pause.SetEnabled(false) // space pauses the replay
	}
	keys.Findings.SetEnabled(res.Feed.Findings != nil) // f only where there are findings to show
	keys.Churn.SetEnabled(res.Feed.Churn != nil)       // c only where events can be diffed
	return Model{
		Root:     r,
		row:      row,
		res:      res,
		Feed:     res.Feed,
		ctx:      ctx,
		cancel:   cancel,
		Keys:     keys,
		Now:      opts.Now(),
		Log:      logpane.NewPane(opts.LogSize),
		requests: panes.RequestsPane{Scroll: common.NewScroller()},
		history:  history.NewObjects(opts.TrackedObjects),
	}
}

// Reopen sets the log's filters as a dashboard before a rewind had them.
func (m *Model) Reopen(v program.View) {
	m.filter.Value, m.Log.Filter, m.Log.TypeIdx = v.Filter, strings.ToLower(v.Filter), v.TypeIdx
}

// leftRefresh is how often a stream whose client left is polled.
const leftRefresh = time.Second

// churnOff is why no MODIFIED event of feed is diffed, "" when they are:
// what the churn pane says while it has nothing to show.
func churnOff(opts program.Options, feed program.Feed) string {
	switch {
	case feed.Diffing != nil && feed.Diffing():
		return ""
	case opts.Replay && opts.Kind.Passive != "":
		return "the proxy's trace was recorded without proxy --diff, and replays as recorded"
	case opts.Replay:
		return "this replay does not diff; replay --diff diffs a trace of whole objects (--trace-objects=full), and a trace recorded with --diff carries its changes"
	case opts.Kind.Passive != "":
		return "the proxy diffs only with --diff, and only JSON streams of whole objects (not protobuf, tables or metadata-only)"
	}
	return "--diff is off; run with --diff to see what each MODIFIED event changed"
}

// Close stops the model's background reads. It is idempotent; Run calls it.
func (m Model) Close() { m.cancel() }

// Init starts the poller and the reader of the note buffer.
func (m Model) Init() tea.Cmd {
	return tea.Batch(m.PollCmd(0), m.notesCmd(0), program.WaitEnded(m.ctx, m.Opts.Ended))
}

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.Chrome.Width, m.Chrome.Height = msg.Width, msg.Height
	case program.SnapshotMsg:
		m.applySnapshot(msg)
		switch {
		case m.HaveStats && m.Stats.Forgotten:
			// The proxy forgot the stream: nothing moves again. A
			// proxy in front of many short-lived clients keeps one
			// model each, and each poll redraws the screen.
		case m.HaveStats && !m.Stats.ClientLeft.IsZero():
			cmd = m.PollCmd(leftRefresh) // nothing moves until its client comes back
		default:
			cmd = m.PollCmd(m.Opts.Refresh)
		}
	case program.NotesMsg:
		m.addNotes(msg.Notes)
		if !slices.ContainsFunc(msg.Notes, func(n reflector.Note) bool { return n.Reason() == reflector.ReasonClientGone }) {
			cmd = m.notesCmd(m.Opts.Refresh) // no note comes after that one but the run's stop
		}
	case program.AuditMsg:
		m.addAudit(msg)
	case churn.Msg:
		m.churn.Set(msg.Sum, m.Now)
	case program.EndedMsg:
		if !m.Chrome.Ended {
			m.Chrome.Ended, m.Chrome.EndedAt = true, m.Opts.Now()
		}
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	}
	m.clampPanes()
	return m, cmd
}

// Advance moves the clock of a model no poll moves (a stream the proxy
// forgot) to now, the overview's: its ages go on.
func (m *Model) Advance(now time.Time) {
	if now = m.Chrome.Frozen(now); now.After(m.Now) {
		m.Now = now
	}
	m.Status.Expire(m.Now)
	m.Chrome.Status.Expire(m.Now)
}

// applySnapshot takes one poll of the feed.
func (m *Model) applySnapshot(s program.SnapshotMsg) {
	s.At = m.Chrome.Frozen(s.At)
	m.Advance(s.At)
	if s.HasStats {
		m.Stats, m.HaveStats = s.Stats, true
		m.Rates.Observe(s.At, s.Stats.Started, s.Stats.Counters)
		m.diff.SetDiff(s.Stats.LastRelistDiff, s.Stats.LastRelistAt)
	}
	if s.HasStore {
		m.Counters, m.StoreReady = s.Counters, s.StoreReady
	}
	if s.Player != nil {
		// The one player, as read now: newer than any key's or poll's reading before.
		m.Chrome.Player, m.Chrome.HavePlayer = *s.Player, true
	}
	if s.Probe != nil {
		m.Chrome.Probe = *s.Probe
	}
	m.NotesLost = s.NotesLost
	if s.Alerts != nil {
		m.Alerts = *s.Alerts
	}
	if s.HasFindings {
		m.Findings, m.HaveFindings = s.Findings, true
	}
	if s.HasChurn {
		m.churn.Set(s.Churn, m.Now)
		m.churn.Off = churnOff(m.Opts, m.Feed)
	}
}

// addNotes takes the reflector's notes, in the order it made them: the log
// shows every one (the last LogSize of them), the object history records
// the store changes they carry. Where the NoteBuffer dropped notes, the log
// says how many, at the place they were lost.
func (m *Model) addNotes(notes []reflector.Note) {
	for _, n := range notes {
		if n.Kind.Fact() {
			continue // it shares the Seq of the note before it; the gauges read Stats
		}
		if at := m.Chrome.Frozen(n.At); at.After(m.Now) {
			m.Now = at
		}
		if n.Seq > m.lastSeq+1 {
			missing := n.Seq - m.lastSeq - 1
			m.Log.Add(logpane.Entry{At: n.At, Kind: logpane.KindNote, Seq: m.lastSeq + 1, Dropped: missing,
				Text: fmt.Sprintf("%s dropped here: the screen could not keep up", format.Plural(int(missing), "line"))})
		}
		if n.Seq > 0 {
			m.lastSeq = n.Seq
		}
		if e, ok := m.entry(n); ok {
			m.Log.Add(e)
		}
	}
}

// entry turns a note into its log entry, recording what it changed in the
// object history; ok is false for notes the log does not show.
func (m *Model) entry(n reflector.Note) (logpane.Entry, bool) {
	switch {
	case n.Kind == reflector.NoteApplied && n.Applied != nil:
		m.history.RecordResult(n.At, *n.Applied, n.Changes)
		m.diffed = m.diffed || n.Changes != nil
		return logpane.FromResult(n, *n.Applied)
	case n.Kind == reflector.NoteAudit && n.Audit != nil:
		return logpane.Entry{At: n.At, Kind: logpane.KindAudit, Seq: n.Seq, Req: n.RequestID, Audit: n.Audit, Text: n.Audit.String()}, true
	case n.Kind != reflector.NoteDecision || n.Decision == nil:
		return logpane.FromNote(n), true
	}
	d := n.Decision
	switch d.Reason {
	case reflector.ReasonListComplete:
		if !d.Relist {
			return logpane.Entry{At: n.At, Kind: logpane.KindList, Seq: n.Seq, Req: n.RequestID,
				Text: fmt.Sprintf("initial list installed at rv %s: %s", common.OrDash(d.ResourceVersion), format.Plural(d.Objects, "object"))}, true
		}
	case reflector.ReasonRelistDiff:
		if d.Diff != nil {
			var cached func(store.Ref) (*store.Object, bool)
			if st := m.Feed.Store; st != nil {
				cached = st.Get
			}
			m.history.RecordDiff(n.At, d.Diff, m.Opts.TrackedObjects, cached)
			return logpane.Entry{At: n.At, Kind: logpane.KindRelist, Seq: n.Seq, Req: n.RequestID, Note: &n, Diff: d.Diff}, true
		}
	case reflector.ReasonTraceWriteError:
		m.Chrome.RecordingStopped = true
		m.setStatus(common.SevBad, d.String())
	}
	if d.Reason == reflector.ReasonStopped || d.State == reflector.StateFailed {
		m.Stopped = true // its reflector returned: it makes no more requests
	}
	return logpane.FromNote(n), true
}

func (m *Model) addAudit(a program.AuditMsg) {
	m.Auditing = false
	if a.Err != nil {
		m.setStatus(common.SevBad, "audit failed: "+a.Err.Error())
		return
	}
	sev := common.SevGood
	if a.Report.Drift() {
		sev = common.SevBad
	}
	// The log has the audit from the reflector's notes, in order.
	m.setStatus(sev, a.Report.String())
}

// setStatus reports this resource's action in the footer.
func (m *Model) setStatus(sev common.Severity, s string) {
	m.Status = program.NewStatus(s, sev, m.Now, m.Opts.Replay)
}

// shownStatus is the status the dashboard's footer shows: the newer of its
// own action's and the player's.
func (m *Model) shownStatus() program.Status {
	if p := m.Chrome.Status; p.Text != "" && (m.Status.Text == "" || p.At.After(m.Status.At)) {
		return p
	}
	return m.Status
}

// isShown says this resource's dashboard is on the screen.
func (m *Model) isShown() bool { return m.Shown == m.row }

// mode is what this resource's dashboard shows: the root's state while it
// is on the screen; hidden, its panes as they stand (stateDashboard).
func (m *Model) mode() program.ViewState {
	if m.isShown() {
		return m.State
	}
	return program.StateDashboard
}

// handleKey routes a key on the view state.
func (m Model) handleKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if k.String() == "ctrl+c" {
		return m, tea.Quit
	}
	if m.State == program.StateDetail && m.Detail.Kind == program.DetailObject && key.Matches(k, m.Keys.Meta) {
		m.Detail.Meta = !m.Detail.Meta
		return m, nil
	}
	if m.OnPane() {
		if cmd, ok := m.Chrome.PlayerKey(k, m.Now, m.Stopped, m.view()); ok {
			return m, cmd
		}
	}
	cmd, ok := m.OverlayKey(&m, k)
	switch {
	case ok:
	case m.State == program.StateFilter:
		m.filterKey(k)
	case m.State == program.StateChurn:
		if m.churnKey(k) {
			return m, tea.Quit
		}
	default:
		var quit bool
		if cmd, quit = m.dashboardKey(k); quit {
			return m, tea.Quit
		}
	}
	m.clampPanes()
	return m, cmd
}

// DetailContent is the open detail's title and lines at width (framed).
func (m *Model) DetailContent(width int) (string, []string) {
	return DetailContent(m.Detail, m, m.Now, width)
}

// filterKey edits the log filter as it is typed.
func (m *Model) filterKey(k tea.KeyPressMsg) {
	switch {
	case k.String() == "enter":
		m.State = program.StateDashboard
	case key.Matches(k, m.Keys.Back):
		m.State = program.StateDashboard
		m.filter.Value, m.Log.Filter = "", ""
	case m.filter.Update(k):
		m.Log.Filter = strings.ToLower(m.filter.Value)
		m.Log.Scroll.Follow = true
	}
}

// view is where the dashboard is, for a rewind to open it there again.
func (m *Model) view() program.View {
	return program.View{Row: m.row, Filter: m.filter.Value, TypeIdx: m.Log.TypeIdx, ShowForgotten: m.ShowForgotten}
}

// dashboardKey handles the dashboard's keys.
func (m *Model) dashboardKey(k tea.KeyPressMsg) (cmd tea.Cmd, quit bool) {
	if cmd, ok := m.Chrome.PlayerKey(k, m.Now, m.Stopped, m.view()); ok {
		return cmd, false
	}
	n := m.rowsIn(m.focus)
	switch {
	case key.Matches(k, m.Chrome.Keys.Quit):
		return nil, true
	case key.Matches(k, m.Chrome.Keys.Help):
		m.State = program.StateHelp
	case key.Matches(k, m.Keys.NextPane):
		m.focus = (m.focus + 1) % panes.Num
	case key.Matches(k, m.Keys.PrevPane):
		m.focus = (m.focus + panes.Num - 1) % panes.Num
	case key.Matches(k, m.Keys.Up):
		m.scrollOf(m.focus).Move(-1, n)
	case key.Matches(k, m.Keys.Down):
		m.scrollOf(m.focus).Move(1, n)
	case key.Matches(k, m.Keys.PageUp):
		m.scrollOf(m.focus).Move(-m.paneHeight(), n)
	case key.Matches(k, m.Keys.PageDown):
		m.scrollOf(m.focus).Move(m.paneHeight(), n)
	case key.Matches(k, m.Keys.Top):
		m.scrollOf(m.focus).Home(n)
	case key.Matches(k, m.Keys.Bottom):
		m.scrollOf(m.focus).End(n)
	case key.Matches(k, m.Keys.Select):
		m.openDetail()
	case key.Matches(k, m.Keys.Pause):
		m.Log.SetPaused(!m.Log.Paused)
		m.focus = panes.Log
		// The footer offers what space does now.
		if m.Log.Paused {
			m.Keys.Pause.SetHelp("space", "resume log")
		} else {
			m.Keys.Pause.SetHelp("space", "pause log")
		}
	case key.Matches(k, m.Keys.Filter):
		m.State, m.focus = program.StateFilter, panes.Log
		return nil, false
	case key.Matches(k, m.Keys.TypeFilter):
		m.Log.TypeIdx = (m.Log.TypeIdx + 1) % logpane.NumTypeFilters
		m.focus = panes.Log
		m.Log.Scroll.Follow = true
	case key.Matches(k, m.Keys.Back):
		m.Log.Filter, m.Log.TypeIdx = "", 0
		m.filter.Value = ""
		m.Status.Text, m.Chrome.Status.Text = "", ""
	case key.Matches(k, m.Keys.Findings):
		m.State = program.StateFindings
	case key.Matches(k, m.Keys.Churn):
		m.State, m.churn.Offset, m.churn.Off = program.StateChurn, 0, churnOff(m.Opts, m.Feed)
		return churn.Cmd(m.Feed.Churn), false
	case key.Matches(k, m.Keys.Relist):
		return m.ForceRelist(), false
	case key.Matches(k, m.Keys.Audit):
		return m.StartAudit(), false
	}
	return nil, false
}

// churnKey handles a key on the churn pane: q quits, ? opens the help,
// esc or c close it, and the list keys scroll it. It says whether to quit.
func (m *Model) churnKey(k tea.KeyPressMsg) (quit bool) {
	_, _, body := m.Chrome.Size()
	switch {
	case key.Matches(k, m.Chrome.Keys.Quit):
		return true
	case key.Matches(k, m.Chrome.Keys.Help):
		m.State = program.StateHelp
	case key.Matches(k, m.Chrome.Keys.Close, m.Keys.Churn):
		m.State = program.StateDashboard
	default:
		// The pane shows body lines (churn.Pane.Window).
		common.ScrollText(&m.churn.Offset, k, body-1, func() int { return len(m.churn.Lines(m.St, m.Chrome.Width)) - body })
	}
	return false
}

// ForceRelist asks the reflector to relist (r), saying so in the status line.
func (m *Model) ForceRelist() tea.Cmd {
	if m.Feed.ForceRelist == nil || m.Alerts.Fatal || m.Chrome.Ended || m.reflectorReturned() {
		m.setStatus(common.SevWarn, m.unavailable("force relist"))
		return nil
	}
	m.setStatus(common.SevWarn, "forced relist requested: the cache keeps serving the old snapshot until the new list is in")
	return forceRelistCmd(m.Feed.ForceRelist)
}

// StartAudit starts an audit (a), one at a time; its result comes back as a program.AuditMsg.
func (m *Model) StartAudit() tea.Cmd {
	if m.Feed.Audit == nil || m.Alerts.Fatal || m.Chrome.Ended {
		m.setStatus(common.SevWarn, m.unavailable("audit"))
		return nil
	}
	if m.Auditing {
		m.setStatus(common.SevWarn, "an audit is already running")
		return nil
	}
	m.Auditing = true
	m.setStatus(common.SevNone, "audit running: listing afresh and comparing with the cache…")
	return m.auditCmd()
}

// AtTopLevel says esc has nothing left to close or clear here: the
// dashboard shows, with no filter on its log.
func (m *Model) AtTopLevel() bool {
	return m.State == program.StateDashboard && !m.Log.Filtering()
}

// acts says r and a act here: a live run's own reflector, which no alert
// stopped. Elsewhere they only say why not, and the footer and help leave
// them out.
func (m *Model) acts() bool { return program.ActsOn(m.Opts) && !m.Alerts.Fatal && !m.Chrome.Ended }

// shownKeys are the keys the footer and the help offer: without r and a where they do not act.
func (m *Model) shownKeys() keyMap {
	if m.acts() {
		return m.Keys
	}
	return m.Keys.withoutActions()
}

// reflectorReturned says this resource's reflector has returned (Failed, Stopped):
// nothing it is asked to do happens any more.
func (m *Model) reflectorReturned() bool {
	return m.HaveStats && (m.Stats.State == reflector.StateFailed || m.Stats.State == reflector.StateStopped)
}

// unavailable explains why an action that needs a cluster cannot run.
func (m *Model) unavailable(what string) string {
	if p := m.Opts.Kind.Passive; p != "" {
		return what + " is not available: " + p
	}
	if m.Opts.Replay {
		return what + " needs a live cluster: this is a replay"
	}
	if m.Alerts.Fatal {
		return what + " is not available: an alert stopped the run"
	}
	if m.Chrome.Ended {
		return what + " is not available: the run has ended"
	}
	if m.reflectorReturned() {
		return what + " is not available: the reflector is " + m.Stats.State.String() + " and makes no more requests"
	}
	return what + " is not available here"
}

// openDetail shows the detail of the focused pane's selected row.
func (m *Model) openDetail() {
	switch m.focus {
	case panes.Log:
		if e, ok := m.Log.Selected(); ok {
			m.Detail, m.State = detailFor(e), program.StateDetail
		}
	case panes.Requests:
		rows := panes.RequestRows(&m.Stats)
		if len(rows) > 0 {
			r := rows[min(m.requests.Scroll.Cursor, len(rows)-1)]
			m.Detail, m.State = program.DetailView{Kind: program.DetailRequest, Req: r}, program.StateDetail
		}
	case panes.Diff:
		if r, ok := m.diff.Selected(); ok {
			m.Detail, m.State = program.DetailView{Kind: program.DetailObject, Ref: r.Entry.Ref}, program.StateDetail
		}
	}
}

// scrollOf is a pane's scroller.
func (m *Model) scrollOf(p panes.Pane) *common.Scroller {
	switch p {
	case panes.Requests:
		return &m.requests.Scroll
	case panes.Diff:
		return &m.diff.Scroll
	}
	return &m.Log.Scroll
}

// rowsIn is how many selectable rows a pane has.
func (m *Model) rowsIn(p panes.Pane) int {
	switch p {
	case panes.Requests:
		return len(panes.RequestRows(&m.Stats))
	case panes.Diff:
		return len(m.diff.Rows)
	}
	n, _ := m.Log.Rows()
	return n
}

// clampPanes keeps every pane's cursor and window valid after a change.
func (m *Model) clampPanes() {
	l := m.layout()
	for p := range panes.Num {
		m.scrollOf(p).Clamp(m.rowsIn(p), l.selectable(p))
	}
}

// FindingRows are the findings as the pane lists them, newest first.
func (m *Model) FindingRows() []findingspane.Row {
	rows := make([]findingspane.Row, len(m.Findings))
	for i, f := range m.Findings {
		rows[i] = findingspane.Row{Finding: f}
	}
	return findingspane.NewestFirst(rows)
}

// paneHeight is the focused pane's page size.
func (m *Model) paneHeight() int {
	return max(m.layout().selectable(m.focus), 1)
}
