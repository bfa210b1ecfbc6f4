package findings

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// A name a 429 carried (the Source's, recorded in a trace) names the
// FlowSchema and PriorityLevel, and keeps naming them when a later 429
// comes without (a lookup that failed since): the finding of a replay,
// which has only what the trace carried, is the live one.
func TestThrottledNamesWhatThe429CarriedAndKeepsTheName(t *testing.T) {
	f := newFeed(t, Options{})
	throttled := func(th reflector.Throttle) {
		f.request(reflector.VerbList, reflector.RequestOptions{}, time.Millisecond, 0, &reflector.RequestEnd{Reason: reflector.EndError,
			Status: &metav1.Status{Code: 429, Message: "Too many requests, please try again later."}, Throttle: &th}, nil)
	}
	throttled(reflector.Throttle{RetryAfter: 2 * time.Second, FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1"})
	got, _ := f.e.Get(Throttled)
	if got.Evidence.Facts["flowSchema"] != "uid fs-1" || got.Evidence.Facts["priorityLevel"] != "uid pl-1" {
		t.Fatalf("unnamed: %+v", got.Evidence.Facts)
	}
	throttled(reflector.Throttle{RetryAfter: time.Second, FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1", FlowSchema: "slow-lane", PriorityLevel: "few-seats"})
	throttled(reflector.Throttle{RetryAfter: time.Second, FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1"})
	got, _ = f.e.Get(Throttled)
	if got.Count != 3 || got.Evidence.Facts["flowSchema"] != "slow-lane (uid fs-1)" || got.Evidence.Facts["priorityLevel"] != "few-seats (uid pl-1)" || got.Evidence.Facts["retryAfter"] != "1s" {
		t.Fatalf("named: count %d, %+v", got.Count, got.Evidence.Facts)
	}
}
