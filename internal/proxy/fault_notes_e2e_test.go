package proxy

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/fault"
)

// TestE2EADroppedDeleteOnAQuietResourceIsNotedAtOnce: a client-go informer
// watches ConfigMaps through the proxy with --fault drop-deletes; one is
// deleted, and nothing else happens. The drop is noted within a second or
// two, where it waited for the next frame the fault let pass (minutes, on a
// quiet resource, or the watch's end).
func TestE2EADroppedDeleteOnAQuietResourceIsNotedAtOnce(t *testing.T) {
	c := shared.Get(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ns := newNamespace(t, cs)
	ctx := context.Background()
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spec, err := fault.Parse("drop-deletes")
	if err != nil {
		t.Fatal(err)
	}
	p, addr := startProxyWith(t, Options{Config: c.Config(), Faults: []fault.Spec{spec}, FaultSeed: 1})
	const ua = "quiet-informer/1"
	factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(through(addr, ua)), 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	time.Sleep(time.Second) // its watch open
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	waitFor(t, 5*time.Second, "the dropped delete's note", func() string {
		ss := streamsOf(p, ua, configMapsGVR)
		if len(ss) != 1 {
			return "no stream yet"
		}
		for _, f := range ss[0].Faults() {
			if f.Fault == "drop-deletes" && f.Count == 1 {
				return ""
			}
		}
		return "no drop-deletes noted"
	})
	t.Logf("noted %s after the delete", time.Since(deleted).Round(10*time.Millisecond))
	if _, ok, _ := inf.GetStore().GetByKey(ns + "/a"); !ok {
		t.Error("the informer saw the delete the fault dropped")
	}
}
