// Package informerheap measures what a real client-go informer of one
// resource holds once it has synced: it runs a typed (over protobuf), dynamic
// or metadata informer with client-go's defaults, waits for its sync, and
// reads the live heap after GC. It is what "kubectl watchcache cost" is
// checked against (hack/bench/cost and the cost end-to-end test), run in a
// process of its own so that nothing else is on the heap.
package informerheap

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Kind is the kind of informer to run.
type Kind string

// The informers Run knows.
const (
	// Typed is client-go's typed informer (informers.SharedInformerFactory), over protobuf.
	Typed Kind = "typed"
	// TypedNoManagedFields is Typed with cache.TransformStripManagedFields.
	TypedNoManagedFields Kind = "typedNoManagedFields"
	// Dynamic is the dynamic informer (unstructured.Unstructured), over JSON.
	Dynamic Kind = "dynamic"
	// Metadata is the metadata informer (PartialObjectMetadata), over protobuf.
	Metadata Kind = "metadata"
)

// Kinds are every Kind, in the order reports list them.
func Kinds() []Kind { return []Kind{Typed, Dynamic, Metadata, TypedNoManagedFields} }

// Config says which informer to run on what.
type Config struct {
	Rest *rest.Config
	GVR  schema.GroupVersionResource
	// Namespace limits the informer to one namespace; "" is all.
	Namespace string
	// LabelSelector limits the informer to the objects it selects.
	LabelSelector string
	Kind          Kind
}

// Result is what one informer held.
type Result struct {
	// Objects is how many objects its store holds once synced.
	Objects int `json:"objects"`
	// Heap is the live heap once synced, after GC (the informer running).
	Heap uint64 `json:"heap"`
	// PeakHeap is the largest heap of allocated objects seen during the sync
	// (garbage not yet collected included: what the process must have room for).
	PeakHeap uint64 `json:"peakHeap"`
	// PeakLive is the largest heap a GC cycle marked live during the sync.
	PeakLive uint64 `json:"peakLive"`
	// SyncSeconds is the time from the informer's start to its sync.
	SyncSeconds float64 `json:"syncSeconds"`
}

// Run starts the informer, waits for its sync, reads the heap and stops it.
// The heap includes everything the process had before (its baseline): run the
// same informer on an empty collection, in a process of its own, and subtract.
func Run(ctx context.Context, c Config) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := rest.CopyConfig(c.Rest)
	tweak := func(o *metav1.ListOptions) { o.LabelSelector = c.LabelSelector }
	var inf cache.SharedIndexInformer
	switch c.Kind {
	case Typed, TypedNoManagedFields:
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return Result{}, fmt.Errorf("building the clientset: %w", err)
		}
		f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(c.Namespace), informers.WithTweakListOptions(tweak))
		gi, err := f.ForResource(c.GVR)
		if err != nil {
			return Result{}, fmt.Errorf("no typed informer for %s: %w", c.GVR, err)
		}
		inf = gi.Informer()
		if c.Kind == TypedNoManagedFields {
			if err := inf.SetTransform(StripManagedFields); err != nil {
				return Result{}, fmt.Errorf("setting the transform: %w", err)
			}
		}
	case Dynamic:
		dc, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return Result{}, fmt.Errorf("building the dynamic client: %w", err)
		}
		inf = dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, c.Namespace, tweak).ForResource(c.GVR).Informer()
	case Metadata:
		mc, err := metadata.NewForConfig(cfg)
		if err != nil {
			return Result{}, fmt.Errorf("building the metadata client: %w", err)
		}
		inf = metadatainformer.NewFilteredSharedInformerFactory(mc, 0, c.Namespace, tweak).ForResource(c.GVR).Informer()
	default:
		return Result{}, fmt.Errorf("unknown informer kind %q", c.Kind)
	}
	s := StartSampler()
	start := time.Now()
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()
	// WaitForCacheSync is false only once ctx ended.
	synced := cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	took := time.Since(start)
	peakHeap, peakLive := s.Stop()
	if !synced {
		return Result{}, fmt.Errorf("waiting for the %s informer of %s to sync: %w", c.Kind, c.GVR, ctx.Err())
	}
	// The heap is read before the deferred stop: with the informer's cache.
	return Result{Heap: LiveHeap(), Objects: len(inf.GetStore().ListKeys()), PeakHeap: peakHeap, PeakLive: peakLive, SyncSeconds: took.Seconds()}, nil
}

// StripManagedFields is the common transform: it drops an object's
// managedFields before the informer stores it.
func StripManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// LiveHeap forces two GCs (the second sweeps what finalizers freed) and
// returns the bytes of live heap objects.
func LiveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// Sampler records the peak heap objects (garbage included) and the peak
// marked-live heap, read from runtime/metrics every millisecond, until Stop.
type Sampler struct {
	stopc, done chan struct{}
	heap, live  uint64 // the sampling goroutine's until done is closed
}

// StartSampler starts sampling.
func StartSampler() *Sampler {
	s := &Sampler{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(samples)
			s.heap = max(s.heap, samples[0].Value.Uint64())
			s.live = max(s.live, samples[1].Value.Uint64())
			select {
			case <-s.stopc:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the peaks: heap objects and marked-live heap.
func (s *Sampler) Stop() (heap, live uint64) {
	close(s.stopc)
	<-s.done
	return s.heap, s.live
}
