// Package metrics exports what reflectors do as Prometheus metrics. A
// Metrics holds one registry (never the default one) for one run; every
// watched resource is added to it with its own label values (Add, which
// returns its Set), and is fed by its reflector's notes (Set.Note, an OnNote
// listener) and, at scrape time, by its reflector's Stats and its store's
// counters (Set.Attach).
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

// endReasons are a watch's ends, the watch-duration histogram's "end" values.
func endReasons() []reflector.EndReason {
	return []reflector.EndReason{reflector.EndClosed, reflector.EndTimeout, reflector.EndError, reflector.EndCanceled, reflector.EndStopped}
}

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

	listDuration  *prometheus.HistogramVec
	watchDuration *prometheus.HistogramVec

	scrape *scrapeCollector
	probe  *probeCollector
}

// New builds the metrics of one run on a registry of its own, with the Go
// runtime's and the process's collectors. With withClient (an observing
// proxy's), every series also carries "client" (Labels.Client), as several
// programs may watch the same resource through one proxy; several streams
// of one client (informers of one program, or a client that comes again)
// share their series.
func New(withClient bool) *Metrics {
	labels := labelNames(withClient)
	m := &Metrics{
		reg:        processRegistry(),
		withClient: withClient,
		listDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "list_duration_seconds",
			Help: "Time from deciding to list (an observed client's first list: from its request) to the complete list installed in the cache (complete lists only; retries included).", Buckets: listBuckets()}, labels),
		watchDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "watch_duration_seconds",
			Help: "How long watches (streaming lists included) lasted, by how they ended: closed (by the server), timeout (idle), error (a 410 Gone too), canceled (cut short to act), stopped (the run ended while it was open).", Buckets: watchBuckets()}, append(labelNames(withClient), "end")),
	}
	m.scrape = newScrapeCollector(withClient)
	m.probe = newProbeCollector()
	m.reg.MustRegister(m.listDuration, m.watchDuration, m.scrape, m.probe)
	return m
}

// processRegistry is a registry with the Go runtime's and the process's
// collectors: a run's starts with them, and a Server serves them alone
// until its run's is published.
func processRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// handlerFor serves reg in the Prometheus exposition formats.
func handlerFor(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler { return handlerFor(m.reg) }

// Add registers one watched resource. Its notes go to the returned
// Set's Note; its Stats and store are read at scrape time once Attach
// gives them. A run's resources have labels of their own (the same twice is
// an error); a proxy's streams with the same labels (NewObserved: one
// client's, of the same resource, namespace and selectors) share their
// series, which add them up.
func (m *Metrics) Add(l Labels) (*Set, error) {
	l.withClient = m.withClient
	r := &Set{labels: l}
	if !m.scrape.add(r) {
		return nil, fmt.Errorf("metrics: resource %q (namespace %q, label selector %q, field selector %q, client %q) is already registered", l.Resource, l.Namespace, l.LabelSelector, l.FieldSelector, l.Client)
	}
	r.listDuration = m.listDuration.WithLabelValues(l.values()...)
	r.watchDuration = make(map[reflector.EndReason]prometheus.Observer, len(endReasons()))
	for _, v := range endReasons() {
		r.watchDuration[v] = m.watchDuration.WithLabelValues(l.values(string(v))...)
	}
	return r, nil
}

// Source is what a Set reads at scrape time.
type Source struct {
	// Stats is the reflector's snapshot, e.g. (*reflector.Reflector).Stats. Required.
	Stats func() reflector.Stats
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
// observed stream): every series under its labels. Its counters are its
// Stats', read at scrape time; only the histograms of durations are fed by
// notes, one observation per note that ends something.
type Set struct {
	labels Labels

	listDuration  prometheus.Observer
	watchDuration map[reflector.EndReason]prometheus.Observer

	mu  sync.Mutex
	src Source
}

// Attach gives the resource its sources; until then only note-fed metrics
// are exported for it.
func (r *Set) Attach(src Source) {
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

// Note is the resource's reflector.Config.OnNote listener: a watch's end
// and a complete list's time are observed; everything else is read from
// Stats at scrape time. It never blocks on a scrape.
func (r *Set) Note(n reflector.Note) {
	switch n.Kind {
	case reflector.NoteRequestEnded:
		if q := n.Request; q != nil && q.End != nil && q.Verb == reflector.VerbWatch {
			if o, ok := r.watchDuration[q.End.Reason]; ok {
				o.Observe(q.Duration.Seconds())
			}
		}
	case reflector.NoteDecision:
		if d := n.Decision; d != nil && d.Reason == reflector.ReasonListComplete && d.Decided {
			r.listDuration.Observe(d.Took.Seconds())
		}
	}
}
