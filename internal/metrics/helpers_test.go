package metrics_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// families are parsed metric families by name.
type families map[string]*dto.MetricFamily

// scrape GETs url and parses the text exposition format.
func scrape(t testing.TB, url string) families {
	t.Helper()
	fams, err := tryScrape(url)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func tryScrape(url string) (families, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("scraping %s: %s: %s", url, resp.Status, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", url, err)
	}
	return fams, nil
}

// value sums the series of name whose labels include want (a counter's or
// gauge's value, a histogram's count); ok is false when name has no such series.
func (f families) value(name string, want map[string]string) (float64, bool) {
	mf := f[name]
	if mf == nil {
		return 0, false
	}
	sum, found := 0.0, false
outer:
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue outer
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum, found
}

// get is value that fails t when the series is missing.
func (f families) get(t testing.TB, name string, want map[string]string) float64 {
	t.Helper()
	v, ok := f.value(name, want)
	if !ok {
		t.Fatalf("no series %s%v", name, want)
	}
	return v
}

// l builds a label set from pairs.
func l(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}
