package session

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// TestE2EAnAuditFindsWhatAProxyThatLosesDeletesLeftInTheCache watches
// ConfigMaps through a middlebox (a proxy in between, as kubectl proxy or a
// caching proxy sits) that, from some point, loses every DELETE event. An
// audit (the dashboard's a) before the fault finds no drift and raises
// nothing; after two deletes it finds both objects still cached, and the
// findings engine raises cache-drift naming them.
func TestE2EAnAuditFindsWhatAProxyThatLosesDeletesLeftInTheCache(t *testing.T) {
	c := shared.Get(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ns = "drift"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tracePath := filepath.Join(t.TempDir(), "drift.jsonl")
	mb, err := c.NewMiddlebox()
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	sess, err := NewLive(LiveConfig{Rest: mb.Config(c.Config()), TracePath: tracePath, Resources: []ResourceConfig{{
		Target:    reflector.Target{Resource: builtin("configmaps", "ConfigMap"), Namespace: ns},
		Reflector: reflector.Config{Strategy: reflector.StrategyAuto},
		Wire:      reflector.WireJSON, // the middlebox changes JSON watches only
	}}})
	if err != nil {
		t.Fatal(err)
	}
	w := sess.Resources[0]
	done := make(chan error, 1)
	go func() { done <- sess.Run(ctx) }()
	stop := sync.OnceFunc(func() {
		cancel()
		<-done
	})
	defer stop()
	if err := sess.WaitUntilReady(ctx); err != nil {
		t.Fatal(err)
	}
	if rep, err := w.Reflector.Audit(ctx, 5*time.Second); err != nil || rep.Drift() {
		t.Fatalf("the audit before the fault: %v, %v", rep, err)
	}
	if fs := w.Findings().List(); len(fs) > 0 {
		t.Fatalf("findings before the fault: %+v", fs)
	}

	mb.DropDeletes(true)
	for _, name := range []string{"cm-0", "cm-1"} {
		if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// An object created after the deletes: once the cache has it, the
	// watch has carried everything before it (or lost it).
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		if _, ok := w.Store().Get(store.Ref{Namespace: ns, Name: "after"}); ok {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the cache never got the object created after the deletes")
		}
		time.Sleep(20 * time.Millisecond)
	}
	rep, err := w.Reflector.Audit(ctx, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if dropped, _ := mb.Counts(); dropped != 2 || len(rep.Extra) != 2 || len(rep.Missing)+len(rep.Different) != 0 {
		t.Fatalf("the middlebox dropped %d DELETEs; the audit: %s", dropped, rep)
	}
	f, ok := w.Findings().Get(findings.CacheDrift)
	if !ok {
		t.Fatalf("no cache-drift after the audit %s; findings %+v", rep, w.Findings().List())
	}
	if f.Severity != findings.Error || f.Evidence.ObjectsTotal != 2 || f.Evidence.Facts["listed"] != "3" || f.Evidence.Facts["cached"] != "5" {
		t.Errorf("want an error of the 2 extra objects, 3 listed and 5 cached: %s", f.Detail())
	}
	for i, o := range f.Evidence.Objects {
		if want := fmt.Sprintf("cm-%d", i); o.Name != want || o.What != "extra" || o.OldUID == "" {
			t.Errorf("evidence object %d: %+v, want %s, extra, with its UID", i, o, want)
		}
	}
	if fs := w.Findings().List(); len(fs) != 1 {
		t.Errorf("want cache-drift alone: %+v", fs)
	}

	// The trace recorded both audits: its replay raises the same finding,
	// from what the audit found then (a replay cannot list afresh).
	stop()
	rp, err := NewReplay(tracePath, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.Run(context.Background()); err != nil {
		t.Fatalf("replaying the trace: %v", err)
	}
	rf, ok := rp.Resources[0].Findings().Get(findings.CacheDrift)
	if !ok {
		t.Fatalf("the replay raised no cache-drift; findings %+v", rp.Resources[0].Findings().List())
	}
	if got, want := rf.Detail(), f.Detail(); got != want {
		t.Errorf("the replay's cache-drift:\n%s\nwant the live one's:\n%s", got, want)
	}
}
