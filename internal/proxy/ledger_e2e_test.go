package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// listFault sits between the proxy and the apiserver and answers the next
// list of its namespace's ConfigMaps (a LIST without a continue token, or a
// streaming list's watch) with the status it was armed with, once: a list
// that fails before its first page.
type listFault struct {
	ns string

	mu    sync.Mutex
	code  int // 0: not armed
	fired []int
}

// arm makes the next list be answered code.
func (f *listFault) arm(code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.code = code
}

// firedCodes are the statuses answered so far, in order.
func (f *listFault) firedCodes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.fired...)
}

func (f *listFault) take(req *http.Request) int {
	q := req.URL.Query()
	list := q.Get("watch") != "true" && q.Get("continue") == ""
	streamingList := q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true"
	if req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/namespaces/"+f.ns+"/configmaps") || !(list || streamingList) {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	code := f.code
	if code != 0 {
		f.code = 0
		f.fired = append(f.fired, code)
	}
	return code
}

// wrap is a rest.Config's WrapTransport.
func (f *listFault) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		code := f.take(req)
		if code == 0 {
			return rt.RoundTrip(req)
		}
		reason := map[int]string{http.StatusTooManyRequests: "TooManyRequests", http.StatusServiceUnavailable: "ServiceUnavailable"}[code]
		body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"injected by the test before the list's first page","reason":%q,"code":%d}`, reason, code)
		return &http.Response{
			Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), StatusCode: code,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header:        http.Header{"Content-Type": []string{"application/json"}},
			Body:          io.NopCloser(strings.NewReader(body)),
			ContentLength: int64(len(body)),
			Request:       req,
		}, nil
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// compared are the counters the proxy's stream and the reflector must agree on.
func compared(c reflector.Counters) reflector.Counters {
	return reflector.Counters{Lists: c.Lists, Relists: c.Relists, Gone: c.Gone, Watches: c.Watches,
		Added: c.Added, Modified: c.Modified, Deleted: c.Deleted, Bookmarks: c.Bookmarks}
}

func storeEntries(st *store.Store) []entry {
	var out []entry
	for _, o := range st.List() {
		out = append(out, entry{o.Namespace, o.Name, o.UID, o.ResourceVersion})
	}
	sortEntries(out)
	return out
}

// TestE2EOurReflectorThroughTheProxyIsTheProxysStream runs the project's own
// reflector (the live source) through the proxy while ConfigMaps churn, its
// first list is answered 503 before any page, and the apiserver restarts
// with etcd compacted (a 410, then a relist answered 429 first). The
// stream the proxy rebuilt for it ends with the reflector's own store and
// counters: one ledger, one meaning, in both wires and with both list
// strategies.
func TestE2EOurReflectorThroughTheProxyIsTheProxysStream(t *testing.T) {
	c := shared.Get(t)
	admin := c.Config()
	cs := kubernetes.NewForConfigOrDie(admin)
	dyn := dynamic.NewForConfigOrDie(admin)
	for _, tc := range []struct {
		name     string
		wire     reflector.Wire
		strategy reflector.Strategy
	}{
		{"json/streaming list", reflector.WireJSON, reflector.StrategyStream},
		{"json/paged LIST", reflector.WireJSON, reflector.StrategyList},
		{"protobuf/streaming list", reflector.WireProtobuf, reflector.StrategyStream},
		{"protobuf/paged LIST", reflector.WireProtobuf, reflector.StrategyList},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := time.Now()
			ns := newNamespace(t, cs)
			fault := &listFault{ns: ns}
			upstream := rest.CopyConfig(admin)
			upstream.WrapTransport = fault.wrap
			p, addr := startProxy(t, upstream)

			churn, err := testcluster.StartChurn(admin, testcluster.ChurnOptions{Namespace: ns, Prefix: "cm", Names: 40, Rate: 40})
			if err != nil {
				t.Fatal(err)
			}
			stopped := false
			stopChurn := func() {
				if !stopped {
					stopped = true
					churn.Stop()
				}
			}
			defer stopChurn()
			waitFor(t, 30*time.Second, "the churn's first writes", func() string {
				if n := churn.Stats().Writes(); n < 20 {
					return fmt.Sprintf("%d writes", n)
				}
				return ""
			})

			ua := "watchcache-reflector/" + strings.ReplaceAll(tc.name, " ", "-")
			target := reflector.Target{Resource: reflector.Resource{GVR: configMapsGVR, Kind: "ConfigMap", Namespaced: true}, Namespace: ns}
			src, err := live.NewSource(through(addr, ua), target, live.Options{Wire: tc.wire})
			if err != nil {
				t.Fatal(err)
			}
			st, w := store.New()
			r, err := reflector.New(reflector.Config{Source: src, Strategy: tc.strategy, PageSize: 10}, w, st)
			if err != nil {
				t.Fatal(err)
			}
			fault.arm(http.StatusServiceUnavailable)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- r.Run(ctx) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("the reflector failed: %v", err)
				}
			}()

			waitFor(t, time.Minute, "the reflector's first list, after its 503, and watch events", func() string {
				s := r.Stats()
				if s.Synced.IsZero() || len(fault.firedCodes()) != 1 {
					return fmt.Sprintf("%s, faults %v", s.State, fault.firedCodes())
				}
				if n := s.Counters.Added + s.Counters.Modified + s.Counters.Deleted; n < 10 {
					return fmt.Sprintf("%d watch events", n)
				}
				return ""
			})
			if err := c.RestartCompacted(context.Background(), func() { fault.arm(http.StatusTooManyRequests) }); err != nil {
				t.Fatal(err)
			}
			waitFor(t, time.Minute, "the reflector's 410 and relist, after its 429", func() string {
				s := r.Stats()
				if s.Counters.Gone < 1 || s.Counters.Relists < 1 || s.State != reflector.StateWatching || len(fault.firedCodes()) != 2 {
					return fmt.Sprintf("%s, %d 410s, %d relists, faults %v", s.State, s.Counters.Gone, s.Counters.Relists, fault.firedCodes())
				}
				return ""
			})
			stopChurn()

			want := listAll(t, dyn, configMapsGVR, ns)
			waitFor(t, time.Minute, "the reflector's store and the proxy's stream equal to the server's", func() string {
				if got := storeEntries(st); !equalEntries(got, want) {
					return fmt.Sprintf("the reflector has %d objects, the server %d", len(got), len(want))
				}
				ss := streamsOf(p, ua, configMapsGVR)
				if len(ss) != 1 {
					var b strings.Builder
					for _, s := range ss {
						fmt.Fprintf(&b, "stream %d:\n%s", s.ID, describe(s.Stats()))
					}
					return fmt.Sprintf("%d streams of the reflector, which made:\n%s\n%s", len(ss), describe(r.Stats()), b.String())
				}
				if rebuilt, ours := streamEntries(ss[0]), storeEntries(st); !equalEntries(rebuilt, ours) {
					return fmt.Sprintf("the proxy rebuilt %d objects, the reflector has %d (%s)", len(rebuilt), len(ours), firstDifference(rebuilt, ours))
				}
				if got, want := compared(ss[0].Counters()), compared(r.Counters()); got != want {
					return fmt.Sprintf("the proxy counted %+v\nthe reflector   %+v\nthe proxy's requests:\n%sthe reflector's:\n%s", got, want, describe(ss[0].Stats()), describe(r.Stats()))
				}
				return ""
			})
			s := streamsOf(p, ua, configMapsGVR)[0]
			if s.Wire() != tc.wire {
				t.Errorf("the proxy saw %q answers, want %q", s.Wire(), tc.wire)
			}
			if got := fault.firedCodes(); len(got) != 2 {
				t.Errorf("the faults answered %v, want a 503 and a 429", got)
			}
			t.Logf("%s: %+v, %d objects, in %s", tc.name, compared(r.Counters()), st.Len(), time.Since(started).Round(time.Millisecond))
		})
	}
}
