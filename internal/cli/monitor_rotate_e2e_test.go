package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// TestE2EAMonitorsTraceRotatesAndEachSegmentReplaysAlone runs the monitor
// as a pod would, with default flags (streaming list, protobuf), on two
// resources, recording to a trace bounded at 64Ki with two earlier segments
// kept, while ConfigMaps churn. The trace rotates more than twice: three
// files remain, numbered in order, the oldest removed; none of the closed
// ones grew far past the bound; each replays alone with --strict (every
// recorded decision made again); and the newest one's replay ends with the
// cache equal to a LIST.
func TestE2EAMonitorsTraceRotatesAndEachSegmentReplaysAlone(t *testing.T) {
	c := cluster(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ns := uniqueNamespace(t, cs, "rotate")
	dir := pluginPath(t)
	tdir := t.TempDir()
	path := filepath.Join(tdir, "monitor.jsonl")
	const maxBytes = 64 << 10
	p := startPlugin(t, dir, c.Kubeconfig(), "monitor", "configmaps,serviceaccounts", "-n", ns, "--listen", "127.0.0.1:0",
		"--trace", path, "--trace-max-size", "64Ki", "--trace-keep", "2", "--watch-timeout", "2s")
	for range 2 {
		p.waitForLine(t, `"reason":"list-complete"`)
	}

	// Churn until the trace has rotated at least three times (the first
	// segment removed), or two minutes.
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	writes := 0
	for segment(t, path) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("after %d writes in two minutes, the trace is at segment %d", writes, segment(t, path))
		}
		name := fmt.Sprintf("churn-%d", writes%40)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"n": fmt.Sprint(writes)}}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if writes%7 == 3 {
			_ = cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{})
		}
		writes++
		time.Sleep(10 * time.Millisecond)
	}
	// Quiet, so the cache settles; then a resume moves each resource on.
	time.Sleep(5 * time.Second)
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.terminate(t, 5*time.Second)

	entries, err := os.ReadDir(tdir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"monitor.1.jsonl", "monitor.2.jsonl", "monitor.jsonl"}; !slices.Equal(names, want) {
		t.Fatalf("files %v, want %v (two earlier segments kept, the older removed)", names, want)
	}
	last := segment(t, path)
	for k, name := range []string{"monitor.2.jsonl", "monitor.1.jsonl", "monitor.jsonl"} {
		seg := filepath.Join(tdir, name)
		if got := segment(t, seg); got != last-2+k {
			t.Errorf("%s is segment %d, want %d", name, got, last-2+k)
		}
		fi, err := os.Stat(seg)
		if err != nil {
			t.Fatal(err)
		}
		// A closed segment takes lines until each resource resumes (a watch
		// timeout of at most 4 s here) past the bound: at about 50 writes a
		// second of 400 to 600 bytes of lines each, up to about 120 KiB
		// more (it was 76 KiB past it on a loaded machine).
		if name != "monitor.jsonl" && fi.Size() > 3*maxBytes {
			t.Errorf("%s holds %d bytes: far past the bound of %d", name, fi.Size(), maxBytes)
		}
		code, out, errOut := run(t, "replay", seg, "--speed", "0", "--no-tui", "--summary", "-o", "json", "--strict")
		if code != 0 {
			t.Fatalf("replay --strict %s: exit %d\n%s", name, code, errOut)
		}
		sums := allSummaries(t, out)
		t.Logf("%s: segment %d, %d bytes; replayed: %s %d objects, %s %d objects", name, segment(t, seg), fi.Size(), sums[0].Resource, sums[0].Objects, sums[1].Resource, sums[1].Objects)
		if name != "monitor.jsonl" {
			continue
		}
		var got, want []string
		for _, e := range sums[0].Store {
			got = append(got, e.Name+" "+e.UID+" "+e.ResourceVersion)
		}
		for _, o := range list.Items {
			want = append(want, o.Name+" "+string(o.UID)+" "+o.ResourceVersion)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("the newest segment's replay ends with\n%s\na LIST says\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// segment is the segment number in the header of the trace at path (0 for
// the first, or while it is not written yet).
func segment(t *testing.T, path string) int {
	t.Helper()
	rd, err := trace.Open(path)
	if err != nil {
		return 0
	}
	defer rd.Close()
	return rd.Header().Segment
}
