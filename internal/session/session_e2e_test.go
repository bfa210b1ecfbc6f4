package session

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

var shared = testcluster.NewLazy(testcluster.Options{})

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, shared)) }

func builtin(resource, kind string) reflector.Resource {
	return reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: resource}, Kind: kind, Namespaced: true}
}

// TestE2EResourcesShareOneConnection: a controller's informers share one
// HTTP/2 connection to the apiserver; so do a session's reflectors.
func TestE2EResourcesShareOneConnection(t *testing.T) {
	c := shared.Get(t)
	proxy, err := c.NewProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	cfg := LiveConfig{Rest: proxy.Config(c.Config()), MaxConcurrentLists: 2}
	for _, r := range []reflector.Resource{builtin("configmaps", "ConfigMap"), builtin("secrets", "Secret"), builtin("services", "Service"), builtin("serviceaccounts", "ServiceAccount")} {
		cfg.Resources = append(cfg.Resources, ResourceConfig{Target: reflector.Target{Resource: r}, Reflector: reflector.Config{Strategy: reflector.StrategyAuto}})
	}
	sess, err := NewLive(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sess.Run(ctx) }()
	if err := sess.WaitUntilReady(ctx); err != nil {
		t.Fatal(err)
	}
	// A store is ready when its list is installed; the reflector says
	// Watching right after, on its own goroutine.
	for _, r := range sess.Resources {
		for st := r.Reflector.Stats(); st.State != reflector.StateWatching; st = r.Reflector.Stats() {
			if ctx.Err() != nil {
				t.Fatalf("%s: %s, want Watching", r.Name(), st.State)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if n := proxy.Accepted(); n != 1 {
		t.Errorf("connections to the apiserver: got %d, want 1 shared by the %d reflectors", n, len(sess.Resources))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
