package store_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// benchObjects is the size of the memory and relist benchmarks.
const benchObjects = 100_000

// appConfig is the bulk of a realistic ConfigMap's data (about 600 bytes).
var appConfig = strings.Repeat("server:\n  port: 8080\n  timeout: 30s\nlogging:\n  level: info\n", 9)

// configMapJSON renders ConfigMap i at resourceVersion rv as an apiserver
// would send it (about 1.6 kB with managedFields and data, about 0.7 kB
// without). Every call allocates fresh bytes, as decoding a response does.
func configMapJSON(i, rv int, withData bool) []byte {
	var b bytes.Buffer
	uid := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(i)*2654435761, i&0xffff, i&0xfff, (i>>12)&0xfff, i*7919)
	ownerUID := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(i/3)*40503, i&0xffff, 7, 9, i/3)
	fmt.Fprintf(&b, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app-%05d-config","namespace":"team-%02d",`+
		`"uid":"%s","resourceVersion":"%d","creationTimestamp":"2026-03-04T05:06:07Z",`+
		`"labels":{"app.kubernetes.io/name":"app-%05d","app.kubernetes.io/instance":"app-%05d-prod",`+
		`"app.kubernetes.io/managed-by":"Helm","tier":"backend"},`+
		`"annotations":{"meta.helm.sh/release-name":"app-%05d","meta.helm.sh/release-namespace":"team-%02d"},`+
		`"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"app-%05d","uid":"%s","controller":true,"blockOwnerDeletion":true}]`,
		i, i%50, uid, rv, i, i, i, i%50, i/3, ownerUID)
	if withData {
		b.WriteString(`,"managedFields":[{"manager":"helm","operation":"Update","apiVersion":"v1",` +
			`"time":"2026-03-04T05:06:07Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},` +
			`"f:application.yaml":{},"f:log-level":{},"f:feature-flags":{}},"f:metadata":{"f:labels":{".":{},` +
			`"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{},` +
			`"f:tier":{}}}}}]},`)
		appYAML, _ := json.Marshal(appConfig + "instance: " + strconv.Itoa(i) + "\n")
		fmt.Fprintf(&b, `"data":{"application.yaml":%s,"log-level":"info","feature-flags":"new-ui=true,fast-path=false"}}`, appYAML)
	} else {
		b.WriteString(`}}`)
	}
	return b.Bytes()
}

// wireMeta is what a metadata-only decoder reads from an object.
type wireMeta struct {
	Metadata struct {
		Namespace, Name, UID, ResourceVersion string
		Generation                            int64
		CreationTimestamp                     time.Time
		DeletionTimestamp                     *time.Time
		Labels                                map[string]string
		OwnerReferences                       []struct {
			APIVersion, Kind, Name, UID string
			Controller                  *bool
		}
	}
}

// decodeObject turns one object's JSON into a compact store.Object, as the
// reflector does; full keeps the encoded body.
func decodeObject(tb testing.TB, data []byte, full bool) *store.Object {
	var w wireMeta
	if err := json.Unmarshal(data, &w); err != nil {
		tb.Fatalf("decoding a ConfigMap: %v", err)
	}
	m := w.Metadata
	o := &store.Object{
		Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
		Labels: store.MakeLabels(m.Labels),
	}
	if len(m.OwnerReferences) > 0 {
		o.OwnerReferences = make([]store.OwnerRef, len(m.OwnerReferences))
		for i, r := range m.OwnerReferences {
			o.OwnerReferences[i] = store.OwnerRef{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: r.UID,
				Controller: r.Controller != nil && *r.Controller}
		}
	}
	if full {
		o.Body = bytes.Clone(data)
	}
	return o
}

// retained returns the heap that what build returns keeps alive.
func retained(build func() any) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

func fillStore(tb testing.TB, w *store.Writer, n, rv int, full bool) {
	mustApply(tb, w, store.Event{Type: store.Init})
	for i := range n {
		mustApply(tb, w, store.Event{Type: store.InitApply, Object: decodeObject(tb, configMapJSON(i, rv+i, true), full)})
	}
	mustApply(tb, w, store.Event{Type: store.InitDone, ResourceVersion: strconv.Itoa(rv + n)})
}

func mustApply(tb testing.TB, w *store.Writer, ev store.Event) store.Result {
	r, err := w.ApplyEvent(ev)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// BenchmarkBytesHeld measures the heap 100k ConfigMaps keep alive in the store,
// against the same objects decoded as *unstructured.Unstructured (as a dynamic
// informer holds them) in a client-go cache.NewStore.
func BenchmarkBytesHeld(b *testing.B) {
	for _, mode := range []struct {
		name string
		full bool
	}{{"metadata", false}, {"full", true}} {
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				var estimate int64
				ours := retained(func() any {
					st, w := store.New()
					fillStore(b, w, benchObjects, 1000, mode.full)
					estimate = st.Counters().BytesHeld
					return st
				})
				unstructuredHeld := func(withData bool) int64 {
					return retained(func() any {
						s := cache.NewStore(cache.MetaNamespaceKeyFunc)
						for i := range benchObjects {
							u := &unstructured.Unstructured{}
							if err := u.UnmarshalJSON(configMapJSON(i, 1000+i, withData)); err != nil {
								b.Fatal(err)
							}
							if err := s.Add(u); err != nil {
								b.Fatal(err)
							}
						}
						return s
					})
				}
				theirs := unstructuredHeld(true)
				b.ReportMetric(float64(ours)/benchObjects, "B/obj")
				b.ReportMetric(float64(theirs)/benchObjects, "unstructured-B/obj")
				b.ReportMetric(float64(ours)/float64(theirs), "x-unstructured")
				b.ReportMetric(float64(estimate)/float64(ours), "estimate/actual")
				if !mode.full {
					// The stricter comparison: unstructured objects that also
					// dropped data and managedFields, like a metadata informer's.
					theirsMeta := unstructuredHeld(false)
					b.ReportMetric(float64(ours)/float64(theirsMeta), "x-unstructured-metadata")
				}
			}
		})
	}
}

// BenchmarkApply feeds the same ConfigMaps to the store and to client-go's
// cache.NewStore(cache.MetaNamespaceKeyFunc), as typed objects and as
// unstructured ones. Both caches are filled first; every timed apply is then a
// modification (two resourceVersions alternate). With 1k objects everything
// stays in the CPU cache; with 50k most entries are cold, as in a large cluster.
func BenchmarkApply(b *testing.B) {
	for _, n := range []int{1_000, 50_000} {
		var ours [2][]*store.Object
		var typed [2][]*corev1.ConfigMap
		var unstr [2][]*unstructured.Unstructured
		// Each representation is decoded in its own pass so each is laid out in
		// memory as its own cache would receive it.
		for v := range 2 {
			for i := range n {
				ours[v] = append(ours[v], decodeObject(b, configMapJSON(i, 1000+2*i+v, true), false))
			}
			for i := range n {
				cm := &corev1.ConfigMap{}
				if err := json.Unmarshal(configMapJSON(i, 1000+2*i+v, true), cm); err != nil {
					b.Fatal(err)
				}
				typed[v] = append(typed[v], cm)
			}
			for i := range n {
				u := &unstructured.Unstructured{}
				if err := u.UnmarshalJSON(configMapJSON(i, 1000+2*i+v, true)); err != nil {
					b.Fatal(err)
				}
				unstr[v] = append(unstr[v], u)
			}
		}
		b.Run(fmt.Sprintf("store/%d", n), func(b *testing.B) {
			_, w := store.New()
			for _, o := range ours[0] {
				mustApply(b, w, store.Event{Type: store.Apply, Object: o})
			}
			i := n
			for b.Loop() {
				if r := mustApply(b, w, store.Event{Type: store.Apply, Object: ours[(i/n)%2][i%n]}); r.Outcome != store.Modified {
					b.Fatalf("outcome: got %v, want Modified", r.Outcome)
				}
				i++
			}
		})
		clientGo := func(objs [2][]kruntime.Object) func(b *testing.B) {
			return func(b *testing.B) {
				s := cache.NewStore(cache.MetaNamespaceKeyFunc)
				for _, o := range objs[0] {
					if err := s.Add(o); err != nil {
						b.Fatal(err)
					}
				}
				i := n
				for b.Loop() {
					if err := s.Update(objs[(i/n)%2][i%n]); err != nil {
						b.Fatal(err)
					}
					i++
				}
			}
		}
		var typedObjs, unstrObjs [2][]kruntime.Object
		for v := range 2 {
			for i := range n {
				typedObjs[v] = append(typedObjs[v], typed[v][i])
				unstrObjs[v] = append(unstrObjs[v], unstr[v][i])
			}
		}
		b.Run(fmt.Sprintf("client-go-typed/%d", n), clientGo(typedObjs))
		b.Run(fmt.Sprintf("client-go-unstructured/%d", n), clientGo(unstrObjs))
	}
}

// BenchmarkList100k measures one List of 100k objects: the longest time a
// reader holds the lock the Writer needs.
func BenchmarkList100k(b *testing.B) {
	st, w := store.New()
	fillStore(b, w, benchObjects, 1000, false)
	for b.Loop() {
		if got := len(st.List()); got != benchObjects {
			b.Fatalf("List: got %d objects, want %d", got, benchObjects)
		}
	}
}

// BenchmarkRelist100k relists a store of 100k metadata-only ConfigMaps and
// reports, relative to the store's own size: what InitDone allocates (the
// new live map and the diff; the swap itself is a pointer assignment), what
// the relist buffer allocates, and the peak extra heap of the whole relist including the newly
// decoded objects, which a relist necessarily holds beside the old snapshot
// until the swap. ns/op includes building the store; swap-ns is InitDone alone.
func BenchmarkRelist100k(b *testing.B) {
	for _, sc := range []struct {
		name string
		rv   int // added to every resourceVersion in the new list
	}{{"unchanged", 0}, {"all-updated", 1_000_000}} {
		b.Run(sc.name, func(b *testing.B) {
			for b.Loop() {
				st, w := store.New()
				storeBytes := retained(func() any {
					fillStore(b, w, benchObjects, 1000, false)
					return nil
				})
				var next []*store.Object
				nextBytes := retained(func() any {
					next = make([]*store.Object, benchObjects)
					for i := range next {
						next[i] = decodeObject(b, configMapJSON(i, 1000+i+sc.rv, true), false)
					}
					return nil
				})

				var m0, m1, m2 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				mustApply(b, w, store.Event{Type: store.Init})
				for _, o := range next {
					mustApply(b, w, store.Event{Type: store.InitApply, Object: o})
				}
				runtime.ReadMemStats(&m1)
				start := time.Now()
				r := mustApply(b, w, store.Event{Type: store.InitDone, ResourceVersion: "2"})
				swap := time.Since(start)
				runtime.ReadMemStats(&m2)

				if st.Len() != benchObjects || r.Diff.Unchanged+len(r.Diff.Updated) != benchObjects {
					b.Fatalf("relist: Len %d, diff %d unchanged %d updated", st.Len(), r.Diff.Unchanged, len(r.Diff.Updated))
				}
				bufferAlloc := float64(m1.TotalAlloc - m0.TotalAlloc)
				swapAlloc := float64(m2.TotalAlloc - m1.TotalAlloc)
				sb := float64(storeBytes)
				b.ReportMetric(swapAlloc/sb, "swap-alloc/store")
				b.ReportMetric(bufferAlloc/sb, "buffer-alloc/store")
				b.ReportMetric((float64(nextBytes)+bufferAlloc+swapAlloc)/sb, "relist-peak-extra/store")
				b.ReportMetric(float64(swap.Nanoseconds()), "swap-ns")
				runtime.KeepAlive(next)
			}
		})
	}
}

// BenchmarkInitialList100k installs the first list of 100k metadata-only
// ConfigMaps in an empty store; swap-ns is its InitDone alone (the diff of
// nothing against everything).
func BenchmarkInitialList100k(b *testing.B) {
	objs := make([]*store.Object, benchObjects)
	for i := range objs {
		objs[i] = decodeObject(b, configMapJSON(i, 1000+i, true), false)
	}
	var swaps time.Duration
	for b.Loop() {
		st, w := store.New()
		mustApply(b, w, store.Event{Type: store.Init})
		for _, o := range objs {
			mustApply(b, w, store.Event{Type: store.InitApply, Object: o})
		}
		start := time.Now()
		r := mustApply(b, w, store.Event{Type: store.InitDone, ResourceVersion: "2"})
		swaps += time.Since(start)
		if st.Len() != benchObjects || r.Diff.After != benchObjects {
			b.Fatalf("initial list: Len %d, %d after", st.Len(), r.Diff.After)
		}
	}
	b.ReportMetric(float64(swaps.Nanoseconds())/float64(b.N), "swap-ns")
}
