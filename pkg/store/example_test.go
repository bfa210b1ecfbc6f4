package store_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

func configMap(name, uid, rv string) *store.Object {
	return &store.Object{Namespace: "default", Name: name, UID: uid, ResourceVersion: rv}
}

// The cache is empty until the reflector's first InitDone: wait for it before
// reading, instead of calling List right after New.
func Example() {
	st, w := store.New()

	// The reflector owns the Writer and runs on its own goroutine.
	go func() {
		for _, ev := range []store.Event{
			{Type: store.Init},
			{Type: store.InitApply, Object: configMap("a", "uid-a", "119")},
			{Type: store.InitApply, Object: configMap("b", "uid-b", "120")},
			{Type: store.InitDone, ResourceVersion: "120"},
		} {
			if _, err := w.ApplyEvent(ev); err != nil {
				panic(err) // a real reflector reports the error
			}
		}
	}()

	// Wrong: st.List() here races the reflector and usually returns nothing.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := st.WaitUntilReady(ctx); err != nil {
		fmt.Println(err)
		return
	}
	objs := st.List()
	slices.SortFunc(objs, func(x, y *store.Object) int { return cmp.Compare(x.Name, y.Name) })
	for _, o := range objs {
		fmt.Println(o.Ref(), o.UID, o.ResourceVersion)
	}
	// Output:
	// default/a uid-a 119
	// default/b uid-b 120
}

// The UID guard: worker-a (UID-1) is deleted, recreated as UID-2,
// then the late delete of UID-1 arrives and must leave UID-2 in place.
func ExampleWriter_ApplyEvent() {
	st, w := store.New()
	v1 := &store.Object{Namespace: "jobs", Name: "worker-a", UID: "uid-1", ResourceVersion: "10"}
	v2 := &store.Object{Namespace: "jobs", Name: "worker-a", UID: "uid-2", ResourceVersion: "12"}
	for _, ev := range []store.Event{
		{Type: store.Apply, Object: v1},
		{Type: store.Apply, Object: v1},
		{Type: store.Delete, Object: v1},
		{Type: store.Apply, Object: v2},
		{Type: store.Delete, Object: v1},
		{Type: store.Bookmark, ResourceVersion: "13"},
	} {
		r, err := w.ApplyEvent(ev)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(ev.Type, "->", r.Outcome)
	}
	o, _ := st.Get(store.Ref{Namespace: "jobs", Name: "worker-a"})
	fmt.Println("cached:", o.UID, "objects:", st.Counters().Objects)
	// Output:
	// Apply -> Added
	// Apply -> Duplicate
	// Delete -> Deleted
	// Apply -> Added
	// Delete -> StaleDelete
	// Bookmark -> Ignored
	// cached: uid-2 objects: 1
}

// A subscriber receives the changes in order; the Writer never waits for it.
func ExampleStore_Subscribe() {
	st, w := store.New()
	sub := st.Subscribe(16)
	defer sub.Close()

	_, _ = w.ApplyEvent(store.Event{Type: store.Init})
	_, _ = w.ApplyEvent(store.Event{Type: store.InitApply, Object: configMap("a", "uid-a", "1")})
	_, _ = w.ApplyEvent(store.Event{Type: store.InitDone, ResourceVersion: "1"})
	_, _ = w.ApplyEvent(store.Event{Type: store.Apply, Object: configMap("a", "uid-a", "2")})
	w.Close() // ends the range below

	for r := range sub.Changes() {
		if r.Diff != nil {
			fmt.Println(r.Outcome, "objects:", r.Diff.After, "missed:", r.Diff.Missed())
			continue
		}
		fmt.Println(r.Outcome, r.Object.Ref(), r.Object.ResourceVersion)
	}
	fmt.Println("dropped:", sub.Missed())
	// Output:
	// Relisted objects: 1 missed: 0
	// Modified default/a 2
	// dropped: 0
}
