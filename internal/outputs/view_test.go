package outputs

import (
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui"
)

// A replay's dashboard offers neither a forced relist nor an audit: it says
// each needs a live cluster (an audit set to fail said "audit failed").
func TestAReplaysDashboardOffersNoActionThatNeedsACluster(t *testing.T) {
	x, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := session.NewReplay("../../testdata/traces/demo.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	x.sess = sess
	v := x.view(sess.Resources[0], tui.NewNoteBuffer(16))
	if v.Feed.Audit != nil || v.Feed.ForceRelist != nil {
		t.Errorf("a replay's dashboard: audit set %v, forced relist set %v; want neither", v.Feed.Audit != nil, v.Feed.ForceRelist != nil)
	}
}
