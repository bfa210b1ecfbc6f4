package metrics_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
)

// A server that listens before its registry exists answers its probes at
// once, /metrics with the process's own metrics until the registry is
// published, and then the registry's series.
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
	// A scraper that starts on the "serving metrics" line, before the
	// session has subjects, gets the process's metrics, not an error.
	if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(body, "go_goroutines") || strings.Contains(body, "watchcache_") {
		t.Errorf("/metrics before Publish: %d, want 200 with the Go runtime's metrics and none of the run's:\n%s", code, body)
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

// A server bound to every interface names, in its URL, the loopback address
// of the family asked for: the address a client on this host reaches, not
// "[::]", which a browser cannot open. A scrape of that URL answers.
func TestTheURLOfAServerOnEveryInterfaceIsLoopback(t *testing.T) {
	for _, c := range []struct {
		addr, prefix string
		everywhere   bool
	}{
		{":0", "http://127.0.0.1:", true},
		{"0.0.0.0:0", "http://127.0.0.1:", true},
		{"[::]:0", "http://[::1]:", true},
		{"127.0.0.1:0", "http://127.0.0.1:", false},
	} {
		s, err := metrics.Listen(c.addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		url := s.URL()
		// The line a run prints says where it listens when that is every
		// interface (a loopback URL alone read as a loopback listener), and
		// the URL is read back from it.
		line := metrics.ServingLineOf(s)
		if says := strings.Contains(line, "(listening on every interface, "); says != c.everywhere {
			t.Errorf("Listen(%q): %q says it listens on every interface: %v, want %v", c.addr, line, says, c.everywhere)
		}
		if got, ok := metrics.ServingURL(line + "\n"); !ok || got != url {
			t.Errorf("ServingURL(%q) = %q, %v; want %q", line, got, ok, url)
		}
		if !strings.HasPrefix(url, c.prefix) || !strings.HasSuffix(url, "/metrics") {
			t.Errorf("Listen(%q).URL() = %q, want %s…/metrics", c.addr, url, c.prefix)
		} else if resp, err := http.Get(url); err != nil {
			t.Errorf("GET %s: %v", url, err)
		} else {
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s: %s", url, resp.Status)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
