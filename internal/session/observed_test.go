package session

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// An observed run ends every stream the proxy followed: each is stopped.
func TestAnObservedRunStopsItsStreams(t *testing.T) {
	s, err := NewObserved(ObservedConfig{Rest: &rest.Config{Host: "https://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	target := reflector.Target{Resource: reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true}}
	for i := range 2 {
		s.Observe(observed.NewStream(i+1, observed.Client{UserAgent: "c"}, target, time.Now))
	}
	if err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, sub := range s.Subjects() {
		if st := sub.Stats().State; st != reflector.StateStopped {
			t.Errorf("%s: %s, want stopped", sub.Name(), st)
		}
	}
}
