package store

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// generation returns g from a UID "g<g>-<i>".
func generation(t *testing.T, uid string) int {
	g, _, _ := strings.Cut(strings.TrimPrefix(uid, "g"), "-")
	n, err := strconv.Atoi(g)
	if err != nil {
		t.Errorf("uid %q: %v", uid, err)
	}
	return n
}

func TestReadersNeverSeeAPartiallyAppliedRelist(t *testing.T) {
	const objects, relists, readers = 200, 30, 3
	at := func(g, i int) *Object {
		return obj("ns-"+strconv.Itoa(i%7), "cm-"+strconv.Itoa(i), fmt.Sprintf("g%d-%d", g, i), strconv.Itoa(g*10_000+i))
	}
	st, w := New()
	relist := func(g int) []Event {
		evs := []Event{evInit()}
		for i := range objects {
			evs = append(evs, evInitApply(at(g, i)))
		}
		return append(evs, evInitDone(strconv.Itoa(g)))
	}
	applyAll(t, w, relist(0)...)

	var stop atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	for r := range readers {
		wg.Go(func() {
			last := 0 // generations seen by this reader never go backwards
			for i := 0; !stop.Load(); i++ {
				objs := st.List()
				if len(objs) < objects-1 { // the writer deletes and re-adds one object at a time
					t.Errorf("reader %d: List returned %d objects, want at least %d", r, len(objs), objects-1)
					return
				}
				g := generation(t, objs[0].UID)
				for _, o := range objs {
					if og := generation(t, o.UID); og != g {
						t.Errorf("reader %d: one List mixes generations %d and %d: a partially applied relist", r, g, og)
						return
					}
				}
				if g < last {
					t.Errorf("reader %d: generation went back from %d to %d", r, last, g)
					return
				}
				last = g
				if o, ok := st.Get(at(0, i%objects).Ref()); ok {
					if og := generation(t, o.UID); og < last {
						t.Errorf("reader %d: Get returned generation %d after List showed %d", r, og, last)
						return
					}
				}
				_ = st.Len()
				_ = st.Counters()
				reads.Add(1)
			}
		})
	}

	for g := 1; g <= relists; g++ {
		for j, ev := range relist(g) {
			applyAll(t, w, ev)
			if j%50 == 0 {
				// While the relist is buffered the live snapshot still changes under
				// watch events of the old generation.
				i := (g*13 + j) % objects
				cur := at(g-1, i)
				upd := *cur
				upd.ResourceVersion += "-u"
				applyAll(t, w, evApply(&upd), evDelete(cur), evApply(cur), evDelete(at(g-2, i)))
				runtime.Gosched()
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if reads.Load() == 0 {
		t.Error("readers never read: the test checked nothing")
	}
	t.Logf("%d reads during %d relists", reads.Load(), relists)
}
