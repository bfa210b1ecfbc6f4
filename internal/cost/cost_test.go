package cost

import (
	"strings"
	"testing"
)

func TestCheapestServesTheNeedAgainstTheInformerOneWouldWrite(t *testing.T) {
	h := Heaps{
		Typed:                  extrapolate(3000, 100),
		TypedNoManagedFields:   extrapolate(2000, 100),
		Dynamic:                extrapolate(8000, 100),
		DynamicNoManagedFields: extrapolate(5000, 100),
		Metadata:               extrapolate(1000, 100),
		Watchcache:             extrapolate(500, 100),
	}
	c := cheapest(&h, NeedFull)
	if c.Form != FormTypedNoManagedFields || c.Against != FormTyped || c.Saving != 100000 || c.SavingPercent != 33.3 {
		t.Errorf("full: %+v", c)
	}
	// The tool's own store is no informer: never the answer.
	if c := cheapest(&h, NeedMetadata); c.Form != FormMetadata || c.Saving != 200000 {
		t.Errorf("metadata: %+v", c)
	}
	// A custom resource: no typed form, so against the dynamic informer.
	h.Typed, h.TypedNoManagedFields = nil, nil
	if c := cheapest(&h, NeedFull); c.Form != FormDynamicNoManagedFields || c.Against != FormDynamic || c.Saving != 300000 {
		t.Errorf("CRD: %+v", c)
	}
	// An empty collection: zeros, no division by zero.
	e := Heaps{Typed: extrapolate(0, 0), Dynamic: extrapolate(0, 0)}
	if c := cheapest(&e, NeedFull); c.Saving != 0 || c.SavingPercent != 0 || c.Form != FormTyped {
		t.Errorf("empty: %+v", c)
	}
}

func TestExtrapolateAndTotals(t *testing.T) {
	h := extrapolate(1234.4, 1000)
	if *h != (Heap{PerObject: 1234, Total: 1234400, PeakList: 2468800, PeakStream: 1234400}) {
		t.Errorf("extrapolate: %+v", *h)
	}
	pb := int64(10)
	rs := []Resource{
		{Objects: 10, ListBytes: Wires{JSON: 100, Protobuf: &pb}, Heap: Heaps{Typed: extrapolate(10, 10), Dynamic: extrapolate(20, 10)}},
		{Objects: 30, ListBytes: Wires{JSON: 300}, Heap: Heaps{Dynamic: extrapolate(40, 30)}},
	}
	tot := totals(rs)
	if tot.Objects != 40 || tot.ListBytes.JSON != 400 || tot.ListBytes.Protobuf != nil {
		t.Errorf("totals: %+v", tot)
	}
	// Typed is not in every resource, so it has no total.
	if tot.Heap.Typed != nil || tot.Heap.Dynamic == nil || tot.Heap.Dynamic.Total != 1400 || tot.Heap.Dynamic.PerObject != 35 {
		t.Errorf("totals' heaps: %+v", tot.Heap)
	}
}

// The text report says where it counted: a cluster-scoped resource has
// no namespaces, where it said "(all namespaces)".
func TestTheTextSaysAClusterScopedResourceIsOne(t *testing.T) {
	for _, tc := range []struct {
		r    Resource
		want string
	}{
		{Resource{Resource: "namespaces.v1", ClusterScoped: true}, "namespaces.v1 (cluster-scoped): "},
		{Resource{Resource: "configmaps.v1"}, "configmaps.v1 (all namespaces): "},
		{Resource{Resource: "configmaps.v1", Namespace: "shop"}, "configmaps.v1 (namespace shop): "},
	} {
		var b strings.Builder
		if err := WriteText(&b, &Report{Resources: []Resource{tc.r}}); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(b.String(), tc.want) {
			t.Errorf("got %q, want it to begin %q", strings.SplitN(b.String(), "\n", 2)[0], tc.want)
		}
	}
}
