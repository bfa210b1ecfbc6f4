package proxy

import (
	"net/http/httptest"
	"testing"
	"time"

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
