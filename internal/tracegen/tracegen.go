// Package tracegen writes synthetic traces (format version 2) of any size,
// of one resource or several: for each, an initial paginated list, watches
// of ADDED, MODIFIED and DELETED events (each delete followed by a recreate,
// a new UID under the name of the first object not alive: the one just
// deleted unless a relist found others deleted), bookmarks, watches the
// server closes, and 410 Gone followed by a relist that finds what the watch
// missed. The resources' lines are
// interleaved in time, as a recording of several resources has them. The
// decisions it writes are the ones the reflector makes, so a replay of a
// generated trace reports no differences. Benchmarks and tests use it where
// the bundled traces are too small.
package tracegen

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"sort"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// Config describes a trace. Zero values take the defaults.
type Config struct {
	// Resources is how many resources the trace watches (default 1). Each
	// is watched as the others are (the same objects, events, pages and
	// errors), in its own namespace after the first ("gen", "gen-1", ...),
	// and resource i is the i-th of ConfigMaps, Secrets, Deployments,
	// Services, then ConfigMaps again.
	Resources int
	// Namespace holds the objects (default "gen").
	Namespace string
	// Objects are listed at the start (default 100).
	Objects int
	// PageSize is the LIST limit (0: one page).
	PageSize int
	// Events is how many ADDED, MODIFIED and DELETED events the watches carry in all.
	Events int
	// EventsPerWatch ends a watch (closed by the server) after this many
	// events, and the next resumes from the cursor (0: one watch).
	EventsPerWatch int
	// BookmarkEvery sends a bookmark after every N events (0: none).
	BookmarkEvery int
	// GoneEvery ends every Nth watch with a 410 Gone ERROR event instead; a
	// relist follows, which finds Missed objects changed behind the watch's
	// back (deleted, recreated and updated in turn). 0: never.
	GoneEvery int
	Missed    int
	// Step is the time between events (default 1ms).
	Step time.Duration
	// Name, Labels and Annotations shape object i (defaults: "obj-00042", a
	// few labels and one annotation).
	Name        func(i int) string
	Labels      func(i int) map[string]string
	Annotations func(i int) map[string]string
	// Header, when set, changes the header before it is written (a
	// resource's namespace is changed in Header.Resources).
	Header func(*trace.Header)
	// ListErrors makes the first page of every relist fail once with this
	// message (HTTP 500) before it succeeds ("": never).
	ListErrors string
	// Lag, when set, gives watch event number k (of each resource) the
	// passive delivery estimate of docs/design.md, "Delivery latency":
	// `written` Lag(k) before its arrival, and `lag` Lag(k).
	Lag func(k int) time.Duration
	// ProbeEvery writes a `probe` line of the delivery probe after every
	// N-th watch event of the first resource (0: none), its measures
	// Probe(n) for the n-th (from 0): the write's own latency and the time
	// from sending it to its watch event.
	ProbeEvery int
	Probe      func(n int) (write, event time.Duration)
	// DuplicateEvery sends every N-th MODIFIED event twice, the second
	// time unchanged: the store counts a duplicate (0: none).
	DuplicateEvery int
	// Observed writes the trace the observing proxy would record of
	// clients that watch as the resources above are watched: an observed
	// header, a `resource` line for each (a client of its own), and their
	// traffic without decisions (a replay rebuilds the streams from it).
	Observed bool
}

// Stats are what a written trace holds, all resources together.
type Stats struct {
	Requests, Events, Bookmarks, Relists, Gone int
	// Probes counts the probe lines (samples).
	Probes int
	// Lines counts the lines after the header.
	Lines int
}

type object struct {
	i         int // its number: its place in objs, its name's and labels'
	name, uid string
	rv        int64
	alive     bool
	gen       int
}

// generator writes one resource's lines.
type generator struct {
	cfg Config
	r   int
	// kind and apiVersion are the resource's objects'.
	kind, apiVersion string
	// emit takes each line; false stops the generator.
	emit    func(trace.Line) bool
	at      int64
	id      int64
	rv      int64
	objs    []*object
	st      Stats
	err     error
	watches int
	// start is the header's startedAt: written times are on its clock.
	start time.Time
	// notes writes the reflector's decisions (note lines).
	notes bool
	// dead are the numbers of the objects not alive, in order, so that an
	// event finds the n-th live object without a walk of every object.
	dead []int
}

// errStopped is a generator told to stop by its reader.
var errStopped = errors.New("stopped")

// Write writes a trace described by cfg to w.
func Write(w io.Writer, cfg Config) (Stats, error) {
	cfg = cfg.withDefaults()
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	h := trace.Header{K: trace.KindHeader, V: trace.Version, StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Tool: "tracegen",
		Server: "https://127.0.0.1:6443", ServerVersion: "v1.37.2", Observed: cfg.Observed}
	for i := 0; i < cfg.Resources; i++ {
		h.Resources = append(h.Resources, cfg.resourceHeader(i))
	}
	if cfg.Header != nil {
		cfg.Header(&h)
	}
	resources := h.Resources
	var added []trace.Line // an observed trace's resources, each in its resource line
	notes := true
	if cfg.Observed {
		notes = false // a proxy's streams decide nothing: a replay derives their notes
		h.Resources = nil
		for i, rh := range resources {
			raw, err := json.Marshal(rh)
			if err != nil {
				return Stats{}, fmt.Errorf("writing a generated trace: %w", err)
			}
			client := trace.Client{UserAgent: "tracegen-client/v1", RemoteAddr: fmt.Sprintf("127.0.0.1:%d", 40000+i)}
			added = append(added, trace.Line{K: trace.KindResource, R: i, ID: int64(i + 1), Resource: raw, Client: &client})
		}
	}
	if err := enc.Encode(h); err != nil {
		return Stats{}, fmt.Errorf("writing a generated trace: %w", err)
	}
	var st Stats
	for i := range added {
		if err := enc.Encode(&added[i]); err != nil {
			return st, fmt.Errorf("writing a generated trace: %w", err)
		}
		st.Lines++
	}
	gens := make([]*generator, cfg.Resources)
	for i := range gens {
		gens[i] = newGenerator(cfg, i, resources[i].Namespace, h.StartedAt, notes)
	}
	err := merge(gens, func(l *trace.Line) error { return enc.Encode(l) })
	for _, g := range gens {
		st.add(g.st)
		if err == nil && g.err != nil && !errors.Is(g.err, errStopped) {
			err = g.err
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return st, fmt.Errorf("writing a generated trace: %w", err)
	}
	return st, nil
}

func (c Config) withDefaults() Config {
	if c.Resources <= 0 {
		c.Resources = 1
	}
	if c.Namespace == "" {
		c.Namespace = "gen"
	}
	if c.Objects <= 0 {
		c.Objects = 100
	}
	if c.Step <= 0 {
		c.Step = time.Millisecond
	}
	if c.Name == nil {
		c.Name = func(i int) string { return fmt.Sprintf("obj-%05d", i) }
	}
	if c.Labels == nil {
		c.Labels = func(i int) map[string]string {
			return map[string]string{"app": "gen", "tier": "t" + strconv.Itoa(i%3)}
		}
	}
	if c.Annotations == nil {
		c.Annotations = func(i int) map[string]string {
			return map[string]string{"example.com/owner": "team-" + strconv.Itoa(i%5)}
		}
	}
	return c
}

// kind is the resource of a trace's resource i: they cycle through four.
func kind(i int) reflector.Resource {
	kinds := [...]reflector.Resource{
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true},
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, Kind: "Secret", Namespaced: true},
		{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true},
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"}, Kind: "Service", Namespaced: true},
	}
	return kinds[i%len(kinds)]
}

// resourceHeader is resource i as the header lists it.
func (c Config) resourceHeader(i int) trace.ResourceHeader {
	ns := c.Namespace
	if i > 0 {
		ns += "-" + strconv.Itoa(i)
	}
	return trace.ResourceHeader{Resource: kind(i), Namespace: ns, Objects: trace.ObjectsMetadata,
		Options: trace.Options{Strategy: reflector.StrategyList, PageSize: int64(c.PageSize), WatchTimeout: trace.Duration(5 * time.Minute),
			IdleTimeout: trace.Duration(11 * time.Minute), InitialEventsTimeout: trace.Duration(time.Minute), MaxPermanentRetries: 5}}
}

func newGenerator(cfg Config, r int, ns string, start time.Time, notes bool) *generator {
	cfg.Namespace = ns
	k := kind(r)
	g := &generator{cfg: cfg, r: r, kind: k.Kind, apiVersion: k.GVR.GroupVersion().String(), rv: 100, start: start, notes: notes}
	for i := 0; i < cfg.Objects; i++ {
		g.rv++
		o := &object{i: i, name: cfg.Name(i), uid: uid(i, 0), rv: g.rv, alive: true}
		g.objs = append(g.objs, o)
	}
	return g
}

// lines are the generator's lines, made as they are read.
func (g *generator) lines() iter.Seq[trace.Line] {
	return func(yield func(trace.Line) bool) {
		g.emit = yield
		g.run()
	}
}

// merge writes the generators' lines in the order of their times (the
// lower resource first at equal times), so `at` never goes back.
func merge(gens []*generator, write func(*trace.Line) error) error {
	if len(gens) == 1 {
		for l := range gens[0].lines() {
			if err := write(&l); err != nil {
				return err
			}
		}
		return nil
	}
	type head struct {
		next func() (trace.Line, bool)
		l    trace.Line
		ok   bool
	}
	heads := make([]*head, len(gens))
	for i, g := range gens {
		next, stop := iter.Pull(g.lines())
		defer stop()
		h := &head{next: next}
		h.l, h.ok = next()
		heads[i] = h
	}
	for {
		var first *head
		for _, h := range heads {
			if h.ok && (first == nil || h.l.At < first.l.At) {
				first = h
			}
		}
		if first == nil {
			return nil
		}
		if err := write(&first.l); err != nil {
			return err
		}
		first.l, first.ok = first.next()
	}
}

func (s *Stats) add(o Stats) {
	s.Requests += o.Requests
	s.Events += o.Events
	s.Bookmarks += o.Bookmarks
	s.Relists += o.Relists
	s.Gone += o.Gone
	s.Probes += o.Probes
	s.Lines += o.Lines
}

func uid(i, gen int) string { return fmt.Sprintf("%08d-0000-4000-8000-%012d", gen, i) }

func (g *generator) line(l trace.Line) {
	if g.err != nil {
		return
	}
	g.at += int64(g.cfg.Step)
	l.At, l.R = g.at, g.r
	g.st.Lines++
	if !g.emit(l) {
		g.err = errStopped
	}
}

func (g *generator) note(state reflector.State, reason reflector.Reason, mod func(*trace.Line)) {
	if !g.notes {
		return
	}
	l := trace.Line{K: trace.KindNote, State: state.String(), Reason: string(reason)}
	if mod != nil {
		mod(&l)
	}
	g.line(l)
}

func (g *generator) objectJSON(o *object) json.RawMessage {
	meta := map[string]any{"namespace": g.cfg.Namespace, "name": o.name, "uid": o.uid, "resourceVersion": strconv.FormatInt(o.rv, 10),
		"labels": g.cfg.Labels(o.i), "annotations": g.cfg.Annotations(o.i), "creationTimestamp": "2026-01-01T00:00:00Z"}
	b, err := json.Marshal(map[string]any{"apiVersion": g.apiVersion, "kind": g.kind, "metadata": meta})
	if err != nil && g.err == nil {
		g.err = err
	}
	return b
}

func (g *generator) request(verb reflector.Verb, opts reflector.RequestOptions) int64 {
	g.id++
	g.st.Requests++
	g.line(trace.Line{K: trace.KindRequest, ID: g.id, Verb: string(verb), Opts: &opts})
	return g.id
}

func (g *generator) run() {
	g.note(reflector.StateListing, reflector.ReasonInitialList, nil)
	g.list(nil)
	events := 0
	for events < g.cfg.Events {
		g.watches++
		n := g.cfg.Events - events
		if g.cfg.EventsPerWatch > 0 {
			n = min(n, g.cfg.EventsPerWatch)
		}
		cursor := strconv.FormatInt(g.rv, 10)
		id := g.request(reflector.VerbWatch, reflector.RequestOptions{ResourceVersion: cursor, AllowWatchBookmarks: true, TimeoutSeconds: 300})
		for k := 0; k < n; k++ {
			g.event(id, events+k)
			if g.cfg.ProbeEvery > 0 && g.cfg.Probe != nil && g.r == 0 && (events+k+1)%g.cfg.ProbeEvery == 0 {
				write, event := g.cfg.Probe(g.st.Probes)
				w, e := trace.Duration(write), trace.Duration(event)
				g.st.Probes++
				g.line(trace.Line{K: trace.KindProbe, ResourceVersion: strconv.FormatInt(g.rv, 10), Write: &w, Event: &e})
			}
			if g.cfg.BookmarkEvery > 0 && (events+k+1)%g.cfg.BookmarkEvery == 0 {
				g.line(trace.Line{K: trace.KindEvent, ID: id, Type: string(reflector.EventBookmark),
					Object: json.RawMessage(`{"kind":"` + g.kind + `","apiVersion":"` + g.apiVersion + `","metadata":{"resourceVersion":"` + strconv.FormatInt(g.rv, 10) + `"}}`)})
				g.st.Bookmarks++
			}
		}
		events += n
		cursor = strconv.FormatInt(g.rv, 10)
		if events >= g.cfg.Events {
			g.line(trace.Line{K: trace.KindEnd, ID: id, Reason: string(reflector.EndCanceled), Error: "context canceled"})
			break
		}
		if g.cfg.GoneEvery > 0 && g.watches%g.cfg.GoneEvery == 0 {
			g.gone(id, cursor)
			continue
		}
		g.line(trace.Line{K: trace.KindEnd, ID: id, Reason: string(reflector.EndClosed)})
		g.note(reflector.StateWatching, reflector.ReasonWatchClosed, func(l *trace.Line) { l.ResourceVersion = cursor })
	}
	if g.cfg.Observed {
		// The proxy records each stream's stop: without it, a replay says
		// the recording ended early.
		g.line(trace.Line{K: trace.KindNote, State: reflector.StateStopped.String(), Reason: string(reflector.ReasonStopped), Detail: "stopped"})
		return
	}
	g.note(reflector.StateStopped, reflector.ReasonStopped, nil)
}

// event writes the watch event number k: mostly MODIFIED; every 20th a
// DELETED, and the next an ADDED with a new UID of the first object not
// alive (firstDead: the one just deleted, unless a relist found others
// deleted). One object always stays, so a watch always has events.
func (g *generator) event(id int64, k int) {
	g.rv++
	g.st.Events++
	alive := len(g.objs) - len(g.dead)
	var typ reflector.EventType
	var o *object
	switch {
	case alive == 0 || k%20 == 11 && g.firstDead() != nil:
		o = g.firstDead()
		o.gen++
		o.uid, typ = uid(o.i, o.gen), reflector.EventAdded
		g.revive(o)
	case k%20 == 10 && alive > 1:
		o, typ = g.nthAlive((k/20)%alive), reflector.EventDeleted
		g.kill(o)
	default:
		o, typ = g.nthAlive(k%alive), reflector.EventModified
	}
	o.rv = g.rv
	l := trace.Line{K: trace.KindEvent, ID: id, Type: string(typ), Object: g.objectJSON(o)}
	if g.cfg.Lag != nil {
		// line() moves the clock one step on: the event arrives then.
		lag := g.cfg.Lag(k)
		written, d := g.start.Add(time.Duration(g.at)+g.cfg.Step-lag).UTC(), trace.Duration(lag)
		l.Written, l.Lag = &written, &d
	}
	g.line(l)
	if d := g.cfg.DuplicateEvery; d > 0 && typ == reflector.EventModified && (k+1)%d == 0 {
		l.Written, l.Lag = nil, nil
		g.line(l) // the same event again: nothing changes
	}
}

func (g *generator) alive() []*object {
	out := make([]*object, 0, len(g.objs))
	for _, o := range g.objs {
		if o.alive {
			out = append(out, o)
		}
	}
	return out
}

// nthAlive is the n-th live object (from 0) in the order of objs.
func (g *generator) nthAlive(n int) *object {
	i := n
	for _, d := range g.dead {
		if d > i {
			break
		}
		i++
	}
	return g.objs[i]
}

func (g *generator) kill(o *object) {
	o.alive = false
	at, _ := slices.BinarySearch(g.dead, o.i)
	g.dead = slices.Insert(g.dead, at, o.i)
}

func (g *generator) revive(o *object) {
	o.alive = true
	if at, found := slices.BinarySearch(g.dead, o.i); found {
		g.dead = slices.Delete(g.dead, at, at+1)
	}
}

// firstDead is the object not alive of the lowest number (nil: none).
func (g *generator) firstDead() *object {
	if len(g.dead) == 0 {
		return nil
	}
	return g.objs[g.dead[0]]
}

// gone ends watch id with 410 Gone, changes objects unseen, and relists.
func (g *generator) gone(id int64, cursor string) {
	st := trace.Status{Code: 410, Reason: "Expired", Message: fmt.Sprintf("too old resource version: %s (%d)", cursor, g.rv+1)}
	g.line(trace.Line{K: trace.KindEvent, ID: id, Type: string(reflector.EventError),
		Object: json.RawMessage(fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":"Expired","code":410}`, st.Message))})
	g.line(trace.Line{K: trace.KindEnd, ID: id, Reason: string(reflector.EndError), Status: &st})
	g.st.Gone++
	g.note(reflector.StateRelisting, reflector.ReasonGone, func(l *trace.Line) { l.ResourceVersion, l.Code = cursor, 410 })
	seen := map[string]object{} // the cache as the watch left it
	for _, o := range g.alive() {
		seen[o.name] = *o
	}
	alive := g.alive()
	for m := 0; m < g.cfg.Missed && len(alive) > 1; m++ {
		o := alive[(m*7)%len(alive)]
		g.rv++
		switch m % 3 {
		case 0:
			g.kill(o)
			alive = g.alive()
		case 1:
			o.gen++
			o.uid = uid(o.i, o.gen)
		}
		o.rv = g.rv
	}
	g.st.Relists++
	g.list(seen)
}

// list writes a complete list of the live objects, in pages, and its
// decisions; seen is the cache a relist replaces (nil for the first list).
func (g *generator) list(seen map[string]object) {
	relist := seen != nil
	alive := g.alive()
	sort.Slice(alive, func(i, j int) bool { return alive[i].name < alive[j].name })
	listRV := strconv.FormatInt(g.rv, 10)
	page := len(alive)
	if g.cfg.PageSize > 0 {
		page = g.cfg.PageSize
	}
	if relist && g.cfg.ListErrors != "" {
		id := g.request(reflector.VerbList, reflector.RequestOptions{Limit: int64(g.cfg.PageSize)})
		g.line(trace.Line{K: trace.KindEnd, ID: id, Reason: string(reflector.EndError),
			Status: &trace.Status{Code: 500, Reason: "InternalError", Message: g.cfg.ListErrors}})
		g.note(reflector.StateRelisting, reflector.ReasonRequestError, func(l *trace.Line) { l.Code = 500 })
		g.note(reflector.StateBackoff, reflector.ReasonBackoff, nil)
	}
	cont := ""
	for start := 0; start == 0 || start < len(alive); start += page {
		end := min(start+max(page, 1), len(alive))
		id := g.request(reflector.VerbList, reflector.RequestOptions{Limit: int64(g.cfg.PageSize), Continue: cont})
		for _, o := range alive[start:end] {
			g.line(trace.Line{K: trace.KindItem, ID: id, Object: g.objectJSON(o)})
		}
		cont = ""
		var remaining *int64
		if end < len(alive) {
			cont = "c-" + listRV + "-" + strconv.Itoa(end)
			n := int64(len(alive) - end)
			remaining = &n
		}
		items := end - start
		g.line(trace.Line{K: trace.KindPage, ID: id, ResourceVersion: listRV, Continue: cont, RemainingItemCount: remaining, Items: &items})
		g.line(trace.Line{K: trace.KindEnd, ID: id, Reason: string(reflector.EndClosed)})
		if end >= len(alive) {
			break
		}
	}
	n := len(alive)
	g.note(reflector.StateWatching, reflector.ReasonListComplete, func(l *trace.Line) { l.ResourceVersion, l.Objects = listRV, &n })
	if !relist {
		return
	}
	var d trace.DiffCounts
	for _, o := range alive {
		old, ok := seen[o.name]
		switch {
		case !ok:
			d.Added++
		case old.uid != o.uid:
			d.Recreated++
		case old.rv != o.rv:
			d.Updated++
		default:
			d.Unchanged++
		}
	}
	d.Deleted = len(seen) - d.Recreated - d.Updated - d.Unchanged
	g.note(reflector.StateWatching, reflector.ReasonRelistDiff, func(l *trace.Line) { l.ResourceVersion, l.Diff = listRV, &d })
}
