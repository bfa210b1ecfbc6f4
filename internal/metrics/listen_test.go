package metrics_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
)

// A server that listens before its registry exists answers its probes at
// once, /metrics with 503 until the registry is published, and then the
// registry's series.
func TestListenAnswersBeforeTheRegistryAndServesItOncePublished(t *testing.T) {
	srv, err := metrics.Listen("127.0.0.1:0", func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(strings.TrimSuffix(srv.URL(), "/metrics") + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/metrics"); code != http.StatusServiceUnavailable || !strings.Contains(body, "not started") {
		t.Errorf("/metrics before Publish: %d %q, want 503", code, body)
	}
	if code, _ := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz before Publish: %d, want 200", code)
	}
	m := metrics.New(false)
	if _, err := m.Add(metrics.Labels{Resource: "configmaps.v1", Namespace: "demo"}); err != nil {
		t.Fatal(err)
	}
	srv.Publish(m)
	if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(body, `resource="configmaps.v1"`) {
		t.Errorf("/metrics after Publish: %d, without the resource's series:\n%s", code, body)
	}
}
