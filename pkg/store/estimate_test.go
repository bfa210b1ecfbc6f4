package store_test

import (
	"fmt"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// The dashboard and the metrics tell users how much memory the cache holds
// (Counters.BytesHeld, an estimate read from each object's fields). Here it
// is held against the heap that 20,000 ConfigMaps decoded as the live
// source decodes them keep alive, measured with runtime.ReadMemStats.
func TestTheBytesHeldEstimateIsNearTheHeapMeasured(t *testing.T) {
	const n = 20_000
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("keepBody=%t", full), func(t *testing.T) {
			var estimate int64
			actual := retained(func() any {
				st, w := store.New()
				mustApply(t, w, store.Event{Type: store.Init})
				for i := range n {
					// Fresh bytes, as a response body is: with keepBody
					// the object keeps them, without it nothing does.
					obj, err := wire.DecodeObject(configMapJSON(i, 1000+i, true), full)
					if err != nil {
						t.Fatal(err)
					}
					mustApply(t, w, store.Event{Type: store.InitApply, Object: obj})
				}
				mustApply(t, w, store.Event{Type: store.InitDone, ResourceVersion: "99999"})
				estimate = st.Counters().BytesHeld
				return st
			})
			ratio := float64(estimate) / float64(actual)
			t.Logf("estimate %d bytes, heap measured %d bytes (%.0f an object): %.2f×", estimate, actual, float64(actual)/n, ratio)
			if ratio < 0.8 || ratio > 1.25 {
				t.Errorf("the estimate is %.2f× the heap measured (%d against %d bytes), want within 0.8× to 1.25×", ratio, estimate, actual)
			}
		})
	}
}
