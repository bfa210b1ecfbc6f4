package findings

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

func TestSlowDeliveryNeedsEnoughLateEventsOrProbeSamples(t *testing.T) {
	f := newFeed(t, Options{})
	applied := func(lag time.Duration) {
		f.lag.Counts[reflector.LagBucketOf(lag)]++
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified},
			Delivery: reflector.Delivery{Written: f.now.Add(-lag), Lag: lag}})
	}
	for range 10 {
		applied(20 * time.Second)
	}
	if f.has(SlowDelivery) {
		t.Fatal("slow-delivery raised on 10 events")
	}
	// One old object's late event among 40 (the p99 of under 100 events is
	// the slowest), then a second: no evidence yet; the third is.
	f = newFeed(t, Options{})
	for range 40 {
		applied(300 * time.Millisecond)
	}
	applied(10 * time.Minute)
	applied(20 * time.Second)
	if f.has(SlowDelivery) {
		t.Fatal("slow-delivery raised on 2 late events of 42")
	}
	applied(20 * time.Second)
	if !f.has(SlowDelivery) {
		t.Fatal("no slow-delivery on 3 late events of 43")
	}
	g0 := newFeed(t, Options{})
	f = g0
	for range 200 {
		applied(3 * time.Second)
	}
	applied(20 * time.Second) // 1 in 201: the p99 is still in 2-5s
	if f.has(SlowDelivery) {
		t.Fatal("slow-delivery raised when the p99 is in 2-5s")
	}
	for range 9 {
		applied(20 * time.Second)
	}
	got, ok := f.e.Get(SlowDelivery)
	if !ok || got.Count != 10 || got.Evidence.Facts["lag"] != "<2s 0, 2-5s 200, 5-15s 0, 15-60s 10, >60s 0" {
		t.Fatalf("want slow-delivery counting 10 late events, got %v %+v", ok, got)
	}
	// Raised from the estimated lag alone, no probe: the cause does not
	// speak of the probe's figures, which the evidence does not hold (a
	// reviewer read of "its write p50" in a run without --probe).
	if strings.Contains(got.Cause, "probe") {
		t.Errorf("cause %q speaks of a probe the evidence does not hold", got.Cause)
	}

	g := newFeed(t, Options{})
	g.e.Probe(g.now, 4, 1, time.Second, 3*time.Second, 100*time.Millisecond)
	g.e.Probe(g.now, 5, 0, time.Second, 1900*time.Millisecond, 100*time.Millisecond)
	if g.has(SlowDelivery) {
		t.Fatal("slow-delivery raised on 4 samples, or a p99 under 2s")
	}
	g.e.Probe(g.now, 5, 1, time.Second, 2500*time.Millisecond, 100*time.Millisecond)
	g.e.Probe(g.now, 6, 2, time.Second, 2500*time.Millisecond, 100*time.Millisecond)
	if g.has(SlowDelivery) {
		t.Fatal("slow-delivery raised on 2 slow samples: under 100 samples the p99 is the slowest")
	}
	g.e.Probe(g.now, 7, 3, time.Second, 2500*time.Millisecond, 100*time.Millisecond)
	if got, ok := g.e.Get(SlowDelivery); !ok || got.Evidence.Facts["probe p99"] != "2.5s" || len(g.raised) != 1 {
		t.Fatalf("want slow-delivery from the probe, raised once, got %v %+v", ok, got)
	} else if !strings.HasSuffix(got.Cause, "The probe's time runs from sending its update, so a slow write (etcd) counts too: its write p50 tells the two apart") {
		t.Errorf("cause %q, want it to say what the probe's time holds", got.Cause)
	}
}

// README promises slow-delivery when "the events' estimated lag has its
// p99 in 15-60s or over (20 events or more, 3 of them late)": late events
// that came before the 20th are judged when the 20th comes, on time or not.
func TestSlowDeliveryJudgesLateEventsBeforeTheTwentiethAtIt(t *testing.T) {
	f := newFeed(t, Options{})
	applied := func(lag time.Duration) {
		f.lag.Counts[reflector.LagBucketOf(lag)]++
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Applied: &store.Result{Outcome: store.Modified},
			Delivery: reflector.Delivery{Written: f.now.Add(-lag), Lag: lag}})
	}
	for range 3 {
		applied(20 * time.Second)
	}
	for range 16 {
		applied(100 * time.Millisecond)
	}
	if f.has(SlowDelivery) {
		t.Fatal("slow-delivery raised on 19 events")
	}
	applied(100 * time.Millisecond)
	// The title's "over 15s" is the late bucket's lower bound, as the When says "15-60s or over".
	if got, ok := f.e.Get(SlowDelivery); !ok || got.Count != 3 || got.Title != "the watch tells late: 3 of 20 events over 15s after their write" {
		t.Fatalf("want slow-delivery at the 20th event, counting the 3 late before it, got %v %+v", ok, got)
	}
	for range 10 {
		applied(100 * time.Millisecond)
	}
	if len(f.raised) != 1 {
		t.Fatalf("events on time past the 20th updated slow-delivery: raised %d times", len(f.raised))
	}
}
