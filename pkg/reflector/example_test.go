package reflector_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// A reflector for the ConfigMaps of one namespace, from a rest.Config into a
// store, with its stats read once the first list is in. (A tiny stand-in for
// kube-apiserver answers here, so the example runs anywhere.)
func Example() {
	server := httptest.NewServer(http.HandlerFunc(fakeAPIServer))
	defer server.Close()
	cfg := &rest.Config{Host: server.URL} // from a kubeconfig in real life

	target := reflector.Target{
		Resource:  reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true},
		Namespace: "default",
	}
	source, err := live.NewSource(cfg, target, live.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	st, w := store.New()
	r, err := reflector.New(reflector.Config{Source: source, Strategy: reflector.StrategyList, PageSize: 500}, w, st)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()

	if err := st.WaitUntilReady(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for st.Len() < 3 { // the watch adds a third ConfigMap
		time.Sleep(10 * time.Millisecond)
	}
	stats := r.Stats()
	fmt.Println(stats.State, "at resourceVersion", stats.ResourceVersion, "with", st.Len(), "objects")
	fmt.Printf("lists %d, watches %d, added %d\n", stats.Counters.Lists, stats.Counters.Watches, stats.Counters.Added)
	stop()
	fmt.Println("Run:", <-done)
	// Output:
	// Watching at resourceVersion 12 with 3 objects
	// lists 1, watches 1, added 1
	// Run: <nil>
}

// fakeAPIServer answers a LIST of two ConfigMaps at resourceVersion 10, and
// a WATCH from 10 with one ADDED event, then holds the watch open.
func fakeAPIServer(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Get("watch") != "true" {
		fmt.Fprint(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[`+
			`{"metadata":{"namespace":"default","name":"a","uid":"uid-a","resourceVersion":"8"}},`+
			`{"metadata":{"namespace":"default","name":"b","uid":"uid-b","resourceVersion":"9"}}]}`)
		return
	}
	fmt.Fprintln(w, `{"type":"ADDED","object":{"metadata":{"namespace":"default","name":"c","uid":"uid-c","resourceVersion":"12"}}}`)
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}
