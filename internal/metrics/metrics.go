// Package metrics exports what reflectors do as Prometheus metrics. A
// Metrics holds one registry (never the default one) for one run; every
// watched resource is added to it with its own label values, and is fed by
// its reflector's notes (Resource.Note, an OnNote listener) and, at scrape
// time, by its reflector's Stats and its store's counters (Resource.Attach).
// Any source of notes and stats can feed it: a live run, a replay, a proxy.
package metrics

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// Namespace prefixes every metric of the plugin.
const Namespace = "watchcache"

// labelNames are the labels every metric carries, in Labels' order; an
// observing proxy's metrics add "client".
func labelNames(withClient bool) []string {
	if withClient {
		return []string{"resource", "namespace", "label_selector", "field_selector", "client"}
	}
	return []string{"resource", "namespace", "label_selector", "field_selector"}
}

// Labels identify one watched resource.
type Labels struct {
	// Resource is "resource.version.group", as the summary names it:
	// "configmaps.v1", "deployments.v1.apps".
	Resource string
	// Namespace is the namespace watched; "" for all namespaces or a cluster-scoped resource.
	Namespace string
	// LabelSelector and FieldSelector are the selectors, as given ("" for none).
	LabelSelector string
	FieldSelector string
	// Client is the observed program (a proxy's metrics, NewObserved): its
	// User-Agent, no stream number, so that clients that come and go do not
	// add series. Unused otherwise.
	Client string

	withClient bool // set by Add: the registry has the client label
}

func (l Labels) values(extra ...string) []string {
	v := []string{l.Resource, l.Namespace, l.LabelSelector, l.FieldSelector}
	if l.withClient {
		v = append(v, l.Client)
	}
	return append(v, extra...)
}

// The values of the labels that break counters down; every series exists
// from the start, at 0.
func pageResults() []string {
	return []string{"ok", "gone", "too-large", "error", "timeout", "canceled", "stopped"}
}
func listResults() []string { return []string{"complete", "restarted", "failed", "canceled"} }
func goneOn() []string      { return []string{"watch", "list", "continue"} }
func missedKinds() []string { return []string{"delete", "recreate", "update", "add"} }
func relistCauses() []string {
	return []string{causeGone, causeForced, causeTooLarge, causeFallback, causeError}
}
func endReasons() []reflector.EndReason {
	return []reflector.EndReason{reflector.EndClosed, reflector.EndTimeout, reflector.EndError, reflector.EndCanceled, reflector.EndStopped}
}

// Relist causes.
const (
	causeGone     = "gone"
	causeForced   = "forced"
	causeTooLarge = "too-large"
	causeFallback = "fallback"
	causeError    = "error"
)

// Histogram buckets, in seconds.
func listBuckets() []float64 {
	return []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}
}
func watchBuckets() []float64 {
	return []float64{0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 900, 1200, 1800}
}

// Metrics is one run's registry and the metrics of every resource added to it.
type Metrics struct {
	reg        *prometheus.Registry
	withClient bool

	listPages      *prometheus.CounterVec
	lists          *prometheus.CounterVec
	listDuration   *prometheus.HistogramVec
	watchDuration  *prometheus.HistogramVec
	gone           *prometheus.CounterVec
	relists        *prometheus.CounterVec
	missed         *prometheus.CounterVec
	backoffSeconds *prometheus.CounterVec

	scrape *scrapeCollector
	probe  *probeCollector
}

// New builds the metrics of one run on a registry of its own, with the Go
// runtime's and the process's collectors.
func New() *Metrics { return newMetrics(false) }

// NewObserved builds the metrics of an observing proxy: every series also
// carries "client" (Labels.Client), as several programs may watch the same
// resource through one proxy; several streams of one client (informers of
// one program, or a client that comes again) share their series.
func NewObserved() *Metrics { return newMetrics(true) }

func newMetrics(withClient bool) *Metrics {
	labels := labelNames(withClient)
	with := func(extra string) []string { return append(labelNames(withClient), extra) }
	m := &Metrics{
		reg:        prometheus.NewRegistry(),
		withClient: withClient,
		listPages: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "list_pages_total",
			Help: "LIST requests (pages) by how they ended: ok (a page received), gone (410), too-large (resourceVersion too large), error, timeout, canceled."}, with("result")),
		lists: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "lists_total",
			Help: "Full lists (paginated or streaming) by result: complete (installed in the cache), restarted (a 410, a too-large resourceVersion, a fallback from streaming or a forced relist started it over), failed (the reflector gave up), canceled (the run ended)."}, with("result")),
		listDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "list_duration_seconds",
			Help: "Time from deciding to list to the complete list installed in the cache (complete lists only; retries included).", Buckets: listBuckets()}, labels),
		watchDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "watch_duration_seconds",
			Help: "How long watches (streaming lists included) lasted, by how they ended: closed (by the server), timeout (idle), error, canceled.", Buckets: watchBuckets()}, with("end")),
		gone: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "gone_total",
			Help: "410 Gone answers, by the request that got it: a watch, a LIST, or a LIST continue token."}, with("on")),
		relists: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "relists_total",
			Help: "Full lists started after the first, by cause: gone (410), forced, too-large, fallback (from a streaming list to LIST), error (a streaming list broke and started again)."}, with("cause")),
		missed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "relist_missed_total",
			Help: "What relists found the watch had missed, summed over relist diffs: deletes, recreates (same name, new UID), updates, adds."}, with("kind")),
		backoffSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "backoff_seconds_total",
			Help: "Time spent waiting in backoffs before retrying, in seconds."}, labels),
	}
	m.scrape = newScrapeCollector(withClient)
	m.probe = newProbeCollector()
	m.reg.MustRegister(m.listPages, m.lists, m.listDuration, m.watchDuration, m.gone, m.relists, m.missed, m.backoffSeconds, m.scrape, m.probe,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is the run's registry.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// errDuplicate is returned by Add for labels already added.
func errDuplicate(l Labels) error {
	return fmt.Errorf("metrics: resource %q (namespace %q, label selector %q, field selector %q, client %q) is already registered", l.Resource, l.Namespace, l.LabelSelector, l.FieldSelector, l.Client)
}

// Add registers one watched resource. Its notes go to the returned
// Set's Note; its Stats and store are read at scrape time once Attach
// gives them. A run's resources have labels of their own (the same twice is
// an error); a proxy's streams with the same labels (NewObserved: one
// client's, of the same resource, namespace and selectors) share their
// series, which add them up.
func (m *Metrics) Add(l Labels) (*Set, error) {
	l.withClient = m.withClient
	r := &Set{m: m, labels: l, relistCause: causeError}
	if !m.scrape.add(r) {
		return nil, errDuplicate(l)
	}
	r.pages = make(map[string]prometheus.Counter, len(pageResults()))
	for _, v := range pageResults() {
		r.pages[v] = m.listPages.WithLabelValues(l.values(v)...)
	}
	r.lists = make(map[string]prometheus.Counter, len(listResults()))
	for _, v := range listResults() {
		r.lists[v] = m.lists.WithLabelValues(l.values(v)...)
	}
	r.listDuration = m.listDuration.WithLabelValues(l.values()...)
	r.watchDuration = make(map[reflector.EndReason]prometheus.Observer, len(endReasons()))
	for _, v := range endReasons() {
		r.watchDuration[v] = m.watchDuration.WithLabelValues(l.values(string(v))...)
	}
	r.gone = make(map[string]prometheus.Counter, len(goneOn()))
	for _, v := range goneOn() {
		r.gone[v] = m.gone.WithLabelValues(l.values(v)...)
	}
	r.relists = make(map[string]prometheus.Counter, len(relistCauses()))
	for _, v := range relistCauses() {
		r.relists[v] = m.relists.WithLabelValues(l.values(v)...)
	}
	r.missed = make(map[string]prometheus.Counter, len(missedKinds()))
	for _, v := range missedKinds() {
		r.missed[v] = m.missed.WithLabelValues(l.values(v)...)
	}
	r.backoffSeconds = m.backoffSeconds.WithLabelValues(l.values()...)
	return r, nil
}

// Source is what a Resource reads at scrape time (and, for Counters, on
// request and decision notes).
type Source struct {
	// Stats is the reflector's snapshot, e.g. (*reflector.Reflector).Stats. Required.
	Stats func() reflector.Stats
	// Counters is the reflector's totals alone, e.g.
	// (*reflector.Reflector).Counters; default Stats().Counters.
	Counters func() reflector.Counters
	// Store is the cache's counters, e.g. (*store.Store).Counters; without it
	// the store gauges are not exported.
	Store func() store.Counters
	// Now is the session's clock (virtual in a replay); default time.Now.
	Now func() time.Time
	// Findings is the findings raised so far, e.g. (*findings.Engine).List;
	// without it watchcache_findings is not exported.
	Findings func() []findings.Finding
}

// Set is the metrics of one watched resource (or, behind the proxy, one
// observed stream): every series under its labels.
type Set struct {
	m      *Metrics
	labels Labels

	pages          map[string]prometheus.Counter
	lists          map[string]prometheus.Counter
	listDuration   prometheus.Observer
	watchDuration  map[reflector.EndReason]prometheus.Observer
	gone           map[string]prometheus.Counter
	relists        map[string]prometheus.Counter
	missed         map[string]prometheus.Counter
	backoffSeconds prometheus.Counter

	mu  sync.Mutex
	src Source
	// Owned by the note listener (under mu, taken on request and decision notes only).
	lastVerb      reflector.Verb
	listOpen      bool
	listStart     time.Time
	relistCause   string
	seenRelists   int64
	listsAtStream int64 // Counters.Lists when the last streaming list was sent
}

// Labels are the resource's label values.
func (r *Set) Labels() Labels { return r.labels }

// Attach gives the resource its sources; until then only note-fed metrics
// are exported for it.
func (r *Set) Attach(src Source) {
	if src.Counters == nil && src.Stats != nil {
		stats := src.Stats
		src.Counters = func() reflector.Counters { return stats().Counters }
	}
	if src.Now == nil {
		src.Now = time.Now
	}
	r.mu.Lock()
	r.src = src
	r.mu.Unlock()
}

func (r *Set) source() Source {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.src
}

// Note is the resource's reflector.Config.OnNote listener. Watch events
// (the frequent notes) cost nothing here: their counts are read from Stats
// at scrape time. Request and decision notes update counters and
// histograms; Note never blocks on a scrape.
func (r *Set) Note(n reflector.Note) {
	if n.Kind == reflector.NoteApplied {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var c reflector.Counters
	if r.src.Counters != nil {
		c = r.src.Counters()
		if c.Relists > r.seenRelists {
			// Lists begin without a note of their own; a relist that began
			// since the last note is counted under the cause that started it.
			r.relists[r.relistCause].Add(float64(c.Relists - r.seenRelists))
			r.seenRelists = c.Relists
		}
	}
	switch n.Kind {
	case reflector.NoteRequestStarted:
		if q := n.Request; q != nil && q.Verb == reflector.VerbWatch && q.Opts.SendInitialEvents {
			r.listsAtStream = c.Lists
		}
	case reflector.NoteRequestEnded:
		r.requestEnded(n.Request)
	case reflector.NoteDecision:
		if n.Decision != nil {
			r.decision(n.At, n.Decision, c)
		}
	}
}

func (r *Set) requestEnded(q *reflector.RequestInfo) {
	if q == nil || q.End == nil {
		return
	}
	r.lastVerb = q.Verb
	if q.Verb == reflector.VerbWatch {
		if o, ok := r.watchDuration[q.End.Reason]; ok {
			o.Observe(q.Duration.Seconds())
		}
		return
	}
	r.pages[pageResult(q.End)].Inc()
}

func pageResult(e *reflector.RequestEnd) string {
	switch e.Reason {
	case reflector.EndClosed:
		return "ok"
	case reflector.EndTimeout:
		return "timeout"
	case reflector.EndCanceled:
		return "canceled"
	case reflector.EndStopped:
		return "stopped"
	}
	switch {
	case e.IsGone():
		return "gone"
	case e.IsTooLargeResourceVersion():
		return "too-large"
	}
	return "error"
}

// decision updates the decision-fed metrics. A full list opens at a
// decision to list and closes at list-complete (complete), at the next
// decision to list (restarted), at a failure (failed) or at the stop (canceled).
func (r *Set) decision(at time.Time, d *reflector.Decision, c reflector.Counters) {
	startList := func(cause string) {
		if r.listOpen {
			r.lists["restarted"].Inc()
		}
		r.listOpen, r.listStart = true, at
		if cause != "" {
			r.relistCause = cause
		}
	}
	endList := func(result string) {
		if r.listOpen {
			r.lists[result].Inc()
			r.listOpen = false
		}
	}
	switch d.Reason {
	case reflector.ReasonInitialList:
		startList("")
	case reflector.ReasonGone:
		on := "list"
		if r.lastVerb == reflector.VerbWatch {
			on = "watch"
		}
		r.gone[on].Inc()
		startList(causeGone)
	case reflector.ReasonContinueGone:
		r.gone["continue"].Inc()
		startList(causeGone)
	case reflector.ReasonTooLargeRV:
		startList(causeTooLarge)
	case reflector.ReasonForcedRelist:
		startList(causeForced)
	case reflector.ReasonStreamRefused, reflector.ReasonInitialEventsEnd:
		startList(causeFallback)
	case reflector.ReasonWatchError:
		if d.Streaming && c.Lists > r.listsAtStream {
			// The streaming list had begun: its retry is a list of its own.
			r.relistCause = causeError
		}
	case reflector.ReasonListComplete:
		if r.listOpen {
			r.listDuration.Observe(at.Sub(r.listStart).Seconds())
		}
		r.lists["complete"].Inc()
		r.listOpen = false
	case reflector.ReasonRelistDiff:
		if diff := d.Diff; diff != nil {
			r.missed["delete"].Add(float64(len(diff.Deleted)))
			r.missed["recreate"].Add(float64(len(diff.Recreated)))
			r.missed["update"].Add(float64(len(diff.Updated)))
			r.missed["add"].Add(float64(len(diff.Added)))
		}
	case reflector.ReasonBackoff:
		r.backoffSeconds.Add(d.Wait.Seconds())
	case reflector.ReasonPermanentError, reflector.ReasonBadRequest, reflector.ReasonGaveUp:
		endList("failed")
	case reflector.ReasonStopped:
		endList("canceled")
	}
}
