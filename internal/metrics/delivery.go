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

// probeBuckets are the probe histogram's buckets, in seconds: a watch
// event normally follows its write within milliseconds.
func probeBuckets() []float64 {
	return []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
}

// probeCollector exports the delivery probe's write-to-event times (one
// probe per run: no resource labels).
type probeCollector struct {
	desc *prometheus.Desc
	mu   sync.Mutex
	src  func() (on bool, events []time.Duration)
}

// Describe implements prometheus.Collector.
func (c *probeCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *probeCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	src := c.src
	c.mu.Unlock()
	if src == nil {
		return
	}
	on, events := src()
	if !on {
		return
	}
	bounds := probeBuckets()
	buckets := make(map[float64]uint64, len(bounds))
	var sum float64
	for _, e := range events {
		s := e.Seconds()
		sum += s
		for _, b := range bounds {
			if s <= b {
				buckets[b]++
			}
		}
	}
	ch <- prometheus.MustNewConstHistogram(c.desc, uint64(len(events)), sum, buckets)
}

// SetProbe exports the run's delivery probe as
// watchcache_probe_write_to_event_seconds: src says whether the run has a
// probe (a replay: whether its trace had one so far) and its samples'
// write-to-event times, read at scrape time.
func (m *Metrics) SetProbe(src func() (on bool, events []time.Duration)) {
	m.probe.mu.Lock()
	m.probe.src = src
	m.probe.mu.Unlock()
}

func newProbeCollector() *probeCollector {
	return &probeCollector{desc: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "probe_write_to_event_seconds"),
		"The delivery probe (--probe): from sending an update of its Lease to receiving the update's watch event, on the run's connection.", nil, nil)}
}
