package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// lagHistogram is the passive delivery estimate of one series as a
// histogram: its buckets are the estimate's own (2, 5, 15, 60 s; it is
// good to about ±2 s), cumulative as Prometheus wants them.
func lagHistogram(d *prometheus.Desc, lag reflector.LagStats, labels []string) prometheus.Metric {
	buckets := make(map[float64]uint64, reflector.LagBucketCount-1)
	var cum uint64
	for i := 0; i < reflector.LagBucketCount-1; i++ {
		cum += uint64(lag.Counts[i])
		buckets[reflector.LagBucketUpper(i)] = cum
	}
	return prometheus.MustNewConstHistogram(d, uint64(lag.Counts.Total()), lag.Sum.Seconds(), buckets, labels...)
}

// addLag adds src's lag to g.
func (g *scraped) addLag(lag reflector.LagStats) {
	for i, n := range lag.Counts {
		g.lag.Counts[i] += n
	}
	g.lag.Sum += lag.Sum
}

// probeCollector exports the delivery probe's write-to-event times (one
// probe per run: no resource labels). h never goes down, though the probe
// keeps only its last samples: each scrape observes the samples taken since
// the last one, and read counts the samples read.
type probeCollector struct {
	h    prometheus.Histogram
	mu   sync.Mutex
	src  ProbeSource
	read uint64
}

// ProbeSource says whether the run has a probe (a replay: whether its
// trace had one so far), and the write-to-event times of its samples from
// the run's from-th on (from 0), with how many samples were taken in all.
type ProbeSource func(from uint64) (on bool, events []time.Duration, total uint64)

// Describe implements prometheus.Collector.
func (c *probeCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.h.Desc() }

// Collect implements prometheus.Collector.
func (c *probeCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.src == nil {
		return
	}
	on, events, total := c.src(c.read)
	if !on {
		return
	}
	for _, e := range events {
		c.h.Observe(e.Seconds())
	}
	c.read = total
	ch <- c.h
}

// SetProbe exports the run's delivery probe as
// watchcache_probe_write_to_event_seconds, read from src at scrape time.
func (m *Metrics) SetProbe(src ProbeSource) {
	m.probe.mu.Lock()
	m.probe.src = src
	m.probe.mu.Unlock()
}

func newProbeCollector() *probeCollector {
	return &probeCollector{h: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "probe_write_to_event_seconds",
		Help: "The delivery probe (--probe): from sending an update of its Lease to receiving the update's watch event, on the run's connection.",
		// A watch event normally follows its write within milliseconds.
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}})}
}
