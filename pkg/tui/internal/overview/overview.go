package overview

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/churn"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/dashboard"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/player"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/table"
)

// The states the Overview shows while no resource's dashboard does (root.shown
// is -1), by its names for them; a dashboard shown takes the keys.
const (
	// overviewTable: one row per resource; keys select, open and act on a row.
	overviewTable = program.StateDashboard
	// overviewHelp: the overview's key help.
	overviewHelp = program.StateHelp
	// overviewFindings: every resource's findings (f), newest first; enter
	// shows one's evidence (program.StateDetail).
	overviewFindings = program.StateFindings
)

// Overview is the dashboard of several resources, a tea.Model: a table with
// one row per resource (its state, objects, memory, last resourceVersion,
// bookmark age, 410s, relists, events per minute and last error) and their
// totals, and behind enter each resource's own dashboard, a Model (package
// dashboard), which esc
// leaves. The table is a component (package table): the Overview holds its
// selection and window, and gives it each resource's row, read from the
// resource's Model for each frame, and for each message while it shows.
//
// Every resource's Model runs all the time, shown or not: its poller, its
// notes reader, its log, history and alerts, so opening a resource shows its
// whole, current dashboard. Each polls its Feed at most ten times a second,
// as a single dashboard does, and a frame of the overview reads what the
// Models already hold: nothing in it grows with the number of objects.
//
// The Overview is the root model: it holds the run's one root (chrome,
// state, findings pane, detail), which every resource's Model shares, and
// frames whichever of the table or a dashboard shows.
//
// With one resource an Overview is that resource's dashboard and nothing
// more: it opens on it, and esc keeps the dashboard's meaning. Build it with
// New; release it with Close. Like a Model, it is used through the
// value its Update returns; its copies share its root.
type Overview struct {
	*program.Root
	// ctx is every resource's Model's, the ones added later too: the
	// copy Run closes holds only the first ones, and Close ends it.
	ctx       context.Context
	cancel    context.CancelFunc
	resources []program.Resource // each row's, for its name
	subs      []dashboard.Model
	names     []table.Label // each row's name, as the rows stand
	keys      overviewKeyMap
	tbl       table.Table // the table's selection and window, among the rows listed
	// listed are the rows the table shows, as indexes of subs: every one but
	// the observed streams the proxy forgot, unless Root.ShowForgotten (h).
	listed []int
	clock  time.Time // opts.Now at the last tick: the uptime moves with no row to poll
}

// tickEvery is how often the overview reads the clock when resources can
// come (Options.Added): with no row, nothing else moves its uptime.
const tickEvery = time.Second

// tickMsg tells the overview to read the clock.
type tickMsg struct{}

// tickCmd reads the clock again after tickEvery; nil when no resource can come.
func (o *Overview) tickCmd() tea.Cmd {
	if o.Opts.Added == nil {
		return nil
	}
	return tea.Tick(tickEvery, func(time.Time) tea.Msg { return tickMsg{} })
}

// New builds the dashboard of resources, one row and one Model for each,
// in their order, under ctx; opts need not have their defaults. Close stops
// their background reads.
func New(ctx context.Context, opts program.Options, resources []program.Resource) Overview {
	opts = opts.WithDefaults() // once, so every resource has the same start
	ctx, cancel := context.WithCancel(ctx)
	o := Overview{Root: program.NewRoot(opts, -1), ctx: ctx, cancel: cancel, keys: newOverviewKeyMap(), subs: make([]dashboard.Model, 0, len(resources))}
	for i, r := range resources {
		m := dashboard.New(ctx, o.Root, r, i)
		if len(resources) > 1 || opts.Added != nil {
			m.Keys.SetMulti()
		}
		o.subs = append(o.subs, m)
	}
	o.resources = append([]program.Resource(nil), resources...)
	o.names = rowNames(o.resources)
	if o.single() {
		o.Shown = 0
	}
	o.relist(0)
	for i := range o.subs {
		o.reopen(i)
	}
	return o
}

// reopen opens resource i, or selects its row, as the dashboard before a
// rewind had it (Options.Reopen), once it is there: a proxy's trace brings
// its streams as the replay reaches them.
func (o *Overview) reopen(i int) {
	switch v := o.Opts.Reopen; {
	case v == nil:
	case v.Row == i:
		o.subs[i].Reopen(*v)
		o.Shown = i
		o.relist(i)
	case v.Row < 0 && v.Selected == i:
		o.relist(i)
	}
}

// addedMsg is a resource that came while the dashboard runs (Options.Added).
type addedMsg struct{ res program.Resource }

// waitAdded waits for the next resource of Options.Added; nil when there is none.
func (o *Overview) waitAdded() tea.Cmd {
	ch := o.Opts.Added
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case r, ok := <-ch:
			if !ok {
				return nil
			}
			return addedMsg{r}
		case <-o.ctx.Done():
			return nil
		}
	}
}

// add gives a resource that came its row and its Model, started and sized.
func (o *Overview) add(r program.Resource) tea.Cmd {
	m := dashboard.New(o.ctx, o.Root, r, len(o.subs))
	m.Keys.SetMulti()
	o.subs = append(o.subs, m)
	o.resources = append(o.resources, r)
	o.names = rowNames(o.resources)
	i := len(o.subs) - 1
	o.reopen(i)
	cmds := []tea.Cmd{wrapCmd(i, o.subs[i].Init()), o.waitAdded()}
	if o.Chrome.Width > 0 {
		cmds = append(cmds, o.updateSub(i, tea.WindowSizeMsg{Width: o.Chrome.Width, Height: o.Chrome.Height}))
	}
	return tea.Batch(cmds...)
}

// single says there is one resource, and no more can come: no overview,
// its dashboard only.
func (o *Overview) single() bool { return len(o.subs) == 1 && o.Opts.Added == nil }

// Close stops every resource's background reads, those of the resources
// added after this copy was made too. It is idempotent; Run calls it.
func (o Overview) Close() { o.cancel() }

// Init starts every resource's poller and notes reader.
func (o Overview) Init() tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(o.subs)+1)
	for i, m := range o.subs {
		cmds = append(cmds, wrapCmd(i, m.Init()))
	}
	cmds = append(cmds, o.waitAdded(), o.tickCmd())
	return tea.Batch(cmds...)
}

// Update handles one message: a resource's own goes back to it, the window
// size to all of them, a key to the overview or to the open resource.
func (o Overview) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case resourceMsg:
		if msg.i >= 0 && msg.i < len(o.subs) {
			cmd = o.updateSub(msg.i, msg.msg)
		}
	case addedMsg:
		cmd = o.add(msg.res)
	case tickMsg:
		if now := o.Chrome.Frozen(o.Opts.Now()); now.After(o.clock) {
			o.clock = now
		}
		// With no row yet, no resource's poll expires the player's status.
		o.Chrome.Status.Expire(o.clock)
		if p := o.Opts.Player; p != nil {
			// The one player, read here too: no poll comes when every
			// stream was forgotten.
			o.Chrome.Player, o.Chrome.HavePlayer = player.Read(p), true
		}
		played := o.Chrome.HavePlayer && o.Chrome.Player.EndKnown && o.Chrome.Player.Pos >= o.Chrome.Player.End
		for i := range o.subs {
			if o.isForgotten(i) { // polled no more: their clocks move with this one
				o.subs[i].Advance(o.clock)
				if played {
					// A replay served its last line: nothing more comes of
					// a stream whose client left, and it has ended.
					o.subs[i].Stopped = true
				}
			}
		}
		cmd = o.tickCmd()
	case tea.WindowSizeMsg:
		o.Chrome.Width, o.Chrome.Height = msg.Width, msg.Height
		cmds := make([]tea.Cmd, 0, len(o.subs))
		for i := range o.subs {
			cmds = append(cmds, o.updateSub(i, msg))
		}
		cmd = tea.Batch(cmds...)
	case tea.KeyPressMsg:
		cmd = o.handleKey(msg)
	}
	o.clampRows()
	return o, cmd
}

// updateSub hands msg to resource i's Model and wraps the command it returns.
func (o *Overview) updateSub(i int, msg tea.Msg) tea.Cmd {
	next, cmd := o.subs[i].Update(msg)
	o.subs[i] = next.(dashboard.Model)
	return wrapCmd(i, cmd)
}

// handleKey routes a key on the state: the open resource takes every key
// but the esc that leaves it.
func (o *Overview) handleKey(k tea.KeyPressMsg) tea.Cmd {
	if i := o.Shown; i >= 0 {
		if !o.single() && key.Matches(k, o.keys.Back) && o.subs[i].AtTopLevel() {
			o.show(-1)
			return nil
		}
		return o.updateSub(i, k)
	}
	player := func() (tea.Cmd, bool) {
		return o.Chrome.PlayerKey(k, o.now(), o.stopped(), program.View{Row: -1, Selected: o.selected(), ShowForgotten: o.ShowForgotten})
	}
	if o.OnPane() {
		if cmd, ok := player(); ok {
			return cmd
		}
	}
	if cmd, ok := o.OverlayKey(o, k); ok {
		return cmd
	}
	if cmd, ok := player(); ok {
		return cmd
	}
	o.Chrome.Status.Text = "" // the player's; a resource's action's stays until it expires
	n, cur := len(o.listed), o.selected()
	switch {
	case key.Matches(k, o.Chrome.Keys.Quit):
		return tea.Quit
	case key.Matches(k, o.Chrome.Keys.Help):
		o.State = overviewHelp
	case key.Matches(k, o.keys.Up):
		o.tbl.Move(-1, n)
	case key.Matches(k, o.keys.Down):
		o.tbl.Move(1, n)
	case key.Matches(k, o.keys.PageUp):
		o.tbl.Move(-o.tableLayout(o.rows(false)).table.Page(), n)
	case key.Matches(k, o.keys.PageDown):
		o.tbl.Move(o.tableLayout(o.rows(false)).table.Page(), n)
	case key.Matches(k, o.keys.Top):
		o.tbl.Select(0, n)
	case key.Matches(k, o.keys.Bottom):
		o.tbl.Select(n-1, n)
	case key.Matches(k, o.shownKeys().Findings):
		o.State = overviewFindings
	case key.Matches(k, o.shownKeys().Forgotten):
		o.ShowForgotten = !o.ShowForgotten
		o.relist(cur)
	case n == 0:
	case key.Matches(k, o.keys.Open):
		o.show(cur)
	case key.Matches(k, o.keys.Relist):
		return wrapCmd(cur, o.subs[cur].ForceRelist())
	case key.Matches(k, o.keys.Audit):
		return wrapCmd(cur, o.subs[cur].StartAudit())
	}
	return nil
}

// show shows row i's dashboard, or the table (-1); the findings pane,
// which lists another resource's findings or every one's, starts afresh.
func (o *Overview) show(i int) {
	o.Shown, o.FindingsPane = i, findingspane.Pane{}
}

// acts says r and a act here: a live run's own reflectors, which no alert
// stopped. Elsewhere they only say why not, and the footer and help leave
// them out.
func (o *Overview) acts() bool {
	if !program.ActsOn(o.Opts) || o.Chrome.Ended {
		return false
	}
	a, ok := o.banner()
	return !ok || !a.Fatal
}

// shownKeys are the keys the footer and the help offer: r and a where
// they act, f where a resource has findings.
func (o *Overview) shownKeys() overviewKeyMap {
	keys := o.keys
	if !o.acts() {
		keys = keys.withoutActions()
	}
	keys.Findings.SetEnabled(o.hasFindings())
	keys.Forgotten.SetEnabled(o.forgotten() > 0)
	if o.ShowForgotten {
		keys.Forgotten.SetHelp("h", hideForgotten)
	}
	return keys
}

// hideForgotten is h's help once it has shown the forgotten clients.
const hideForgotten = "hide forgotten clients"

// forgotten is how many observed streams the proxy forgot: their clients
// stayed away (Stats.Forgotten).
func (o *Overview) forgotten() int {
	n := 0
	for i := range o.subs {
		if o.isForgotten(i) {
			n++
		}
	}
	return n
}

// isForgotten says the proxy forgot resource i's stream.
func (o *Overview) isForgotten(i int) bool {
	return o.subs[i].HaveStats && o.subs[i].Stats.Forgotten
}

// hidden says row i is not listed: its stream forgotten, and h not
// pressed. The rows a frame lays out (rows, table.Row.Hidden) and listed
// (the selection's) both read it, so that a table's row is listed's.
func (o *Overview) hidden(i int) bool { return !o.ShowForgotten && o.isForgotten(i) }

// selected is the selected row's resource, -1 with no row listed.
func (o *Overview) selected() int {
	if cur := o.tbl.Selected(); cur < len(o.listed) {
		return o.listed[cur]
	}
	return -1
}

// relist lists the rows anew, and keeps sel selected (a resource's index):
// when its row is no longer listed, the next one listed, or the last.
func (o *Overview) relist(sel int) {
	o.listed = o.listed[:0:0]
	pos := -1
	for i := range o.subs {
		if o.hidden(i) {
			continue
		}
		if pos < 0 && i >= sel {
			pos = len(o.listed)
		}
		o.listed = append(o.listed, i)
	}
	if pos < 0 {
		pos = len(o.listed) - 1
	}
	o.tbl.Select(pos, len(o.listed))
}

// hasFindings says a resource has a findings engine (Feed.Findings).
func (o *Overview) hasFindings() bool {
	for i := range o.resources {
		if o.resources[i].Feed.Findings != nil {
			return true
		}
	}
	return false
}

// findingsBadge is the header's count of every resource's findings, "" without engines.
func (o *Overview) findingsBadge() string {
	if !o.hasFindings() {
		return ""
	}
	var t findingspane.Tally
	for i := range o.subs {
		t.Add(findingspane.TallyOf(o.subs[i].Findings))
	}
	return t.Badge(o.St)
}

// FindingRows are every resource's findings, newest first.
func (o *Overview) FindingRows() []findingspane.Row {
	var rows []findingspane.Row
	for i := range o.subs {
		for _, f := range o.subs[i].Findings {
			rows = append(rows, findingspane.Row{Finding: f, Res: i})
		}
	}
	return findingspane.NewestFirst(rows)
}

// DetailContent is the open detail's title and lines at width (framed):
// its resource's, at the overview's clock.
func (o *Overview) DetailContent(width int) (string, []string) {
	return dashboard.DetailContent(o.Detail, &o.subs[o.Detail.Res], o.now(), width)
}

// clampRows lists the rows anew, the selected one kept, and keeps the
// table's selection on a row and its window on the selection, while the
// table shows: a row's reason line, come or gone, moves the window, and so
// does a row hidden.
func (o *Overview) clampRows() {
	o.relist(o.selected())
	if o.Shown < 0 {
		o.tbl.Clamp(o.tableLayout(o.rows(false)).table)
	}
}

// resourceMsg is a message of resource i's Model, routed back to it by the
// Overview: every command of a sub-model is wrapped so that what it returns
// carries the index.
type resourceMsg struct {
	i   int
	msg tea.Msg
}

// wrapCmd makes cmd's message (and those of a batch it returns) a resourceMsg for resource i.
func wrapCmd(i int, cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg { return wrapMsg(i, cmd()) }
}

// wrapMsg routes the Model's own messages to resource i; a batch is wrapped
// command by command, and anything else (tea.QuitMsg) goes to the program as it is.
func wrapMsg(i int, msg tea.Msg) tea.Msg {
	switch msg := msg.(type) {
	case program.SnapshotMsg, program.NotesMsg, program.AuditMsg, program.ForceRelistDoneMsg, program.EndedMsg, churn.Msg:
		return resourceMsg{i: i, msg: msg}
	case tea.BatchMsg:
		out := make(tea.BatchMsg, len(msg))
		for j, c := range msg {
			out[j] = wrapCmd(i, c)
		}
		return out
	}
	return msg
}

// overviewKeyMap is the overview's key bindings besides the chrome's; its
// help screen and footer are generated from them.
type overviewKeyMap struct {
	common.Moves
	Open, Back, Relist, Audit key.Binding
	// Findings opens every resource's findings; shown where one has them.
	Findings key.Binding
	// Forgotten shows or hides the rows of the streams the proxy forgot;
	// shown where there is one.
	Forgotten key.Binding
}

func newOverviewKeyMap() overviewKeyMap {
	return overviewKeyMap{
		Moves:     common.NewMoves("previous", "next", "first", "last"),
		Open:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open resource")),
		Back:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "overview")),
		Relist:    key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "force relist")),
		Audit:     key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "audit now")),
		Findings:  key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "findings")),
		Forgotten: key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "show forgotten clients")),
	}
}

// withoutActions is k without r and a, for where they do not act.
func (k overviewKeyMap) withoutActions() overviewKeyMap {
	k.Relist.SetEnabled(false)
	k.Audit.SetEnabled(false)
	return k
}

// FooterKeys are the overview's footer (screenKeys).
func (k overviewKeyMap) FooterKeys() (first, rest []key.Binding) {
	up, open, relist, audit := k.Up, k.Open, k.Relist, k.Audit
	up.SetHelp("↑/↓", "select")
	open.SetHelp("enter", "open")
	relist.SetHelp("r", "relist")
	audit.SetHelp("a", "audit")
	forgotten := k.Forgotten
	forgotten.SetHelp("h", "show forgotten")
	if k.Forgotten.Help().Desc == hideForgotten {
		forgotten.SetHelp("h", "hide forgotten")
	}
	return []key.Binding{up, open}, []key.Binding{k.Findings, forgotten, relist, audit}
}

// HelpGroups are the overview's help screen's columns (screenKeys).
func (k overviewKeyMap) HelpGroups() (nav, moves, actions []key.Binding) {
	return k.Bindings(),
		[]key.Binding{k.Open, k.Back},
		[]key.Binding{k.Findings, k.Forgotten, k.Relist, k.Audit}
}
