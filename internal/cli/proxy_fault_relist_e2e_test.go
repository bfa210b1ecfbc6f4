package cli

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
)

// streamByPrefix is the one stream of resource whose client's User-Agent
// starts with prefix (kubectl's carries its version and commit).
func streamByPrefix(t *testing.T, sums []summary.Summary, resource, prefix string) summary.Summary {
	t.Helper()
	var found []summary.Summary
	for _, s := range sums {
		if s.Resource == resource && s.Stream != nil && strings.HasPrefix(s.Stream.UserAgent, prefix) {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d streams of %s by %s…, want 1", len(found), resource, prefix)
	}
	return found[0]
}

// faultCount sums what the fault spec did on stream id.
func faultCount(faults []summary.FaultSummary, id int, spec string) (count, notes int) {
	for _, f := range faults {
		if f.Stream == id && f.Fault == spec {
			count += f.Count
			notes++
		}
	}
	return count, notes
}

// TestE2EProxyFaultGoneEveryRelistsAMetadataInformerOncePerFiringAndEndsKubectlGetWatch
// runs, through --fault gone@every=15s for about 40 s (two firings), a
// client-go metadata informer (PartialObjectMetadata, protobuf) and a JSON
// kubectl get -w -o json of the same ConfigMaps.
//
// The informer's watch ends at each firing, its resume is answered 410 and
// it relists: once per firing and nothing else (relists = 410s = what the
// fault counts on its stream, and its cache equals a LIST at the end).
//
// kubectl get -w does not relist: it watches once, without retrying
// (watchtools.UntilWithoutRetry), so the first firing's end of its watch
// ends kubectl (exit 0), with no resume and so no 410. Its stream has one
// LIST, one WATCH, no relist, no 410. A script that runs it again starts a
// new process, a stream of its own.
//
// The trace replays to the same counters, faults and findings.
func TestE2EProxyFaultGoneEveryRelistsAMetadataInformerOncePerFiringAndEndsKubectlGetWatch(t *testing.T) {
	c := cluster(t)
	dir := pluginPath(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()
	ns := uniqueNamespace(t, cs, "proxy-relist")
	for i := range 5 {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const metaUA, spec = "gone-metadata-informer/1 (linux/amd64)", "gone@every=15s"
	started := time.Now()
	fr := startFaultProxy(t, metaUA, "--fault", spec, "--fault-target", "configmaps")
	kc := filepath.Join(filepath.Dir(fr.trace), "proxy.kubeconfig")

	stop, stopInformer := informerStop(t)
	factory := metadatainformer.NewFilteredSharedInformerFactory(metadata.NewForConfigOrDie(fr.cfg), 0, ns, nil)
	inf := factory.ForResource(configMapsGVR).Informer()
	factory.Start(stop)

	kubectl := exec.Command(filepath.Join(dir, "kubectl"), "--kubeconfig", kc, "get", "configmaps", "-n", ns, "-w", "-o", "json")
	var kout, kerr syncBuffer
	kubectl.Stdout, kubectl.Stderr = &kout, &kerr
	if err := kubectl.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kubectl.Process.Kill() })
	kubectlDone := make(chan error, 1)
	go func() { kubectlDone <- kubectl.Wait() }()

	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		t.Fatal("the metadata informer did not sync through the proxy")
	}
	if since := time.Since(started); since > 12*time.Second {
		t.Fatalf("the informer synced %s after the proxy's start, too close to the first firing at 15s", since)
	}
	// Writes all along, so that each watch carries events when it ends.
	for i := 0; time.Since(started) < 40*time.Second; i++ {
		if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i%5)}, Data: map[string]string{"i": fmt.Sprint(i)}}, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// kubectl ended at the first firing, by itself.
	select {
	case err := <-kubectlDone:
		if err != nil {
			t.Errorf("kubectl get -w ended with %v\n%s", err, kerr.String())
		}
	default:
		t.Errorf("kubectl get -w still runs after two firings of %s\n%s", spec, kerr.String())
	}
	if !strings.Contains(kout.String(), `"name": "cm-4"`) {
		t.Errorf("kubectl get -w -o json printed no cm-4:\n%s", tail(kout.String()))
	}
	// The informer's cache equals a LIST.
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, cm := range list.Items {
		want[ns+"/"+cm.Name] = cm.ResourceVersion
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got := map[string]string{}
		for _, o := range inf.GetStore().List() {
			m := o.(*metav1.PartialObjectMetadata)
			got[ns+"/"+m.Name] = m.ResourceVersion
		}
		if fmt.Sprint(got) == fmt.Sprint(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the metadata informer's cache %v, a LIST %v", got, want)
		}
	}
	stopInformer()
	sums := fr.stop(t)
	firings := int(time.Since(started) / (15 * time.Second))

	check := func(what string, sums []summary.Summary, faults []summary.FaultSummary) {
		t.Helper()
		m := streamOf(t, sums, "configmaps.v1", metaUA)
		answered, _ := faultCount(faults, m.Stream.ID, spec)
		// Each firing that met its open watch ends it and answers its resume 410: one relist each.
		if answered < 2 || answered > firings || m.Counters.Gone != int64(answered) || m.Counters.Relists != int64(answered) {
			t.Errorf("%s: the metadata informer's stream #%d: %s answered %d 410s, the stream saw %d 410s and %d relists (%d firings); want 2 or more, all equal",
				what, m.Stream.ID, spec, answered, m.Counters.Gone, m.Counters.Relists, firings)
		}
		if !m.Stream.MetadataOnly {
			t.Errorf("%s: the metadata informer's stream is not said to be metadata only: %+v", what, m.Stream)
		}
		t.Logf("%s: the metadata informer: %d 410s answered, %d relists, %d firings", what, answered, m.Counters.Relists, firings)
		k := streamByPrefix(t, sums, "configmaps.v1", "kubectl/")
		answered, notes := faultCount(faults, k.Stream.ID, spec)
		if answered != 0 || notes != 1 || k.Counters.Lists != 1 || k.Counters.Watches != 1 || k.Counters.Relists != 0 || k.Counters.Gone != 0 {
			t.Errorf("%s: kubectl's stream #%d: %s noted %d time(s), answered %d 410s; the stream has %d lists, %d watches, %d relists, %d 410s; want 1 note, 0, 1, 1, 0, 0",
				what, k.Stream.ID, spec, notes, answered, k.Counters.Lists, k.Counters.Watches, k.Counters.Relists, k.Counters.Gone)
		}
	}
	check("live", sums, faultsOf(t, fr.out.String()))
	code, replayed, errOut := run(t, "replay", fr.trace, "--speed", "0", "--no-tui", "--summary", "-o", "json")
	if code != ExitOK {
		t.Fatalf("replaying the proxy's trace: exit %d\n%s", code, errOut)
	}
	check("replayed", allSummaries(t, replayed), faultsOf(t, replayed))
	checkReplaySays(t, fr.trace, sums...)
}
