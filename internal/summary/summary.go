// Package summary is the contract for scripts: what `--summary -o json`
// prints at the end of a live run or a replay (docs/design.md, "Summary").
package summary

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// Summary is the contract for scripts (`--summary -o json`), the same for a
// live run and a replay.
type Summary struct {
	// Resource is "resource.version.group" ("configmaps.v1", "deployments.v1.apps").
	Resource string `json:"resource"`
	// Namespace, LabelSelector and FieldSelector are where and what a
	// watch of our own watches ("" for all namespaces, or none; an observed
	// stream says them in Stream); Probe marks the delivery probe's watch
	// of its Lease: two watches of one resource are told apart.
	Namespace     string `json:"namespace,omitempty"`
	LabelSelector string `json:"labelSelector,omitempty"`
	FieldSelector string `json:"fieldSelector,omitempty"`
	Probe         bool   `json:"probe,omitempty"`
	// State is the reflector's state at the end ("Stopped", "Failed"…).
	State string `json:"state"`
	// SyncSeconds is the time from the start of the run to its first
	// complete list (null if it never completed one).
	SyncSeconds     *float64           `json:"syncSeconds"`
	Objects         int                `json:"objects"`
	ResourceVersion string             `json:"resourceVersion"`
	Bookmark        BookmarkSummary    `json:"bookmark"`
	Counters        reflector.Counters `json:"counters"`
	// Missed sums what the relists found the watch had missed (every
	// relist diff's deletes, recreates, updates and adds): what --fail-on
	// 'missed>0' and 'missed-deletes>0' read.
	Missed reflector.MissedCounts `json:"missed"`
	Store  []StoreEntry           `json:"store"`
	// Findings are what the findings engine raised, in the order raised
	// (ignored ones included, marked); [] when none.
	Findings []findings.Finding `json:"findings"`
	// Stream is set for a stream an observing proxy saw (kubectl watchcache
	// proxy, or the replay of its trace): whose reflector the summary is of.
	Stream *StreamSummary `json:"stream,omitempty"`
	// Delivery is how late the watch told what happened (see
	// DeliverySummary): the passive estimate's buckets, and the probe's
	// figures with --probe.
	Delivery DeliverySummary `json:"delivery"`
	// Faults are the faults the observing proxy injected into the stream
	// (kubectl watchcache proxy --fault), in the order they first acted;
	// absent when none.
	Faults []FaultSummary `json:"faults,omitempty"`
	// Churn is what the MODIFIED events changed (--diff, or a replay of a
	// trace that recorded changes): how many were diffed and changed only
	// times, the paths that changed most with their share of the events and
	// top manager, and the objects that took most events; absent otherwise.
	Churn *diff.Summary `json:"churn,omitempty"`
}

// ChurnTop is how many paths and objects the summary's churn lists.
const ChurnTop = 10

// ChurnOf is a run's churn as the summary says it: nil when no MODIFIED
// event was diffed or skipped (no --diff).
func ChurnOf(c diff.Summary) *diff.Summary {
	if c.Events == 0 && c.Skipped == 0 {
		return nil
	}
	return &c
}

// FaultSummary is one --fault on one stream: the spec as given, the
// stream's number, when it first acted and how many times it acted
// (deletes dropped, 410s answered, watches cut, events held…).
type FaultSummary struct {
	Fault  string    `json:"fault"`
	Stream int       `json:"stream"`
	At     time.Time `json:"at"`
	Count  int       `json:"count"`
}

// StreamSummary names an observed stream: its number (the same live, in
// the trace and in its replay), its namespace and selectors, its client's
// User-Agent and address, and what the client asked for: its Accept, the
// encoding it prefers (Wire) and got (ContentType of the last successful
// response), metadata only or Tables, and how its first request listed.
type StreamSummary struct {
	ID            int    `json:"id"`
	Namespace     string `json:"namespace"`
	LabelSelector string `json:"labelSelector,omitempty"`
	FieldSelector string `json:"fieldSelector,omitempty"`
	UserAgent     string `json:"userAgent"`
	RemoteAddr    string `json:"remoteAddr"`
	Accept        string `json:"accept,omitempty"`
	ContentType   string `json:"contentType,omitempty"`
	// Wire is the encoding the Accept prefers ("" when a trace did not record it).
	Wire         reflector.Wire `json:"wire,omitempty"`
	MetadataOnly bool           `json:"metadataOnly"`
	Table        bool           `json:"table"`
	// Strategy and PageSize: how the first request seen lists ("" when it was a watch).
	Strategy reflector.Strategy `json:"strategy,omitempty"`
	PageSize int64              `json:"pageSize,omitempty"`
	// ClientLeft is set when the stream's client had left by the end (every
	// connection it used closed, no request open; absent otherwise).
	ClientLeft *ClientLeftSummary `json:"clientLeft,omitempty"`
}

// ClientLeftSummary is when a stream's client left, in seconds before the
// end of the run, and the state its stream was in then ("Watching"…);
// ForgottenObjects, when the client stayed away long enough for the proxy
// to forget what it held (--forget-after), how many objects that was.
type ClientLeftSummary struct {
	AgeSeconds       float64 `json:"ageSeconds"`
	State            string  `json:"state"`
	ForgottenObjects *int    `json:"forgottenObjects,omitempty"`
}

// ClientLeftOf is what st says of a client that left, at now; nil when it has not.
func ClientLeftOf(st reflector.Stats, now time.Time) *ClientLeftSummary {
	if st.ClientLeft.IsZero() {
		return nil
	}
	l := &ClientLeftSummary{AgeSeconds: now.Sub(st.ClientLeft).Seconds(), State: st.ClientLeftWas}
	if st.Forgotten {
		n := st.ForgottenObjects
		l.ForgottenObjects = &n
	}
	return l
}

// Asks says for people what the stream's client asked for: "protobuf,
// metadata only", "json, tables", "json, full objects".
func (st *StreamSummary) Asks() string {
	var parts []string
	if st.Wire != "" {
		parts = append(parts, string(st.Wire))
	}
	switch {
	case st.Table:
		parts = append(parts, "tables")
	case st.MetadataOnly:
		parts = append(parts, "metadata only")
	case st.Wire != "":
		parts = append(parts, "full objects")
	}
	return strings.Join(parts, ", ")
}

// BookmarkSummary is the last progress bookmark (a streaming list's end
// bookmark is not one): its resourceVersion ("" if none) and
// its age in seconds at the end of the run (null if none).
type BookmarkSummary struct {
	ResourceVersion string   `json:"resourceVersion"`
	AgeSeconds      *float64 `json:"ageSeconds"`
	// Age is AgeSeconds under its first name, kept for one release.
	//
	// Deprecated: read ageSeconds.
	Age *float64 `json:"age"`
}

// StoreEntry is one cached object's identity.
type StoreEntry struct {
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	UID             string `json:"uid"`
	ResourceVersion string `json:"resourceVersion"`
}

// New computes the summary from the reflector's stats, the store and the
// findings raised (nil for a run without a findings engine: [] in JSON, as
// when none was raised); now is the end of the run.
func New(resource reflector.Resource, st reflector.Stats, s *store.Store, raised []findings.Finding, now time.Time) Summary {
	objs := s.List()
	slices.SortFunc(objs, func(a, b *store.Object) int { return a.Ref().Compare(b.Ref()) })
	entries := make([]StoreEntry, len(objs))
	for i, o := range objs {
		entries[i] = StoreEntry{Namespace: o.Namespace, Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion}
	}
	sum := Summary{
		Resource:        resource.String(),
		State:           st.State.String(),
		Objects:         len(entries),
		ResourceVersion: st.ResourceVersion,
		Bookmark:        BookmarkSummary{ResourceVersion: st.BookmarkRV},
		Counters:        st.Counters,
		Missed:          st.Totals.Missed,
		Store:           entries,
		Findings:        raised,
		Delivery:        DeliverySummary{Lag: LagSummaryOf(st.Lag.Counts)},
	}
	if sum.Findings == nil {
		sum.Findings = []findings.Finding{}
	}
	if !st.BookmarkAt.IsZero() {
		age := now.Sub(st.BookmarkAt).Seconds()
		sum.Bookmark.AgeSeconds, sum.Bookmark.Age = &age, &age
	}
	if !st.Synced.IsZero() && !st.Started.IsZero() {
		sync := st.Synced.Sub(st.Started).Seconds()
		sum.SyncSeconds = &sync
	}
	return sum
}

// WriteJSON writes the summary as one JSON object on one line, so that
// after JSON lines it is the last line on stdout (tail -1 reads it).
func (s Summary) WriteJSON(w io.Writer) error { return writeLine(w, s) }

// writeLine writes v as JSON on one line.
func writeLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // the delivery buckets' names, "<2s" and ">60s", as they are
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing summary: %w", err)
	}
	return nil
}

// WriteAllJSON writes several resources' summaries as one JSON object on
// one line, {"resources": [...]}, in the order given.
func WriteAllJSON(w io.Writer, sums []Summary) error {
	return writeLine(w, struct {
		Resources []Summary `json:"resources"`
	}{sums})
}

// WriteObservedJSON writes an observed run's summaries (the proxy's, or
// the replay of its trace) as one JSON object on one line,
// {"resources": [...], "faults": [...]}: the streams in the order given,
// then every stream's faults, in the order they first acted ("faults": []
// when none acted, so that a CI check reads it either way).
func WriteObservedJSON(w io.Writer, sums []Summary) error {
	faults := []FaultSummary{}
	for _, s := range sums {
		faults = append(faults, s.Faults...)
	}
	slices.SortStableFunc(faults, func(a, b FaultSummary) int { return a.At.Compare(b.At) })
	return writeLine(w, struct {
		Resources []Summary      `json:"resources"`
		Faults    []FaultSummary `json:"faults"`
	}{sums, faults})
}

// WriteText writes the summary for people: the totals, then the objects.
func (s Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	if st := s.Stream; st != nil {
		fmt.Fprintf(&b, "stream #%d of %s (%s), namespace %q", st.ID, st.RemoteAddr, st.UserAgent, st.Namespace)
		if st.LabelSelector != "" {
			fmt.Fprintf(&b, ", -l %s", st.LabelSelector)
		}
		if st.FieldSelector != "" {
			fmt.Fprintf(&b, ", --field-selector %s", st.FieldSelector)
		}
		if asks := st.Asks(); asks != "" {
			fmt.Fprintf(&b, ", asks %s", asks)
		}
		b.WriteString("\n")
		if l := st.ClientLeft; l != nil {
			fmt.Fprintf(&b, "client left %.1fs before the end; it was %s", l.AgeSeconds, l.State)
			if n := l.ForgottenObjects; n != nil {
				fmt.Fprintf(&b, "; the proxy forgot the %s it held", format.PluralUngrouped(*n, "object"))
			}
			b.WriteString("\n")
		}
	}
	at := " (no list completed)"
	if s.ResourceVersion != "" {
		at = " at resourceVersion " + s.ResourceVersion
	}
	fmt.Fprintf(&b, "resource %s: %s%s\n", s.Resource, format.PluralUngrouped(s.Objects, "object"), at)
	if s.SyncSeconds != nil {
		fmt.Fprintf(&b, "state at the end: %s; synced %.3fs after the start\n", s.State, *s.SyncSeconds)
	} else {
		fmt.Fprintf(&b, "state at the end: %s; never synced\n", s.State)
	}
	if s.Bookmark.AgeSeconds != nil { // not Age, kept one release only
		fmt.Fprintf(&b, "last bookmark: resourceVersion %s, %.1fs before the end\n", s.Bookmark.ResourceVersion, *s.Bookmark.AgeSeconds)
	} else {
		b.WriteString("last bookmark: none\n")
	}
	c := s.Counters
	fmt.Fprintf(&b, "lists %d (relists %d, pages %d), watches %d, 410 Gone %d, too large RV %d, bookmarks %d, list-end bookmarks %d\n",
		c.Lists, c.Relists, c.ListPages, c.Watches, c.Gone, c.TooLargeResourceVersion, c.Bookmarks, c.InitialEventsEnd)
	fmt.Fprintf(&b, "events: added %d, modified %d, deleted %d; UID mismatches %d, duplicates %d; watch errors %d, backoffs %d\n",
		c.Added, c.Modified, c.Deleted, c.UIDMismatches, c.Duplicates, c.WatchErrors, c.Backoffs)
	m := s.Missed
	fmt.Fprintf(&b, "missed, as relists found: deletes %d, recreates %d, updates %d, adds %d\n", m.Deletes, m.Recreates, m.Updates, m.Adds)
	if len(s.Findings) == 0 {
		b.WriteString("findings: none\n")
	}
	for _, f := range s.Findings {
		b.WriteString("FINDING " + f.Detail())
	}
	for _, f := range s.Faults {
		fmt.Fprintf(&b, "FAULT --fault %s acted %s, first at %s\n", f.Fault, format.PluralUngrouped(f.Count, "time"), f.At.Format(time.RFC3339))
	}
	if c := s.Churn; c != nil {
		fmt.Fprintf(&b, "churn: %d MODIFIED events diffed, %d timestamp-only", c.Events, c.TimestampOnly)
		if c.Skipped > 0 {
			fmt.Fprintf(&b, ", %d not diffed", c.Skipped)
		}
		b.WriteString("\n")
		for _, p := range c.Paths {
			fmt.Fprintf(&b, "CHURN %s changed %s, %.0f%% of events", p.Path, format.PluralUngrouped(p.Count, "time"), 100*p.Share)
			if p.Manager != "" {
				fmt.Fprintf(&b, ", mostly by %s", p.Manager)
			}
			b.WriteString("\n")
		}
		for _, o := range c.Objects {
			fmt.Fprintf(&b, "HOT %s: %s\n", o.Name, format.PluralUngrouped(o.Count, "MODIFIED event"))
		}
	}
	parts := make([]string, 0, reflector.LagBucketCount)
	for i, n := range s.Delivery.Lag.Counts() {
		parts = append(parts, fmt.Sprintf("%s %d", reflector.LagBucketName(i), n))
	}
	fmt.Fprintf(&b, "delivery lag (passive, from the objects' write times, ±2s): %s\n", strings.Join(parts, ", "))
	if p := s.Delivery.Probe; p != nil {
		fmt.Fprintf(&b, "probe (a Lease's write to its watch event, on this connection): %d updates, p50 %.3fs, p90 %.3fs, p99 %.3fs, max %.3fs; write p50 %.3fs; %d lost (no watch event)\n",
			p.Count, p.P50, p.P90, p.P99, p.Max, p.WriteP50, p.Lost)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing summary: %w", err)
	}
	if len(s.Store) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tUID\tRESOURCEVERSION")
	for _, e := range s.Store {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Namespace, e.Name, e.UID, e.ResourceVersion)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing summary: %w", err)
	}
	return nil
}

// Decode reads what `--summary -o json` printed: the last line of out, one
// resource's summary or {"resources": [...]}. It returns the summaries in
// their order.
func Decode(out []byte) ([]Summary, error) {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	last := []byte(lines[len(lines)-1])
	var all struct {
		Resources []Summary `json:"resources"`
	}
	if err := json.Unmarshal(last, &all); err == nil && all.Resources != nil {
		return all.Resources, nil
	}
	var one Summary
	if err := json.Unmarshal(last, &one); err != nil || one.Resource == "" {
		return nil, fmt.Errorf("reading the summary: the last line is not one: %.200q", last)
	}
	return []Summary{one}, nil
}

// WithoutClockReadings drops what a live run and its replay measure on
// different clocks (the bookmark's age, the time to sync, how long before
// the end a stream's client left, the findings' times and windows, the
// evidence's sentence, and the titles and facts that give durations read
// on them: a live note is timed when the reflector applies a line, its
// replay when the recorder wrote it, milliseconds apart), to compare the
// rest: the findings' ids, the other titles, counts, requests, objects,
// the other facts, and the state a client left its stream in.
func (s Summary) WithoutClockReadings() Summary {
	s.Bookmark.Age, s.Bookmark.AgeSeconds, s.SyncSeconds = nil, nil, nil
	if st := s.Stream; st != nil && st.ClientLeft != nil {
		stream, left := *st, *st.ClientLeft
		left.AgeSeconds = 0
		stream.ClientLeft = &left
		s.Stream = &stream
	}
	fs := make([]findings.Finding, len(s.Findings))
	for i, f := range s.Findings {
		f.FirstAt, f.LastAt, f.Evidence.Window, f.Evidence.Text = time.Time{}, time.Time{}, nil, ""
		switch f.ID {
		case findings.LargeInitialList, findings.WatchFlapping, findings.GaveUp:
			f.Title = "" // "… in 31.2s", "typically after 2s", "after 30s"
		}
		if facts := f.Evidence.Facts; facts != nil {
			facts = maps.Clone(facts)
			for _, k := range []string{"seconds", "typicalLifetime", "listSeconds"} {
				delete(facts, k)
			}
			f.Evidence.Facts = facts
		}
		fs[i] = f
	}
	s.Findings = fs
	return s
}
