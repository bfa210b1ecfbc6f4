package metrics

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// servingPrefix begins the line a run prints on stderr once it serves its metrics.
const servingPrefix = "serving metrics at "

// ServingLine is the line (without its newline) a run prints on stderr once
// it serves its metrics at url; ServingURL reads it back.
func ServingLine(url string) string { return servingPrefix + url }

// ServingLineOf is s's ServingLine: its URL, and, when it binds every
// interface, the address it listens on, so that a loopback URL does not
// read as a loopback listener.
func ServingLineOf(s *Server) string {
	line := ServingLine(s.URL())
	if tcp, ok := s.ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		line += " (listening on every interface, " + s.ln.Addr().String() + ")"
	}
	return line
}

// ServingURL is the endpoint ("http://127.0.0.1:PORT/metrics") that the
// first whole ServingLine in stderr names, as a run printed it; a line not
// yet ended by its newline is not read.
func ServingURL(stderr string) (string, bool) {
	for {
		line, rest, whole := strings.Cut(stderr, "\n")
		if !whole {
			return "", false
		}
		if url, ok := strings.CutPrefix(line, servingPrefix); ok {
			url, _, _ = strings.Cut(strings.TrimSpace(url), " ")
			return url, true
		}
		stderr = rest
	}
}

// Scraped is a metrics page read back: its families by name.
type Scraped map[string]*dto.MetricFamily

// Scrape GETs url and parses its text exposition format.
func Scrape(ctx context.Context, url string) (Scraped, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return nil, fmt.Errorf("scraping %s: %s: %s", url, resp.Status, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", url, err)
	}
	return fams, nil
}

// Value sums the series of name whose labels include want (nil: every
// series): a counter's or gauge's value, a histogram's count. ok is false
// when name has no such series.
func (s Scraped) Value(name string, want map[string]string) (sum float64, ok bool) {
	mf := s[name]
	if mf == nil {
		return 0, false
	}
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
		ok = true
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
	return sum, ok
}
