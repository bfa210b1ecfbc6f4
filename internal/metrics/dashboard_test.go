package metrics_test

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
)

// promQLWords are PromQL's functions, aggregations and keywords, and the
// label names the dashboard groups and matches on: every other word of an
// expression must be a metric the plugin exports.
func promQLWords() map[string]bool {
	words := map[string]bool{}
	for _, w := range strings.Fields(`sum min max avg count stddev stdvar topk bottomk quantile count_values group
		rate irate increase delta idelta deriv changes resets histogram_quantile abs ceil floor round clamp_min clamp_max
		time vector scalar sort sort_desc label_replace label_join absent absent_over_time avg_over_time max_over_time
		min_over_time sum_over_time count_over_time last_over_time
		by without on ignoring group_left group_right and or unless bool offset
		label_values query_result
		le resource namespace label_selector field_selector type cause result end on kind state job instance id severity`) {
		words[w] = true
	}
	return words
}

// exported are the names a Prometheus server stores from the plugin's
// exposition: every family, and a histogram's _bucket, _sum and _count.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	m := metrics.New(false)
	m.SetProbe(func(from uint64) (bool, []time.Duration, uint64) {
		return true, []time.Duration{time.Millisecond}[from:], 1
	}) // a run with --probe
	replayWithMetrics(t, m, traces+"demo.jsonl")
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		n := mf.GetName()
		names[n] = true
		if mf.GetType() == dto.MetricType_HISTOGRAM || mf.GetType() == dto.MetricType_SUMMARY {
			names[n+"_sum"], names[n+"_count"] = true, true
			if mf.GetType() == dto.MetricType_HISTOGRAM {
				names[n+"_bucket"] = true
			}
		}
	}
	return names
}

// expressions collects every PromQL expression of a Grafana dashboard:
// panel targets' expr, annotations' expr, and template variables' queries.
func expressions(v any, key string, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			switch {
			case k == "expr" || (k == "query" && key == "templating-var"):
				if s, ok := child.(string); ok {
					*out = append(*out, s)
				}
				if q, ok := child.(map[string]any); ok {
					if s, ok := q["query"].(string); ok {
						*out = append(*out, s)
					}
				}
			case k == "list" && key == "templating":
				for _, item := range child.([]any) {
					if m, ok := item.(map[string]any); ok && m["type"] == "query" {
						expressions(m, "templating-var", out)
					}
				}
			default:
				expressions(child, k, out)
			}
		}
	case []any:
		for _, child := range x {
			expressions(child, key, out)
		}
	}
}

var (
	promStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	promWords    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
)

func TestTheGrafanaDashboardNamesOnlyExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("../../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("docs/grafana-dashboard.json is not valid JSON: %v", err)
	}
	var exprs []string
	expressions(dash, "", &exprs)
	if len(exprs) < 20 {
		t.Fatalf("found %d expressions, want the dashboard's panels, annotations and variables", len(exprs))
	}
	names, words := exported(t), promQLWords()
	used := map[string]bool{}
	for _, e := range exprs {
		stripped := promRanges.ReplaceAllString(promMatchers.ReplaceAllString(promStrings.ReplaceAllString(e, ""), ""), "")
		for _, w := range promWords.FindAllString(stripped, -1) {
			switch {
			case names[w]:
				used[w] = true
			case !words[w]:
				t.Errorf("%q names %q, which the plugin does not export", e, w)
			}
		}
	}
	// Every watchcache_ family has a panel.
	var unused []string
	for n := range names {
		if strings.HasPrefix(n, "watchcache_") && !used[n] && !used[n+"_bucket"] && !used[n+"_count"] &&
			!strings.HasSuffix(n, "_sum") && !strings.HasSuffix(n, "_count") && !strings.HasSuffix(n, "_bucket") {
			unused = append(unused, n)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("no panel shows %v", unused)
	}
}
