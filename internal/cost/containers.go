package cost

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// An informer holds more than its objects: its indexer's maps and keys, and
// what its queue grew to while the initial list passed through it (a Go map
// or slice keeps its size once grown). That part depends on how many
// objects there are, not on what they hold: measured on a sample of a few
// hundred objects it is not what the informer of the whole list holds. So
// the estimate takes it out of the sample's heap, as the sample's plain
// indexer holds it, and puts back what a real client-go informer holds for
// the list's count, both measured with placeholder objects (metadata only,
// keys as long as the sample's).

// maxPlaceholders caps the informer measured with placeholders: past a few
// thousand entries a Go map's bytes per entry no longer depend on its size.
const maxPlaceholders = 20000

// keyShape is how long the sample's keys are and how many namespaces it spans.
type keyShape struct {
	namespaceLen, nameLen, namespaces int
}

// placeholders are n objects with keys of shape k, spread over its namespaces.
func placeholders(n int, k keyShape) []kruntime.Object {
	out := make([]kruntime.Object, n)
	pad := func(prefix string, i, width int) string {
		s := fmt.Sprintf("%s%d", prefix, i)
		if len(s) < width {
			s += strings.Repeat("x", width-len(s))
		}
		return s
	}
	for i := range out {
		out[i] = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace:       pad("n", i%max(k.namespaces, 1), k.namespaceLen),
			Name:            pad("o", i, k.nameLen),
			ResourceVersion: "1",
		}}
	}
	return out
}

// containerBytes is the heap per object of what holds n placeholder objects
// besides themselves: a plain indexer (as the sample is measured in), or a
// real client-go informer after its initial list (informer true).
func containerBytes(n int, k keyShape, informer bool) (float64, error) {
	if n == 0 {
		return 0, nil
	}
	objs := placeholders(n, k)
	hold := func(objs []kruntime.Object) (func(), error) {
		if !informer {
			idx := newIndexer()
			for _, o := range objs {
				if err := idx.Add(o); err != nil {
					return nil, err
				}
			}
			return func() { runtime.KeepAlive(idx) }, nil
		}
		return runInformer(objs)
	}
	// The empty container's own heap is taken away too: an informer's
	// goroutines and buffers do not grow with the list.
	var per []float64
	for range 3 {
		base := liveHeap()
		stopEmpty, err := hold(nil)
		if err != nil {
			return 0, err
		}
		empty := liveHeap()
		stopFull, err := hold(objs)
		if err != nil {
			stopEmpty()
			return 0, err
		}
		full := liveHeap()
		stopFull()
		stopEmpty()
		per = append(per, (float64(full)-float64(empty)-(float64(empty)-float64(base)))/float64(n))
	}
	runtime.KeepAlive(objs)
	return max(median(per), 0), nil
}

// runInformer runs a client-go informer whose server streams objs as its
// initial list (the default, WatchListClient: ADDED events, then the
// initial-events-end bookmark) and answers a LIST with them too, waits for
// its sync and returns its stop.
func runInformer(objs []kruntime.Object) (func(), error) {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (kruntime.Object, error) {
			l := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
			for _, o := range objs {
				l.Items = append(l.Items, *o.(*metav1.PartialObjectMetadata))
			}
			return l, nil
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w := watch.NewFakeWithChanSize(len(objs)+1, false)
			if o.SendInitialEvents != nil && *o.SendInitialEvents {
				for _, obj := range objs {
					w.Add(obj)
				}
				w.Action(watch.Bookmark, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
					ResourceVersion: "1", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
			}
			return w, nil
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	wait, stopWait := context.WithTimeout(ctx, time.Minute)
	defer stopWait()
	if !cache.WaitForCacheSync(wait.Done(), inf.HasSynced) {
		cancel()
		<-done
		return nil, errors.New("the placeholder informer did not sync within a minute")
	}
	return func() { cancel(); <-done; runtime.KeepAlive(inf) }, nil
}
