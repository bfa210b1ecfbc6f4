package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire/request"
)

var shared = testcluster.NewLazy(testcluster.Options{})

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, shared)) }

var (
	podsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	widgetsGVR    = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
)

// startProxy serves a Proxy for cfg on a free loopback port and returns it
// with the address clients use.
func startProxy(t *testing.T, cfg *rest.Config) (*Proxy, string) {
	t.Helper()
	return startProxyWith(t, Options{Config: cfg})
}

// startProxyWith is startProxy with opts.
func startProxyWith(t *testing.T, opts Options) (*Proxy, string) {
	t.Helper()
	p, srv, addr := serveProxy(t, opts)
	t.Cleanup(func() {
		_ = srv.Close()
		p.Close()
	})
	return p, addr
}

// serveProxy serves a Proxy for opts on a free loopback port and returns
// it, its server and the address clients use; the caller closes them.
func serveProxy(t *testing.T, opts Options) (*Proxy, *http.Server, string) {
	t.Helper()
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := p.NewServer()
	go func() { _ = srv.Serve(ln) }()
	return p, srv, ln.Addr().String()
}

// through is a client config that talks to the proxy at addr, as the
// kubeconfig the proxy prints does: no credentials of its own.
func through(addr, userAgent string) *rest.Config {
	return &rest.Config{Host: "http://" + addr, UserAgent: userAgent}
}

func newNamespace(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	ns := fmt.Sprintf("proxy-%d", time.Now().UnixNano()%1_000_000_000)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No controller manager runs: the namespace's default service account is made here, for pods.
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

func pod(name string, n int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "annotations": map[string]any{"n": fmt.Sprint(n)}},
		"spec": map[string]any{"automountServiceAccountToken": false,
			"containers": []any{map[string]any{"name": "c", "image": "example.invalid/c:1"}}},
	}}
}

// entry is one cached object as both caches are compared.
type entry struct{ ns, name, uid, rv string }

func informerEntries(s cache.Store) []entry {
	var out []entry
	for _, o := range s.List() {
		m, err := objectMeta(o)
		if err != nil {
			continue
		}
		out = append(out, entry{m.GetNamespace(), m.GetName(), string(m.GetUID()), m.GetResourceVersion()})
	}
	sortEntries(out)
	return out
}

func objectMeta(o any) (metav1.Object, error) {
	if m, ok := o.(metav1.Object); ok {
		return m, nil
	}
	return nil, fmt.Errorf("%T has no metadata", o)
}

func streamEntries(s *observed.Stream) []entry {
	var out []entry
	for _, o := range s.Store().List() {
		out = append(out, entry{o.Namespace, o.Name, o.UID, o.ResourceVersion})
	}
	sortEntries(out)
	return out
}

func sortEntries(es []entry) {
	sort.Slice(es, func(i, j int) bool {
		if es[i].ns != es[j].ns {
			return es[i].ns < es[j].ns
		}
		return es[i].name < es[j].name
	})
}

// streamsOf are the proxy's streams of one client and resource.
func streamsOf(p *Proxy, userAgent string, gvr schema.GroupVersionResource) []*observed.Stream {
	var out []*observed.Stream
	for _, s := range p.Streams() {
		if s.Client.UserAgent == userAgent && s.Target().Resource.GVR == gvr {
			out = append(out, s)
		}
	}
	return out
}

// TestE2EProxyRebuildsAnInformersCacheThroughARestartWithCompaction runs a
// real client-go program through the proxy: a SharedInformerFactory with
// typed Pods and ConfigMaps over protobuf and a dynamic informer on a CRD,
// while objects churn and the apiserver restarts with etcd compacted in the
// gap. Each informer's store and the cache the proxy rebuilt for its stream
// end equal, and the relists client-go made (and the 410s before them) are
// in the streams' counters.
func TestE2EProxyRebuildsAnInformersCacheThroughARestartWithCompaction(t *testing.T) {
	c := shared.Get(t)
	admin := c.Config()
	cs := kubernetes.NewForConfigOrDie(admin)
	dyn := dynamic.NewForConfigOrDie(admin)
	if err := testcluster.InstallWidgets(context.Background(), c.Config()); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, cs)
	p, addr := startProxy(t, admin)

	var churns []*testcluster.Churn
	for _, o := range []testcluster.ChurnOptions{
		{Namespace: ns, Prefix: "cm", Names: 40, Rate: 40},
		{Namespace: ns, Resource: podsGVR, Object: pod, Prefix: "pod", Names: 30, Rate: 20},
		{Namespace: ns, Resource: widgetsGVR, Object: testcluster.Widget, Prefix: "w", Names: 30, Rate: 20},
	} {
		ch, err := testcluster.StartChurn(admin, o)
		if err != nil {
			t.Fatal(err)
		}
		churns = append(churns, ch)
	}
	stopChurns := func() {
		for _, ch := range churns {
			ch.Stop()
		}
	}
	defer stopChurns()
	time.Sleep(time.Second)

	const ua = "e2e-controller/v0 (proxy test)"
	cfg := through(addr, ua)
	pcfg := rest.CopyConfig(cfg)
	pcfg.ContentType = request.ContentTypeProtobuf
	pcfg.AcceptContentTypes = request.ContentTypeProtobuf + ",application/json"
	typed := kubernetes.NewForConfigOrDie(pcfg)
	factory := informers.NewSharedInformerFactoryWithOptions(typed, 0, informers.WithNamespace(ns))
	podInf := factory.Core().V1().Pods().Informer()
	cmInf := factory.Core().V1().ConfigMaps().Informer()
	dfactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(cfg), 0, ns, nil)
	wInf := dfactory.ForResource(widgetsGVR).Informer()
	// A second program on the same proxy, in JSON, watching ConfigMaps too.
	const ua2 = "second-client/v0"
	jcfg := through(addr, ua2)
	jcfg.ContentType, jcfg.AcceptContentTypes = "application/json", "application/json"
	second := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(jcfg), 0, informers.WithNamespace(ns))
	cm2Inf := second.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	dfactory.Start(stop)
	second.Start(stop)
	syncCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), podInf.HasSynced, cmInf.HasSynced, wInf.HasSynced, cm2Inf.HasSynced) {
		t.Fatal("the informers did not sync through the proxy within a minute")
	}
	time.Sleep(2 * time.Second)

	if err := c.RestartCompacted(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	informersOf := map[schema.GroupVersionResource]cache.SharedIndexInformer{podsGVR: podInf, configMapsGVR: cmInf, widgetsGVR: wInf}
	// Every informer relists, most after the 410 of a watch resumed past the
	// compaction; then the writes stop and the caches settle. On a loaded
	// machine a resumed watch can fail otherwise first (a TLS handshake
	// timeout while the apiserver starts), and client-go then relists on its
	// own, with no 410 to count: at least one stream must have had its 410.
	waitFor(t, 40*time.Second, "every stream's relist, and a 410", func() string {
		gone := int64(0)
		for gvr := range informersOf {
			ss := streamsOf(p, ua, gvr)
			if len(ss) != 1 {
				return fmt.Sprintf("%d streams of %s", len(ss), gvr.Resource)
			}
			cn := ss[0].Counters()
			if cn.Relists < 1 || ss[0].Stats().State != reflector.StateWatching {
				return fmt.Sprintf("%s: %d 410s, %d relists, %s; requests:\n%s", gvr.Resource, cn.Gone, cn.Relists, ss[0].Stats().State, describe(ss[0].Stats()))
			}
			gone += cn.Gone
		}
		if gone == 0 {
			return "no stream had a 410"
		}
		return ""
	})
	time.Sleep(time.Second)
	stopChurns()
	for gvr, inf := range informersOf {
		want := listAll(t, dyn, gvr, ns)
		waitFor(t, time.Minute, gvr.Resource+" informer and proxy caches equal to the server's", func() string {
			got := informerEntries(inf.GetStore())
			if !equalEntries(got, want) {
				return fmt.Sprintf("the informer has %d objects, the server %d", len(got), len(want))
			}
			rebuilt := streamEntries(streamsOf(p, ua, gvr)[0])
			if !equalEntries(rebuilt, got) {
				return fmt.Sprintf("the proxy rebuilt %d objects, the informer has %d (%s)", len(rebuilt), len(got), firstDifference(rebuilt, got))
			}
			return ""
		})
		s := streamsOf(p, ua, gvr)[0]
		st := s.Stats()
		t.Logf("%s: %+v wire %s", gvr.Resource, st.Counters, s.Wire())
		wantWire := reflector.WireProtobuf
		if gvr == widgetsGVR {
			wantWire = reflector.WireJSON
		}
		if s.Wire() != wantWire {
			t.Errorf("%s: the client received %q, want %q", gvr.Resource, s.Wire(), wantWire)
		}
		if st.Counters.Watches < 2 || st.Counters.Lists < 2 {
			t.Errorf("%s: %d watches and %d lists, want the initial ones and those after the restart", gvr.Resource, st.Counters.Watches, st.Counters.Lists)
		}
		if st.LastRelistDiff == nil {
			t.Errorf("%s: no relist diff", gvr.Resource)
		}
		// client-go's first list, with its options as sent: a streaming list (WatchListClient),
		// or a LIST from resourceVersion 0 (the watch cache) when it is off.
		if first := st.Requests[0]; !(first.Verb == reflector.VerbWatch && first.Opts.SendInitialEvents) && !(first.Verb == reflector.VerbList && first.Opts.ResourceVersion == "0") {
			t.Errorf("%s: the first request is %s %s, want client-go's initial list", gvr.Resource, first.Verb, first.Opts.Format(false))
		}
	}
	// The second program has its own stream of ConfigMaps, with its own cache.
	waitFor(t, time.Minute, "the second client's cache", func() string {
		ss := streamsOf(p, ua2, configMapsGVR)
		if len(ss) != 1 {
			return fmt.Sprintf("%d streams of the second client", len(ss))
		}
		if got, want := streamEntries(ss[0]), informerEntries(cm2Inf.GetStore()); !equalEntries(got, want) {
			return fmt.Sprintf("the proxy rebuilt %d objects, its informer has %d", len(got), len(want))
		}
		if ss[0].Wire() != reflector.WireJSON {
			return "its stream is not JSON"
		}
		return ""
	})
}

// describe lists a stream's requests, for failure messages.
func describe(st reflector.Stats) string {
	var b strings.Builder
	for _, r := range st.Requests {
		fmt.Fprintf(&b, "  #%d %s %s: %d items, %d events, %s\n", r.ID, r.Verb, r.Opts.Format(true), r.Items, r.Events, r.End.Format(false))
	}
	if r := st.Current; r != nil {
		fmt.Fprintf(&b, "  #%d %s %s: %d items, %d events, running\n", r.ID, r.Verb, r.Opts.Format(true), r.Items, r.Events)
	}
	return b.String()
}

func equalEntries(a, b []entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func firstDifference(a, b []entry) string {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return fmt.Sprintf("%v vs %v", a[i], b[i])
		}
	}
	return "one is longer"
}

func listAll(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string) []entry {
	t.Helper()
	l, err := dyn.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]entry, 0, len(l.Items))
	for _, o := range l.Items {
		out = append(out, entry{o.GetNamespace(), o.GetName(), string(o.GetUID()), o.GetResourceVersion()})
	}
	sortEntries(out)
	return out
}

// waitFor polls cond (which says what is still missing, "" when done) until it holds.
func waitFor(t *testing.T, d time.Duration, what string, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		missing := cond()
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %s", what, missing)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestE2EProxyAClientReceivesTheBytesTheServerSent compares the same LIST
// (an exact resourceVersion, so the answer cannot change) received directly
// and through the proxy, in JSON and in protobuf, large enough to be gzipped;
// the proxy's stream holds what was received.
func TestE2EProxyAClientReceivesTheBytesTheServerSent(t *testing.T) {
	c := shared.Get(t)
	admin := c.Config()
	cs := kubernetes.NewForConfigOrDie(admin)
	ns := newNamespace(t, cs)
	ctx := context.Background()
	big := strings.Repeat("x", 2048)
	for i := range 100 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)}, Data: map[string]string{"big": big}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, addr := startProxy(t, admin)
	direct, err := rest.HTTPClientFor(admin)
	if err != nil {
		t.Fatal(err)
	}
	viaProxy := &http.Client{}
	path := "/api/v1/namespaces/" + ns + "/configmaps?resourceVersion=" + l.ResourceVersion + "&resourceVersionMatch=Exact"
	for i, accept := range []string{"application/json", request.ContentTypeProtobuf} {
		get := func(client *http.Client, base string) ([]byte, http.Header) {
			req, err := http.NewRequest(http.MethodGet, base+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", accept)
			req.Header.Set("User-Agent", "bytes-test")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d %s", accept, resp.StatusCode, b)
			}
			return b, resp.Header
		}
		want, _ := get(direct, c.URL())
		got, h := get(viaProxy, "http://"+addr)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes through the proxy differ from the %d bytes received directly", accept, len(got), len(want))
		}
		if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, accept) {
			t.Errorf("%s: Content-Type %q through the proxy", accept, ct)
		}
		p.Wait()
		ss := streamsOf(p, "bytes-test", configMapsGVR)
		if len(ss) != 1 {
			t.Fatalf("%d streams, want one", len(ss))
		}
		st := ss[0].Stats()
		if len(st.Requests) != i+1 || st.Requests[i].Items != 100 || st.Requests[i].End.Reason != reflector.EndClosed {
			t.Fatalf("%s: the stream's requests are %+v, want the LIST of 100 items closed", accept, st.Requests)
		}
		if ss[0].Store().Len() != 100 {
			t.Errorf("%s: the rebuilt cache holds %d objects, want 100", accept, ss[0].Store().Len())
		}
	}
}

// TestE2EProxyRefusesAForeignHost answers 403 to a Host that is not accepted,
// as kubectl proxy does, and forwards the same request with an accepted one.
func TestE2EProxyRefusesAForeignHost(t *testing.T) {
	c := shared.Get(t)
	_, addr := startProxy(t, c.Config())
	for host, want := range map[string]int{"evil.example.com": http.StatusForbidden, "localhost": http.StatusOK, "127.0.0.1": http.StatusOK} {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/api/v1/namespaces/default/configmaps", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host + ":" + strings.Split(addr, ":")[1]
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// TestE2EAWatchTheProxysEndCutIsStoppedNotLeftByItsClient: when the run
// ends (--duration, ctrl-c) the proxy closes its clients' connections; the
// watch it cut ends "stopped", as our reflector's does, not "canceled" by a
// client that left. A client that leaves by itself is still "canceled".
func TestE2EAWatchTheProxysEndCutIsStoppedNotLeftByItsClient(t *testing.T) {
	c := shared.Get(t)
	admin := c.Config()
	ns := newNamespace(t, kubernetes.NewForConfigOrDie(admin))
	for _, stop := range []bool{true, false} {
		p, srv, addr := serveProxy(t, Options{Config: admin})
		ua := fmt.Sprintf("stop-test-%v", stop)
		ctx, cancel := context.WithCancel(context.Background())
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/v1/namespaces/"+ns+"/configmaps?watch=true&resourceVersion=0", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", ua)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "the watch's stream", func() string {
			if len(streamsOf(p, ua, configMapsGVR)) != 1 {
				return "no stream yet"
			}
			return ""
		})
		if stop {
			p.Stopping()
			_ = srv.Close()
		} else {
			cancel()
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		p.Wait()
		st := streamsOf(p, ua, configMapsGVR)[0].Stats()
		_ = srv.Close()
		p.Close()
		cancel()
		want := map[bool]reflector.EndReason{true: reflector.EndStopped, false: reflector.EndCanceled}[stop]
		if n := len(st.Requests); n != 1 || st.Requests[0].End == nil || st.Requests[0].End.Reason != want {
			t.Errorf("the run stopped %v: requests %+v, want the watch ended %s", stop, st.Requests, want)
		}
	}
}
