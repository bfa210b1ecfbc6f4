package cost

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

func configMapList() *corev1.ConfigMapList {
	l := &corev1.ConfigMapList{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "123", Continue: "next-page"},
	}
	for _, n := range []string{"a", "bb", "ccc"} {
		l.Items = append(l.Items, corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "ns"},
			Data:       map[string]string{"k": strings.Repeat(n, 10)},
		})
	}
	return l
}

// A protobuf list splits into its items without decoding them, and a list
// of some of them decodes as client-go decodes the server's.
func TestAProtobufListSplitsIntoItemsAndIsBuiltAgain(t *testing.T) {
	s := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	body, err := runtime.Encode(s, configMapList())
	if err != nil {
		t.Fatal(err)
	}
	p, err := splitList(body, "application/vnd.kubernetes.protobuf")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.items) != 3 || p.resourceVersion != "123" || p.continueToken != "next-page" || p.apiVersion != "v1" || p.kind != "ConfigMapList" {
		t.Fatalf("split: %+v", p)
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(wire.EncodeProtoList(p.apiVersion, p.kind, p.items[1:]), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := obj.(*corev1.ConfigMapList)
	if len(l.Items) != 2 || l.Items[0].Name != "bb" || l.Items[1].Data["k"] != strings.Repeat("ccc", 10) {
		t.Errorf("built again: %+v", l.Items)
	}
	j, err := typedJSON(wire.EncodeProtoList(p.apiVersion, p.kind, p.items))
	if err != nil {
		t.Fatal(err)
	}
	var back corev1.ConfigMapList
	if err := json.Unmarshal(j, &back); err != nil || back.Kind != "ConfigMapList" || len(back.Items) != 3 || back.Items[2].Name != "ccc" {
		t.Errorf("typed JSON %s: %v", j, err)
	}
	for _, bad := range [][]byte{nil, []byte("k8s"), append([]byte("k8s\x00"), 0x12, 0x05, 1)} {
		if _, err := splitList(bad, "application/vnd.kubernetes.protobuf"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A JSON list splits into its items as they came, and a list of some of
// them is a list dynamic clients decode.
func TestAJSONListSplitsIntoItemsAndIsBuiltAgain(t *testing.T) {
	body, err := json.Marshal(configMapList())
	if err != nil {
		t.Fatal(err)
	}
	p, err := splitList(body, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.items) != 3 || p.resourceVersion != "123" || p.continueToken != "next-page" || p.kind != "ConfigMapList" || p.apiVersion != "v1" {
		t.Fatalf("split: %+v", p)
	}
	if !strings.Contains(string(p.items[2]), `"name":"ccc"`) {
		t.Errorf("item 2: %s", p.items[2])
	}
	if _, n, err := buildDynamic(jsonList(p.apiVersion, p.kind, p.items[:2]), false); err != nil || n != 2 {
		t.Errorf("dynamic: %d objects, %v", n, err)
	}
	if p, err := splitList([]byte(`{"items":null,"metadata":{}}`), "application/json"); err != nil || len(p.items) != 0 {
		t.Errorf("null items: %v", err)
	}
	for _, bad := range []string{``, `[]`, `{"items":[{}`, `{"items":{}}`, `{"metadata":{"continue":5}}`} {
		if _, err := splitList([]byte(bad), "application/json"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// The estimate scales the sample's heap per wire byte to the list's bytes,
// and its range widens with the groups' spread; an informer's containers
// for the list's count replace the sample's indexer's.
func TestTheEstimateAndItsRange(t *testing.T) {
	l := &listing{objects: 1000, bytes: 1_000_000}
	groups := make([]*group, 5)
	per := make([]map[string]float64, 5)
	for i := range groups {
		groups[i] = &group{objects: 10, wireBytes: 10_000}
		per[i] = map[string]float64{FormTyped: 3000} // 3 bytes of heap per wire byte
	}
	h := estimate(one(l, groups), per, FormTyped, l, nil, 0)
	// No spread: the heap readings' own tolerance (±1 %) and the model's
	// (±2 %) only, in quadrature.
	half := int64(math.Round(3_000_000 * math.Hypot(stableWithin/2, modelWithin)))
	if h.Total != 3_000_000 || h.PerObject != 3000 || h.Range == nil || h.Range[0] != 3_000_000-half || h.Range[1] != 3_000_000+half {
		t.Errorf("no spread: %+v %v, want ±%d", h, h.Range, half)
	}
	per[0][FormTyped], per[1][FormTyped] = 2000, 4000
	h = estimate(one(l, groups), per, FormTyped, l, nil, 0)
	if h.Total != 3_000_000 || h.Range[0] >= 3_000_000-half || h.Range[1] <= 3_000_000+half || h.Range[1]-3_000_000 != 3_000_000-h.Range[0] {
		t.Errorf("spread: %+v %v", h, *h.Range)
	}
	if h := estimate(one(l, groups[:1]), per[:1], FormTyped, l, nil, 0); h.Range != nil {
		t.Errorf("one group has a range: %v", *h.Range)
	}
	// The whole list sampled (50 objects): no sampling error, whatever the
	// spread; the readings' ±1 % only.
	whole := &listing{objects: 50, bytes: 50_000}
	wholeHalf := int64(math.Round(150_000 * math.Hypot(stableWithin/2, modelWithin)))
	if h := estimate(one(whole, groups), per, FormTyped, whole, nil, 0); h.Range == nil || h.Range[0] != 150_000-wholeHalf || h.Range[1] != 150_000+wholeHalf {
		t.Errorf("sampled whole: %+v %v", h, h.Range)
	}
	c := &containers{group: []float64{500, 500, 500, 500, 500}, list: 200}
	per[0][FormTyped], per[1][FormTyped] = 3000, 3000
	if h := estimate(one(l, groups), per, FormTyped, l, c, 0); h.Total != 2_500_000+200*1000 {
		t.Errorf("containers: %+v", h)
	}
}

// one is the list as one stratum, sampled in groups.
func one(l *listing, groups []*group) []*stratum {
	return []*stratum{{objects: l.objects, bytes: l.bytes, groups: groups}}
}

// Each stratum's heap per byte scales to its own bytes: 1,000 small objects
// of 3 bytes of heap per wire byte and 4 large ones of 1.1, whose bytes are
// most of the list's, cost 3 × the small bytes + 1.1 × the large (one
// ratio for the whole sample told 2.6 times that when no large object was
// drawn). The large stratum, sampled whole, adds nothing to the range.
func TestEachStratumScalesToItsOwnBytes(t *testing.T) {
	l := &listing{objects: 1004, bytes: 1_000_000 + 4_000_000, largeObjects: 4, largeBytes: 4_000_000}
	small := make([]*group, 5)
	per := make([]map[string]float64, 0, 6)
	for i := range small {
		small[i] = &group{objects: 10, wireBytes: 10_000}
		per = append(per, map[string]float64{FormTyped: 3000})
	}
	large := []*group{{objects: 4, wireBytes: 4_000_000}}
	per = append(per, map[string]float64{FormTyped: 1_100_000})
	strata := []*stratum{{objects: 1000, bytes: 1_000_000, groups: small}, {objects: 4, bytes: 4_000_000, groups: large}}
	h := estimate(strata, per, FormTyped, l, nil, 0)
	wantHalf := int64(math.Round(7_400_000 * math.Hypot(stableWithin/2, modelWithin)))
	if want := int64(3_000_000 + 4_400_000); h.Total != want || h.Range == nil || h.Range[0] != want-wantHalf || h.Range[1] != want+wantHalf {
		t.Errorf("got %+v %v, want %d ±%d", h, h.Range, want, wantHalf)
	}
}

// A real informer holds more than a plain indexer for the same objects (its
// queue keeps what it grew to during the initial list), and both hold
// something for each object besides the object.
func TestAnInformersContainersCostMoreThanAnIndexers(t *testing.T) {
	k := keyShape{namespaceLen: 12, nameLen: 20, namespaces: 4}
	idx, err := containerBytes(2000, k, false)
	if err != nil {
		t.Fatal(err)
	}
	inf, err := containerBytes(2000, k, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("per object: indexer %.0f bytes, informer %.0f", idx, inf)
	if idx <= 0 || inf <= idx {
		t.Errorf("indexer %.0f, informer %.0f bytes per object", idx, inf)
	}
}

// What an informer's watch keeps for the largest object is measured with
// client-go's own stream decoders: a buffer as large as that object at
// least, in protobuf and in JSON (a 900 KiB ConfigMap kept 1.2 MiB in a
// typed informer and 4.4 MiB in a dynamic one, besides the object).
func TestTheWatchBuffersOfTheLargestObjectAreMeasured(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: "ns"},
		Data: map[string]string{"dashboard.json": strings.Repeat(`{"panel":"p","expr":"sum(rate(x[5m]))"},`, 900<<10/40)}}
	item, err := cm.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b, err := measureBuffers(&listing{largest: item, proto: true, apiVersion: "v1", kind: "ConfigMapList"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a %d-byte ConfigMap: protobuf stream keeps %.0f bytes, JSON %.0f", len(item), b.proto, b.json)
	if b.proto < float64(len(item)) || b.proto > 4*float64(len(item)) || b.json < float64(len(item)) || b.json > 8*float64(len(item)) {
		t.Errorf("a %d-byte object: protobuf %.0f, JSON %.0f bytes kept", len(item), b.proto, b.json)
	}
	if b.metadata > 64<<10 {
		t.Errorf("its metadata, a few hundred bytes: %.0f bytes kept", b.metadata)
	}
	// A last-applied annotation as large as the data: the metadata
	// informer's event is large too.
	cm.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": cm.Data["dashboard.json"]}
	if item, err = cm.Marshal(); err != nil {
		t.Fatal(err)
	}
	if b, err = measureBuffers(&listing{largest: item, proto: true, apiVersion: "v1", kind: "ConfigMapList"}); err != nil {
		t.Fatal(err)
	}
	if half := float64(len(item)) / 2; b.metadata < half {
		t.Errorf("a %d-byte object, half of it an annotation: metadata %.0f bytes kept", len(item), b.metadata)
	}
	if b, err := measureBuffers(&listing{}); err != nil || b != (buffers{}) {
		t.Errorf("an empty list: %+v, %v", b, err)
	}
}
