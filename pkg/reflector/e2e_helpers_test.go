package reflector_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// The package's clusters start on the first end-to-end test that asks for
// one, so the unit tests run without them.
var (
	defaultCluster = testcluster.NewLazy(testcluster.Options{Users: []string{"no-list"}}) // watch cache on, as in production
	noWatchCache   = testcluster.NewLazy(testcluster.Options{DisableWatchCache: true})
	noWatchList    = testcluster.NewLazy(testcluster.Options{FeatureGates: map[string]bool{"WatchList": false}})
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, defaultCluster, noWatchCache, noWatchList)) }

// cluster is the default cluster, started on first use.
func cluster(t testing.TB) *testcluster.Cluster { return defaultCluster.Get(t) }

var configMaps = reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}

func clientset(t *testing.T, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func newNamespace(t *testing.T, cs *kubernetes.Clientset) string {
	t.Helper()
	ns := fmt.Sprintf("r-%d", time.Now().UnixNano())
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return ns
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "watchcache-test"}},
		Data:       map[string]string{"payload": name},
	}
}

// createConfigMaps creates n configmaps named prefix-0..n-1 with 8 writers.
func createConfigMaps(t *testing.T, cs *kubernetes.Clientset, ns, prefix string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if _, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), configMap(fmt.Sprintf("%s-%d", prefix, i)), metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating configmaps: %v", err)
	}
}

// run is a reflector running against a cluster in a test.
type run struct {
	r      *reflector.Reflector
	store  *store.Store
	notes  *noteLog
	cancel context.CancelFunc
	done   chan error
}

// noteLog collects decision notes for assertions.
type noteLog struct {
	mu    sync.Mutex
	notes []reflector.Note
	seen  chan struct{}
}

func (l *noteLog) add(n reflector.Note) {
	l.mu.Lock()
	l.notes = append(l.notes, n)
	l.mu.Unlock()
	select {
	case l.seen <- struct{}{}:
	default:
	}
}

func (l *noteLog) reasons() []reflector.Reason {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []reflector.Reason
	for _, n := range l.notes {
		if n.Kind == reflector.NoteDecision {
			out = append(out, n.Reason())
		}
	}
	return out
}

func (l *noteLog) count(reason reflector.Reason) int {
	n := 0
	for _, r := range l.reasons() {
		if r == reason {
			n++
		}
	}
	return n
}

func (l *noteLog) find(reason reflector.Reason) (reflector.Note, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.notes {
		if n.Kind == reflector.NoteDecision && n.Reason() == reason {
			return n, true
		}
	}
	return reflector.Note{}, false
}

// wires are the encodings every end-to-end test of the reflector runs in.
func wires() []reflector.Wire { return []reflector.Wire{reflector.WireProtobuf, reflector.WireJSON} }

// eachWire runs f as one subtest per wire.
func eachWire(t *testing.T, f func(t *testing.T, wire reflector.Wire)) {
	for _, wire := range wires() {
		t.Run(string(wire), func(t *testing.T) { f(t, wire) })
	}
}

// liveSource is a live source asking for w; at the end of the test it
// checks that the server answered in w, and only in w.
func liveSource(t *testing.T, w reflector.Wire, restCfg *rest.Config, target reflector.Target) *live.Source {
	t.Helper()
	src, _ := countedSource(t, w, restCfg, target)
	return src
}

// answers counts the server's answers (LIST pages, watch streams and error
// responses) by the encoding it spoke, whatever was asked.
type answers struct{ protobuf, json atomic.Int64 }

// in is how many answers the server sent in w so far.
func (a *answers) in(w reflector.Wire) int64 {
	if w == reflector.WireProtobuf {
		return a.protobuf.Load()
	}
	return a.json.Load()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// countedSource is liveSource, with the answers its transport saw.
func countedSource(t *testing.T, w reflector.Wire, restCfg *rest.Config, target reflector.Target) (*live.Source, *answers) {
	t.Helper()
	a := &answers{}
	cfg := rest.CopyConfig(restCfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && wire.IsProtobuf(resp.Header.Get("Content-Type")) {
				a.protobuf.Add(1)
			} else if err == nil {
				a.json.Add(1)
			}
			return resp, err
		})
	})
	src, err := live.NewSource(cfg, target, live.Options{Wire: w})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		other := reflector.WireJSON
		if w == reflector.WireJSON {
			other = reflector.WireProtobuf
		}
		if n := a.in(other); n > 0 {
			t.Errorf("asked for %s, the server answered %d times in %s", w, n, other)
		}
	})
	return src, a
}

// startReflector runs a reflector for target with cfg (Source filled in from
// restCfg, asking for wire).
func startReflector(t *testing.T, wire reflector.Wire, restCfg *rest.Config, target reflector.Target, cfg reflector.Config) *run {
	t.Helper()
	if cfg.Source == nil {
		src, answered := countedSource(t, wire, restCfg, target)
		t.Cleanup(func() {
			if answered.in(wire) == 0 {
				t.Errorf("asked for %s, the server never answered in it", wire)
			}
		})
		cfg.Source = src
	}
	if cfg.AuditSource == nil {
		// Audits go straight to the server, not through a fault proxy.
		cfg.AuditSource = liveSource(t, wire, cluster(t).Config(), target)
	}
	if cfg.Backoff.Initial == 0 {
		cfg.Backoff = reflector.Backoff{Initial: 50 * time.Millisecond, Max: time.Second}
	}
	notes := &noteLog{seen: make(chan struct{}, 1)}
	cfg.OnNote = notes.add
	st, w := store.New()
	r, err := reflector.New(cfg, w, st)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rn := &run{r: r, store: st, notes: notes, cancel: cancel, done: make(chan error, 1)}
	go func() { rn.done <- r.Run(ctx) }()
	t.Cleanup(rn.stop)
	return rn
}

func (rn *run) stop() {
	rn.cancel()
	<-rn.done
	rn.done <- nil // keep stop idempotent
}

// waitReady waits for the first complete list.
func (rn *run) waitReady(t *testing.T) {
	t.Helper()
	// Generous: 2,000 pages of one object, under -race beside the other
	// packages' clusters, took over a minute on two cores.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := rn.store.WaitUntilReady(ctx); err != nil {
		t.Fatalf("store never became ready: %v (notes %v)", err, rn.notes.reasons())
	}
}

// eventually polls cond every 20ms for up to d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// auditClean asserts the cache equals a fresh consistent LIST.
func (rn *run) auditClean(t *testing.T) {
	t.Helper()
	rep, err := rn.r.Audit(context.Background(), 10*time.Second)
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	if rep.Drift() {
		t.Fatalf("%s; missing %v extra %v different %v", rep, rep.Missing, rep.Extra, rep.Different)
	}
}
