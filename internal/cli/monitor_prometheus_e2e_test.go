package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testdeps"
)

// prometheusRuleFile writes the groups of the PrometheusRule that
// deploy/overlays/prometheus renders (the component's) as a Prometheus rule
// file, as the operator hands them to Prometheus: spec.groups is a rule
// file's groups. The expressions are the manifest's, unchanged; its alerts
// have no for:, so nothing is shortened. It returns the file and the names
// of its alerts.
func prometheusRuleFile(t *testing.T, dir string) (string, []string) {
	t.Helper()
	for _, o := range kustomizeBuild(t, "deploy/overlays/prometheus") {
		if o.GetKind() != "PrometheusRule" {
			continue
		}
		groups, found, err := unstructured.NestedSlice(o.Object, "spec", "groups")
		if err != nil || !found || len(groups) == 0 {
			t.Fatalf("the PrometheusRule's spec.groups: %v, found %v", err, found)
		}
		b, err := yaml.Marshal(map[string]any{"groups": groups})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "rules.yml")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, a := range prometheusRuleAlerts(t, []*unstructured.Unstructured{o}) {
			names = append(names, a[0])
		}
		return path, names
	}
	t.Fatal("no PrometheusRule in deploy/overlays/prometheus")
	return "", nil
}

// startPrometheusServer runs Debian's prometheus on loopback with the rule
// file, scraping each job's one target every second and evaluating the
// rules every second; it is stopped when the test ends, its log shown if
// the test failed. It returns the server's base URL once it is ready.
func startPrometheusServer(t *testing.T, rules string, targets map[string]string) string {
	t.Helper()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [%q]\nscrape_configs:\n", rules)
	for job, target := range targets {
		cfg += fmt.Sprintf("  - job_name: %q\n    static_configs:\n      - targets: [%q]\n", job, target)
	}
	return testdeps.StartPrometheus(t, cfg)
}

// promAPI decodes the data of a Prometheus HTTP API answer at path into data.
func promAPI(t *testing.T, base, path string, data any) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		t.Fatalf("GET %s: %v %s: %s", path, err, r.Error, body)
	}
	if err := json.Unmarshal(r.Data, data); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, r.Data)
	}
}

// promAlert is an alert of /api/v1/alerts.
type promAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
}

// promSample is a sample of an instant query's vector.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// promQuery is the vector an instant query of q answers.
func promQuery(t *testing.T, base, q string) []promSample {
	t.Helper()
	var data struct {
		Result []promSample `json:"result"`
	}
	promAPI(t, base, "/api/v1/query?query="+url.QueryEscape(q), &data)
	return data.Result
}

// TestE2EPrometheusFiresTheRelistsAlertOnARelistStorm: a real Prometheus
// loads the PrometheusRule of deploy/components/prometheus as its rule
// file and scrapes two monitors of the ConfigMaps of one namespace: one
// through the observing proxy with --fault gone@every=5s, so that every
// watch gets a 410 every 5 s and the monitor relists (job "storm"), one
// straight to the apiserver (job "healthy"). WatchcacheRelists, the
// manifest's expression evaluated by Prometheus, fires for the storm's
// ConfigMaps series within a minute, its labels naming the resource and
// namespace; for the healthy monitor, scraped as long, the same
// expression is 0 and no alert fires.
func TestE2EPrometheusFiresTheRelistsAlertOnARelistStorm(t *testing.T) {
	start := time.Now()
	work := t.TempDir()
	rules, alerts := prometheusRuleFile(t, work)

	c := cluster(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()
	const ns = "monitor-prometheus"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": "v"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	proxyKC := filepath.Join(work, "proxy.kubeconfig")
	proxy := startRun(t, "proxy", "--kubeconfig", kubeconfig(t), "--port", "0", "--no-tui", "-o", "json",
		"--print-kubeconfig", proxyKC, "--fault", "gone@every=5s")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(proxyKC); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy wrote no kubeconfig within a minute\n%s", tail(proxy.errOut.String()))
		}
	}

	dir := pluginPath(t)
	storm := startPlugin(t, dir, proxyKC, "monitor", "configmaps", "-n", ns, "--listen", "127.0.0.1:0")
	healthy := startPlugin(t, dir, kubeconfig(t), "monitor", "configmaps", "-n", ns, "--listen", "127.0.0.1:0")
	targets := map[string]string{"storm": storm.servingAt(t), "healthy": healthy.servingAt(t)}
	base := startPrometheusServer(t, rules, targets)
	t.Logf("prometheus scrapes both monitors %s after the test started", time.Since(start).Round(100*time.Millisecond))

	// The rule file loaded whole: every alert of the manifest is a rule.
	var loaded struct {
		Groups []struct {
			Rules []struct {
				Name string `json:"name"`
			} `json:"rules"`
		} `json:"groups"`
	}
	promAPI(t, base, "/api/v1/rules", &loaded)
	var names []string
	for _, g := range loaded.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Name)
		}
	}
	if strings.Join(names, ",") != strings.Join(alerts, ",") {
		t.Fatalf("prometheus loaded the rules %v, want the PrometheusRule's alerts %v", names, alerts)
	}

	// Until WatchcacheRelists fires for the storm (the manifest's alerts have
	// no for:, so it fires at once, without a pending state first), and on
	// for at least 15 s of scrapes (three 410s of the storm): never an
	// alert for the healthy monitor.
	scraping := time.Now()
	alertsNow := func() []promAlert {
		t.Helper()
		var got struct {
			Alerts []promAlert `json:"alerts"`
		}
		promAPI(t, base, "/api/v1/alerts", &got)
		for _, a := range got.Alerts {
			if a.Labels["job"] == "healthy" {
				t.Fatalf("an alert fired for the healthy monitor: %+v", a)
			}
		}
		return got.Alerts
	}
	var fired *promAlert
	pending := false
	deadline := time.Now().Add(60 * time.Second)
	for fired == nil {
		got := alertsNow()
		for i, a := range got {
			if a.Labels["alertname"] != "WatchcacheRelists" || a.Labels["job"] != "storm" {
				continue
			}
			switch a.State {
			case "pending":
				pending = true
			case "firing":
				fired = &got[i]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("WatchcacheRelists did not fire for the storm within 60 s (pending seen: %v); alerts: %+v\nthe storm monitor's log:\n%s",
				pending, got, tail(storm.errOut.String()))
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("WatchcacheRelists fired %s after the test started (pending seen: %v): %+v",
		time.Since(start).Round(100*time.Millisecond), pending, *fired)
	want := map[string]string{"alertname": "WatchcacheRelists", "job": "storm", "instance": targets["storm"],
		"resource": "configmaps.v1", "namespace": ns, "severity": "warning"}
	for k, v := range want {
		if fired.Labels[k] != v {
			t.Errorf("the alert's label %s=%q, want %q (labels %v)", k, fired.Labels[k], v, fired.Labels)
		}
	}
	if _, ok := fired.Labels["cause"]; ok {
		t.Errorf("the alert keeps the cause label that the expression sums away: %v", fired.Labels)
	}
	if s := fired.Annotations["summary"]; s != "configmaps.v1 relisted (--fail-on relists>0)" {
		t.Errorf("the alert's summary: %q", s)
	}

	// The storm did relist on 410s, and the healthy monitor's series are
	// there, its expression 0: the absence of its alert is not for want of data.
	gone := map[string]string{}
	for _, s := range promQuery(t, base, `sum by (job) (watchcache_relists_total{cause="gone"})`) {
		gone[s.Metric["job"]], _ = s.Value[1].(string)
	}
	if gone["storm"] == "" || gone["storm"] == "0" || gone["healthy"] != "0" {
		t.Errorf("relists on 410 by job: %v; want some for the storm and 0 for the healthy monitor", gone)
	}
	healthyExpr := promQuery(t, base, `sum without (cause) (increase(watchcache_relists_total{job="healthy"}[15m]))`)
	if len(healthyExpr) != 1 || healthyExpr[0].Value[1] != "0" || healthyExpr[0].Metric["resource"] != "configmaps.v1" {
		t.Errorf("the alert's expression, less its > 0, for the healthy monitor: %+v; want one series, 0", healthyExpr)
	}
	for time.Since(scraping) < 15*time.Second {
		alertsNow()
		time.Sleep(500 * time.Millisecond)
	}
	storm.terminate(t, 5*time.Second)
	healthy.terminate(t, 5*time.Second)
}
