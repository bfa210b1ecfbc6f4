package findings

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// SlowDelivery is a watch that tells late, by the probe or by the events' estimated lag.
const SlowDelivery ID = "slow-delivery"

// Thresholds of slow-delivery: enough evidence, and how late is late.
const (
	minLagEvents    = 20
	slowLagBucket   = 3 // 15-60s
	minProbeSamples = 5
	// SlowProbe is the write-to-event time over which a probe sample is
	// slow, and the probe's p99 makes slow-delivery; the session counts the
	// slow samples by it.
	SlowProbe = 2 * time.Second
	// minLate is the fewest late events, or slow probe samples, that make
	// the finding: under 100 of either, the p99 is the slowest one, and one
	// slow sample is no evidence.
	minLate = 3
)

type slowDelivery struct {
	reqs   []int64      // the requests of the late events
	probe  probeFigures // the delivery probe's, when the run has one
	events int          // the events with an estimated lag read so far
}

// probeFigures are the delivery probe's figures over the whole run.
type probeFigures struct {
	samples, slow      int // slow: over SlowProbe
	p50, p99, writeP50 time.Duration
}

func (r *slowDelivery) entry() Entry {
	return Entry{SlowDelivery, Warning, fmt.Sprintf("the delivery probe's write-to-event p99 is over %s (%d samples or more, %d of them over %s), or the events' estimated lag has its p99 in %s or over (%d events or more, %d of them late) (see [Delivery latency](#delivery-latency))",
		span(SlowProbe), minProbeSamples, minLate, span(SlowProbe), reflector.LagBucketName(slowLagBucket), minLagEvents, minLate)}
}

// pass: first, as the late event's check always was.
func (r *slowDelivery) pass() int { return -1 }

// observe reads an applied event's estimated lag (its reflector counted
// it already): a late event is new evidence, and so is the minLagEvents-th
// event, late or not: late events before it were too few events to judge,
// and from it on they are enough. An event on time past it can only lower
// the p99.
func (r *slowDelivery) observe(e *Engine, n reflector.Note) {
	if n.Kind != reflector.NoteApplied || !n.Delivery.Known() {
		return
	}
	r.events++
	late := reflector.LagBucketOf(n.Delivery.Lag) >= slowLagBucket
	if late {
		r.reqs = appendLast(r.reqs, n.RequestID)
	}
	if late || r.events == minLagEvents {
		r.check(e, n.At)
	}
}

// check raises or updates slow-delivery from both measures: the probe's
// p99 over 2 s after 5 samples, or the passive estimate's p99 in 15-60s
// or later after 20 events. Count is the late events and the slow probe
// samples together.
func (r *slowDelivery) check(e *Engine, at time.Time) {
	p := r.probe
	var lag reflector.LagCounts
	if e.src != nil {
		lag = e.src.Lag().Counts
	}
	total := lag.Total()
	late := int64(0)
	for i := slowLagBucket; i < reflector.LagBucketCount; i++ {
		late += lag[i]
	}
	byProbe := p.samples >= minProbeSamples && p.p99 > SlowProbe && p.slow >= minLate
	byLag := total >= minLagEvents && lag.P99Bucket() >= slowLagBucket && late >= minLate
	if !byProbe && !byLag {
		return
	}
	e.raise(SlowDelivery, Warning, at, func(f *Finding) {
		f.Count = late + int64(p.slow)
		facts := map[string]string{}
		var texts, titles []string
		if total > 0 {
			// One fact, the buckets in order (facts are printed by name).
			buckets := make([]string, 0, reflector.LagBucketCount)
			for i := range reflector.LagBucketCount {
				buckets = append(buckets, fmt.Sprintf("%s %d", reflector.LagBucketName(i), lag[i]))
			}
			facts["lag"] = strings.Join(buckets, ", ")
		}
		if byLag {
			titles = append(titles, fmt.Sprintf("%d of %d events over %gs after their write", late, total, reflector.LagBucketUpper(slowLagBucket-1)))
			texts = append(texts, fmt.Sprintf("the events' estimated lag (arrival minus the object's last write, corrected by the server's Date; ±2s) has its p99 in %s over %d events", reflector.LagBucketName(lag.P99Bucket()), total))
		}
		if p.samples > 0 {
			facts["probe p50"], facts["probe p99"], facts["probe write p50"], facts["probe samples"] = roundDur(p.p50), roundDur(p.p99), roundDur(p.writeP50), fmt.Sprint(p.samples)
		}
		if byProbe {
			titles = append(titles, fmt.Sprintf("the probe's p99 %s", roundDur(p.p99)))
			texts = append(texts, fmt.Sprintf("%d updates of the probe's Lease, %d over %s: from sending each to its watch event p50 %s, p99 %s (the write itself: p50 %s)",
				p.samples, p.slow, roundDur(SlowProbe), roundDur(p.p50), roundDur(p.p99), roundDur(p.writeP50)))
		}
		f.Title = "the watch tells late: " + strings.Join(titles, "; ")
		f.Evidence = Evidence{Text: strings.Join(texts, "; "), Requests: slices.Clone(r.reqs), Facts: facts}
		f.Cause = "the API server is slow to tell this client what was written: an overloaded API server (its watch cache lagging etcd, slow dispatch to many watchers), API Priority and Fairness queuing, or a slow network or proxy in between; a controller acting on these events reacts as late"
		if byProbe {
			// Only the probe's figures, in the evidence, need this: the
			// estimated lag runs from the write the server recorded.
			f.Cause += ". The probe's time runs from sending its update, so a slow write (etcd) counts too: its write p50 tells the two apart"
		}
		f.Action = "compare with the API server's apiserver_watch_events_* and apiserver_flowcontrol_* metrics; run the probe (--probe NAMESPACE) from another place to tell the network from the server; reduce watchers of busy resources"
		f.Docs = "https://kubernetes.io/docs/concepts/cluster-administration/flow-control/"
	})
}
