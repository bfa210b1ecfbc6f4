package outputs

import (
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/probe"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
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

// The probe's Lease watch is marked so, for its row to say "(probe)"; a
// watch of leases of the user's own is not.
func TestTheProbesViewIsMarked(t *testing.T) {
	x, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	leases := reflector.Resource{GVR: schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, Kind: "Lease", Namespaced: true}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	rec, err := trace.Create(path, trace.Header{StartedAt: time.Now(), Resources: []trace.ResourceHeader{
		{Resource: leases, Namespace: "ns"},
		{Resource: leases, Namespace: "ns", FieldSelector: "metadata.name=" + probe.NamePrefix + "abc12"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	sess, err := session.NewReplay(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	x.sess = sess
	for i, want := range []bool{false, true} {
		if v := x.view(sess.Resources[i], tui.NewNoteBuffer(16)); v.Probe != want {
			t.Errorf("resource %d (%s): Probe %v, want %v", i, sess.Resources[i].Target().FieldSelector, v.Probe, want)
		}
	}
}
