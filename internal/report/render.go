package report

import (
	"bufio"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/probe"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/subjects"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

var (
	//go:embed report.html.tmpl
	pageTemplate string
	//go:embed report.css
	pageCSS string
	//go:embed report.js
	pageScript string
)

// parsePage parses the page template; it is static, so an error is a bug
// caught by every test. half is the first or the last part of what a capped
// list keeps when it left some out (see Options.MaxRequests).
func parsePage() (*template.Template, error) {
	half := func(kept int) int { return kept / 2 }
	return template.New("report").Funcs(template.FuncMap{"count": format.Count[int], "half": half}).Parse(pageTemplate)
}

// scriptHash is the Content-Security-Policy hash of the page's one script:
// the policy lets only that script run, so even markup that slipped through
// escaping could not run any.
func scriptHash() string {
	sum := sha256.Sum256([]byte(pageScript))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// WriteHTML writes the report as one self-contained HTML page: inline CSS,
// inline SVG and one inline script, nothing loaded from anywhere. Everything
// that comes from the trace is escaped by html/template for where it stands
// (text or attribute; the JSON data the script reads holds only numbers).
func (r *Report) WriteHTML(w io.Writer) error {
	t, err := parsePage()
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := t.Execute(bw, newPageView(r)); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// maxOpenDiff is how many objects a relist's diff may have to be shown open.
const maxOpenDiff = 10

// pageView is everything the template shows.
type pageView struct {
	Title, Name string
	CSP         string
	CSS         template.CSS
	Script      template.JS
	Data        pageData
	Header      []keyValue
	// Index lists every resource of the trace, each linking to its section.
	Index    []indexRow
	Warnings []string
	// Findings are every resource's findings, FindingsSum their count by severity.
	Findings    []findingView
	FindingsSum findingsSummary
	Alerts      AlertSection
	AlertRows   []alertRow
	Resources   []resourceView
	Decisions   string
}

type keyValue struct{ Key, Value, Hint string }

// indexRow is one resource in the header's list of them.
type indexRow struct {
	Anchor, Name, Kind, Scope, Objects, Strategy, Wire string
	Lists, Relists, Gone, Events, End                  string
	Alarm                                              bool
	// Findings counts the resource's findings that are not ignored, with
	// the worst severity; FindingsHref is the first one's.
	Findings, FindingsHref string
}

type alertRow struct{ At, Resource, Rule, Detail string }

type resourceView struct {
	Index                         int
	Name, Kind, Scope             string
	Counters                      []counterView
	State                         []keyValue
	Options                       []keyValue
	Timeline                      timelineView
	Requests                      []requestView
	RequestsTotal, RequestsHidden int
	Relists                       []relistView
	RelistsTotal, RelistsHidden   int
	// Changes is "What changed" (nil when the trace recorded no changes).
	Changes *churnView
}

type counterView struct {
	Label, Value, Hint string
	// Alarm marks a counter whose non-zero value is worth a look.
	Alarm bool
}

type requestView struct {
	Anchor, Kind, Class               string
	ID                                int64
	Start, Duration                   string
	StartV, DurationV                 int64
	RV, Match, Limit, Continue, Token string
	InitialEvents, Bookmarks, Timeout string
	Count, End                        string
	CountV                            int
	// Gap is the first request after the ones left out.
	Gap              bool
	TimeoutV, LimitV int64
	RVMissing        bool
}

type relistView struct {
	Anchor                                             string
	Number                                             int
	Start, End, Took, After, Outcome, RV               string
	StartV, TookV                                      int64
	Before, AfterN, Deleted, Recreated, Updated, Added int
	Unchanged                                          int
	HasDiff                                            bool
	FirstRequest, LastRequest                          int64
	FirstHref, LastHref                                string
	Rows                                               []diffRow
	More                                               int
	// Gap is the first relist after the ones left out.
	Gap bool
	// Open shows a short diff's objects without a click.
	Open bool
}

// pageData is the JSON the page's script reads: each resource's time span
// and the buckets behind its charts' hover read-outs.
type pageData struct {
	Resources []resourceData `json:"resources"`
}

type resourceData struct {
	SpanMS    float64 `json:"spanMs"`
	BucketMS  float64 `json:"bucketMs"`
	Added     []int   `json:"added"`
	Modified  []int   `json:"modified"`
	Deleted   []int   `json:"deleted"`
	Bookmarks []int   `json:"bookmarks"`
	// Objects is the object count at each bucket's end, -1 before the first list.
	Objects []int `json:"objects"`
	// Lag is each bucket's events by lag bucket (<2s … >60s), when the
	// resource's events carry the passive estimate.
	Lag [][reflector.LagBucketCount]int64 `json:"lag,omitempty"`
	// ProbeN, ProbeMinMS and ProbeMaxMS are each bucket's probe samples
	// and their fastest and slowest write-to-event times, on the resource
	// that watches the probe's Lease.
	ProbeN     []int     `json:"probeN,omitempty"`
	ProbeMinMS []float64 `json:"probeMinMs,omitempty"`
	ProbeMaxMS []float64 `json:"probeMaxMs,omitempty"`
}

func newPageView(r *Report) *pageView {
	h := r.Header
	name := r.Name
	if name == "" {
		name = "trace"
	}
	v := &pageView{Title: "watchcache report: " + format.ClipWithLength(name, 120), Name: format.ClipWithLength(name, 240),
		CSP: "default-src 'none'; script-src " + scriptHash() + "; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'",
		CSS: template.CSS(pageCSS), Script: template.JS(pageScript), Warnings: r.Warnings, Alerts: r.Alerts}
	span := max(r.Duration, time.Millisecond)
	started := h.StartedAt.UTC().Format("2006-01-02 15:04:05.000 MST")
	resources := "1 resource"
	if n := len(h.Resources); n != 1 {
		resources = format.Count(n) + " resources"
	}
	v.Header = []keyValue{
		{"server", format.ClipWithLength(h.Server, clipMessage) + versionSuffix(h.ServerVersion), ""},
		{"started", started, "the header's startedAt"},
		{"duration", format.Duration(r.Duration), "the last line's time"},
		{"recorded by", format.ClipWithLength(h.Tool, 64), ""},
		{"trace", fmt.Sprintf("format version %d, %s lines after the header, %s", h.V, format.Count(r.Lines), resources), ""},
	}
	traits := subjects.Of(h)
	if about := traits.About; about != "" {
		v.Header = append(v.Header, keyValue{"observed", about, ""})
	}
	v.Decisions = format.Count(r.Decisions)
	v.Findings, v.FindingsSum = findingViews(r)
	for _, a := range r.Alerts.Tripped {
		v.AlertRows = append(v.AlertRows, alertRow{At: formatOffset(a.At), Resource: a.Resource, Rule: format.ClipWithLength(a.Rule, clipName), Detail: format.ClipWithLength(a.Detail, clipMessage)})
	}
	for _, res := range r.Resources {
		v.Resources = append(v.Resources, v.resource(r, res, span, traits))
		v.Index = append(v.Index, indexRowOf(res))
		v.Data.Resources = append(v.Data.Resources, resourceDataOf(res, span))
	}
	return v
}

// indexRowOf is a resource as the header lists it: what was watched, how,
// and the counters that say whether its section is worth a look.
func indexRowOf(res *Section) indexRow {
	c := res.Counters
	n := format.Count[int64]
	wire, strategy := string(res.Header.Options.Wire), string(res.Header.Options.Strategy)
	if wire == "" {
		wire = "json"
	}
	if s := res.Stream; s != nil {
		// Another program's: what it asked for, "?" where its trace did not say.
		wire, strategy = string(s.Wire), string(s.Strategy)
		switch {
		case wire == "":
			wire = "?"
		case s.Table:
			wire += " (tables)"
		case s.MetadataOnly:
			wire += " (metadata)"
		}
		if strategy == "" {
			strategy = "?"
		}
	}
	name, kind := res.Name, res.Header.Resource.Kind
	if s := res.Stream; s != nil { // two clients' streams of one resource: told apart by number and client
		name = fmt.Sprintf("%s #%d", name, s.ID)
	}
	if res.Client != nil && res.Client.UserAgent != "" {
		kind += " · " + res.Client.UserAgent
	}
	row := indexRow{Anchor: resourceAnchor(res.Index), Name: format.ClipWithLength(name, clipName), Kind: format.ClipWithLength(kind, clipName), Scope: scope(res),
		Objects: string(res.Header.Objects), Strategy: strategy, Wire: wire,
		Lists: n(c.Lists), Relists: n(c.Relists), Gone: n(c.Gone), Events: n(c.Added + c.Modified + c.Deleted), End: format.Count(res.Objects),
		Alarm:    c.Relists > 0 || c.Gone > 0 || c.UIDMismatches > 0 || c.WatchErrors > 0 || c.ResourceVersionBackwards > 0,
		Findings: "0"}
	if worst, ok := findings.Worst(res.Findings); ok {
		row.Findings = format.Count(findings.CountAtLeast(res.Findings, findings.Info)) + " (" + string(worst) + ")"
		row.Alarm = row.Alarm || worst.AtLeast(findings.Warning)
	}
	for _, f := range res.Findings {
		if !f.Ignored {
			row.FindingsHref = "#" + findingAnchor(res.Index, f.ID)
			break
		}
	}
	return row
}

func resourceAnchor(i int) string { return fmt.Sprintf("res-%d", i) }

// resourceOptions are the reflector options the resource was watched with.
func resourceOptions(h trace.ResourceHeader) []keyValue {
	o := h.Options
	wire := string(o.Wire)
	if wire == "" {
		wire = "json (not recorded: a trace from before the wire was)"
	}
	out := []keyValue{
		{"initial list", string(o.Strategy), "--initial-list"},
		{"page size", pageSize(o.PageSize), "--page-size"},
		{"resourceVersion", quoteEmpty(o.ResourceVersion) + matchSuffix(o.ResourceVersionMatch), "the first list's read"},
		{"watch timeout", format.Duration(time.Duration(o.WatchTimeout)), "base of the jittered server-side timeout"},
		{"idle timeout", format.Duration(time.Duration(o.IdleTimeout)), ""},
		{"initial-events timeout", format.Duration(time.Duration(o.InitialEventsTimeout)), ""},
		{"asks for", asksFor(o.MetadataOnly), "--metadata-only"},
		{"wire", wire, "--wire"},
		{"trace keeps", string(h.Objects), "--trace-objects"},
	}
	if o.GiveUpAfter > 0 {
		out = append(out, keyValue{"give up after", format.Duration(time.Duration(o.GiveUpAfter)), ""})
	}
	if o.UnsafeSecrets {
		out = append(out, keyValue{"Secret values", "recorded unredacted", "--trace-unsafe-secrets"})
	}
	return out
}

// clientOptions describe a client's stream: whose it is, and what it
// asked for. Its request options are the client's, on each of its requests.
func clientOptions(res *Section) []keyValue {
	out := []keyValue{{"stream of", "another program's reflector, observed (its options are on each request below)", ""}}
	if s := res.Stream; s != nil {
		out = append(out, keyValue{"stream", fmt.Sprintf("#%d", s.ID), "as the proxy's --summary numbers it"})
	}
	if c := res.Client; c != nil {
		out = append(out, keyValue{"User-Agent", format.ClipWithLength(c.UserAgent, clipMessage), ""}, keyValue{"address", format.ClipWithLength(c.RemoteAddr, clipName), "its first connection"})
	}
	if s := res.Stream; s != nil && s.Wire != "" {
		objects := asksFor(s.MetadataOnly)
		switch {
		case s.Table:
			objects = "tables (kubectl get)"
		case s.MetadataOnly:
			objects += " (PartialObjectMetadata)"
		}
		out = append(out, keyValue{"wire", string(s.Wire), "the encoding its Accept prefers"}, keyValue{"asks for", objects, "as=… in its Accept"})
		if s.Accept != "" {
			out = append(out, keyValue{"Accept", format.ClipWithLength(s.Accept, clipMessage), "its first request's"})
		}
		if s.ContentType != "" {
			out = append(out, keyValue{"Content-Type", format.ClipWithLength(s.ContentType, clipMessage), "of the last successful response"})
		}
		if s.Strategy != "" {
			out = append(out, keyValue{"initial list", string(s.Strategy), "its first request seen"}, keyValue{"page size", pageSize(s.PageSize), "that request's limit"})
		}
	}
	return append(out, keyValue{"trace keeps", string(res.Header.Objects), "--trace-objects"})
}

// asksFor is what the server is asked for, in the dashboard's words:
// "metadata-only" or "full objects". What the trace keeps of each object is
// another thing ("trace keeps").
func asksFor(metadataOnly bool) string {
	if metadataOnly {
		return "metadata-only"
	}
	return "full objects"
}

func versionSuffix(v string) string {
	if v == "" {
		return ""
	}
	return " (" + format.ClipWithLength(v, 64) + ")"
}

func matchSuffix(m string) string {
	if m == "" {
		return ""
	}
	return ", match " + m
}

func pageSize(n int64) string {
	if n == 0 {
		return "0 (one response)"
	}
	return format.Count(n)
}

func (v *pageView) resource(r *Report, res *Section, span time.Duration, traits subjects.Traits) resourceView {
	rv := resourceView{Index: res.Index, Name: format.ClipWithLength(res.Name, clipName), Kind: format.ClipWithLength(res.Header.Resource.Kind, clipName), Scope: scope(res),
		RequestsTotal: res.RequestsTotal, RequestsHidden: res.RequestsTotal - len(res.Requests),
		RelistsTotal: res.RelistsTotal, RelistsHidden: res.RelistsTotal - len(res.Relists)}
	rv.Options = resourceOptions(res.Header)
	if traits.Clients {
		rv.Options = clientOptions(res)
	}
	c := res.Counters
	backoffs := format.Count(c.Backoffs)
	backoffHint := "waits after errors (recorded decisions)"
	switch {
	case traits.NoBackoffs != "":
		backoffs, backoffHint = "n/a", traits.NoBackoffs
	case !res.BackoffsKnown:
		backoffs, backoffHint = "n/a", "the trace has no recorded decisions, so its backoffs are unknown"
	}
	n := format.Count[int64]
	rv.Counters = []counterView{
		{"lists", n(c.Lists), "full lists started (paginated or streaming)", false},
		{"relists", n(c.Relists), "full lists after the first", c.Relists > 0},
		{"list pages", n(c.ListPages), "LIST responses", false},
		{"watches", n(c.Watches), "WATCH requests (streaming lists included)", false},
		{"410 Gone", n(c.Gone), "410 Gone answers", c.Gone > 0},
		{"too large RV", n(c.TooLargeResourceVersion), "\"too large resource version\" answers", c.TooLargeResourceVersion > 0},
		{"bookmarks", n(c.Bookmarks), "progress BOOKMARK events (not a streaming list's end)", false},
		{"list-end bookmarks", n(c.InitialEventsEnd), "initial-events-end bookmarks: each ended a streaming list", false},
		{"added", n(c.Added), "ADDED watch events", false},
		{"modified", n(c.Modified), "MODIFIED watch events", false},
		{"deleted", n(c.Deleted), "DELETED watch events", false},
		{"UID mismatches", n(c.UIDMismatches), "applies that replaced another UID, deletes of a stale UID", c.UIDMismatches > 0},
		{"duplicates", n(c.Duplicates), "events that carried the cached UID and resourceVersion again", c.Duplicates > 0},
		{"watch errors", n(c.WatchErrors), "watches that ended in an error", c.WatchErrors > 0},
		{"backoffs", backoffs, backoffHint, c.Backoffs > 0},
		{"RV backwards", n(c.ResourceVersionBackwards), "events and bookmarks older than the cursor", c.ResourceVersionBackwards > 0},
	}
	bookmark := "none"
	if res.BookmarkAt >= 0 {
		bookmark = fmt.Sprintf("resourceVersion %s, %s before the end", format.ClipWithLength(res.BookmarkRV, 64), format.Duration(r.Duration-res.BookmarkAt))
	}
	rv.State = []keyValue{
		{"objects at the end", format.Count(res.Objects), ""},
		{"resourceVersion at the end", quoteEmpty(format.ClipWithLength(res.ResourceVersion, 64)), "the cursor"},
		{"last bookmark", bookmark, "the last progress bookmark"},
	}
	if res.Lag.Total() > 0 {
		rv.State = append(rv.State, keyValue{"event lag", lagText(res.Lag), "the passive delivery estimate of the watch events whose object carried a write time (precision about ±2 s), as the summary's delivery.lag"})
	}
	if p := res.Probe; p != nil {
		rv.State = append(rv.State, keyValue{"probe", probeText(p), "the delivery probe watches its Lease through this resource: the apiserver's watch path for a Lease on this connection, not every resource's"})
	}
	if s := res.Stream; s != nil && s.ClientLeft != nil {
		l := s.ClientLeft
		left := fmt.Sprintf("%s before the end; it was %s", format.Duration(time.Duration(l.AgeSeconds*float64(time.Second))), l.State)
		if n := l.ForgottenObjects; n != nil && *n > 0 {
			left += "; the proxy forgot the " + format.Plural(*n, "object") + " it held"
		}
		rv.State = append(rv.State, keyValue{"client left", left, "every connection of its client closed with no request open, as the summary's stream.clientLeft says it"})
	}
	if len(res.Faults) > 0 {
		var acts []string
		for _, f := range res.Faults {
			acts = append(acts, fmt.Sprintf("%s ×%d (first at %s)", format.ClipWithLength(f.Fault, clipName), f.Count, format.Duration(f.At.Sub(r.Header.StartedAt))))
		}
		rv.State = append(rv.State, keyValue{"faults", strings.Join(acts, ", "), "what the observing proxy's --fault did to this stream, as the summary's faults say it: each spec, how many times it acted, and when it first did, from the trace's start"})
	}
	rv.Timeline = v.timeline(res, span)
	rv.Changes = churnViewOf(res)
	for i, q := range res.Requests {
		view := requestRow(res.Index, q)
		view.Gap = rv.RequestsHidden > 0 && i == res.RequestsGap
		rv.Requests = append(rv.Requests, view)
	}
	for i, l := range res.Relists {
		view := relistRow(res.Index, l)
		view.Gap = rv.RelistsHidden > 0 && i == res.RelistsGap
		rv.Relists = append(rv.Relists, view)
	}
	return rv
}

// lagText is the lag buckets in words: "<2s 1,200 · 2-5s 3 … (p99 in 2-5s)".
func lagText(c reflector.LagCounts) string {
	var b strings.Builder
	for i, n := range c {
		if i > 0 {
			b.WriteString(" · ")
		}
		b.WriteString(reflector.LagBucketName(i) + " " + format.Count(n))
	}
	if q := c.P99Bucket(); q >= 0 {
		b.WriteString(" (p99 in " + reflector.LagBucketName(q) + ")")
	}
	return b.String()
}

// probeText is the probe's figures in words.
func probeText(p *probe.Figures) string {
	if p.Count == 0 {
		return "no samples"
	}
	return fmt.Sprintf("write to event p50 %s, p90 %s, p99 %s, max %s over %s samples; the write itself p50 %s",
		format.Duration(p.P50), format.Duration(p.P90), format.Duration(p.P99), format.Duration(p.Max), format.Count(p.Count), format.Duration(p.WriteP50))
}

func scope(res *Section) string {
	h, s := res.Header, "all namespaces"
	if !h.Resource.Namespaced {
		s = "cluster-scoped"
	}
	if h.Namespace != "" {
		s = "namespace " + format.ClipWithLength(h.Namespace, clipName)
	}
	if h.LabelSelector != "" {
		s += " · labels " + format.ClipWithLength(h.LabelSelector, clipMessage)
	}
	if h.FieldSelector != "" {
		s += " · fields " + format.ClipWithLength(h.FieldSelector, clipMessage)
	}
	return s
}

func requestRow(res int, q *Request) requestView {
	o := q.Opts
	v := requestView{Anchor: requestAnchor(res, q.ID), ID: q.ID, Kind: q.Kind.Noun(), Class: "c-" + string(q.Class),
		Start: formatOffset(q.Start), StartV: int64(q.Start), Duration: format.Duration(q.End - q.Start), DurationV: int64(q.End - q.Start),
		RV: format.ClipWithLength(o.ResourceVersion, 64), RVMissing: o.ResourceVersion == "" && o.Continue == "", Match: o.ResourceVersionMatch,
		Continue: format.Clip(o.Continue, clipToken), InitialEvents: yes(o.SendInitialEvents), Bookmarks: yes(o.AllowWatchBookmarks),
		End: format.ClipWithLength(describeEnd(q), clipMessage), LimitV: o.Limit, TimeoutV: o.TimeoutSeconds}
	if len(o.Continue) > clipToken {
		v.Token = format.ClipWithLength(o.Continue, 1024)
	}
	if o.Limit > 0 {
		v.Limit = format.Count(o.Limit)
	}
	if o.TimeoutSeconds > 0 {
		v.Timeout = strconv.FormatInt(o.TimeoutSeconds, 10) + "s"
	}
	if q.Verb == "list" {
		v.Count, v.CountV = format.Plural(q.Items, "item"), q.Items
	} else {
		v.Count, v.CountV = format.Plural(q.Events, "event"), q.Events
		if q.Bookmarks > 0 {
			v.Count += " (" + format.Plural(q.Bookmarks, "bookmark") + ")"
		}
	}
	return v
}

func yes(b bool) string {
	if b {
		return "true"
	}
	return ""
}

func relistRow(res int, l *Relist) relistView {
	v := relistView{Anchor: relistAnchor(res, l.Number), Number: l.Number, Start: formatOffset(l.Start), StartV: int64(l.Start),
		End: formatOffset(l.End), Took: format.Duration(l.End - l.Start), TookV: int64(l.End - l.Start), After: format.ClipWithLength(l.After, clipMessage),
		FirstRequest: l.FirstRequest, LastRequest: l.LastRequest,
		FirstHref: "#" + requestAnchor(res, l.FirstRequest), LastHref: "#" + requestAnchor(res, l.LastRequest)}
	switch l.Outcome {
	case RelistCompleted:
		v.Outcome = "completed"
	case RelistFirstComplete:
		v.Outcome = "completed (the first complete list: nothing to compare)"
	case RelistRestarted:
		v.Outcome = "restarted before it completed"
	case RelistUnfinished:
		v.Outcome = "not complete when the trace ends"
	}
	if d := l.Diff; d != nil {
		v.HasDiff, v.RV = true, format.ClipWithLength(d.ResourceVersion, 64)
		v.Before, v.AfterN, v.Deleted, v.Recreated, v.Updated, v.Added, v.Unchanged = d.Before, d.After, d.NDeleted, d.NRecreated, d.NUpdated, d.NAdded, d.Unchanged
		v.Rows = diffRows(d)
		v.More = d.NDeleted + d.NRecreated + d.NUpdated + d.NAdded - len(v.Rows)
		v.Open = len(v.Rows) <= maxOpenDiff
	}
	return v
}

func resourceDataOf(res *Section, span time.Duration) resourceData {
	d := resourceData{SpanMS: float64(span) / float64(time.Millisecond), BucketMS: float64(res.BucketWidth) / float64(time.Millisecond)}
	n := len(res.Buckets)
	d.Added, d.Modified, d.Deleted, d.Bookmarks, d.Objects = make([]int, n), make([]int, n), make([]int, n), make([]int, n), make([]int, n)
	last := -1
	for i, b := range res.Buckets {
		d.Added[i], d.Modified[i], d.Deleted[i], d.Bookmarks[i] = b.Added, b.Modified, b.Deleted, b.Bookmarks
		if b.HasObjects {
			last = b.ObjectsLast
		}
		d.Objects[i] = last
	}
	if res.Lag.Total() > 0 {
		d.Lag = make([][reflector.LagBucketCount]int64, n)
		for i, b := range res.Buckets {
			d.Lag[i] = b.Lag
		}
	}
	if res.Probe != nil {
		d.ProbeN, d.ProbeMinMS, d.ProbeMaxMS = make([]int, n), make([]float64, n), make([]float64, n)
		for i, b := range res.Buckets {
			d.ProbeN[i] = b.ProbeN
			d.ProbeMinMS[i], d.ProbeMaxMS[i] = float64(b.ProbeMin)/float64(time.Millisecond), float64(b.ProbeMax)/float64(time.Millisecond)
		}
	}
	return d
}
