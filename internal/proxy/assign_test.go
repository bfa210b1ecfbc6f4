package proxy

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

func newAssignProxy() *Proxy {
	return &Proxy{slots: map[streamKey][]*slot{}, released: make(chan struct{})}
}

// A reflector's relist can reach the proxy before the watch it left (on a
// 410 ERROR event) is seen ending: the relist waits for that release and
// stays on the reflector's stream instead of opening another.
func TestARequestRightAfterItsClientsLastOneStaysOnItsStream(t *testing.T) {
	p := newAssignProxy()
	watch := call{verb: reflector.VerbWatch, gvr: configMapsGVR, namespace: "ns"}
	list := call{verb: reflector.VerbList, gvr: configMapsGVR, namespace: "ns"}
	req := httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps", nil)
	first, _, _ := p.assign(watch, req)
	got := make(chan *slot, 1)
	go func() {
		sl, _, _ := p.assign(list, req)
		got <- sl
	}()
	p.release(first)
	if sl := <-got; sl != first {
		t.Errorf("the relist was given another stream than its watch's")
	}
}

// Another reflector of the same thing in the same program (its first
// request while the first one's watch is open) gets a stream of its own
// once the grace has passed.
func TestASecondReflectorOfTheSameThingGetsItsOwnStream(t *testing.T) {
	p := newAssignProxy()
	watch := call{verb: reflector.VerbWatch, gvr: configMapsGVR, namespace: "ns"}
	req := httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps", nil)
	first, _, _ := p.assign(watch, req)
	start := time.Now()
	second, _, _ := p.assign(watch, req)
	if second == first {
		t.Fatal("two requests in flight at once were given one stream")
	}
	if waited := time.Since(start); waited < sameClientGrace {
		t.Errorf("the second reflector's request waited %s, less than the grace %s", waited, sameClientGrace)
	}
}

// A typed informer (protobuf) and a metadata informer of one resource in
// one program (controller-runtime runs both) are two reflectors: each
// request goes to the stream of what it asks for, even when the other's is
// free (a relist of one is never taken into the other's stream).
func TestATypedAndAMetadataInformerOfOneResourceAreTwoStreams(t *testing.T) {
	p := newAssignProxy()
	list := call{verb: reflector.VerbList, gvr: configMapsGVR}
	watch := call{verb: reflector.VerbWatch, gvr: configMapsGVR}
	req := func(accept string) *http.Request {
		r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
		r.Header.Set("User-Agent", "manager/v0.0.0 (linux/amd64) kubernetes/$Format")
		r.Header.Set("Accept", accept)
		return r
	}
	typed := req("application/vnd.kubernetes.protobuf, */*")
	metaList := req("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")
	metaWatch := req("application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json")

	a, _, _ := p.assign(list, typed)
	p.release(a)
	start := time.Now()
	b, _, _ := p.assign(list, metaList)
	if b == a {
		t.Fatal("the metadata informer's list was taken into the typed informer's stream")
	}
	if waited := time.Since(start); waited >= sameClientGrace {
		t.Errorf("the metadata informer's first list waited %s for the typed informer's stream", waited)
	}
	p.release(b)
	if w, _, _ := p.assign(watch, metaWatch); w != b {
		t.Error("the metadata informer's watch (as=PartialObjectMetadata) left its list's stream (as=PartialObjectMetadataList)")
	} else {
		p.release(w)
	}
	if w, _, _ := p.assign(watch, typed); w != a {
		t.Error("the typed informer's watch left its stream")
	}
	if !b.asked.MetadataOnly || b.asked.Wire != reflector.WireProtobuf || a.asked.MetadataOnly || a.asked.Accept != typed.Header.Get("Accept") {
		t.Errorf("asked %+v and %+v", a.asked, b.asked)
	}
}

// resettable is a RESTMapper that forgets nothing.
type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

// Streams are numbered in the order they are announced: a stream's number
// is its place among the OnStream calls (and so among a trace's resource
// lines) and in Streams, however many are created at once.
func TestStreamsAreNumberedInTheOrderTheyAreAnnounced(t *testing.T) {
	var announced []int
	p := newAssignProxy()
	p.mapper = resettable{meta.NewDefaultRESTMapper(nil)}
	p.opts.Now = time.Now
	p.opts.OnStream = func(s *observed.Stream) {
		announced = append(announced, s.ID) // serialized by the proxy
		time.Sleep(time.Millisecond)
	}
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := call{verb: reflector.VerbList, gvr: configMapsGVR, namespace: fmt.Sprint("ns", i)}
			p.stream(&slot{}, c)
		}()
	}
	wg.Wait()
	streams := p.Streams()
	if len(announced) != n || len(streams) != n {
		t.Fatalf("%d announced, %d streams, want %d", len(announced), len(streams), n)
	}
	for i := range n {
		if announced[i] != i+1 || streams[i].ID != i+1 {
			t.Errorf("announcement %d is stream #%d, Streams()[%d] is #%d, want #%d", i, announced[i], i, streams[i].ID, i+1)
		}
	}
}

// Two informers of one resource in one program that ask in two encodings
// at once (a typed one over protobuf, a dynamic one in JSON) are two
// streams; one client that asks in another encoding for its next request
// (one request at a time) stays on its stream.
func TestAnotherEncodingIsAnotherStreamOnlyWhenBothAreInUse(t *testing.T) {
	list := call{verb: reflector.VerbList, gvr: configMapsGVR}
	req := func(accept string) *http.Request {
		r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
		r.Header.Set("Accept", accept)
		return r
	}
	p := newAssignProxy()
	a, _, _ := p.assign(list, req("application/vnd.kubernetes.protobuf, */*"))
	b, _, _ := p.assign(list, req("application/json, */*"))
	if a == b {
		t.Fatal("a JSON request while the protobuf one is in flight was taken into its stream")
	}
	p.release(a)
	p.release(b)
	if c, _, _ := p.assign(list, req("application/json")); c != b {
		t.Error("the JSON reflector's next request left its stream for the protobuf one's")
	}

	p = newAssignProxy()
	a, _, _ = p.assign(list, req("application/json"))
	p.release(a)
	if b, _, _ := p.assign(list, req("application/vnd.kubernetes.protobuf")); b != a {
		t.Error("one client's next request, in protobuf, opened a stream of its own")
	}
}
