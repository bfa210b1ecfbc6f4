package testcluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The package shares one cluster with the watch cache off, so compaction makes old RVs 410.
var shared = NewLazy(Options{DisableWatchCache: true, Users: []string{"nobody"}})

func TestMain(m *testing.M) { os.Exit(Main(m, shared)) }

func cluster(t testing.TB) *Cluster { return shared.Get(t) }

func clientset(t *testing.T, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("building a clientset: %v", err)
	}
	return cs
}

func testNamespace(t *testing.T, cs *kubernetes.Clientset) string {
	t.Helper()
	ns := fmt.Sprintf("t-%d", time.Now().UnixNano())
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	return ns
}

func createConfigMap(t *testing.T, cs *kubernetes.Clientset, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Data:       map[string]string{"k": name},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating configmap %s/%s: %v", ns, name, err)
	}
	return cm
}

func TestE2EServerReportsThePinnedVersion(t *testing.T) {
	v, err := clientset(t, cluster(t).Config()).Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	if v.GitVersion != Version {
		t.Errorf("server version: got %s, want %s", v.GitVersion, Version)
	}
}

func TestE2EWatchFromCompactedResourceVersionGetsGone(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t, cluster(t).Config())
	ns := testNamespace(t, cs)
	first := createConfigMap(t, cs, ns, "a")
	for _, name := range []string{"b", "c", "d"} {
		createConfigMap(t, cs, ns, name)
	}
	rev, err := cluster(t).Compact(ctx)
	if err != nil {
		t.Fatalf("compact: %v", err)
	}
	t.Logf("compacted etcd at revision %d; watching from %s", rev, first.ResourceVersion)

	w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
	if err != nil {
		// The apiserver may also refuse the request itself with 410.
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			t.Fatalf("watch from compacted rv: got error %v, want 410 Gone", err)
		}
		return
	}
	defer w.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch from compacted rv: channel closed without an ERROR event")
		}
		if ev.Type != watch.Error {
			t.Fatalf("watch from compacted rv: got %s event, want ERROR", ev.Type)
		}
		status, ok := ev.Object.(*metav1.Status)
		if !ok {
			t.Fatalf("ERROR event object: got %T, want *metav1.Status", ev.Object)
		}
		if status.Code != http.StatusGone || status.Reason != metav1.StatusReasonExpired {
			t.Errorf("ERROR event: got code %d reason %q (%s), want 410 Expired", status.Code, status.Reason, status.Message)
		}
		t.Logf("got 410: %s", status.Message)
	case <-time.After(30 * time.Second):
		t.Fatal("watch from compacted rv: no event within 30s")
	}
}

// watchEnds waits until w's channel closes (possibly after an ERROR event).
func watchEnds(t *testing.T, w watch.Interface, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("watch did not end within %s", within)
		}
	}
}

// watchSees waits for an ADDED event of the named object.
func watchSees(t *testing.T, w watch.Interface, name string, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch ended before %s was seen", name)
			}
			if cm, isCM := ev.Object.(*corev1.ConfigMap); isCM && ev.Type == watch.Added && cm.Name == name {
				return
			}
		case <-deadline:
			t.Fatalf("watch did not see %s within %s", name, within)
		}
	}
}

func TestE2EAPIServerRestartEndsAWatchAndANewWatchWorks(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t, cluster(t).Config())
	ns := testNamespace(t, cs)
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	if err := cluster(t).RestartAPIServer(ctx); err != nil {
		t.Fatalf("restart: %v", err)
	}
	watchEnds(t, w, 30*time.Second)

	w2, err := clientset(t, cluster(t).Config()).CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch after restart: %v", err)
	}
	defer w2.Stop()
	createConfigMap(t, cs, ns, "after-restart")
	watchSees(t, w2, "after-restart", 30*time.Second)
}

func TestE2EProxyCutEndsAWatchAndRefusesNewConnectionsForAWhile(t *testing.T) {
	ctx := context.Background()
	admin := clientset(t, cluster(t).Config())
	ns := testNamespace(t, admin)
	proxy, err := cluster(t).NewProxy()
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	defer proxy.Close()
	cfg := proxy.Config(cluster(t).Config())
	cs := clientset(t, cfg)
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch through proxy: %v", err)
	}
	defer w.Stop()
	if n := proxy.CutAll(); n == 0 {
		t.Fatal("CutAll: got 0 connections cut, want the watch's connection")
	}
	watchEnds(t, w, 10*time.Second)

	proxy.Refuse(time.Hour)
	short := rest.CopyConfig(cfg)
	short.Timeout = 5 * time.Second
	if _, err := clientset(t, short).CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err == nil {
		t.Fatal("list while the proxy refuses: got no error")
	}
	proxy.Refuse(0)
	w2, err := clientset(t, cfg).CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch after the proxy accepts again: %v", err)
	}
	defer w2.Stop()
	createConfigMap(t, admin, ns, "after-cut")
	watchSees(t, w2, "after-cut", 30*time.Second)
}

func TestE2ERestrictedUserIsForbiddenToList(t *testing.T) {
	cfg, err := cluster(t).UserConfig("nobody")
	if err != nil {
		t.Fatal(err)
	}
	_, err = clientset(t, cfg).CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("list as a user without RBAC: got %v, want Forbidden", err)
	}
	if _, err := cluster(t).UserConfig("nobody-registered"); err == nil {
		t.Error("UserConfig of an unknown user: got no error")
	}
}
