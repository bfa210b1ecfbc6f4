package metrics_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

const traces = "../../testdata/traces/"

// replayWithMetrics replays a trace at full speed into m and returns the
// summary; the findings engine ignores the ids of ignore.
func replayWithMetrics(t testing.TB, m *metrics.Metrics, path string, ignore ...findings.ID) summary.Summary {
	t.Helper()
	sess, err := session.NewReplay(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := sess.Resources[0]
	if len(ignore) > 0 {
		r.Findings().Configure(findings.Options{Ignore: ignore})
	}
	h := r.Header
	res, err := m.Add(metrics.Labels{Resource: h.Resource.String(), Namespace: h.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	r.OnNote(res.Note)
	res.Attach(metrics.Source{Stats: r.Reflector.Stats, Store: r.Store().Counters, Now: sess.Now, Findings: r.Findings().List})
	if err := sess.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r.Summary(sess.Now())
}

func serve(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	srv, err := metrics.Serve("127.0.0.1:0", m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv.URL()
}

// countersEqualTheSummary checks every metric that has a summary counter.
func countersEqualTheSummary(t *testing.T, f families, sum summary.Summary, labels map[string]string) {
	t.Helper()
	with := func(kv ...string) map[string]string {
		out := l(kv...)
		for k, v := range labels {
			out[k] = v
		}
		return out
	}
	c := sum.Counters
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   int64
	}{
		{"watchcache_relists_total", with(), c.Relists},
		{"watchcache_list_pages_total", with("result", "ok"), c.ListPages},
		{"watchcache_watches_total", with(), c.Watches},
		{"watchcache_gone_total", with(), c.Gone},
		{"watchcache_too_large_resource_version_total", with(), c.TooLargeResourceVersion},
		{"watchcache_bookmarks_total", with(), c.Bookmarks},
		{"watchcache_events_total", with("type", "ADDED"), c.Added},
		{"watchcache_events_total", with("type", "MODIFIED"), c.Modified},
		{"watchcache_events_total", with("type", "DELETED"), c.Deleted},
		{"watchcache_uid_mismatches_total", with(), c.UIDMismatches},
		{"watchcache_duplicates_total", with(), c.Duplicates},
		{"watchcache_resource_version_backwards_total", with(), c.ResourceVersionBackwards},
		{"watchcache_backoffs_total", with(), c.Backoffs},
		{"watchcache_watch_errors_total", with(), c.WatchErrors},
		{"watchcache_store_objects", with(), int64(sum.Objects)},
	} {
		if got := f.get(t, tc.name, tc.labels); got != float64(tc.want) {
			t.Errorf("%s%v: got %v, want the summary's %d", tc.name, tc.labels, got, tc.want)
		}
	}
	// A series per finding of the summary: 1, or 0 when ignored; no other.
	for _, fd := range sum.Findings {
		want := 1.0
		if fd.Ignored {
			want = 0
		}
		if got := f.get(t, "watchcache_findings", with("id", string(fd.ID), "severity", string(fd.Severity))); got != want {
			t.Errorf("watchcache_findings{id=%q}: got %v, want %v (ignored %v)", fd.ID, got, want, fd.Ignored)
		}
	}
	series := 0
	if mf := f["watchcache_findings"]; mf != nil {
		series = len(mf.GetMetric())
	}
	if series != len(sum.Findings) {
		t.Errorf("watchcache_findings has %d series, want one per finding of the summary (%d)", series, len(sum.Findings))
	}
}

func TestAReplayedRelistIsCountedByCauseAndMatchesTheSummary(t *testing.T) {
	m := metrics.New(false)
	url := serve(t, m)
	sum := replayWithMetrics(t, m, traces+"demo.jsonl")
	f := scrape(t, url)
	ns := l("resource", "configmaps.v1", "label_selector", "", "field_selector", "")
	countersEqualTheSummary(t, f, sum, ns)
	with := func(kv ...string) map[string]string {
		out := l(kv...)
		for k, v := range ns {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"watchcache_relists_total", with("cause", "gone"), 1},
		{"watchcache_gone_total", with("on", "watch"), 1},
		{"watchcache_lists_total", with("result", "complete"), 2},
		{"watchcache_lists_total", with("result", "restarted"), 0},
		{"watchcache_list_duration_seconds", with(), 2},
		{"watchcache_relist_missed_total", with("kind", "delete"), 3},
		{"watchcache_relist_missed_total", with("kind", "recreate"), 1},
		{"watchcache_relist_missed_total", with("kind", "update"), 2},
		{"watchcache_relist_missed_total", with("kind", "add"), 0},
		{"watchcache_state", with("state", "Stopped"), 1},
		{"watchcache_state", with("state", "Watching"), 0},
		{"watchcache_watch_duration_seconds", with(), float64(sum.Counters.Watches)},
		{"watchcache_findings", with("id", "missed-deletes", "severity", "warning"), 1},
	} {
		if got := f.get(t, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v: got %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	if b := f.get(t, "watchcache_backoff_seconds_total", ns); b <= 0 {
		t.Errorf("backoff seconds: got %v, want the demo's backoffs", b)
	}
	if s := f.get(t, "watchcache_time_to_sync_seconds", ns); s <= 0 || s > 1 {
		t.Errorf("time to sync: got %v s", s)
	}
}

// An ignored finding keeps its series, at 0: a rule or a dashboard sees it
// is known, and alerts on watchcache_findings > 0 stay quiet.
func TestAnIgnoredFindingIsZero(t *testing.T) {
	m := metrics.New(false)
	url := serve(t, m)
	sum := replayWithMetrics(t, m, traces+"demo.jsonl", findings.MissedDeletes)
	if len(sum.Findings) == 0 || !sum.Findings[0].Ignored {
		t.Fatalf("the demo's findings %+v: want missed-deletes, ignored", sum.Findings)
	}
	f := scrape(t, url)
	countersEqualTheSummary(t, f, sum, l("resource", "configmaps.v1"))
	if got := f.get(t, "watchcache_findings", l("id", "missed-deletes", "severity", "warning")); got != 0 {
		t.Errorf("the ignored missed-deletes: got %v, want 0", got)
	}
}

func TestEveryBundledTraceMatchesItsSummary(t *testing.T) {
	for _, name := range []string{"steady", "gone-relist", "bookmarks", "recreate", "streaming"} {
		t.Run(name, func(t *testing.T) {
			m := metrics.New(false)
			url := serve(t, m)
			sum := replayWithMetrics(t, m, traces+name+".jsonl")
			countersEqualTheSummary(t, scrape(t, url), sum, l("resource", "configmaps.v1"))
		})
	}
}

func TestTheExpositionPassesPromlint(t *testing.T) {
	mfs := demoFamilies(t)
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	n := 0
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "watchcache_") {
			n++
		}
	}
	if n < 20 {
		t.Errorf("only %d watchcache_ metric families", n)
	}
}

func TestSeveralResourcesShareARegistryEachWithItsLabels(t *testing.T) {
	m := metrics.New(false)
	url := serve(t, m)
	replayWithMetrics(t, m, traces+"gone-relist.jsonl")
	replayWithMetrics(t, m, traces+"steady.jsonl")
	f := scrape(t, url)
	seen := map[string]bool{}
	var namespaces []string
	for _, mt := range f["watchcache_relists_total"].GetMetric() {
		for _, lp := range mt.GetLabel() {
			if lp.GetName() == "namespace" && !seen[lp.GetValue()] {
				seen[lp.GetValue()] = true
				namespaces = append(namespaces, lp.GetValue())
			}
		}
	}
	if len(namespaces) != 2 {
		t.Fatalf("relists series for namespaces %v, want two resources", namespaces)
	}
	total := f.get(t, "watchcache_relists_total", l("resource", "configmaps.v1"))
	if total != 1 {
		t.Errorf("relists over both resources: got %v, want 1 (gone-relist's)", total)
	}
	if _, err := m.Add(metrics.Labels{Resource: "configmaps.v1", Namespace: namespaces[0]}); err == nil {
		t.Error("adding the same labels twice: no error")
	}
}

func TestLoopbackAddresses(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:9090": true, "localhost:9090": true, "[::1]:9090": true, "127.0.0.2:1": true,
		":9090": false, "0.0.0.0:9090": false, "10.1.2.3:9090": false, "example.com:9090": false, "[::]:9090": false,
	} {
		got, err := metrics.IsLoopback(addr)
		if err != nil || got != want {
			t.Errorf("IsLoopback(%q): got %v, %v; want %v", addr, got, err, want)
		}
	}
	for _, bad := range []string{"9090", "127.0.0.1:99999", "127.0.0.1:-1", "127.0.0.1:nosuchservice"} {
		if _, err := metrics.IsLoopback(bad); err == nil {
			t.Errorf("IsLoopback(%q): no error", bad)
		}
	}
}

// A metric broken down by a label says in its HELP what each value means:
// a value the code produces that HELP leaves out (stopped, once) sends the
// reader of a dashboard to the README.
func TestTheHelpOfABrokenDownMetricNamesEveryValueItsLabelTakes(t *testing.T) {
	mfs := demoFamilies(t)
	byLabel := map[string]string{
		"watchcache_list_pages_total":       "result",
		"watchcache_lists_total":            "result",
		"watchcache_watch_duration_seconds": "end",
		"watchcache_gone_total":             "on",
		"watchcache_relists_total":          "cause",
	}
	seen := map[string]bool{}
	for _, mf := range mfs {
		name := mf.GetName()
		if name == "watchcache_watch_errors_total" && !strings.Contains(mf.GetHelp(), "410") {
			// A watch that a 410 ended is an error in the duration histogram, not here.
			t.Errorf("%s's HELP does not say that a 410 Gone is not counted: %q", name, mf.GetHelp())
		}
		label, ok := byLabel[name]
		if !ok {
			continue
		}
		seen[name] = true
		for _, mt := range mf.GetMetric() {
			for _, lp := range mt.GetLabel() {
				if lp.GetName() != label {
					continue
				}
				word := regexp.MustCompile(`(?i)(^|[^a-z-])` + regexp.QuoteMeta(lp.GetValue()) + `($|[^a-z-])`)
				if !word.MatchString(mf.GetHelp()) {
					t.Errorf("%s{%s=%q}: its HELP does not name the value: %q", name, label, lp.GetValue(), mf.GetHelp())
				}
			}
		}
	}
	for name := range byLabel {
		if !seen[name] {
			t.Errorf("no metric family %s", name)
		}
	}
}

// demoFamilies are the metric families the demo trace's replay leaves.
func demoFamilies(t *testing.T) []*dto.MetricFamily {
	t.Helper()
	m := metrics.New(false)
	replayWithMetrics(t, m, traces+"demo.jsonl")
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}
