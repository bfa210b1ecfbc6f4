package cost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// Repetitions of a heap measurement: at least minReps, until the last
// minReps agree within stableWithin of their median, at most maxReps.
const (
	minReps      = 3
	maxReps      = 9
	stableWithin = 0.02
)

// builder builds one form of the sample, held until the heap is read, and
// says how many objects it holds.
type builder func() (held any, objects int, err error)

// measureForms measures every form that applies: typed only for a built-in
// resource (from the protobuf sample, as a typed informer over protobuf
// decodes), dynamic and metadata from the JSON sample, this tool's store from
// the wire it would ask for. It returns each form's heap per object.
func measureForms(s *sample, builtIn bool) (map[string]float64, error) {
	builders := map[string]builder{
		FormDynamic:                func() (any, int, error) { return buildDynamic(s.json, false) },
		FormDynamicNoManagedFields: func() (any, int, error) { return buildDynamic(s.json, true) },
		FormMetadata:               func() (any, int, error) { return buildMetadata(s.json) },
	}
	own := s.json
	if builtIn && s.proto != nil {
		builders[FormTyped] = func() (any, int, error) { return buildTyped(s.proto, false) }
		builders[FormTypedNoManagedFields] = func() (any, int, error) { return buildTyped(s.proto, true) }
		own = s.proto
	}
	builders[FormWatchcache] = func() (any, int, error) { return buildStore(own) }
	out := map[string]float64{}
	for _, name := range slices.Sorted(maps.Keys(builders)) {
		per, err := measure(builders[name])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = per
	}
	return out, nil
}

// measure builds a form repeatedly, reading the live heap after GC before and
// after each build (the form still held), and returns the median of the last
// stable readings per object. The sample's bodies are allocated before every
// reading and kept after, so they are not counted; the decoding's garbage is
// collected before the second reading.
func measure(build builder) (float64, error) {
	// A first build warms what decoding caches for good (reflection, codecs).
	held, n, err := build()
	if err != nil {
		return 0, err
	}
	runtime.KeepAlive(held)
	held = nil
	if n == 0 {
		return 0, nil
	}
	var deltas []float64
	for i := 0; i < maxReps; i++ {
		before := liveHeap()
		held, n, err = build()
		after := liveHeap()
		runtime.KeepAlive(held)
		held = nil
		if err != nil {
			return 0, err
		}
		deltas = append(deltas, float64(int64(after)-int64(before))/float64(n))
		if len(deltas) >= minReps && stable(deltas[len(deltas)-minReps:]) {
			break
		}
	}
	m := median(deltas[max(0, len(deltas)-minReps):])
	return max(m, 0), nil
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func stable(xs []float64) bool {
	m := median(xs)
	lo, hi := slices.Min(xs), slices.Max(xs)
	return m > 0 && (hi-lo) <= stableWithin*m
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// newIndexer is an informer's indexer: keyed namespace/name, with the namespace index.
func newIndexer() cache.Indexer {
	return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

// addAll extracts list's items as client-go's reflector does (each one copied
// out of the list, so the list is not kept) and adds them to idx.
func addAll(idx cache.Indexer, list kruntime.Object, strip bool) (int, error) {
	items, err := meta.ExtractListWithAlloc(list)
	if err != nil {
		return 0, fmt.Errorf("extracting the list's items: %w", err)
	}
	for _, it := range items {
		if strip {
			if a, err := meta.Accessor(it); err == nil {
				a.SetManagedFields(nil)
			}
		}
		if err := idx.Add(it); err != nil {
			return 0, fmt.Errorf("adding to the indexer: %w", err)
		}
	}
	return len(items), nil
}

// buildTyped decodes protobuf pages with client-go's scheme into typed
// objects in an indexer; strip drops managedFields first (the transform).
func buildTyped(pages []*page, strip bool) (any, int, error) {
	idx, n := newIndexer(), 0
	dec := scheme.Codecs.UniversalDeserializer()
	for _, p := range pages {
		obj, _, err := dec.Decode(p.body, nil, nil)
		if err != nil {
			return nil, 0, fmt.Errorf("decoding a typed list: %w", err)
		}
		k, err := addAll(idx, obj, strip)
		if err != nil {
			return nil, 0, err
		}
		n += k
	}
	return idx, n, nil
}

// buildDynamic decodes JSON pages into unstructured.Unstructured in an indexer.
func buildDynamic(pages []*page, strip bool) (any, int, error) {
	idx, n := newIndexer(), 0
	for _, p := range pages {
		obj, _, err := unstructured.UnstructuredJSONScheme.Decode(p.body, nil, nil)
		if err != nil {
			return nil, 0, fmt.Errorf("decoding an unstructured list: %w", err)
		}
		k, err := addAll(idx, obj, strip)
		if err != nil {
			return nil, 0, err
		}
		n += k
	}
	return idx, n, nil
}

// buildMetadata decodes JSON pages into PartialObjectMetadata in an indexer
// (only metadata is kept, as the metadata informer's objects).
func buildMetadata(pages []*page) (any, int, error) {
	idx, n := newIndexer(), 0
	for _, p := range pages {
		var l metav1.PartialObjectMetadataList
		if err := json.Unmarshal(p.body, &l); err != nil {
			return nil, 0, fmt.Errorf("decoding a metadata list: %w", err)
		}
		k, err := addAll(idx, &l, false)
		if err != nil {
			return nil, 0, err
		}
		n += k
	}
	return idx, n, nil
}

// ownStore is this tool's store and its writer, held together.
type ownStore struct {
	s *store.Store
	w *store.Writer
}

// buildStore decodes pages with pkg/wire into this tool's compact objects in a store.
func buildStore(pages []*page) (any, int, error) {
	s, w := store.New()
	if _, err := w.ApplyEvent(store.Event{Type: store.Init}); err != nil {
		return nil, 0, err
	}
	for _, p := range pages {
		pg, err := wire.DecodeListResponse(bytes.NewReader(p.body), p.contentType, false)
		if err != nil {
			return nil, 0, fmt.Errorf("decoding for the store: %w", err)
		}
		for _, it := range pg.Items {
			if _, err := w.ApplyEvent(store.Event{Type: store.InitApply, Object: it.Object}); err != nil {
				return nil, 0, err
			}
		}
	}
	if _, err := w.ApplyEvent(store.Event{Type: store.InitDone}); err != nil {
		return nil, 0, err
	}
	return &ownStore{s: s, w: w}, s.Len(), nil
}
