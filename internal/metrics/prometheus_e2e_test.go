package metrics_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/plugintest"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testdeps"
)

// relistTrace writes a trace with a 410 and a relist in its first second,
// then a watch that lasts for the rest of d, with a bookmark every second:
// replayed at --speed 1 it keeps the metrics up for d.
func relistTrace(t *testing.T, d time.Duration) string {
	t.Helper()
	const ms = int64(time.Millisecond)
	obj := func(name, rv string) string {
		return fmt.Sprintf(`{"metadata":{"namespace":"prom","name":%q,"uid":"uid-%s","resourceVersion":%q}}`, name, name, rv)
	}
	lines := []string{
		`{"k":"header","v":1,"startedAt":"2026-01-01T00:00:00Z","tool":"test","resource":{"version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true},"namespace":"prom","objects":"none","options":{"strategy":"list","watchTimeout":"5m0s","idleTimeout":"10m30s","initialEventsTimeout":"1m0s","maxPermanentRetries":5}}`,
		`{"k":"request","at":0,"id":1,"verb":"list","opts":{}}`,
		fmt.Sprintf(`{"k":"item","at":%d,"id":1,"object":%s}`, 10*ms, obj("a", "5")),
		fmt.Sprintf(`{"k":"item","at":%d,"id":1,"object":%s}`, 10*ms, obj("b", "6")),
		fmt.Sprintf(`{"k":"page","at":%d,"id":1,"resourceVersion":"10","items":2}`, 10*ms),
		fmt.Sprintf(`{"k":"end","at":%d,"id":1,"reason":"closed"}`, 10*ms),
		fmt.Sprintf(`{"k":"request","at":%d,"id":2,"verb":"watch","opts":{"resourceVersion":"10","allowWatchBookmarks":true,"timeoutSeconds":300}}`, 20*ms),
		fmt.Sprintf(`{"k":"event","at":%d,"id":2,"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 10 (15)","reason":"Expired","code":410}}`, 300*ms),
		fmt.Sprintf(`{"k":"end","at":%d,"id":2,"reason":"error","status":{"code":410,"reason":"Expired","message":"too old resource version: 10 (15)"}}`, 300*ms),
		fmt.Sprintf(`{"k":"request","at":%d,"id":3,"verb":"list","opts":{}}`, 310*ms),
		fmt.Sprintf(`{"k":"item","at":%d,"id":3,"object":%s}`, 320*ms, obj("a", "5")),
		fmt.Sprintf(`{"k":"page","at":%d,"id":3,"resourceVersion":"20","items":1}`, 320*ms),
		fmt.Sprintf(`{"k":"end","at":%d,"id":3,"reason":"closed"}`, 320*ms),
		fmt.Sprintf(`{"k":"request","at":%d,"id":4,"verb":"watch","opts":{"resourceVersion":"20","allowWatchBookmarks":true,"timeoutSeconds":300}}`, 330*ms),
	}
	for s := int64(1); s < int64(d/time.Second); s++ {
		lines = append(lines, fmt.Sprintf(`{"k":"event","at":%d,"id":4,"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"%d"}}}`, s*1000*ms, 20+s))
	}
	path := filepath.Join(t.TempDir(), "relist.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startPrometheus runs a Prometheus server on loopback that scrapes target
// every second, with its data in a temporary directory; it is stopped when the test ends.
func startPrometheus(t *testing.T, target string) string {
	t.Helper()
	return testdeps.StartPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: watchcache
    static_configs:
      - targets: [%q]
`, target))
}

// promResult is one sample of an instant query's vector.
type promResult struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// query runs an instant query through Prometheus's HTTP API.
func query(base, q string) ([]promResult, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", q, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", q, err)
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string       `json:"resultType"`
			Result     []promResult `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("query %s: %w: %s", q, err, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, r.Error)
	}
	return r.Data.Result, nil
}

func TestE2EPrometheusScrapesThePluginAndShowsTheRelist(t *testing.T) {
	start := time.Now()
	tracePath := relistTrace(t, 3*time.Minute)
	p := startPlugin(t, "replay", tracePath, "--speed", "1", "--no-tui", "--metrics-address", "127.0.0.1:0")
	target := strings.TrimSuffix(strings.TrimPrefix(p.metricsURL(t), "http://"), "/metrics")
	base := startPrometheus(t, target)
	var got []promResult
	plugintest.Eventually(t, 60*time.Second, "prometheus to show the relist", func() bool {
		var err error
		got, err = query(base, `watchcache_relists_total{job="watchcache",cause="gone"}`)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			return false
		}
		v, _ := got[0].Value[1].(string)
		n, err := strconv.ParseFloat(v, 64)
		return err == nil && n == 1
	})
	m := got[0].Metric
	if m["resource"] != "configmaps.v1" || m["namespace"] != "prom" || m["__name__"] != "watchcache_relists_total" {
		t.Errorf("series labels: %v", m)
	}
	all, err := query(base, `sum(watchcache_relists_total)`)
	if err != nil || len(all) != 1 || all[0].Value[1] != "1" {
		t.Errorf("sum of relists over every cause: %+v, %v; want 1", all, err)
	}
	// The relist found b deleted behind the watch's back: missed-deletes, raised once.
	plugintest.Eventually(t, 30*time.Second, "prometheus to show the missed-deletes finding", func() bool {
		got, err = query(base, `watchcache_findings{job="watchcache",id="missed-deletes"}`)
		if err != nil {
			t.Fatal(err)
		}
		return len(got) == 1
	})
	if m := got[0].Metric; m["severity"] != "warning" || m["resource"] != "configmaps.v1" || got[0].Value[1] != "1" {
		t.Errorf("the missed-deletes finding: %+v, want 1 with severity warning on configmaps.v1", got[0])
	}
	if err := p.Stop(); err != nil {
		t.Errorf("the replay failed: %v\n%s", err, p.ErrOut.String())
	}
	t.Logf("prometheus showed the relist %s after the test started", time.Since(start).Round(100*time.Millisecond))
}
