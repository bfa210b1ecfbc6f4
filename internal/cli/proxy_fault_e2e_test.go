package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire/request"
)

// faultRun is kubectl watchcache proxy with faults, running in-process,
// and a client-go program's config through it.
type faultRun struct {
	*liveRun
	trace string
	cfg   *rest.Config
}

// startFaultProxy starts the proxy with args (--fault…) and returns it
// once it has written its kubeconfig, with a protobuf client config of
// User-Agent ua through it.
func startFaultProxy(t *testing.T, ua string, args ...string) *faultRun {
	t.Helper()
	work := t.TempDir()
	fr := &faultRun{trace: filepath.Join(work, "proxy.jsonl")}
	kc := filepath.Join(work, "proxy.kubeconfig")
	fr.liveRun = startRun(t, append([]string{"proxy", "--kubeconfig", kubeconfig(t), "--port", "0", "--no-tui", "-o", "json", "--summary",
		"--print-kubeconfig", kc, "--trace", fr.trace}, args...)...)
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(kc); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy wrote no kubeconfig within a minute\n%s", tail(fr.errOut.String()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.UserAgent = ua
	cfg.ContentType = request.ContentTypeProtobuf
	cfg.AcceptContentTypes = request.ContentTypeProtobuf + ",application/json"
	fr.cfg = cfg
	return fr
}

// uniqueNamespace creates a namespace named prefix and a number of this
// moment, so that tests sharing a cluster never meet, and returns its name.
func uniqueNamespace(t *testing.T, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ns := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1_000_000)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// informerStop is the stop channel of a test's informers and a function
// that closes it once; the test's end closes it if the test did not.
func informerStop(t *testing.T) (chan struct{}, func()) {
	stop := make(chan struct{})
	var once sync.Once
	closeStop := func() { once.Do(func() { close(stop) }) }
	t.Cleanup(closeStop)
	return stop, closeStop
}

// faultsOf reads the top-level faults of an observed summary line (the last of out).
func faultsOf(t *testing.T, out string) []summary.FaultSummary {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var all struct {
		Faults []summary.FaultSummary `json:"faults"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &all); err != nil {
		t.Fatalf("the summary line: %v", err)
	}
	return all.Faults
}

// streamOf is the summary of the stream of ua's resource, failing t when there is not exactly one.
func streamOf(t *testing.T, sums []summary.Summary, resource, ua string) summary.Summary {
	t.Helper()
	var found []summary.Summary
	for _, s := range sums {
		if s.Resource == resource && s.Stream != nil && s.Stream.UserAgent == ua {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d streams of %s by %s, want 1", len(found), resource, ua)
	}
	return found[0]
}

// droppedRE reads the deletes drop-deletes dropped from the JSON lines.
var droppedRE = regexp.MustCompile(`--fault drop-deletes: dropped DELETED ([^ ]+) `)

// TestE2EProxyFaultDropDeletesAndGoneGiveTheInformerDeletedFinalStateUnknown
// runs a client-go typed informer (protobuf, client-go's defaults: a
// streaming list) through --fault drop-deletes --fault gone@every=20s
// while ConfigMaps are deleted. The deletes never reach it: its cache keeps
// them (ghosts); at the 20 s firing its watch ends, its resume is answered
// 410 and it relists: its OnDelete gets cache.DeletedFinalStateUnknown for
// exactly the deletes the proxy dropped, and its cache equals a LIST. The
// proxy's summary counts the faults and raises missed-deletes, and the
// trace replays to the same.
func TestE2EProxyFaultDropDeletesAndGoneGiveTheInformerDeletedFinalStateUnknown(t *testing.T) {
	c := cluster(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()
	ns := uniqueNamespace(t, cs, "proxy-fault")
	const n, deleted = 12, 5
	for i := range n {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const ua = "fault-informer/1 (linux/amd64)"
	started := time.Now()
	fr := startFaultProxy(t, ua, "--fault", "drop-deletes", "--fault", "gone@every=20s", "--fault-target", "configmaps")

	var mu sync.Mutex
	var unknown, told []string
	factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(fr.cfg), 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		mu.Lock()
		defer mu.Unlock()
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			unknown = append(unknown, d.Key)
			return
		}
		told = append(told, obj.(*corev1.ConfigMap).Namespace+"/"+obj.(*corev1.ConfigMap).Name)
	}}); err != nil {
		t.Fatal(err)
	}
	stop, stopInformer := informerStop(t)
	factory.Start(stop)
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync through the proxy")
	}
	var want []string
	for i := range deleted {
		name := fmt.Sprintf("cm-%d", i)
		if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		want = append(want, ns+"/"+name)
	}
	if time.Since(started) > 15*time.Second {
		t.Fatalf("the deletes took until %s after the proxy's start, too close to the gone at 20s", time.Since(started))
	}
	// The deletes were dropped: a ConfigMap created after them reaches the
	// informer (its watch goes on), and the deleted ones are still in its cache.
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, ok, _ := inf.GetStore().GetByKey(ns + "/after"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the ConfigMap created after the deletes never reached the informer")
		}
	}
	for _, k := range want {
		if _, ok, _ := inf.GetStore().GetByKey(k); !ok {
			t.Errorf("%s left the informer's cache before the relist: its delete was not dropped", k)
		}
	}

	// The gone at 20 s: the informer relists and learns of the deletes as DeletedFinalStateUnknown.
	for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		got := len(unknown)
		mu.Unlock()
		if got >= deleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the informer got %d DeletedFinalStateUnknown within 40s, want %d\n%s", got, deleted, tail(fr.out.String()))
		}
	}
	time.Sleep(time.Second) // anything more would come now
	mu.Lock()
	gotUnknown, gotTold := slices.Clone(unknown), slices.Clone(told)
	mu.Unlock()
	sort.Strings(gotUnknown)
	if strings.Join(gotUnknown, ",") != strings.Join(want, ",") || len(gotTold) != 0 {
		t.Errorf("OnDelete got DeletedFinalStateUnknown for %q and deletes for %q; want DeletedFinalStateUnknown for %q alone", gotUnknown, gotTold, want)
	}
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, cm := range list.Items {
		listed = append(listed, ns+"/"+cm.Name)
	}
	cached := inf.GetStore().ListKeys()
	sort.Strings(listed)
	sort.Strings(cached)
	if strings.Join(cached, ",") != strings.Join(listed, ",") {
		t.Errorf("after the relist the informer's cache holds %q, a LIST %q", cached, listed)
	}
	stopInformer()
	sums := fr.stop(t)
	out := fr.out.String()
	if s := fr.errOut.String(); strings.Contains(s, "acted on none") {
		t.Errorf("a fault that acted is warned of as idle:\n%s", tail(s))
	}

	// The proxy says what it dropped: exactly those deletes.
	var dropped []string
	for _, m := range droppedRE.FindAllStringSubmatch(out, -1) {
		dropped = append(dropped, m[1])
	}
	sort.Strings(dropped)
	if strings.Join(dropped, ",") != strings.Join(want, ",") {
		t.Errorf("the proxy's lines say it dropped %q, want %q", dropped, want)
	}
	check := func(what string, sums []summary.Summary, faults []summary.FaultSummary) {
		t.Helper()
		s := streamOf(t, sums, "configmaps.v1", ua)
		counts := map[string]int{}
		for _, f := range faults {
			if f.Stream == s.Stream.ID {
				counts[f.Fault] += f.Count
			}
		}
		if counts["drop-deletes"] != deleted || counts["gone@every=20s"] < 1 {
			t.Errorf("%s: the summary's faults on stream #%d: %+v; want drop-deletes %d and gone@every=20s at least 1", what, s.Stream.ID, faults, deleted)
		}
		if s.Counters.Gone < 1 || s.Counters.Relists < 1 {
			t.Errorf("%s: the stream saw %d 410s and %d relists, want at least one each", what, s.Counters.Gone, s.Counters.Relists)
		}
		f := findingOf(t, s, findings.MissedDeletes)
		var objs []string
		for _, o := range f.Evidence.Objects {
			objs = append(objs, o.String())
		}
		sort.Strings(objs)
		if strings.Join(objs, ",") != strings.Join(want, ",") {
			t.Errorf("%s: missed-deletes names %q, want the deleted %q", what, objs, want)
		}
		if !strings.HasPrefix(f.Cause, "caused by --fault drop-deletes, --fault gone@every=20s (injected by the observing proxy). ") {
			t.Errorf("%s: missed-deletes does not name the injected faults as its cause: %s", what, f.Cause)
		}
	}
	check("live", sums, faultsOf(t, out))

	code, replayed, errOut := run(t, "replay", fr.trace, "--speed", "0", "--no-tui", "--summary", "-o", "json")
	if code != ExitOK {
		t.Fatalf("replaying the proxy's trace: exit %d\n%s", code, errOut)
	}
	check("replayed", allSummaries(t, replayed), faultsOf(t, replayed))
}

// TestE2EProxyFaultCutMakesInformersResumeWithoutRelisting runs two
// client-go informers, one over protobuf and one over JSON, through --fault
// cut@every=4s, and then through --fault cut (every watch, after its first
// event), while ConfigMaps are created, updated and deleted: every firing
// cuts their watches mid-stream, and each resumes from its last
// resourceVersion: no 410, no relist, every event received (each cache
// equals a LIST), and the summary counts the cuts. The unscheduled cut
// once came right after a streaming list's end: client-go took each watch
// for a very short one and listed again, five times in 50 s.
func TestE2EProxyFaultCutMakesInformersResumeWithoutRelisting(t *testing.T) {
	for _, spec := range []string{"cut@every=4s", "cut"} {
		t.Run(spec, func(t *testing.T) { cutInformers(t, spec) })
	}
}

func cutInformers(t *testing.T, spec string) {
	c := cluster(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()
	ns := uniqueNamespace(t, cs, "proxy-cut")
	const protoUA, jsonUA = "cut-informer-protobuf/1", "cut-informer-json/1"
	fr := startFaultProxy(t, protoUA, "--fault", spec)
	jcfg := rest.CopyConfig(fr.cfg)
	jcfg.UserAgent, jcfg.ContentType, jcfg.AcceptContentTypes = jsonUA, "application/json", "application/json"
	stop := make(chan struct{})
	stopped := false
	stopInformers := func() {
		if !stopped {
			stopped = true
			close(stop)
		}
	}
	defer stopInformers()
	var infs []cache.SharedIndexInformer
	for _, cfg := range []*rest.Config{fr.cfg, jcfg} {
		factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(cfg), 0, informers.WithNamespace(ns))
		infs = append(infs, factory.Core().V1().ConfigMaps().Informer())
		factory.Start(stop)
	}
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), infs[0].HasSynced, infs[1].HasSynced) {
		t.Fatal("the informers did not sync through the proxy")
	}
	// 13 s of writes: three firings (at 4, 8 and 12 s) cut both watches.
	for i := 0; i < 130; i++ {
		name := fmt.Sprintf("cm-%d", i%20)
		switch {
		case i < 20:
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		case i%7 == 0:
			if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !strings.Contains(err.Error(), "not found") {
				t.Fatal(err)
			}
		default:
			_, _ = cs.CoreV1().ConfigMaps(ns).Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"i": fmt.Sprint(i)}}, metav1.UpdateOptions{})
		}
		time.Sleep(100 * time.Millisecond)
	}
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, cm := range list.Items {
		want[ns+"/"+cm.Name] = cm.ResourceVersion
	}
	for i, inf := range infs {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			got := map[string]string{}
			for _, o := range inf.GetStore().List() {
				cm := o.(*corev1.ConfigMap)
				got[ns+"/"+cm.Name] = cm.ResourceVersion
			}
			if fmt.Sprint(got) == fmt.Sprint(want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("informer %d's cache %v, a LIST %v", i, got, want)
			}
		}
	}
	stopInformers()
	sums := fr.stop(t)
	faults := faultsOf(t, fr.out.String())
	for _, ua := range []string{protoUA, jsonUA} {
		s := streamOf(t, sums, "configmaps.v1", ua)
		cuts := 0
		for _, f := range faults {
			if f.Stream == s.Stream.ID && f.Fault == spec {
				cuts += f.Count
			}
		}
		if cuts < 2 || s.Counters.Relists != 0 || s.Counters.Gone != 0 || s.Counters.Watches < int64(cuts)+1 {
			t.Errorf("%s (stream #%d, %s): %d cuts, %d relists, %d 410s, %d watches; want at least 2 cuts, no relist, no 410, a watch more than cuts",
				ua, s.Stream.ID, s.Stream.ContentType, cuts, s.Counters.Relists, s.Counters.Gone, s.Counters.Watches)
		}
	}
}

// TestE2EAFaultTargetTakesTheNamesKubectlAndTheToolUse: --fault-target
// cm, configmaps.v1 (as the tool prints it) and configmaps all target the
// ConfigMaps' streams, and only those, with no warning. cm and configmaps.v1
// were taken for resources the server does not serve, and no fault acted.
func TestE2EAFaultTargetTakesTheNamesKubectlAndTheToolUse(t *testing.T) {
	for _, target := range []string{"cm", "configmaps.v1", "configmaps"} {
		t.Run(target, func(t *testing.T) {
			fr := startFaultProxy(t, "target-names/1", "--fault", "throttle", "--fault-target", target)
			for path, want := range map[string]int{"/api/v1/namespaces/default/configmaps": http.StatusTooManyRequests, "/api/v1/namespaces/default/secrets": http.StatusOK} {
				resp, err := http.Get(fr.cfg.Host + path)
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				if resp.StatusCode != want {
					t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
				}
			}
			fr.stop(t)
			if strings.Contains(fr.errOut.String(), "warning: --fault-target") {
				t.Errorf("a warning about the target:\n%s", fr.errOut.String())
			}
		})
	}
}

// TestE2EProxyWarnsOfAFaultTargetThatMatchedNothing: a --fault-target that
// matched none of the streams the proxy observed is warned about at the
// end of the run; one that matched is not, but its fault, which never
// fired (@every=1h), is: a test against it tested nothing.
func TestE2EProxyWarnsOfAFaultTargetThatMatchedNothing(t *testing.T) {
	for _, tc := range []struct {
		target string
		warned bool
	}{{"client=nobody-runs-this", true}, {"configmaps", false}} {
		fr := startFaultProxy(t, "target-check/1", "--fault", "gone@every=1h", "--fault-target", tc.target)
		cs := kubernetes.NewForConfigOrDie(fr.cfg)
		if _, err := cs.CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		fr.stop(t)
		warned := strings.Contains(fr.errOut.String(), "warning: --fault-target "+tc.target+" matched none of the 1 stream the proxy observed")
		if warned != tc.warned {
			t.Errorf("--fault-target %s: warned %v, want %v\n%s", tc.target, warned, tc.warned, tail(fr.errOut.String()))
		}
		if s := "injecting faults: --fault gone@every=1h into --fault-target " + tc.target; !strings.Contains(fr.errOut.String(), s) {
			t.Errorf("the start does not say %q:\n%s", s, tail(fr.errOut.String()))
		}
		idle := strings.Contains(fr.errOut.String(), "warning: --fault gone@every=1h acted on none of the 1 stream the proxy observed")
		if idle == tc.warned {
			t.Errorf("--fault-target %s: warned the fault never acted: %v, want %v\n%s", tc.target, idle, !tc.warned, tail(fr.errOut.String()))
		}
	}
}
