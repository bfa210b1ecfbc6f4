package metrics_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
)

func TestServingURLReadsTheLineARunPrintsWhenItIsWhole(t *testing.T) {
	line := metrics.ServingLine("http://127.0.0.1:4242/metrics")
	for _, tc := range []struct {
		stderr, want string
		ok           bool
	}{
		{"", "", false},
		{line, "", false}, // not ended yet: the port may be cut
		{"warning: not a loopback address\n" + line + "\nmore\n", "http://127.0.0.1:4242/metrics", true},
		{line + "\n" + metrics.ServingLine("http://other/metrics") + "\n", "http://127.0.0.1:4242/metrics", true},
	} {
		got, ok := metrics.ServingURL(tc.stderr)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ServingURL(%q) = %q, %t; want %q, %t", tc.stderr, got, ok, tc.want, tc.ok)
		}
	}
}

func TestScrapeSumsTheSeriesOfANameThatHaveTheLabelsAsked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `# TYPE c counter
c{resource="a",type="x"} 1
c{resource="a",type="y"} 2
c{resource="b",type="x"} 4
# TYPE g gauge
g 7.5
# TYPE h histogram
h_bucket{le="+Inf"} 3
h_sum 1
h_count 3
`)
	}))
	defer srv.Close()
	s, err := metrics.Scrape(context.Background(), srv.URL+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want map[string]string
		sum  float64
		ok   bool
	}{
		{"c", nil, 7, true},
		{"c", l("resource", "a"), 3, true},
		{"c", l("resource", "b", "type", "x"), 4, true},
		{"c", l("resource", "c"), 0, false},
		{"g", nil, 7.5, true},
		{"h", nil, 3, true},
		{"missing", nil, 0, false},
	} {
		if sum, ok := s.Value(tc.name, tc.want); sum != tc.sum || ok != tc.ok {
			t.Errorf("Value(%s, %v) = %g, %t; want %g, %t", tc.name, tc.want, sum, ok, tc.sum, tc.ok)
		}
	}
	if _, err := metrics.Scrape(context.Background(), srv.URL+"/nothing"); err == nil {
		t.Error("a 404 scraped without an error")
	}
}
