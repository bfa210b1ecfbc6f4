package scenarios

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

var (
	withCache    = testcluster.NewLazy(testcluster.Options{})
	withoutCache = testcluster.NewLazy(testcluster.Options{DisableWatchCache: true})
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, withCache, withoutCache)) }

// comparable drops what legitimately differs between a live run and its
// replay: the bookmark's age and the time to sync are measured on different clocks.
func comparable(s summary.Summary) summary.Summary { return s.WithoutClockReadings() }

func TestE2EEveryScenarioReplaysToTheSummaryItWasRecordedWith(t *testing.T) {
	for _, sc := range All() {
		t.Run(sc.Name, func(t *testing.T) {
			c := withCache.Get(t)
			if sc.NeedsNoWatchCache {
				c = withoutCache.Get(t)
			}
			path := filepath.Join(t.TempDir(), sc.Name+".jsonl")
			live, err := sc.Record(context.Background(), c, path, nil)
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
			if diffs, _ := sess.Replay.Differences(10); len(diffs) > 0 {
				t.Errorf("replayed decisions differ from the recorded ones:\n%v", diffs)
			}
			if w := sess.Replay.Warnings(); len(w) > 0 {
				t.Errorf("replay warnings: %v", w)
			}
			replayed := sess.Summaries()
			if len(replayed) != len(live) {
				t.Fatalf("%d resources replayed, %d recorded", len(replayed), len(live))
			}
			for i := range live {
				if !reflect.DeepEqual(comparable(live[i]), comparable(replayed[i])) {
					t.Errorf("summary of %s:\nlive   %+v\nreplay %+v", live[i].Resource, comparable(live[i]), comparable(replayed[i]))
				}
				if live[i].Objects == 0 {
					t.Errorf("the scenario cached no %s", live[i].Resource)
				}
			}
		})
	}
}
