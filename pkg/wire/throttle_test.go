package wire_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

func TestThrottleOfReadsRetryAfterInSecondsOrAsADate(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{
		{"5", 5 * time.Second},
		{"", 0},
		{"soon", 0},
		{"-1", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"90000", 0}, // over a day
		{now.Add(48 * time.Hour).Format(http.TimeFormat), 0}, // a clock a day off: over a day, as delay-seconds
		{now.Add(23 * time.Hour).Format(http.TimeFormat), 23 * time.Hour},
	} {
		h := http.Header{}
		if tc.value != "" {
			h.Set("Retry-After", tc.value)
		}
		got := wire.ThrottleOf(429, h, now)
		if got == nil || got.RetryAfter != tc.want {
			t.Errorf("Retry-After %q: %+v, want %s", tc.value, got, tc.want)
		}
	}
	if got := wire.ThrottleOf(503, http.Header{"Retry-After": {"5"}}, now); got != nil {
		t.Errorf("a 503 has a Throttle: %+v", got)
	}
}

// TestListPageBytesAreTheBodyAsDecoded: Page.Bytes is the uncompressed
// size of the LIST body, whether the server gzipped it or not.
func TestListPageBytesAreTheBodyAsDecoded(t *testing.T) {
	list := benchList(t, 50)
	for _, gz := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if !gz {
				_, _ = w.Write(list)
				return
			}
			if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				t.Errorf("the request does not accept gzip: %q", r.Header.Get("Accept-Encoding"))
			}
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			_, _ = zw.Write(list)
			_ = zw.Close()
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(b.Bytes())
		}))
		src, err := live.NewSource(&rest.Config{Host: srv.URL}, reflector.Target{Resource: configMaps}, live.Options{})
		if err != nil {
			t.Fatal(err)
		}
		page, err := src.List(context.Background(), reflector.RequestOptions{})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if page.Bytes != int64(len(list)) || len(page.Items) != 50 {
			t.Errorf("gzip %t: %d items in %d bytes, want 50 in %d", gz, len(page.Items), page.Bytes, len(list))
		}
		page, err = wire.DecodeListResponse(bytes.NewReader(list), "application/json", false)
		if err != nil || page.Bytes != int64(len(list)) {
			t.Errorf("DecodeListResponse: %d bytes, %v; want %d", page.Bytes, err, len(list))
		}
	}
}
