package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/tracegen"
)

func generate(t testing.TB, cfg tracegen.Config) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gen.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tracegen.Write(f, cfg)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func reportSize(t testing.TB, path string, opts Options) int {
	t.Helper()
	var buf bytes.Buffer
	if err := analyzeFile(t, path, opts).WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Len()
}

func TestAReportDoesNotGrowWithTheNumberOfEvents(t *testing.T) {
	cfg := tracegen.Config{Objects: 200, PageSize: 100, BookmarkEvery: 50}
	// Once the buckets are full, ten times the events change only numbers.
	opts := Options{MaxBuckets: 64}
	cfg.Events = 4000
	small := reportSize(t, generate(t, cfg), opts)
	cfg.Events = 40000
	large := reportSize(t, generate(t, cfg), opts)
	if large > small+8<<10 {
		t.Errorf("with 64 buckets, the report of 4,000 events has %d bytes, of 40,000 events %d; want the second within 8 KiB of the first", small, large)
	}
	// With the default buckets, the charts of any number of events stay small.
	if size := reportSize(t, generate(t, cfg), Options{}); size > 320<<10 {
		t.Errorf("the report of 40,000 events has %d bytes, want at most 320 KiB", size)
	}
}

func TestBucketsStayBoundedAndAddUpToTheCounters(t *testing.T) {
	path := generate(t, tracegen.Config{Objects: 50, Events: 20000, EventsPerWatch: 3000, BookmarkEvery: 70, GoneEvery: 3, Missed: 5})
	for _, max := range []int{8, 100, 1024} {
		res := analyzeFile(t, path, Options{MaxBuckets: max}).Resources[0]
		if n := len(res.Buckets); n > max || n < max/2 {
			t.Errorf("MaxBuckets %d: got %d buckets, want between %d and %d", max, n, max/2, max)
		}
		var added, modified, deleted, bookmarks int
		for _, b := range res.Buckets {
			added, modified, deleted, bookmarks = added+b.Added, modified+b.Modified, deleted+b.Deleted, bookmarks+b.Bookmarks
		}
		c := res.Counters
		if int64(added) != c.Added || int64(modified) != c.Modified || int64(deleted) != c.Deleted || int64(bookmarks) != c.Bookmarks {
			t.Errorf("MaxBuckets %d: buckets add up to %d/%d/%d events and %d bookmarks, counters say %d/%d/%d and %d",
				max, added, modified, deleted, bookmarks, c.Added, c.Modified, c.Deleted, c.Bookmarks)
		}
	}
}

func TestPastTheCapTheFirstAndLastRequestsAndRelistsAreKeptAndTheReportSaysSo(t *testing.T) {
	path := generate(t, tracegen.Config{Objects: 10, Events: 3000, EventsPerWatch: 10, GoneEvery: 4, Missed: 2})
	rep := analyzeFile(t, path, Options{MaxRequests: 100, MaxRelists: 10})
	res := rep.Resources[0]
	total := lineKinds(t, path)["request"]
	if res.RequestsTotal != total || len(res.Requests) != 100 {
		t.Fatalf("requests: got %d kept of %d, want 100 of %d", len(res.Requests), res.RequestsTotal, total)
	}
	if first, last := res.Requests[0].ID, res.Requests[99].ID; first != 1 || last != int64(total) || res.Requests[50].ID != int64(total-49) {
		t.Errorf("kept requests #%d…#%d, #%d after the gap; want #1…#%d with #%d after the gap", first, last, res.Requests[50].ID, total, total-49)
	}
	want := replaySummary(t, path).Counters
	if int64(res.RelistsTotal) != want.Relists || len(res.Relists) != 10 || res.Counters != want {
		t.Errorf("relists: got %d kept of %d, counters %+v; want 10 of %d, counters %+v", len(res.Relists), res.RelistsTotal, res.Counters, want.Relists, want)
	}
	_, doc := render(t, path, Options{MaxRequests: 100, MaxRelists: 10})
	if got := len(requestBars(doc)); got != 100 {
		t.Errorf("bars: got %d, want the 100 kept", got)
	}
	if got := len(relistRows(doc)); got != 10 {
		t.Errorf("relist rows: got %d, want the 10 kept", got)
	}
	gaps := elements(doc, func(n *html.Node) bool { return n.Data == "tr" && hasClass(n, "gap") })
	if len(gaps) != 2 {
		t.Errorf("gap rows: got %d, want one in each table", len(gaps))
	}
	body := text(doc)
	for _, want := range []string{"the first and the last 50 are drawn and listed", "the first and the last 5 are listed", "the first and the last 50 are listed", "are left out"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
}

func TestAReportOfSeveralResourcesCountsEachAsTheReplayAndStaysSmall(t *testing.T) {
	path := generate(t, tracegen.Config{Resources: 3, Objects: 100, PageSize: 40, Events: 20000, EventsPerWatch: 2000, BookmarkEvery: 50, GoneEvery: 3, Missed: 5})
	rep := analyzeFile(t, path, Options{})
	sameAsReplay(t, rep, replaySummaries(t, path))
	for _, res := range rep.Resources {
		if res.Counters.Relists == 0 || res.Counters.Added+res.Counters.Modified+res.Counters.Deleted != 20000 {
			t.Errorf("%s: counters %+v, want 20,000 events and relists", res.Name, res.Counters)
		}
	}
	// Each resource's charts are bounded as one resource's are: three
	// resources of 20,000 events stay within three times one's bound.
	if size := reportSize(t, path, Options{}); size > 3*320<<10 {
		t.Errorf("the report of 3 resources of 20,000 events has %d bytes, want at most 960 KiB", size)
	}
}
