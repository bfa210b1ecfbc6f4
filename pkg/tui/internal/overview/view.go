package overview

import (
	"cmp"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/findingspane"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/rates"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/table"
)

// minPreviewLines is the least room for the glimpse of the selected
// resource's log under the table, with its title.
const minPreviewLines = 3

// overviewLayout is what fits on the overview under the alert banner: the
// table, and the glimpse of the log under it.
type overviewLayout struct {
	table   table.Layout
	preview int // lines of the selected resource's log glimpse, with its title; 0 for none
}

// tableLayout fits the table of rows to the screen, then the glimpse to
// what is left.
func (o *Overview) tableLayout(rows []table.Row) overviewLayout {
	w, _, body := o.Chrome.Size()
	l := overviewLayout{}
	if _, banner := o.banner(); banner {
		body--
	}
	var empty []string
	if len(o.listed) == 0 {
		empty = o.emptyRows()
	}
	l.table = table.Fit(w, body, rows, empty, o.hasFindings())
	if rest := body - l.table.Height(); rest >= minPreviewLines {
		l.preview = rest
	}
	return l
}

// rows are the table's rows, read from every resource's dashboard (the
// forgotten streams' Hidden unless they are shown: o.listed); their
// stats are the dashboards' own, so the rows last no longer than this
// Update or View. shown adds what only a frame shows and the layout does
// not read: each one's findings tally, and its minute of events at the
// overview's clock.
func (o *Overview) rows(shown bool) []table.Row {
	now := o.now()
	rows := make([]table.Row, len(o.subs))
	var series []int64
	if shown {
		series = make([]int64, len(o.subs)*rates.Seconds)
	}
	for i := range o.subs {
		m, r := &o.subs[i], &rows[i]
		*r = table.Row{Label: o.names[i], Counters: m.Counters, StoreReady: m.StoreReady, HaveFindings: m.HaveFindings, Now: m.Now,
			Hidden: o.hidden(i)}
		if m.HaveStats {
			r.Stats = &m.Stats
		}
		if shown {
			r.Findings = findingspane.TallyOf(m.Findings)
			r.Events = series[i*rates.Seconds : (i+1)*rates.Seconds]
			m.Rates.AddEvents(r.Events, now)
		}
	}
	return rows
}

// View renders the overview, the help, or the open resource's dashboard.
func (o Overview) View() tea.View {
	if i := o.Shown; i >= 0 && i < len(o.subs) {
		return o.subs[i].View()
	}
	return o.Frame(&o, o.rowName, o.now(), o.table)
}

// now is the overview's clock: the latest of its resources'.
func (o *Overview) now() time.Time {
	now := o.clock
	for i := range o.subs {
		if o.subs[i].Now.After(now) {
			now = o.subs[i].Now
		}
	}
	if now.IsZero() {
		now = o.Opts.Start
	}
	return now
}

// Header is the run's identity, what the resources share, their states, and live or replay.
func (o *Overview) Header(width int) []string {
	parts := []string{o.St.Value.Render(format.Plural(len(o.subs), cmp.Or(o.Opts.Kind.Noun, "resource")))}
	ns, ok, namespaced := namespaces(o.resources)
	scope := ""
	switch {
	case len(o.subs) == 0:
	case !namespaced:
		scope = "cluster-scoped"
	case !ok:
		scope = "several namespaces"
	case ns == "":
		scope = "all namespaces"
	default:
		scope = "namespace " + ns
	}
	if n := clusterScopedOf(o.resources); namespaced && n > 0 {
		// Those rows count cluster-wide, whatever -n says.
		scope += fmt.Sprintf(" (%d cluster-scoped)", n)
	}
	if scope != "" {
		parts = append(parts, scope)
	}
	parts = append(parts, program.WatchedParts(o.resources, !o.Opts.Kind.OwnLists, "")...)
	return o.Chrome.Header(width, o.now(), parts, o.stateCounts(), o.findingsBadge(), o.stopped())
}

// stopped says the replay ended: every resource's reflector stopped.
func (o *Overview) stopped() bool {
	for i := range o.subs {
		if !o.subs[i].Stopped {
			return false
		}
	}
	return len(o.subs) > 0
}

// namespaces is the namespace the namespaced resources among rs are
// watched in ("" for all), when they share one (ok); namespaced says any
// is. A cluster-scoped resource has no namespace to differ in.
func namespaces(rs []program.Resource) (ns string, ok, namespaced bool) {
	var in []program.Resource
	for i := range rs {
		if !clusterScoped(&rs[i]) {
			in = append(in, rs[i])
		}
	}
	if len(in) == 0 {
		return "", true, false
	}
	ns, ok = program.Shared(in, func(r *program.Resource) string { return r.Target.Namespace })
	return ns, ok, true
}

// clusterScopedOf is how many of rs are cluster-scoped.
func clusterScopedOf(rs []program.Resource) int {
	n := 0
	for i := range rs {
		if clusterScoped(&rs[i]) {
			n++
		}
	}
	return n
}

// clusterScoped says r's resource is known to be cluster-scoped.
func clusterScoped(r *program.Resource) bool {
	return r.Target.Resource.Kind != "" && !r.Target.Resource.Namespaced
}

// stateCounts is how many resources are in each state, worst colors and all;
// the observed streams whose client left are counted apart, in none.
func (o *Overview) stateCounts() string {
	counts := map[reflector.State]int{}
	waiting, left := 0, 0
	for i := range o.subs {
		m := &o.subs[i]
		switch {
		case !m.HaveStats:
			waiting++
		case !m.Stats.ClientLeft.IsZero():
			left++
		default:
			counts[m.Stats.State]++
		}
	}
	var parts []string
	for _, state := range reflector.States() {
		if n := counts[state]; n > 0 {
			parts = append(parts, o.St.Sev(common.StateSeverity(state), fmt.Sprintf("● %d %s", n, state)))
		}
	}
	if left > 0 {
		parts = append(parts, o.St.Faint.Render("○ "+format.Plural(left, "client")+" left"))
	}
	if waiting > 0 {
		parts = append(parts, o.St.Faint.Render(fmt.Sprintf("○ %d waiting for stats", waiting)))
	}
	return strings.Join(parts, "  ")
}

// rowName names resource i in its row: resource.group, with what sets it
// apart from the others (namespace, selectors) when they differ.
func (o *Overview) rowName(i int) string { return o.names[i].Name() }

// clientLabel is an observed stream's client as its row shows it, in two
// parts: the program, and what follows it (the rest of the User-Agent that
// tells two reflectors of one program apart, as shortClient keeps it, and
// what it asked for when it is not full objects), which a cut keeps.
func clientLabel(r *program.Resource) (program, tail string) {
	program, tail = shortClient(r.Client)
	switch {
	case r.Table:
		tail += " (tables)"
	case r.MetadataOnly:
		tail += " (metadata)"
	}
	return program, tail
}

// shortClient keeps of a User-Agent what tells clients apart: the
// program's name, and the last /-segment when something was added to
// client-go's own "NAME/VERSION (OS/ARCH) kubernetes/COMMIT" (as
// kube-controller-manager adds "/shared-informers" and "/metadata-informers"):
// "kube-controller-manager" and " …/shared-informers". A User-Agent of one
// "/" at most is short already and kept whole; of client-go's own form, the
// program is kept.
func shortClient(ua string) (program, tail string) {
	ua = strings.TrimSpace(ua)
	if strings.Count(ua, "/") <= 1 {
		return ua, ""
	}
	program = ua[:strings.IndexAny(ua, "/ ")]
	fields := strings.Fields(ua)
	if last := fields[len(fields)-1]; len(fields) > 1 && (strings.HasPrefix(last, "kubernetes/") && strings.Count(last, "/") == 1 ||
		strings.HasPrefix(last, "(") && strings.HasSuffix(last, ")")) {
		return program, "" // client-go's own form, or its start: "NAME/VERSION (OS/ARCH)"
	}
	last := strings.TrimSpace(ua[strings.LastIndex(ua, "/")+1:])
	if last == "" {
		return program, ""
	}
	return program, " …/" + last
}

// rowNames names every row, as the rows stand: resource.group
// (resource.version.group when two versions of it are shown), and what sets
// it apart from the others (" -n prod", selectors), which a cut keeps.
func rowNames(resources []program.Resource) []table.Label {
	type label struct{ base, apart, program, tail string }
	names := make([]label, len(resources))
	for i := range resources {
		t := resources[i].Target
		gvr := t.Resource.GVR
		base := gvr.Resource
		if gvr.Group != "" {
			base += "." + gvr.Group
		}
		differs := func(f func(r *program.Resource) string) bool { _, same := program.Shared(resources, f); return !same }
		if differs(func(r *program.Resource) string {
			u := r.Target.Resource.GVR
			if u.Resource == gvr.Resource && u.Group == gvr.Group {
				return u.Version
			}
			return gvr.Version
		}) {
			base = t.Resource.String()
		}
		var apart string
		if _, same, _ := namespaces(resources); !same && !clusterScoped(&resources[i]) && t.Namespace != "" {
			apart += " -n " + t.Namespace
		}
		if differs(func(r *program.Resource) string { return r.Target.LabelSelector }) && t.LabelSelector != "" {
			apart += " -l " + t.LabelSelector
		}
		switch {
		case resources[i].Probe:
			apart += " (probe)"
		case differs(func(r *program.Resource) string { return r.Target.FieldSelector }) && t.FieldSelector != "":
			apart += " --field-selector " + t.FieldSelector
		}
		names[i] = label{base: base, apart: apart}
		if r := &resources[i]; r.Client != "" {
			names[i].program, names[i].tail = clientLabel(r)
		}
	}
	// Two processes of one program (one User-Agent) watching the same are
	// told apart by their connection's port.
	same := append([]label(nil), names...)
	for i := range names {
		r := &resources[i]
		for j := range same {
			if j != i && r.Client != "" && same[j] == same[i] && resources[j].ClientAddr != r.ClientAddr {
				if _, port, err := net.SplitHostPort(r.ClientAddr); err == nil {
					names[i].tail += " :" + port
				}
				break
			}
		}
	}
	labels := make([]table.Label, len(names))
	for i, n := range names {
		labels[i] = table.NewLabel(n.base, n.apart, n.program, n.tail)
	}
	return labels
}

// table is the overview's body: an alert banner, the table, and a glimpse
// of the selected resource's log.
func (o *Overview) table() []string {
	rows := o.rows(true)
	l := o.tableLayout(rows)
	width, _, _ := o.Chrome.Size()
	var out []string
	if a, ok := o.banner(); ok {
		out = append(out, program.AlertBanner(o.St, a, width))
	}
	out = append(out, o.tbl.Lines(o.St, l.table, o.now(), o.Opts.Start)...)
	if cur := o.selected(); l.preview > 0 && cur >= 0 {
		out = append(out, common.SectionRule(o.St, "recent · "+o.rowName(cur), width))
		out = append(out, o.subs[cur].Log.Tail(o.St, width, l.preview-1)...)
	}
	return out
}

// emptyRows is the table with no row shown: that every client was
// forgotten (h shows them), how to connect (Options.Connect), or that there
// is nothing.
func (o *Overview) emptyRows() []string {
	var rows []string
	lead := "no stream yet · "
	if n := len(o.subs); n > 0 {
		rows = append(rows, o.St.Faint.Render(fmt.Sprintf("  every client left and was forgotten (%d): h shows them", n)))
		lead = ""
	}
	for i, c := range o.Opts.Connect {
		if i == 0 {
			c = lead + c
		}
		rows = append(rows, "  "+c)
	}
	if len(rows) == 0 {
		return []string{o.St.Faint.Render("  no resources")}
	}
	return rows
}

// banner is the first alert banner of the resources, if any.
func (o *Overview) banner() (program.Alerts, bool) {
	for i := range o.subs {
		if a := o.subs[i].Alerts; a.Banner != "" {
			return a, true
		}
	}
	return program.Alerts{}, false
}

// Footer is the latest action's status (a resource's, named, but not over
// the help, the findings or a detail; or the player's), or the key help;
// with the count of notes dropped on the way to the screen.
func (o *Overview) Footer(width int) string {
	lost, latest, from := int64(0), program.Status{}, -1
	for i := range o.subs {
		lost += o.subs[i].NotesLost
		if s := o.subs[i].Status; s.Text != "" && (from < 0 || s.At.After(latest.At)) {
			latest, from = s, i
		}
	}
	over := ""
	hint, overlay := o.OverlayHint(o)
	if !overlay && from >= 0 && (o.Chrome.Status.Text == "" || latest.At.After(o.Chrome.Status.At)) {
		over = o.St.Value.Render(o.rowName(from)+": ") + o.St.Sev(latest.Sev, latest.Text)
	}
	return o.Chrome.Footer(width, over, o.Chrome.Status, hint, o.shownKeys(), lost, o.stopped())
}

// HelpLines is the overview's key help, what one resource's dashboard adds,
// and how to read the table.
func (o *Overview) HelpLines(width int) []string {
	st := o.St
	legend := [][2]string{
		{"state", st.Good.Render("green") + " watching, " + st.Warn.Render("yellow") + " listing or relisting, " +
			st.Bad.Render("red") + " backoff or failed; a failure's reason shows under its row"},
		{"for", "how long the resource has been in that state"},
		{"memory", "what the resource's cache holds, estimated"},
		{"last RV", "the resourceVersion the cache is at: where its watch resumes from"},
		{"bookmark", "since the last one: " + st.Warn.Render("yellow") + " after " + format.Age(common.BookmarkLate) + ", " + st.Bad.Render("red") + " after " + format.Age(common.BookmarkStale)},
		{"410s", "410 Gone answers, each one a relist; RELISTS counts the lists after the first"},
		{"events", "ADDED, MODIFIED and DELETED watch events in the last minute"},
		{"lag p99", "how late events came after their object's write, the p99's bucket over the last minute (from the objects' own write times; only once there is one): " +
			st.Warn.Render("yellow") + " " + reflector.LagBucketName(2) + ", " + st.Bad.Render("red") + " beyond"},
		{"last error", "the last request's error: " + st.Warn.Render("yellow") + " until the watch runs again, faint once it got past it"},
		{"total", "every cache's objects and memory; LIST and WATCH requests open now"},
		{"enter", "opens the selected resource's dashboard (? there for its keys); esc comes back"},
	}
	legend = append(append(legend[:len(legend)-1:len(legend)-1], o.Opts.Kind.Legend...), legend[len(legend)-1])
	if left := o.tableLayout(o.rows(false)).table.Left(); len(left) > 0 {
		// A reviewer at 120 columns read of FOR and LAST RV and found neither.
		legend = slices.Insert(legend, 0, [2]string{"narrow", "this width leaves out " + strings.Join(left, ", ") +
			": a wider terminal shows them, in that order"})
	}
	legend = append(o.Chrome.MetricsLegend(), legend...)
	if o.acts() {
		legend[len(legend)-1][1] += "; r and a act on the selected resource here too"
	}
	keys := o.shownKeys()
	if keys.Findings.Enabled() {
		legend = append(legend, [2]string{"findings", "the column counts each resource's findings, those not ignored, with the worst severity; f lists every resource's, newest first, " +
			"and enter shows one's evidence, cause and what to do"})
	}
	return o.Chrome.HelpLines(width, "Overview keys", "Reading the overview", keys, legend)
}
