package wire_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

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

func throttleOfList(t *testing.T, src *wire.LiveSource) *reflector.Throttle {
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
			names, err := wire.NewFlowControlNames(cfg)
			if err != nil {
				t.Fatal(err)
			}
			src, err := wire.NewLiveSourceWith(cfg, reflector.Target{Resource: configMaps}, wire.LiveOptions{Names: names})
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

func TestThrottleOfReadsRetryAfterInSecondsOrAsADate(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{
		{"5", 5 * time.Second},
		{"", 0},
		{"soon", 0},
		{"-1", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	} {
		h := http.Header{}
		if tc.value != "" {
			h.Set("Retry-After", tc.value)
		}
		got := wire.ThrottleOf(429, h, now)
		if got == nil || got.RetryAfter != tc.want {
			t.Errorf("Retry-After %q: %+v, want %s", tc.value, got, tc.want)
		}
	}
	if got := wire.ThrottleOf(503, http.Header{"Retry-After": {"5"}}, now); got != nil {
		t.Errorf("a 503 has a Throttle: %+v", got)
	}
}

// TestListPageBytesAreTheBodyAsDecoded: Page.Bytes is the uncompressed
// size of the LIST body, whether the server gzipped it or not.
func TestListPageBytesAreTheBodyAsDecoded(t *testing.T) {
	list := benchList(t, 50)
	for _, gz := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if !gz {
				_, _ = w.Write(list)
				return
			}
			if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				t.Errorf("the request does not accept gzip: %q", r.Header.Get("Accept-Encoding"))
			}
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			_, _ = zw.Write(list)
			_ = zw.Close()
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(b.Bytes())
		}))
		src, err := wire.NewLiveSource(&rest.Config{Host: srv.URL}, reflector.Target{Resource: configMaps}, false, false)
		if err != nil {
			t.Fatal(err)
		}
		page, err := src.List(context.Background(), reflector.RequestOptions{})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if page.Bytes != int64(len(list)) || len(page.Items) != 50 {
			t.Errorf("gzip %t: %d items in %d bytes, want 50 in %d", gz, len(page.Items), page.Bytes, len(list))
		}
		page, err = wire.DecodeListResponse(bytes.NewReader(list), "application/json", false)
		if err != nil || page.Bytes != int64(len(list)) {
			t.Errorf("DecodeListResponse: %d bytes, %v; want %d", page.Bytes, err, len(list))
		}
	}
}
