package summary

import "github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"

// DeliverySummary is the summary's `delivery`: how late the watch told
// what happened. Probe is the active probe's figures (absent without
// --probe; a run has one probe, and every resource's summary carries it);
// Lag is the passive estimate of this resource's events, in buckets.
type DeliverySummary struct {
	Probe *ProbeSummary `json:"probe,omitempty"`
	Lag   LagSummary    `json:"lag"`
}

// ProbeSummary is the probe's figures over the whole run, in seconds:
// write to event (the update of the probe's Lease sent, to its watch event
// received) p50, p90, p99 and max, and the update's own p50 (sent to
// answered); and Lost, the updates whose watch event never came (within
// ten intervals, at least a minute), which are in no figure.
type ProbeSummary struct {
	Count    int     `json:"count"`
	P50      float64 `json:"p50"`
	P90      float64 `json:"p90"`
	P99      float64 `json:"p99"`
	Max      float64 `json:"max"`
	WriteP50 float64 `json:"writeP50"`
	Lost     int     `json:"lost"`
}

// LagSummary counts the events of each lag bucket (reflector.LagCounts),
// under the names of the contract.
type LagSummary struct {
	Under2 int64 `json:"<2s"`
	To5    int64 `json:"2-5s"`
	To15   int64 `json:"5-15s"`
	To60   int64 `json:"15-60s"`
	Over60 int64 `json:">60s"`
}

// LagSummaryOf is c under the contract's names.
func LagSummaryOf(c reflector.LagCounts) LagSummary {
	return LagSummary{Under2: c[0], To5: c[1], To15: c[2], To60: c[3], Over60: c[4]}
}

// Counts is s as reflector.LagCounts.
func (s LagSummary) Counts() reflector.LagCounts {
	return reflector.LagCounts{s.Under2, s.To5, s.To15, s.To60, s.Over60}
}
