package live_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

const (
	flowSchemas    = `{"kind":"FlowSchemaList","apiVersion":"flowcontrol.apiserver.k8s.io/v1","metadata":{},"items":[{"metadata":{"name":"global-default","uid":"fs-2"}},{"metadata":{"name":"slow-lane","uid":"fs-1"}}]}`
	priorityLevels = `{"kind":"PriorityLevelConfigurationList","apiVersion":"flowcontrol.apiserver.k8s.io/v1","metadata":{},"items":[{"metadata":{"name":"one-seat","uid":"pl-1"}}]}`
	forbidden      = `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"forbidden"}`
)

// throttlingServer answers every LIST of configmaps 429 with APF's headers,
// as the API server's flow control does (a plain-text body), and serves the
// flow-control lists, or 403s them.
func throttlingServer(t *testing.T, readable bool, lookups *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/apis/flowcontrol.apiserver.k8s.io/v1/") {
			lookups.Add(1)
			w.Header().Set("Content-Type", "application/json")
			switch {
			case !readable:
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(forbidden))
			case strings.HasSuffix(r.URL.Path, "/flowschemas"):
				_, _ = w.Write([]byte(flowSchemas))
			default:
				_, _ = w.Write([]byte(priorityLevels))
			}
			return
		}
		w.Header().Set("Retry-After", "3")
		w.Header().Set(wire.HeaderFlowSchemaUID, "fs-1")
		w.Header().Set(wire.HeaderPriorityLevelUID, "pl-1")
		http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func throttleOfList(t *testing.T, src *live.Source) *reflector.Throttle {
	t.Helper()
	_, err := src.List(context.Background(), reflector.RequestOptions{Limit: 500})
	var end *reflector.RequestEnd
	if !errors.As(err, &end) || end.Status == nil || end.Status.Code != 429 {
		t.Fatalf("List: %v, want a 429 end", err)
	}
	if end.Throttle == nil {
		t.Fatalf("the 429's end has no Throttle: %+v", end)
	}
	return end.Throttle
}

func TestA429CarriesRetryAfterAndTheFlowSchemaAndPriorityLevel(t *testing.T) {
	for _, readable := range []bool{true, false} {
		name := "names readable"
		if !readable {
			name = "names forbidden"
		}
		t.Run(name, func(t *testing.T) {
			var lookups atomic.Int64
			srv := throttlingServer(t, readable, &lookups)
			cfg := &rest.Config{Host: srv.URL}
			names, err := live.NewFlowControlNames(cfg)
			if err != nil {
				t.Fatal(err)
			}
			src, err := live.NewSource(cfg, reflector.Target{Resource: configMaps}, live.Options{Names: names})
			if err != nil {
				t.Fatal(err)
			}
			want := reflector.Throttle{RetryAfter: 3 * time.Second, FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1"}
			if readable {
				want.FlowSchema, want.PriorityLevel = "slow-lane", "one-seat"
			}
			for i := range 3 {
				if got := throttleOfList(t, src); *got != want {
					t.Errorf("429 #%d: Throttle %+v, want %+v", i+1, *got, want)
				}
			}
			// Readable: one lookup (both lists), then the cache. Forbidden:
			// one refused request, never asked again.
			wantLookups := int64(2)
			if !readable {
				wantLookups = 1
			}
			if n := lookups.Load(); n != wantLookups {
				t.Errorf("%d flow-control requests for 3 429s, want %d", n, wantLookups)
			}
		})
	}
}

// warnings keeps the API server's warnings a Source handed on.
type warnings struct{ got []string }

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.got = append(w.got, fmt.Sprintf("%d %s", code, text))
}

// The API server's Warning headers (a deprecated API) go to the handler,
// as client-go's REST clients hand them on (kubectl prints them); a
// reviewer's watch of v1 Endpoints said nothing of their deprecation.
func TestTheAPIServersWarningsGoToTheHandler(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Warning", `299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"EndpointsList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}`))
	}))
	t.Cleanup(srv.Close)
	h := &warnings{}
	target := reflector.Target{Resource: reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}, Kind: "Endpoints", Namespaced: true}}
	src, err := live.NewSource(&rest.Config{Host: srv.URL}, target, live.Options{Warnings: h, Wire: reflector.WireJSON})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.List(context.Background(), reflector.RequestOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(h.got) != 1 || h.got[0] != "299 v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice" {
		t.Errorf("warnings %q, want the server's one", h.got)
	}
}
