// Package scenarios records traces of a real kube-apiserver doing the things
// users ask about — steady watching, 410 Gone and relist, bookmarks, delete and
// recreate under one name, streaming list — for the bundled traces in
// testdata/traces (hack/record-traces) and for record-then-replay tests.
package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// Scenario is one recorded situation.
type Scenario struct {
	Name string
	// NeedsNoWatchCache scenarios run on a cluster started with --watch-cache=false.
	NeedsNoWatchCache bool
	run               func(ctx context.Context, e *env) error
}

// All are the bundled scenarios, each with what its trace shows; the traces
// are testdata/traces/NAME.jsonl (docs/trace-format.md, "Bundled traces").
func All() []Scenario {
	return []Scenario{
		// Paginated initial sync of 120 ConfigMaps, steady writes, bookmarks, then
		// the apiserver restarts while the watch is cut: 410 Gone, one relist whose
		// diff names missed deletes, a missed recreate and missed updates.
		{Name: "demo", run: demo},
		// Initial sync (pages of 25) and a steady watch with creates, updates and
		// deletes; no relist.
		{Name: "steady", run: steady},
		// Watch cache off; the watch is cut, objects are deleted and etcd is
		// compacted: 410 Gone and a relist whose diff names the missed deletes.
		{Name: "gone-relist", NeedsNoWatchCache: true, run: goneRelist},
		// Short watch timeouts and writes elsewhere: BOOKMARK events move the
		// cursor and never touch the store.
		{Name: "bookmarks", run: bookmarks},
		// Delete and recreate under the same name, once while watching (two events)
		// and once while the watch is cut (a relist diff with a new UID).
		{Name: "recreate", NeedsNoWatchCache: true, run: recreate},
		// A streaming list (sendInitialEvents=true) ending with the
		// initial-events-end bookmark, then watching.
		{Name: "streaming", run: streaming},
		// Three resources at once (ConfigMaps, Deployments and a custom resource),
		// each written to, then the apiserver restarts with etcd compacted while
		// the watches are cut: each resource has its own 410 and relist.
		{Name: "several", run: several},
		// A streaming list, a relist the user forces (the r key), then the
		// apiserver restarts with etcd compacted while the watch is cut: 410 Gone,
		// and a relist whose diff names what was missed.
		{Name: "forced-relist-restart", run: forcedRelistRestart},
	}
}

// Find returns the scenario called name.
func Find(name string) (Scenario, error) {
	var names []string
	for _, s := range All() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	sort.Strings(names)
	return Scenario{}, fmt.Errorf("no scenario %q (have %v)", name, names)
}

// Record runs the scenario on c and records it to path; onNote, when set,
// gets the live run's notes with the index of their resource. It returns the
// live run's summaries, one per resource, for comparison with a replay.
func (s Scenario) Record(ctx context.Context, c *testcluster.Cluster, path string, onNote func(resource int, n reflector.Note)) ([]summary.Summary, error) {
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		return nil, fmt.Errorf("clientset: %w", err)
	}
	proxy, err := c.NewProxy()
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	e := &env{c: c, cs: cs, proxy: proxy, path: path, onNote: onNote, ns: fmt.Sprintf("%s-%d", s.Name, time.Now().UnixNano()%1e6)}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating namespace: %w", err)
	}
	if err := s.run(ctx, e); err != nil {
		if e.sess != nil {
			e.stop()
		}
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if e.sess == nil {
		return nil, fmt.Errorf("scenario %s started no session", s.Name)
	}
	if err := e.stop(); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	return e.summaries, nil
}

// env is one scenario run.
type env struct {
	c         *testcluster.Cluster
	cs        *kubernetes.Clientset
	proxy     *testcluster.Proxy
	path      string
	onNote    func(int, reflector.Note)
	ns        string
	sess      *session.Session
	cancel    context.CancelFunc
	done      chan error
	summaries []summary.Summary
}

var configMaps = reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}

// start records a reflector of ConfigMaps in the scenario's namespace, through the fault proxy.
func (e *env) start(cfg reflector.Config) error {
	return e.startMany(session.ResourceConfig{Target: reflector.Target{Resource: configMaps, Namespace: e.ns}, Reflector: cfg})
}

// startMany records reflectors of the resources, through the fault proxy.
func (e *env) startMany(resources ...session.ResourceConfig) error {
	for i := range resources {
		if resources[i].Reflector.Backoff.Initial == 0 {
			// Short waits keep recordings short; the decisions are the same.
			resources[i].Reflector.Backoff = reflector.Backoff{Initial: 200 * time.Millisecond, Max: 2 * time.Second}
		}
		if resources[i].TraceObjects == "" {
			resources[i].TraceObjects = trace.ObjectsMetadata
		}
	}
	sess, err := session.NewLive(session.LiveConfig{Rest: e.proxy.Config(e.c.Config()), TracePath: e.path, Resources: resources})
	if err != nil {
		return err
	}
	if e.onNote != nil {
		for i, r := range sess.Resources {
			r.OnNote(func(n reflector.Note) { e.onNote(i, n) })
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.sess, e.cancel, e.done = sess, cancel, make(chan error, 1)
	go func() { e.done <- sess.Run(ctx) }()
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := sess.WaitUntilReady(wctx); err != nil {
		return fmt.Errorf("waiting for the initial lists: %w", err)
	}
	return nil
}

func (e *env) stop() error {
	e.cancel()
	err := <-e.done
	e.summaries = e.sess.Summaries()
	return err
}

func (e *env) stats() reflector.Stats { return e.sess.Resources[0].Reflector.Stats() }

// waitFor polls cond for up to d.
func (e *env) waitFor(d time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

func cm(name string, i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "demo", "tier": fmt.Sprint(i % 3)},
			Annotations: map[string]string{"example.com/owner": "team-" + fmt.Sprint(i%5)}},
		Data: map[string]string{"config.yaml": fmt.Sprintf("replicas: %d\nmode: steady\n", i)},
	}
}

// create makes n configmaps prefix-0..n-1 in ns with 4 writers.
func (e *env) create(ctx context.Context, ns, prefix string, n int) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	work := make(chan int)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if _, err := e.cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(fmt.Sprintf("%s-%d", prefix, i), i), metav1.CreateOptions{}); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}

func (e *env) update(ctx context.Context, name string, i int) error {
	c := cm(name, i)
	c.Data["config.yaml"] = fmt.Sprintf("replicas: %d\nmode: updated\n", i)
	_, err := e.cs.CoreV1().ConfigMaps(e.ns).Update(ctx, c, metav1.UpdateOptions{})
	return err
}

func (e *env) del(ctx context.Context, name string) error {
	return e.cs.CoreV1().ConfigMaps(e.ns).Delete(ctx, name, metav1.DeleteOptions{})
}

// noise writes configmaps in another namespace, moving the resourceVersion past this watch.
func (e *env) noise(ctx context.Context, n int) error {
	ns := e.ns + "-noise"
	if _, err := e.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		if _, err := e.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return e.create(ctx, ns, fmt.Sprintf("noise%d", time.Now().UnixNano()%1e9), n)
}

func steady(ctx context.Context, e *env) error {
	if err := e.create(ctx, e.ns, "app", 100); err != nil {
		return err
	}
	if err := e.start(reflector.Config{PageSize: 25}); err != nil {
		return err
	}
	for i := 0; i < 30; i++ {
		if err := e.update(ctx, fmt.Sprintf("app-%d", i), i+1000); err != nil {
			return err
		}
	}
	if err := e.create(ctx, e.ns, "late", 10); err != nil {
		return err
	}
	for i := 90; i < 100; i++ {
		if err := e.del(ctx, fmt.Sprintf("app-%d", i)); err != nil {
			return err
		}
	}
	return e.waitFor(30*time.Second, "50 events", func() bool {
		c := e.stats().Counters
		return c.Added == 10 && c.Modified == 30 && c.Deleted == 10
	})
}

// cutWhile takes the watch away, runs during(), then brings the proxy back.
func (e *env) cutWhile(during func() error) error {
	e.proxy.Refuse(time.Hour)
	e.proxy.CutAll()
	if err := e.waitFor(10*time.Second, "the watch to drop", func() bool {
		st := e.stats()
		return st.Current == nil || st.State == reflector.StateBackoff
	}); err != nil {
		return err
	}
	err := during()
	e.proxy.Refuse(0)
	return err
}

func goneRelist(ctx context.Context, e *env) error {
	if err := e.create(ctx, e.ns, "job", 40); err != nil {
		return err
	}
	if err := e.start(reflector.Config{PageSize: 10}); err != nil {
		return err
	}
	return e.goneWhileCut(ctx, func() error {
		for _, n := range []string{"job-3", "job-17", "job-29"} {
			if err := e.del(ctx, n); err != nil {
				return err
			}
		}
		return nil
	})
}

// goneWhileCut cuts the watch, runs during(), then writes elsewhere and compacts
// etcd so the cursor's history is gone (watch cache off), and waits for the relist.
func (e *env) goneWhileCut(ctx context.Context, during func() error) error {
	err := e.cutWhile(func() error {
		if err := during(); err != nil {
			return err
		}
		// Writes elsewhere move etcd's revision past the cursor, so compaction removes it.
		if err := e.noise(ctx, 2); err != nil {
			return err
		}
		_, err := e.c.Compact(ctx)
		return err
	})
	if err != nil {
		return err
	}
	return e.waitFor(60*time.Second, "a relist after 410", func() bool { return e.stats().LastRelistDiff != nil })
}

// waitForBookmarks writes elsewhere every ~200ms (bookmarks carry the moving
// resourceVersion) until n bookmarks have arrived.
func (e *env) waitForBookmarks(ctx context.Context, n int64) error {
	i := 0
	return e.waitFor(60*time.Second, fmt.Sprintf("%d bookmarks", n), func() bool {
		if i%10 == 0 {
			_ = e.noise(ctx, 1)
		}
		i++
		return e.stats().Counters.Bookmarks >= n
	})
}

func bookmarks(ctx context.Context, e *env) error {
	if err := e.create(ctx, e.ns, "quiet", 5); err != nil {
		return err
	}
	if err := e.start(reflector.Config{WatchTimeout: 2 * time.Second}); err != nil {
		return err
	}
	return e.waitForBookmarks(ctx, 3)
}

func recreate(ctx context.Context, e *env) error {
	if err := e.create(ctx, e.ns, "worker", 5); err != nil {
		return err
	}
	if err := e.start(reflector.Config{}); err != nil {
		return err
	}
	// While watching: DELETED(uid-1) then ADDED(uid-2), both seen.
	if err := e.del(ctx, "worker-1"); err != nil {
		return err
	}
	if _, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(ctx, cm("worker-1", 1), metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := e.waitFor(10*time.Second, "the in-watch recreate", func() bool { return e.stats().Counters.Added == 1 }); err != nil {
		return err
	}
	// While cut: only the relist can tell.
	return e.goneWhileCut(ctx, func() error {
		if err := e.del(ctx, "worker-2"); err != nil {
			return err
		}
		_, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(ctx, cm("worker-2", 2), metav1.CreateOptions{})
		return err
	})
}

func streaming(ctx context.Context, e *env) error {
	if err := e.create(ctx, e.ns, "cfg", 50); err != nil {
		return err
	}
	if err := e.start(reflector.Config{Strategy: reflector.StrategyStream}); err != nil {
		return err
	}
	for i := 0; i < 5; i++ {
		if err := e.update(ctx, fmt.Sprintf("cfg-%d", i), i+500); err != nil {
			return err
		}
	}
	return e.waitFor(10*time.Second, "5 updates", func() bool { return e.stats().Counters.Modified == 5 })
}

func demo(ctx context.Context, e *env) error {
	if err := e.create(ctx, e.ns, "web", 120); err != nil {
		return err
	}
	if err := e.start(reflector.Config{PageSize: 50, WatchTimeout: 3 * time.Second}); err != nil {
		return err
	}
	for i := 0; i < 20; i++ {
		if err := e.update(ctx, fmt.Sprintf("web-%d", i), i+100); err != nil {
			return err
		}
	}
	if err := e.create(ctx, e.ns, "api", 5); err != nil {
		return err
	}
	if err := e.waitForBookmarks(ctx, 2); err != nil {
		return err
	}
	// While the watch is cut the apiserver restarts: its new watch cache cannot
	// serve the old resourceVersion, so the watch gets 410 and the reflector relists.
	err := e.cutWhile(func() error {
		for _, n := range []string{"web-7", "web-42", "web-99"} {
			if err := e.del(ctx, n); err != nil {
				return err
			}
		}
		if err := e.del(ctx, "api-2"); err != nil {
			return err
		}
		if _, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(ctx, cm("api-2", 2), metav1.CreateOptions{}); err != nil {
			return err
		}
		for _, n := range []string{"web-3", "web-4"} {
			if err := e.update(ctx, n, 7); err != nil {
				return err
			}
		}
		if err := e.noise(ctx, 2); err != nil {
			return err
		}
		return e.c.RestartAPIServer(ctx)
	})
	if err != nil {
		return err
	}
	if err := e.waitFor(90*time.Second, "a relist after 410", func() bool { return e.stats().LastRelistDiff != nil }); err != nil {
		return err
	}
	for i := 20; i < 30; i++ {
		if err := e.update(ctx, fmt.Sprintf("web-%d", i), i+100); err != nil {
			return err
		}
	}
	return e.waitFor(10*time.Second, "updates after the relist", func() bool { return e.stats().Counters.Modified >= 30 })
}

func forcedRelistRestart(ctx context.Context, e *env) error {
	if err := e.create(ctx, e.ns, "svc", 30); err != nil {
		return err
	}
	if err := e.start(reflector.Config{Strategy: reflector.StrategyAuto}); err != nil {
		return err
	}
	for i := 0; i < 5; i++ {
		if err := e.update(ctx, fmt.Sprintf("svc-%d", i), i+10); err != nil {
			return err
		}
	}
	if err := e.waitFor(10*time.Second, "5 updates", func() bool { return e.stats().Counters.Modified == 5 }); err != nil {
		return err
	}
	e.sess.Resources[0].Reflector.ForceRelist()
	if err := e.waitFor(30*time.Second, "the forced relist", func() bool { return e.stats().Counters.Relists == 1 && e.stats().State == reflector.StateWatching }); err != nil {
		return err
	}
	// Cut off, the watch misses deletes and updates while etcd is compacted
	// and kube-apiserver restarts with an empty watch cache.
	err := e.cutWhile(func() error {
		for _, n := range []string{"svc-11", "svc-23"} {
			if err := e.del(ctx, n); err != nil {
				return err
			}
		}
		for _, n := range []string{"svc-5", "svc-6"} {
			if err := e.update(ctx, n, 77); err != nil {
				return err
			}
		}
		return e.c.RestartCompacted(ctx, nil)
	})
	if err != nil {
		return err
	}
	return e.waitFor(90*time.Second, "a relist after 410", func() bool { return e.stats().Counters.Relists == 2 })
}

var (
	deployments = reflector.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true}
	widgets     = reflector.Resource{GVR: testcluster.WidgetsGVR(), Kind: "Widget", Namespaced: true}
)

func several(ctx context.Context, e *env) error {
	if err := testcluster.InstallWidgets(ctx, e.c.Config()); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(e.c.Config())
	if err != nil {
		return err
	}
	kinds := []struct {
		res  reflector.Resource
		make func(string, int64) *unstructured.Unstructured
	}{
		{configMaps, testcluster.ConfigMap},
		{deployments, testcluster.Deployment},
		{widgets, testcluster.Widget},
	}
	write := func(prefix string, from, to int64) error {
		for _, k := range kinds {
			client := dyn.Resource(k.res.GVR).Namespace(e.ns)
			for i := from; i < to; i++ {
				o := k.make(fmt.Sprintf("%s-%d", prefix, i), i)
				if _, err := client.Create(ctx, o, metav1.CreateOptions{}); err != nil {
					return fmt.Errorf("creating %s: %w", k.res, err)
				}
			}
		}
		return nil
	}
	if err := write("a", 0, 10); err != nil {
		return err
	}
	var resources []session.ResourceConfig
	for _, k := range kinds {
		resources = append(resources, session.ResourceConfig{Target: reflector.Target{Resource: k.res, Namespace: e.ns}, Reflector: reflector.Config{PageSize: 5}})
	}
	if err := e.startMany(resources...); err != nil {
		return err
	}
	if err := write("b", 0, 3); err != nil {
		return err
	}
	if err := e.waitFor(30*time.Second, "3 adds of each resource", func() bool {
		for _, r := range e.sess.Resources {
			if r.Reflector.Stats().Counters.Added < 3 {
				return false
			}
		}
		return true
	}); err != nil {
		return err
	}
	// Cut off, the watches miss a delete of each kind while etcd is
	// compacted and kube-apiserver restarts with an empty watch cache.
	err = e.cutWhile(func() error {
		for _, k := range kinds {
			if err := dyn.Resource(k.res.GVR).Namespace(e.ns).Delete(ctx, "a-3", metav1.DeleteOptions{}); err != nil {
				return err
			}
		}
		return e.c.RestartCompacted(ctx, nil)
	})
	if err != nil {
		return err
	}
	return e.waitFor(90*time.Second, "a relist of each resource", func() bool {
		for _, r := range e.sess.Resources {
			if r.Reflector.Stats().Counters.Relists < 1 {
				return false
			}
		}
		return true
	})
}
