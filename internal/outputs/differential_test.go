package outputs_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/outputs"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/report"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/tracegen"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// totals are what every view of a run must agree on with the ledger.
type totals struct {
	Lists, Relists, Gone, Bookmarks, ListEnds, Added, Modified, Deleted, Duplicates int64
	MissedDeletes, MissedRecreates, MissedUpdates, Requests                         int64
}

func ledgerTotals(st reflector.Stats) totals {
	c, t := st.Counters, st.Totals
	return totals{Lists: c.Lists, Relists: c.Relists, Gone: c.Gone, Bookmarks: c.Bookmarks, ListEnds: c.InitialEventsEnd,
		Added: c.Added, Modified: c.Modified, Deleted: c.Deleted, Duplicates: c.Duplicates,
		MissedDeletes: t.Missed.Deletes, MissedRecreates: t.Missed.Recreates, MissedUpdates: t.Missed.Updates, Requests: t.Requests}
}

// Every view of a run is a reducer of its subjects' notes and Stats: the
// summary, a metrics scrape, the report and the findings' evidence count
// what the ledger counts, for every bundled trace and 200 generated ones
// (410s and relists that miss deletes, recreates and updates, duplicates,
// bookmarks, failing lists, several resources, proxies' observed streams).
func TestEveryViewCountsWhatTheLedgerCounts(t *testing.T) {
	bundled, err := filepath.Glob("../../testdata/traces/*.jsonl")
	if err != nil || len(bundled) == 0 {
		t.Fatalf("no bundled traces: %v", err)
	}
	for _, path := range bundled {
		t.Run(filepath.Base(path), func(t *testing.T) { checkViews(t, path) })
	}
	rng := rand.New(rand.NewPCG(34, 2026))
	dir := t.TempDir()
	for i := range 200 {
		cfg := tracegen.Config{
			Resources:      1 + rng.IntN(3),
			Objects:        5 + rng.IntN(40),
			PageSize:       rng.IntN(3) * 7,
			Events:         rng.IntN(300),
			EventsPerWatch: rng.IntN(40),
			BookmarkEvery:  rng.IntN(15),
			GoneEvery:      rng.IntN(4),
			Missed:         rng.IntN(6),
			DuplicateEvery: rng.IntN(12),
			Observed:       rng.IntN(3) == 0,
		}
		if rng.IntN(4) == 0 {
			cfg.ListErrors = "etcdserver: request timed out"
		}
		path := filepath.Join(dir, fmt.Sprintf("gen-%03d.jsonl", i))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tracegen.Write(f, cfg); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("gen-%03d %+v", i, cfg), func(t *testing.T) { checkViews(t, path) })
	}
}

// checkViews replays path once through the outputs (lines, summary,
// metrics), once through the report, and compares each view with the
// ledger's Stats of each subject.
func checkViews(t *testing.T, path string) {
	t.Helper()
	var out, errOut bytes.Buffer
	outs, sess, runErr := replay(t, outputs.Options{Out: &out, ErrOut: &errOut, JSON: true, Summary: true,
		Monitor: outputs.MonitorOptions{MetricsAddress: "127.0.0.1:0"}}, path)
	scrape := scrapeMetrics(t, errOut.String())
	if err := outs.Finish(runErr); err != nil && !strings.Contains(err.Error(), "stopped") {
		t.Logf("the replay ended with %v", err)
	}
	if strings.HasPrefix(filepath.Base(path), "gen-") && sess.Replay.RecordingCut() {
		t.Errorf("a generated trace's recording is said to end early")
	}
	subs := sess.Subjects()
	if len(subs) == 0 {
		return
	}
	want := make([]totals, len(subs))
	for i, sub := range subs {
		want[i] = ledgerTotals(sub.Stats())
	}

	// The summary JSON (the last line).
	sums, err := summary.Decode(out.Bytes())
	if err != nil {
		t.Fatalf("the summary: %v", err)
	}
	if len(sums) != len(subs) {
		t.Fatalf("%d summaries, %d subjects", len(sums), len(subs))
	}
	for i, s := range sums {
		if got := summaryTotals(s, want[i]); got != want[i] {
			t.Errorf("%s: the summary counts\n%+v, the ledger\n%+v", subs[i].Name(), got, want[i])
		}
	}

	// A metrics scrape: one series per subject (a proxy's sum one client's
	// like streams: the generated clients are one per stream).
	for i, sub := range subs {
		if got := metricsTotals(scrape.of(t, sub), want[i]); got != want[i] {
			t.Errorf("%s: the metrics count\n%+v, the ledger\n%+v", sub.Name(), got, want[i])
		}
	}

	// The findings' evidence: what missed-deletes counts is every missed
	// delete and recreate.
	for i, sub := range subs {
		f, ok := sub.Findings().Get(findings.MissedDeletes)
		missed := want[i].MissedDeletes + want[i].MissedRecreates
		if (missed > 0) != ok || ok && f.Count != missed {
			t.Errorf("%s: missed-deletes counts %d (raised %v), the ledger %d missed deletes and recreates", sub.Name(), f.Count, ok, missed)
		}
	}

	// The report.
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rep, err := report.Analyze(t.Context(), rd, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Resources) != len(subs) {
		t.Fatalf("the report has %d sections, %d subjects", len(rep.Resources), len(subs))
	}
	for i, res := range rep.Resources {
		got := totals{Lists: res.Counters.Lists, ListEnds: res.Counters.InitialEventsEnd, Relists: int64(res.RelistsTotal), Gone: res.Counters.Gone,
			Duplicates: res.Counters.Duplicates, Requests: want[i].Requests}
		for _, b := range res.Buckets {
			got.Added += int64(b.Added)
			got.Modified += int64(b.Modified)
			got.Deleted += int64(b.Deleted)
			got.Bookmarks += int64(b.Bookmarks)
		}
		if int64(len(res.Relists)) != got.Relists {
			t.Errorf("%s: the report lays out %d relists of %d", res.Name, len(res.Relists), got.Relists)
		}
		for _, rl := range res.Relists {
			if d := rl.Diff; d != nil {
				got.MissedDeletes += int64(d.NDeleted)
				got.MissedRecreates += int64(d.NRecreated)
				got.MissedUpdates += int64(d.NUpdated)
			}
		}
		if got != want[i] {
			t.Errorf("%s: the report counts\n%+v, the ledger\n%+v", res.Name, got, want[i])
		}
	}
}

// summaryTotals is what a summary counts, and want's figure the summary
// does not carry (requests).
func summaryTotals(s summary.Summary, want totals) totals {
	c, got := s.Counters, want
	got.Lists, got.Relists, got.Gone, got.Bookmarks, got.ListEnds = c.Lists, c.Relists, c.Gone, c.Bookmarks, c.InitialEventsEnd
	got.Added, got.Modified, got.Deleted, got.Duplicates = c.Added, c.Modified, c.Deleted, c.Duplicates
	got.MissedDeletes, got.MissedRecreates, got.MissedUpdates = s.Missed.Deletes, s.Missed.Recreates, s.Missed.Updates
	return got
}

// metricsTotals is what a subject's series count (scraped.of), and want's
// lists (no series counts them).
func metricsTotals(m map[string]float64, want totals) totals {
	return totals{Lists: want.Lists, ListEnds: int64(m["watchcache_initial_events_end_total"]),
		Relists: int64(m["watchcache_relists_total"]), Gone: int64(m["watchcache_gone_total"]), Bookmarks: int64(m["watchcache_bookmarks_total"]),
		Added: int64(m["watchcache_events_total/ADDED"]), Modified: int64(m["watchcache_events_total/MODIFIED"]), Deleted: int64(m["watchcache_events_total/DELETED"]),
		Duplicates: int64(m["watchcache_duplicates_total"]), MissedDeletes: int64(m["watchcache_relist_missed_total/delete"]),
		MissedRecreates: int64(m["watchcache_relist_missed_total/recreate"]), MissedUpdates: int64(m["watchcache_relist_missed_total/update"]),
		Requests: int64(m["watchcache_watches_total"] + m["watchcache_list_pages_total"])}
}

// scraped is a scrape: each series' value by labels.
type scraped []struct {
	labels map[string]string
	name   string
	value  float64
}

// scrapeMetrics scrapes the endpoint the outputs said they serve (errOut).
func scrapeMetrics(t *testing.T, errOut string) scraped {
	t.Helper()
	url, ok := metrics.ServingURL(errOut)
	if !ok {
		t.Fatalf("no metrics endpoint in:\n%s", errOut)
	}
	fams, err := metrics.Scrape(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	var s scraped
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			v := m.GetCounter().GetValue()
			s = append(s, struct {
				labels map[string]string
				name   string
				value  float64
			}{labels, name, v})
		}
	}
	return s
}

// of is the subject's series: by name, and name/type or name/kind for the
// events' and the missed objects' breakdown; the rest summed over their
// other labels.
func (s scraped) of(t *testing.T, sub session.Subject) map[string]float64 {
	t.Helper()
	target := sub.Target()
	_, client := sub.Describe()
	out := map[string]float64{}
	for _, x := range s {
		if x.labels["resource"] != target.Resource.String() || x.labels["namespace"] != target.Namespace {
			continue
		}
		if c, ok := x.labels["client"]; ok && c != client.UserAgent {
			continue
		}
		key := x.name
		switch x.name {
		case "watchcache_events_total":
			key += "/" + x.labels["type"]
		case "watchcache_relist_missed_total":
			key += "/" + x.labels["kind"]
		}
		out[key] += x.value
	}
	return out
}
