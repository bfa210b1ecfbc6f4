package soak

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

// The soak restarts kube-apiserver and compacts etcd: it has a cluster of its own.
var soakCluster = testcluster.NewLazy(testcluster.Options{})

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, soakCluster)) }

// TestE2ESoakThreeMinutesOfChurnRestartsAndCompactions is the CI-sized soak:
// about 50 writes/s (creates, updates, deletes, recreates), an apiserver
// restart every 45 s and an etcd compaction every 30 s, for three minutes.
// Beside our reflector, the plugin's monitor mode runs as a process on the
// same namespace with default flags (streaming list, protobuf), its trace
// rotating at 256Ki with two earlier segments kept: the trace stays within
// its bound on disk, every segment left replays with --strict, the newest
// ends as a LIST, its memory and goroutines stay flat, and SIGTERM ends it
// within 5 s (Report.Problems).
func TestE2ESoakThreeMinutesOfChurnRestartsAndCompactions(t *testing.T) {
	c := soakCluster.Get(t)
	bin, err := testcluster.BuildPlugin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(bin) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	mon := &Monitor{Binary: filepath.Join(bin, "kubectl-watchcache"), Dir: t.TempDir(), MaxSize: 256 << 10, Keep: 2, WatchTimeout: 5 * time.Second}
	rep, err := Run(ctx, c, Options{Duration: 3 * time.Minute, Log: testLog{t}, Monitor: mon})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
	if !rep.OK() {
		t.Errorf("the soak found %d problems (above)", len(rep.Problems))
	}
	if rep.Restarts < 3 || rep.Compacts < 5 {
		t.Errorf("restarts/compactions: got %d/%d, want at least 3/5", rep.Restarts, rep.Compacts)
	}
	if rep.Counters.Gone == 0 {
		t.Error("no 410 in three minutes of restarts and compactions: the soak did not exercise the relist")
	}
	if rep.Monitor.Rotations < 3 {
		t.Errorf("the monitor's trace rotated %d times in three minutes, want at least 3 (the oldest removed)", rep.Monitor.Rotations)
	}
	if w := rep.Churn.Writes(); w < 3000 {
		t.Errorf("writes: got %d, want at least 3000 (about 50/s for 3 minutes, less the restarts)", w)
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(string(p))
	return len(p), nil
}
