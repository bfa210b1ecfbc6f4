package metrics_test

import (
	"context"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
)

// families are parsed metric families by name (metrics.Scraped, with the
// tests' own get).
type families metrics.Scraped

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
	fams, err := metrics.Scrape(context.Background(), url)
	return families(fams), err
}

// value is metrics.Scraped.Value.
func (f families) value(name string, want map[string]string) (float64, bool) {
	return metrics.Scraped(f).Value(name, want)
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
