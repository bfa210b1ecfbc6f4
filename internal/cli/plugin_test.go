package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

// pluginPath builds the plugin into a directory with kubectl, for PATH.
func pluginPath(t *testing.T) string {
	t.Helper()
	root, err := testcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl-watchcache"), "./cmd/kubectl-watchcache")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	if err := os.Symlink(cluster(t).Binaries().Kubectl, filepath.Join(dir, "kubectl")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// kubectl runs "kubectl args..." with only dir on PATH, as a user with KUBECONFIG set would.
func kubectl(t *testing.T, dir string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(dir, "kubectl"), args...)
	cmd.Env = []string{"PATH=" + dir, "HOME=" + t.TempDir(), "KUBECONFIG=" + cluster(t).Kubeconfig()}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

func listConfigMaps(t *testing.T) []summary.StoreEntry {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cluster(t).Config())
	if err != nil {
		t.Fatal(err)
	}
	l, err := cs.CoreV1().ConfigMaps("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []summary.StoreEntry
	for _, cm := range l.Items {
		out = append(out, summary.StoreEntry{Namespace: cm.Namespace, Name: cm.Name, UID: string(cm.UID), ResourceVersion: cm.ResourceVersion})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func decodeSummary(t *testing.T, out string) summary.Summary {
	t.Helper()
	var s summary.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("decoding the summary: %v\n%s", err, out)
	}
	return s
}

func TestE2EThePluginThroughKubectlMatchesAList(t *testing.T) {
	createConfigMaps(t, "plugin", 7)
	dir := pluginPath(t)
	before := listConfigMaps(t)
	out, stderr, err := kubectl(t, dir, "watchcache", "configmaps", "-A", "--no-tui", "--once", "--summary", "-o", "json", "--initial-list", "list")
	if err != nil {
		t.Fatalf("kubectl watchcache: %v\n%s", err, stderr)
	}
	// -o json prints JSON lines, then the summary object.
	i := strings.LastIndex(out, "\n{\n")
	if i < 0 {
		t.Fatalf("no summary in:\n%s", out)
	}
	sum := decodeSummary(t, out[i+1:])
	after := listConfigMaps(t)
	if !reflect.DeepEqual(sum.Store, before) && !reflect.DeepEqual(sum.Store, after) {
		t.Errorf("summary store differs from a LIST:\n got %v\nwant %v", sum.Store, after)
	}
	if sum.Objects != len(sum.Store) || sum.Objects < 7 || sum.Counters.Lists != 1 {
		t.Errorf("summary: got %d objects, counters %+v", sum.Objects, sum.Counters)
	}
}

func TestE2EATracedRunReplaysToTheSameSummary(t *testing.T) {
	createConfigMaps(t, "traced", 5)
	dir := pluginPath(t)
	tracePath := filepath.Join(t.TempDir(), "run.jsonl")
	cs, err := kubernetes.NewForConfig(cluster(t).Config())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Writes while the plugin watches, so the trace has events.
		time.Sleep(time.Second)
		for i := 0; i < 10; i++ {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("during-%d", i)}}
			_, _ = cs.CoreV1().ConfigMaps("traced").Create(context.Background(), cm, metav1.CreateOptions{})
		}
		_ = cs.CoreV1().ConfigMaps("traced").Delete(context.Background(), "cm-a", metav1.DeleteOptions{})
	}()
	live, stderr, err := kubectl(t, dir, "watchcache", "configmaps", "-n", "traced", "--no-tui", "--duration", "4s", "--summary", "-o", "json", "--trace", tracePath, "--watch-timeout", "2s")
	<-done
	if err != nil {
		t.Fatalf("kubectl watchcache: %v\n%s", err, stderr)
	}
	i := strings.LastIndex(live, "\n{\n")
	if i < 0 {
		t.Fatalf("no summary in:\n%s", live)
	}
	liveSum := decodeSummary(t, live[i+1:])
	replayed, stderr, err := kubectl(t, dir, "watchcache", "replay", tracePath, "--speed", "0", "--no-tui", "--summary", "-o", "json")
	if err != nil {
		t.Fatalf("kubectl watchcache replay: %v\n%s", err, stderr)
	}
	j := strings.LastIndex(replayed, "\n{\n")
	if j < 0 {
		t.Fatalf("no summary in:\n%s", replayed)
	}
	replaySum := decodeSummary(t, replayed[j+1:])
	liveSum.Bookmark.Age, replaySum.Bookmark.Age = nil, nil
	if !reflect.DeepEqual(liveSum, replaySum) {
		t.Errorf("summaries differ:\nlive   %+v\nreplay %+v", liveSum, replaySum)
	}
	if liveSum.Counters.Added != 10 || liveSum.Counters.Deleted != 1 || liveSum.Objects != 14 {
		t.Errorf("live summary: got %d objects, counters %+v", liveSum.Objects, liveSum.Counters)
	}
}
