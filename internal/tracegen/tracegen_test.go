package tracegen

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

func TestAGeneratedTraceReplaysWithTheSameDecisionsAndCounts(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
	}{
		{"one watch", Config{Objects: 30, Events: 200}},
		{"pages, bookmarks, closed watches", Config{Objects: 45, PageSize: 10, Events: 500, EventsPerWatch: 60, BookmarkEvery: 25}},
		{"410s and relists with missed changes", Config{Objects: 40, PageSize: 15, Events: 900, EventsPerWatch: 100, BookmarkEvery: 40, GoneEvery: 3, Missed: 7}},
		{"few objects, short watches, many relists", Config{Objects: 10, Events: 3000, EventsPerWatch: 10, GoneEvery: 4, Missed: 2}},
		{"a relist whose first page fails", Config{Objects: 20, Events: 300, EventsPerWatch: 50, GoneEvery: 2, Missed: 3, ListErrors: "etcdserver: leader changed"}},
		{"three resources, interleaved", Config{Resources: 3, Objects: 25, PageSize: 10, Events: 400, EventsPerWatch: 70, BookmarkEvery: 30, GoneEvery: 2, Missed: 4}},
		{"lag and probe", Config{Resources: 2, Objects: 20, Events: 500, EventsPerWatch: 100, GoneEvery: 3, Missed: 2, Step: 50 * time.Millisecond,
			Lag: func(k int) time.Duration { return time.Duration(k%7) * 3 * time.Second }, ProbeEvery: 10,
			Probe: func(n int) (time.Duration, time.Duration) {
				return 5 * time.Millisecond, time.Duration(20+n%9) * time.Millisecond
			}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gen.jsonl")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			st, err := Write(f, tc.cfg)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			sess, err := session.NewReplay(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := sess.Run(context.Background()); err != nil {
				t.Fatalf("replay: %v", err)
			}
			if shown, total := sess.Replay.Differences(5); total != 0 {
				t.Errorf("the replay decided differently in %d places: %v", total, shown)
			}
			if got, want := len(sess.Resources), max(tc.cfg.Resources, 1); got != want {
				t.Fatalf("the replay has %d resources, want %d", got, want)
			}
			var c reflector.Counters
			for _, r := range sess.Resources {
				rc := r.Summary(sess.Now()).Counters
				if rc.Added+rc.Modified+rc.Deleted != int64(tc.cfg.Events) {
					t.Errorf("%s: the replay applied %d events, want %d", r.Name(), rc.Added+rc.Modified+rc.Deleted, tc.cfg.Events)
				}
				c.Added, c.Modified, c.Deleted = c.Added+rc.Added, c.Modified+rc.Modified, c.Deleted+rc.Deleted
				c.Relists, c.Gone, c.Bookmarks = c.Relists+rc.Relists, c.Gone+rc.Gone, c.Bookmarks+rc.Bookmarks
			}
			if got, want := int(c.Added+c.Modified+c.Deleted), st.Events; got != want {
				t.Errorf("events: the replay applied %d, the generator wrote %d", got, want)
			}
			if tc.cfg.Lag != nil {
				for _, r := range sess.Resources {
					var want reflector.LagCounts
					for k := range tc.cfg.Events {
						want[reflector.LagBucketOf(tc.cfg.Lag(k))]++
					}
					if got := r.Reflector.Stats().Lag.Counts; got != want {
						t.Errorf("%s: lag buckets %v, want %v", r.Name(), got, want)
					}
				}
			}
			if got, want := len(sess.Probe.Samples()), st.Probes; got != want || (tc.cfg.ProbeEvery > 0) != (want > 0) {
				t.Errorf("the replay took %d probe samples, the generator wrote %d", got, want)
			}
			if tc.cfg.GoneEvery > 0 && st.Relists == 0 {
				t.Errorf("the generator wrote no relist, want one every %d watches", tc.cfg.GoneEvery)
			}
			if int(c.Relists) != st.Relists || int(c.Gone) != st.Gone || int(c.Bookmarks) != st.Bookmarks {
				t.Errorf("got relists %d, gone %d, bookmarks %d; the generator wrote %d, %d, %d", c.Relists, c.Gone, c.Bookmarks, st.Relists, st.Gone, st.Bookmarks)
			}
		})
	}
}

// An event costs the same with many objects as with few: a long trace of a
// large population is written in time linear in its lines. Bytes allocated
// per event measure it (each event used to copy the list of live objects).
func TestAnEventsCostDoesNotGrowWithTheObjects(t *testing.T) {
	perEvent := func(objects int) float64 {
		alloc := func(events int) uint64 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			if _, err := Write(io.Discard, Config{Objects: objects, Events: events}); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			return after.TotalAlloc - before.TotalAlloc
		}
		return float64(alloc(4000)-alloc(2000)) / 2000
	}
	few, many := perEvent(10), perEvent(5000)
	if many > 3*few {
		t.Errorf("an event allocates %.0f bytes with 5000 objects, %.0f with 10: want about the same", many, few)
	}
}
