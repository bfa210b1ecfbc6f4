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
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire/request"
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

// measureForms measures every form that applies to one group of the
// sample: typed only for a resource read in protobuf (as a typed informer
// over protobuf decodes), dynamic and metadata from its JSON, this tool's
// store from the wire it would ask for. It returns each form's heap per object.
func measureForms(g *group, typed bool) (map[string]float64, error) {
	builders := map[string]builder{
		FormDynamic:                func() (any, int, error) { return buildDynamic(g.json, false) },
		FormDynamicNoManagedFields: func() (any, int, error) { return buildDynamic(g.json, true) },
		FormMetadata:               func() (any, int, error) { return buildMetadata(g.json) },
	}
	own, ownType := g.json, "application/json"
	if typed {
		builders[FormTyped] = func() (any, int, error) { return buildTyped(g.proto, false) }
		builders[FormTypedNoManagedFields] = func() (any, int, error) { return buildTyped(g.proto, true) }
		own, ownType = g.proto, request.ContentTypeProtobuf
	}
	builders[FormWatchcache] = func() (any, int, error) { return buildStore(own, ownType) }
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

// index extracts list's items as client-go's reflector does (each one
// copied out of the list, so the list is not kept) into a new indexer; strip
// drops managedFields first (the transform). It is a builder's answer: the
// indexer and how many objects it holds.
func index(list kruntime.Object, strip bool) (any, int, error) {
	items, err := meta.ExtractListWithAlloc(list)
	if err != nil {
		return nil, 0, fmt.Errorf("extracting the list's items: %w", err)
	}
	idx := newIndexer()
	for _, it := range items {
		if strip {
			if a, err := meta.Accessor(it); err == nil {
				a.SetManagedFields(nil)
			}
		}
		if err := idx.Add(it); err != nil {
			return nil, 0, fmt.Errorf("adding to the indexer: %w", err)
		}
	}
	return idx, len(items), nil
}

// typedJSON is the JSON the server writes of a protobuf list: its typed
// objects', encoded as the API server encodes them.
func typedJSON(protoList []byte) ([]byte, error) {
	obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(protoList, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decoding a typed list: %w", err)
	}
	obj.GetObjectKind().SetGroupVersionKind(*gvk)
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding a typed list in JSON: %w", err)
	}
	return b, nil
}

// buildTyped decodes a protobuf list with client-go's scheme into typed
// objects in an indexer; strip drops managedFields first (the transform).
func buildTyped(body []byte, strip bool) (any, int, error) {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("decoding a typed list: %w", err)
	}
	return index(obj, strip)
}

// buildDynamic decodes a JSON list into unstructured.Unstructured in an indexer.
func buildDynamic(body []byte, strip bool) (any, int, error) {
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode(body, nil, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("decoding an unstructured list: %w", err)
	}
	return index(obj, strip)
}

// buildMetadata decodes a JSON list into PartialObjectMetadata in an indexer
// (only metadata is kept, as the metadata informer's objects).
func buildMetadata(body []byte) (any, int, error) {
	var l metav1.PartialObjectMetadataList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, 0, fmt.Errorf("decoding a metadata list: %w", err)
	}
	return index(&l, false)
}

// ownStore is this tool's store and its writer, held together.
type ownStore struct {
	s *store.Store
	w *store.Writer
}

// buildStore decodes a list with pkg/wire into this tool's compact objects in a store.
func buildStore(body []byte, contentType string) (any, int, error) {
	s, w := store.New()
	if _, err := w.ApplyEvent(store.Event{Type: store.Init}); err != nil {
		return nil, 0, err
	}
	pg, err := wire.DecodeListResponse(bytes.NewReader(body), contentType, false)
	if err != nil {
		return nil, 0, fmt.Errorf("decoding for the store: %w", err)
	}
	for _, it := range pg.Items {
		if _, err := w.ApplyEvent(store.Event{Type: store.InitApply, Object: it.Object}); err != nil {
			return nil, 0, err
		}
	}
	if _, err := w.ApplyEvent(store.Event{Type: store.InitDone}); err != nil {
		return nil, 0, err
	}
	return &ownStore{s: s, w: w}, s.Len(), nil
}
