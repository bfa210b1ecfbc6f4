package tracegen

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
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
			c := sess.Summary().Counters
			if got, want := int(c.Added+c.Modified+c.Deleted), st.Events; got != want {
				t.Errorf("events: the replay applied %d, the generator wrote %d", got, want)
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
