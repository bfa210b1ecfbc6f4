// Command multi measures watching several resources at once, against a real
// kube-apiserver, in one run:
//
//	go run ./hack/bench/multi -resources 10 -objects 5000 -reps 3
//
// It creates RESOURCES custom resource definitions with OBJECTS small objects
// each, then measures in process (heap after GC): the cost of one resource
// with no objects, and of 1 and RESOURCES resources with their objects, to
// tell what each extra resource costs beyond its objects; and how long the
// first lists of all the resources take with 1, 4 (the default) and all of
// them at once, and how many ran at once. It writes the results to
// docs/benchmarks.md between its markers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

func main() {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	resources := flag.Int("resources", 10, "resources watched at once")
	objects := flag.Int("objects", 5000, "objects of each resource")
	reps := flag.Int("reps", 3, "repetitions of every measurement (medians are reported)")
	out := flag.String("out", "docs/benchmarks.md", "markdown file to write (between the multi-resource markers; the rest is kept)")
	flag.Parse()
	if *resources < 2 || *objects < 1 || *reps < 1 {
		fmt.Fprintln(os.Stderr, "error: -resources must be at least 2, -objects and -reps at least 1")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *resources, *objects, *reps, *out); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func gvr(i int) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "bench.example.com", Version: "v1", Resource: fmt.Sprintf("items%d", i)}
}

func run(ctx context.Context, resources, objects, reps int, out string) error {
	c, err := testcluster.Start(ctx, testcluster.Options{Log: os.Stderr})
	if err != nil {
		return err
	}
	defer c.Stop()
	dyn, err := dynamic.NewForConfig(c.Config())
	if err != nil {
		return err
	}
	// resources full CRDs and one empty.
	for i := 0; i <= resources; i++ {
		if err := installCRD(ctx, dyn, i); err != nil {
			return err
		}
	}
	start := time.Now()
	for i := 0; i < resources; i++ {
		if err := createObjects(ctx, dyn, i, objects); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "multi: %d resources of %d objects created in %s\n", resources, objects, time.Since(start).Round(time.Second))

	empty, one, all := make([]float64, reps), make([]float64, reps), make([]float64, reps)
	for r := range reps {
		if empty[r], err = heapOf(ctx, c, []int{resources}, 4); err != nil {
			return err
		}
		if one[r], err = heapOf(ctx, c, []int{0}, 4); err != nil {
			return err
		}
		idx := make([]int, resources)
		for i := range idx {
			idx[i] = i
		}
		if all[r], err = heapOf(ctx, c, idx, 4); err != nil {
			return err
		}
	}
	e, o1, oN := median(empty), median(one), median(all)
	objectsCost := o1 - e
	perExtra := (oN-o1)/float64(resources-1) - objectsCost

	type gateRow struct {
		gate      int
		sync      float64
		inFlight  int
		objectsOK bool
	}
	var rows []gateRow
	for _, gate := range []int{1, 4, resources} {
		var times []float64
		most := 0
		ok := true
		for range reps {
			d, m, n, err := syncAll(ctx, c, resources, gate)
			if err != nil {
				return err
			}
			times, most, ok = append(times, d.Seconds()), max(most, m), ok && n == resources*objects
		}
		rows = append(rows, gateRow{gate, median(times), most, ok})
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `go run ./hack/bench/multi -resources %d -objects %d -reps %d` on %s, against kube-apiserver %s on loopback (medians of %d; the machine caveat applies: two shared cores, absolute figures drift, the ratios are from this one run).\n\n",
		resources, objects, reps, time.Now().UTC().Format("2006-01-02"), testcluster.Version, reps)
	b.WriteString("**Memory** (live heap after GC, in process, the session's whole cost):\n\n| run | heap |\n|---|---:|\n")
	fmt.Fprintf(&b, "| one resource with no objects | %.2f MiB |\n| one resource with %d objects | %.2f MiB |\n| %d resources with %d objects each | %.2f MiB |\n\n", e/mib, objects, o1/mib, resources, objects, oN/mib)
	verdict := "met"
	if perExtra >= mib {
		verdict = "**missed**"
	}
	fmt.Fprintf(&b, "%d objects cost %.2f MiB; each resource beyond the first costs %.2f MiB beyond its objects (target under 1 MiB: %s).\n\n", objects, objectsCost/mib, perExtra/mib, verdict)
	b.WriteString("**Start-up** (all first lists complete, a new session each time):\n\n| first lists at once (`--max-concurrent-lists`) | time | vs the default | most seen at once |\n|---|---:|---:|---:|\n")
	def := rows[1].sync
	for _, r := range rows {
		note := ""
		if !r.objectsOK {
			note = " (objects missing!)"
		}
		fmt.Fprintf(&b, "| %d | %.2f s%s | %.2f× | %d |\n", r.gate, r.sync, note, r.sync/def, r.inFlight)
	}
	fmt.Print(b.String())
	return writeSection(out, b.String())
}

const mib = 1 << 20

// heapOf is the live heap a session of the given resources holds once every
// first list is in, beyond what the process held before it.
func heapOf(ctx context.Context, c *testcluster.Cluster, idx []int, gate int) (float64, error) {
	before := liveHeap()
	sess, stop, err := startSession(ctx, c, idx, gate, nil)
	if err != nil {
		return 0, err
	}
	defer stop()
	if err := sess.WaitUntilReady(ctx); err != nil {
		return 0, err
	}
	after := liveHeap()
	runtime.KeepAlive(sess)
	return float64(after) - float64(before), nil
}

// syncAll times the first lists of every resource with gate at once, and
// counts the most first lists in flight together and the objects listed.
func syncAll(ctx context.Context, c *testcluster.Cluster, resources, gate int) (time.Duration, int, int, error) {
	idx := make([]int, resources)
	for i := range idx {
		idx[i] = i
	}
	var mu sync.Mutex
	inFlight, most := 0, 0
	count := func(n reflector.Note) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case n.Kind == reflector.NoteRequestStarted && n.Request.ID == 1:
			inFlight++
			most = max(most, inFlight)
		case n.Kind == reflector.NoteDecision && n.Decision.Reason == reflector.ReasonListComplete:
			inFlight--
		}
	}
	start := time.Now()
	sess, stop, err := startSession(ctx, c, idx, gate, count)
	if err != nil {
		return 0, 0, 0, err
	}
	defer stop()
	if err := sess.WaitUntilReady(ctx); err != nil {
		return 0, 0, 0, err
	}
	d := time.Since(start)
	n := 0
	for _, r := range sess.Resources {
		n += r.Store().Len()
	}
	mu.Lock()
	defer mu.Unlock()
	return d, most, n, nil
}

func startSession(ctx context.Context, c *testcluster.Cluster, idx []int, gate int, onNote func(reflector.Note)) (*session.Session, func(), error) {
	cfg := session.LiveConfig{Rest: c.Config(), MaxConcurrentLists: gate}
	for _, i := range idx {
		g := gvr(i)
		cfg.Resources = append(cfg.Resources, session.ResourceConfig{
			Target:    reflector.Target{Resource: reflector.Resource{GVR: g, Kind: fmt.Sprintf("Item%d", i), Namespaced: true}},
			Reflector: reflector.Config{Strategy: reflector.StrategyAuto, PageSize: 500},
		})
	}
	sess, err := session.NewLive(cfg)
	if err != nil {
		return nil, nil, err
	}
	if onNote != nil {
		for _, r := range sess.Resources {
			r.OnNote(onNote)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sess.Run(ctx) }()
	return sess, func() { cancel(); <-done }, nil
}

func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func installCRD(ctx context.Context, dyn dynamic.Interface, i int) error {
	g := gvr(i)
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	kind := fmt.Sprintf("Item%d", i)
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": g.Resource + "." + g.Group},
		"spec": map[string]any{
			"group": g.Group, "scope": "Namespaced",
			"names": map[string]any{"plural": g.Resource, "singular": strings.ToLower(kind), "kind": kind, "listKind": kind + "List"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating CRD %s: %w", g.Resource, err)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if _, err := dyn.Resource(g).Namespace("default").List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("CRD %s not served within a minute", g.Resource)
}

func createObjects(ctx context.Context, dyn dynamic.Interface, index, n int) error {
	g := gvr(index)
	kind := fmt.Sprintf("Item%d", index)
	client := dyn.Resource(g).Namespace("default")
	work := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				o := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": g.Group + "/" + g.Version, "kind": kind,
					"metadata": map[string]any{"name": fmt.Sprintf("o-%05d", i), "labels": map[string]any{"app": "bench"}},
					"spec":     map[string]any{"n": int64(i), "text": strings.Repeat("x", 200)},
				}}
				if _, err := client.Create(ctx, o, metav1.CreateOptions{}); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return fmt.Errorf("creating %s: %w", g.Resource, err)
	default:
		return nil
	}
}

const (
	beginMarker = "<!-- multi-resource bench: begin -->"
	endMarker   = "<!-- multi-resource bench: end -->"
)

// writeSection replaces the text between the markers in path (appending a
// section with them when they are missing).
func writeSection(path, body string) error {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	s := string(b)
	section := beginMarker + "\n" + body + endMarker
	i, j := strings.Index(s, beginMarker), strings.Index(s, endMarker)
	if i >= 0 && j > i {
		s = s[:i] + section + s[j+len(endMarker):]
	} else {
		s += "\n## Several resources at once\n\n" + section + "\n"
	}
	return os.WriteFile(path, []byte(s), 0o644)
}
