package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

// diffWriters is how many ConfigMaps each writer of the --diff test writes.
const diffWriters = 50

// diffLine is a DIFF line of -o json.
type diffLine struct {
	Type          string        `json:"type"`
	Name          string        `json:"name"`
	Changes       []diff.Change `json:"changes"`
	TimestampOnly bool          `json:"timestampOnly"`
	Skipped       string        `json:"skipped"`
}

// writeEverySecond writes each of ns's ConfigMaps once a second, for d,
// with fieldManager, through patch(i, now).
func writeEverySecond(t *testing.T, cs kubernetes.Interface, ns, manager string, d time.Duration, patch func(n int, now time.Time) string) {
	t.Helper()
	ctx := context.Background()
	end := time.Now().Add(d)
	for n := 0; time.Now().Before(end); n++ {
		tick := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, diffWriters)
		for i := range diffWriters {
			wg.Go(func() {
				_, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, fmt.Sprintf("cm-%02d", i), types.MergePatchType, []byte(patch(n, time.Now())), metav1.PatchOptions{FieldManager: manager})
				if err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		time.Sleep(time.Until(tick.Add(time.Second)))
	}
}

// TestE2EDiffNamesTheWritersAndRaisesNoisyUpdatesOnlyForStamps runs --diff
// on the real API server. A writer that stamps one annotation with the time
// every second on 50 ConfigMaps raises noisy-updates, naming the path and
// the writer's field manager; a writer that changes data does not. A
// deployment scaled by a client with its own field manager shows
// .spec.replicas owned by it. A ConfigMap deleted and created again under its
// name is not diffed against its earlier self. Each trace replays to the
// same churn and findings.
func TestE2EDiffNamesTheWritersAndRaisesNoisyUpdatesOnlyForStamps(t *testing.T) {
	cfg := cluster(t).Config()
	cfg.QPS, cfg.Burst = 500, 1000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, ns := range []string{"diff-stamps", "diff-data"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := range diffWriters {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}, Data: map[string]string{"value": "0"}}
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{FieldManager: "e2e-setup"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	labels := map[string]string{"app": "diffweb"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "diffweb"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1),
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}}}
	if _, err := cs.AppsV1().Deployments("diff-data").Create(ctx, dep, metav1.CreateOptions{FieldManager: "e2e-setup"}); err != nil {
		t.Fatal(err)
	}

	dir := pluginPath(t)
	watch := func(ns, resources string, write func()) (string, string) {
		tracePath := filepath.Join(t.TempDir(), ns+".jsonl")
		p := startPlugin(t, dir, cluster(t).Kubeconfig(), resources, "-n", ns, "--diff", "--no-tui", "-o", "json", "--summary", "--trace", tracePath)
		for range strings.Count(resources, ",") + 1 {
			p.waitForLine(t, `"reason":"list-complete"`)
		}
		write()
		time.Sleep(2 * time.Second)
		out, _ := p.interrupt(t)
		return out, tracePath
	}

	// The stamper: one annotation, the time, every second.
	stampOut, stampTrace := watch("diff-stamps", "configmaps", func() {
		writeEverySecond(t, cs, "diff-stamps", "heartbeat-stamper", 4*time.Second, func(_ int, now time.Time) string {
			return fmt.Sprintf(`{"metadata":{"annotations":{"example.com/heartbeat":%q}}}`, now.UTC().Format(time.RFC3339Nano))
		})
	})
	sum := allSummaries(t, stampOut)[0]
	f := raised(sum, findings.NoisyUpdates)
	if f == nil {
		t.Fatalf("the stamper raised no noisy-updates; churn %+v, findings %v", sum.Churn, sum.Findings)
	}
	const stampPath = `.metadata.annotations["example.com/heartbeat"]`
	if f.Evidence.Facts["path"] != stampPath || f.Evidence.Facts["manager"] != "heartbeat-stamper" {
		t.Errorf("noisy-updates names %v", f.Evidence.Facts)
	}
	c := sum.Churn
	if c == nil || c.Events < 100 || len(c.Paths) == 0 || c.Paths[0].Path != stampPath || c.Paths[0].Manager != "heartbeat-stamper" {
		t.Fatalf("churn: %+v", c)
	}
	// The first stamp adds the annotation; each later one changes only a time.
	if want := c.Events - diffWriters; c.TimestampOnly != want {
		t.Errorf("timestamp-only %d of %d events, want %d (all but each object's first)", c.TimestampOnly, c.Events, want)
	}
	if got := sum.Counters.Modified; got != c.Events+c.Skipped {
		t.Errorf("%d MODIFIED events counted, %d diffed and %d skipped", got, c.Events, c.Skipped)
	}
	checkReplaySays(t, stampTrace, sum)

	// The data writer: a new value every second; and a scale by a client of its own; and a recreate.
	dataOut, dataTrace := watch("diff-data", "configmaps,deployments.apps", func() {
		if _, err := cs.AppsV1().Deployments("diff-data").Patch(ctx, "diffweb", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{FieldManager: "e2e-scaler"}); err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().ConfigMaps("diff-data").Delete(ctx, "cm-00", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-00", Labels: map[string]string{"again": "yes"}}, Data: map[string]string{"value": "0"}}
		if _, err := cs.CoreV1().ConfigMaps("diff-data").Create(ctx, cm, metav1.CreateOptions{FieldManager: "e2e-setup"}); err != nil {
			t.Fatal(err)
		}
		writeEverySecond(t, cs, "diff-data", "data-writer", 4*time.Second, func(n int, _ time.Time) string {
			return fmt.Sprintf(`{"data":{"value":"%d"}}`, n+1)
		})
	})
	sums := allSummaries(t, dataOut)
	cms, deps := sums[0], sums[1]
	if f := raised(cms, findings.NoisyUpdates); f != nil {
		t.Errorf("real data changes raised noisy-updates: %+v", f)
	}
	if c := cms.Churn; c == nil || c.Events < 150 || c.TimestampOnly != 0 || c.Paths[0].Path != ".data.value" || c.Paths[0].Manager != "data-writer" {
		t.Errorf("data churn: %+v", c)
	}
	if c := deps.Churn; c == nil || len(c.Paths) == 0 || !hasPath(c.Paths, ".spec.replicas", "e2e-scaler") {
		t.Errorf("the scale: %+v", c)
	}
	for _, line := range strings.Split(dataOut, "\n") {
		var d diffLine
		if json.Unmarshal([]byte(line), &d) != nil || d.Type != "diff" {
			continue
		}
		for _, ch := range d.Changes {
			if strings.HasPrefix(ch.Path, ".metadata.uid") || strings.HasPrefix(ch.Path, ".metadata.labels") {
				t.Errorf("%s diffed against the object deleted before it: %+v", d.Name, ch)
			}
		}
	}
	checkReplaySays(t, dataTrace, sums...)
}

// raised returns finding id of s, nil when it was not raised.
func raised(s summary.Summary, id findings.ID) *findings.Finding {
	for i := range s.Findings {
		if s.Findings[i].ID == id {
			return &s.Findings[i]
		}
	}
	return nil
}

func hasPath(paths []diff.PathChurn, path, manager string) bool {
	for _, p := range paths {
		if p.Path == path && p.Manager == manager {
			return true
		}
	}
	return false
}

// checkReplaySays replays tracePath and wants the live run's churn and findings' ids.
func checkReplaySays(t *testing.T, tracePath string, live ...summary.Summary) {
	t.Helper()
	code, out, errOut := run(t, "replay", tracePath, "--speed", "0", "--no-tui", "--summary", "-o", "json")
	if code != 0 {
		t.Fatalf("replay exited %d: %s", code, errOut)
	}
	replayed := allSummaries(t, out)
	for i, l := range live {
		r := replayed[i]
		lj, _ := json.Marshal(l.Churn)
		rj, _ := json.Marshal(r.Churn)
		if string(lj) != string(rj) {
			t.Errorf("%s: the replay's churn differs:\nlive   %s\nreplay %s", l.Resource, lj, rj)
		}
		ids := func(s summary.Summary) (out []findings.ID) {
			for _, f := range s.Findings {
				out = append(out, f.ID)
			}
			return out
		}
		if fmt.Sprint(ids(l)) != fmt.Sprint(ids(r)) {
			t.Errorf("%s: findings live %v, replayed %v", l.Resource, ids(l), ids(r))
		}
	}
}

// TestE2EDiffNamesTheDeploymentControllerAndTheScaler runs a real
// kube-controller-manager (its deployment and replicaset controllers) on a
// cluster of its own while a client with a field manager of its own scales
// a Deployment: --diff shows .spec.replicas written by that client, and
// the .status paths written by the deployment controller (through the
// status subresource), and a new image at its container's key written by a
// third client; the trace replays to the same churn.
func TestE2EDiffNamesTheDeploymentControllerAndTheScaler(t *testing.T) {
	t.Parallel() // on a cluster of its own
	c := testcluster.ForTest(t, testcluster.Options{})
	if err := c.StartControllerManager("", "deployment", "replicaset"); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const ns = "diff-scale"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "scaled"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "scaled"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1),
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}}}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{FieldManager: "e2e-setup"}); err != nil {
		t.Fatal(err)
	}
	tracePath := filepath.Join(t.TempDir(), "scale.jsonl")
	p := startPlugin(t, pluginPath(t), c.Kubeconfig(), "deployments.apps", "-n", ns, "--diff", "--no-tui", "-o", "json", "--summary", "--trace", tracePath)
	p.waitForLine(t, `"reason":"list-complete"`)
	for _, replicas := range []int{3, 2, 4, 1} {
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
		if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, "scaled", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "e2e-scaler"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
	}
	// A new image rolls out: the Progressing condition moves on.
	image := `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:2"}]}}}}`
	if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, "scaled", types.StrategicMergePatchType, []byte(image), metav1.PatchOptions{FieldManager: "e2e-deployer"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	out, _ := p.interrupt(t)
	sum := allSummaries(t, out)[0]
	c2 := sum.Churn
	if c2 == nil || !hasPath(c2.Paths, ".spec.replicas", "e2e-scaler") {
		t.Fatalf("no .spec.replicas by e2e-scaler in the churn: %+v", c2)
	}
	status := 0
	for _, p := range c2.Paths {
		if strings.HasPrefix(p.Path, ".status.") {
			if p.Manager != "kube-controller-manager/status" {
				t.Errorf("%s written by %q, want the deployment controller", p.Path, p.Manager)
			}
			status++
		}
	}
	if status == 0 {
		t.Errorf("no .status path in the churn: %+v", c2)
	}
	// The container is keyed by its name (the key the Deployment's managedFields use).
	if !hasPath(c2.Paths, ".spec.template.spec.containers[name=app].image", "e2e-deployer") {
		t.Errorf("the new image is not keyed by its container's name, or not by e2e-deployer: %+v", c2.Paths)
	}
	checkReplaySays(t, tracePath, sum)
}

// TestE2EADiffOfASecretShowsNoValueEvenWithTraceUnsafeSecrets: a Secret's
// DIFF lines say which keys changed and who changed them, never their
// values: --trace-unsafe-secrets asks for the values in the trace (its whole
// objects keep them), not on the terminal or in a CI log.
func TestE2EADiffOfASecretShowsNoValueEvenWithTraceUnsafeSecrets(t *testing.T) {
	c := cluster(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()
	const ns = "diff-secret"
	newNamespace(t, cs, ns)
	first, second := "first-secret-value-1", "second-secret-value-2"
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"token": first}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tracePath := filepath.Join(t.TempDir(), "secrets.jsonl")
	p := startPlugin(t, pluginPath(t), c.Kubeconfig(), "secrets", "-n", ns, "--diff", "--no-tui", "-o", "json",
		"--trace", tracePath, "--trace-objects", "full", "--trace-unsafe-secrets")
	p.waitForLine(t, `"reason":"list-complete"`)
	patch := fmt.Sprintf(`{"stringData":{"token":%q}}`, second)
	if _, err := cs.CoreV1().Secrets(ns).Patch(ctx, "s", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "e2e-rotator"}); err != nil {
		t.Fatal(err)
	}
	p.waitForLine(t, `"type":"diff"`)
	out, stderr := p.interrupt(t)
	var changed bool
	for _, line := range strings.Split(out, "\n") {
		var d diffLine
		if json.Unmarshal([]byte(line), &d) != nil || d.Type != "diff" {
			continue
		}
		for _, ch := range d.Changes {
			if ch.Path == ".data.token" && ch.Manager == "e2e-rotator" && ch.Old == nil && ch.New == nil {
				changed = true
			}
		}
	}
	if !changed {
		t.Errorf("no DIFF line says .data.token changed by e2e-rotator without its values:\n%s", out)
	}
	for _, v := range []string{first, second} {
		b64 := base64.StdEncoding.EncodeToString([]byte(v))
		if strings.Contains(out+stderr, b64) || strings.Contains(out+stderr, v) {
			t.Errorf("the output shows the Secret's value %q:\n%s", v, out)
		}
	}
	// The trace, which the user asked to hold them, does.
	b, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), base64.StdEncoding.EncodeToString([]byte(second))) {
		t.Error("the trace recorded with --trace-objects full --trace-unsafe-secrets lacks the Secret's value")
	}
}
