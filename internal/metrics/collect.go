package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// scrapeCollector exports, at scrape time, what every attached resource's
// Stats and store say: the totals the reflector keeps, the store's size,
// ages and the state. Reading them when scraped costs the reflector nothing
// per event.
type scrapeCollector struct {
	watches, events, bookmarks, listEnds, tooLarge, uidMismatches, duplicates, rvBackwards, backoffs, watchErrors *prometheus.Desc
	storeObjects, storeBytes, bookmarkAge, noProgress, timeToSync, state, findings                                *prometheus.Desc
	lag                                                                                                           *prometheus.Desc
	listPages, lists, gone, relists, missed, backoffSeconds                                                       *prometheus.Desc

	mu        sync.Mutex
	resources []*Set
	seen      map[Labels]bool
}

func newScrapeCollector(withClient bool) *scrapeCollector {
	desc := func(name, help string, extra ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, append(labelNames(withClient), extra...), nil)
	}
	return &scrapeCollector{
		watches:       desc("watches_total", "Watch requests started (streaming lists included)."),
		events:        desc("events_total", "Watch events applied to the cache, by type (ADDED, MODIFIED, DELETED); list items and a streaming list's initial events are not events.", "type"),
		bookmarks:     desc("bookmarks_total", "Progress BOOKMARK events received: those that move a watch's cursor, not the one that ends a streaming list (watchcache_initial_events_end_total)."),
		listEnds:      desc("initial_events_end_total", "Streaming lists ended by their initial-events-end bookmark: the end of a list, not a progress bookmark."),
		tooLarge:      desc("too_large_resource_version_total", "\"Too large resource version\" answers."),
		uidMismatches: desc("uid_mismatches_total", "Applies that replaced an object of another UID under the same name, and deletes of a stale UID."),
		duplicates:    desc("duplicates_total", "Events that carried the cached UID and resourceVersion again."),
		rvBackwards:   desc("resource_version_backwards_total", "Events and bookmarks whose resourceVersion was older than the cursor."),
		backoffs:      desc("backoffs_total", "Waits before retrying after an error."),
		watchErrors:   desc("watch_errors_total", "Watches that ended in an error (an error status, an ERROR event or a transport error), except a 410 Gone (counted in watchcache_gone_total), a too-large resourceVersion (watchcache_too_large_resource_version_total) and a streaming list before its end bookmark; watchcache_watch_duration_seconds counts them all as end=\"error\"."),
		storeObjects:  desc("store_objects", "Objects in the cache."),
		storeBytes:    desc("store_bytes", "Estimated heap held by the cached objects, in bytes."),
		bookmarkAge:   desc("bookmark_age_seconds", "Time since the last progress bookmark (a streaming list's end bookmark is none); with none yet, since watching began (the first complete list); 0 before that."),
		noProgress:    desc("no_progress_seconds", "Time since the reflector last received data (a LIST page or a watch event or bookmark), or since the start before anything arrived."),
		timeToSync:    desc("time_to_sync_seconds", "Time from the start of the run to the first complete list; while the first list is not complete, the time waited so far."),
		state:         desc("state", "The reflector's state, one series per state: 1 for the current state, 0 for the others (behind a proxy, the number of the client's streams in each state).", "state"),
		findings: desc("findings", "Findings raised, by id and severity: 1 while raised, 0 when the user ignores it (--ignore-finding); "+
			"no series for a finding not raised (behind a proxy, the number of the client's streams that raised it and do not ignore it).", "id", "severity"),
		lag:            desc("event_lag_seconds", "Passive delivery estimate: how late watch events arrived after their object's latest write (newest managedFields time, deletionTimestamp or creationTimestamp), corrected for the server's clock by its Date header; good to about ±2 s, so in coarse buckets. Events whose object carries no write time are not counted."),
		listPages:      desc("list_pages_total", "LIST requests (pages) by how they ended: ok (a page received), gone (410), too-large (resourceVersion too large), error, timeout (the client gave up), canceled (cut short to act), stopped (the run ended while it was open).", "result"),
		lists:          desc("lists_total", "Full lists (paginated or streaming) by result: complete (installed in the cache), restarted (a 410, a too-large resourceVersion, a fallback from streaming or a forced relist started it over), failed (the reflector gave up), canceled (the run ended).", "result"),
		gone:           desc("gone_total", "410 Gone answers, by the request that got it: a watch, a LIST, or a LIST continue token.", "on"),
		relists:        desc("relists_total", "Full lists started after the first, by cause: gone (410), forced, too-large, fallback (from a streaming list to LIST), error (a streaming list broke and started again).", "cause"),
		missed:         desc("relist_missed_total", "What relists found the watch had missed, summed over relist diffs: deletes, recreates (same name, new UID), updates, adds.", "kind"),
		backoffSeconds: desc("backoff_seconds_total", "Time spent waiting in backoffs before retrying, in seconds."),
		seen:           map[Labels]bool{},
	}
}

func (c *scrapeCollector) add(r *Set) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[r.labels] && !r.labels.withClient {
		return false // a proxy's streams of one client share their series; a run's resources never do
	}
	c.seen[r.labels] = true
	c.resources = append(c.resources, r)
	return true
}

// Describe implements prometheus.Collector.
func (c *scrapeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.watches, c.events, c.bookmarks, c.listEnds, c.tooLarge, c.uidMismatches, c.duplicates, c.rvBackwards, c.backoffs, c.watchErrors,
		c.storeObjects, c.storeBytes, c.bookmarkAge, c.noProgress, c.timeToSync, c.state, c.findings, c.lag,
		c.listPages, c.lists, c.gone, c.relists, c.missed, c.backoffSeconds} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. Sets with the same labels (two
// streams of one client of a proxy: its User-Agent, resource, namespace and
// selectors) make one series: counters and store sizes are summed, ages
// are the worst among the streams still open (among all when none is), and
// the state counts the streams in each state.
func (c *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	rs := append([]*Set(nil), c.resources...)
	c.mu.Unlock()
	var order []Labels
	groups := map[Labels]*scraped{}
	for _, r := range rs {
		src := r.source()
		if src.Stats == nil {
			continue
		}
		g := groups[r.labels]
		if g == nil {
			g = &scraped{}
			groups[r.labels] = g
			order = append(order, r.labels)
		}
		g.add(src)
	}
	for _, l := range order {
		g := groups[l]
		counter := func(d *prometheus.Desc, v int64, extra ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l.values(extra...)...)
		}
		gauge := func(d *prometheus.Desc, v float64, extra ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l.values(extra...)...)
		}
		k := g.counters
		counter(c.watches, k.Watches)
		counter(c.events, k.Added, string(reflector.EventAdded))
		counter(c.events, k.Modified, string(reflector.EventModified))
		counter(c.events, k.Deleted, string(reflector.EventDeleted))
		counter(c.bookmarks, k.Bookmarks)
		counter(c.listEnds, k.InitialEventsEnd)
		counter(c.tooLarge, k.TooLargeResourceVersion)
		counter(c.uidMismatches, k.UIDMismatches)
		counter(c.duplicates, k.Duplicates)
		counter(c.rvBackwards, k.ResourceVersionBackwards)
		counter(c.backoffs, k.Backoffs)
		counter(c.watchErrors, k.WatchErrors)
		t := g.totals
		for _, p := range []struct {
			result string
			n      int64
		}{{"ok", t.Pages.OK}, {"gone", t.Pages.Gone}, {"too-large", t.Pages.TooLarge}, {"error", t.Pages.Error}, {"timeout", t.Pages.Timeout}, {"canceled", t.Pages.Canceled}, {"stopped", t.Pages.Stopped}} {
			counter(c.listPages, p.n, p.result)
		}
		counter(c.lists, t.Lists.Complete, "complete")
		counter(c.lists, t.Lists.Restarted, "restarted")
		counter(c.lists, t.Lists.Failed, "failed")
		counter(c.lists, t.Lists.Canceled, "canceled")
		counter(c.gone, t.Gone.Watch, "watch")
		counter(c.gone, t.Gone.List, "list")
		counter(c.gone, t.Gone.Continue, "continue")
		for _, cause := range reflector.ListCauses() {
			counter(c.relists, t.Relists.Of(cause), string(cause))
		}
		counter(c.missed, t.Missed.Deletes, "delete")
		counter(c.missed, t.Missed.Recreates, "recreate")
		counter(c.missed, t.Missed.Updates, "update")
		counter(c.missed, t.Missed.Adds, "add")
		ch <- prometheus.MustNewConstMetric(c.backoffSeconds, prometheus.CounterValue, t.BackoffWait.Seconds(), l.values()...)
		if g.hasStore {
			gauge(c.storeObjects, float64(g.objects))
			gauge(c.storeBytes, float64(g.bytes))
		}
		ages := g.all
		if g.open > 0 {
			ages = g.openAges
		}
		gauge(c.bookmarkAge, ages[0].Seconds())
		gauge(c.noProgress, ages[1].Seconds())
		gauge(c.timeToSync, ages[2].Seconds())
		for _, s := range reflector.States() {
			gauge(c.state, float64(g.states[s]), s.String())
		}
		for _, k := range g.findingOrder {
			gauge(c.findings, g.findings[k], string(k.id), string(k.severity))
		}
		ch <- lagHistogram(c.lag, g.lag, l.values())
	}
}

// findingKey is a watchcache_findings series' own labels.
type findingKey struct {
	id       findings.ID
	severity findings.Severity
}

// scraped is what the Sets of one series say together.
type scraped struct {
	counters       reflector.Counters
	totals         reflector.Totals
	hasStore       bool
	objects, bytes int64
	open           int              // streams not stopped
	all, openAges  [3]time.Duration // bookmark age, no progress, time to sync: the largest
	states         map[reflector.State]int
	// findings are the findings raised, 1 each unless ignored, summed
	// over the Sets, in the order they were first seen.
	findings     map[findingKey]float64
	findingOrder []findingKey
	lag          reflector.LagStats
}

func (g *scraped) add(src Source) {
	st, now := src.Stats(), src.Now()
	g.counters.Add(st.Counters)
	g.totals.Add(st.Totals)
	g.addLag(st.Lag)
	if src.Store != nil {
		g.hasStore = true
		if st.ClientLeft.IsZero() { // a client that left holds no cache
			sc := src.Store()
			g.objects += int64(sc.Objects)
			g.bytes += sc.BytesHeld
		}
	}
	ages := [3]time.Duration{st.BookmarkAge(now), st.NoProgress(now), st.TimeToSync(now)}
	for i, a := range ages {
		g.all[i] = max(g.all[i], a)
	}
	state := st.State
	if !st.ClientLeft.IsZero() {
		// An observed stream whose client left runs no more: it counts as
		// Stopped, and its ages stop counting among the open streams'.
		state = reflector.StateStopped
	}
	if state != reflector.StateStopped {
		g.open++
		for i, a := range ages {
			g.openAges[i] = max(g.openAges[i], a)
		}
	}
	if g.states == nil {
		g.states = map[reflector.State]int{}
	}
	g.states[state]++
	if src.Findings != nil {
		for _, f := range src.Findings() {
			k := findingKey{f.ID, f.Severity}
			if g.findings == nil {
				g.findings = map[findingKey]float64{}
			}
			if _, ok := g.findings[k]; !ok {
				g.findingOrder = append(g.findingOrder, k)
				g.findings[k] = 0
			}
			if !f.Ignored {
				g.findings[k]++
			}
		}
	}
}
