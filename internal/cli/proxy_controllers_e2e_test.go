package cli

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

// TestE2EProxyFaultsAgainstARealKubeControllerManager runs a real
// kube-controller-manager (its deployment, replicaset and serviceaccount
// controllers: a Pod needs its namespace's default ServiceAccount) through proxy --fault cut@every=10s --fault gone@every=60s for three
// minutes while five Deployments scale. Its informers resume after each
// cut and relist after each 410; every Deployment converges (its status
// says the replicas it asks for, at its generation), and at the end each
// stream the proxy rebuilt of its informers equals a LIST.
func TestE2EProxyFaultsAgainstARealKubeControllerManager(t *testing.T) {
	t.Parallel() // on a cluster of its own
	c := testcluster.ForTest(t, testcluster.Options{})
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const ns, n = "kcm-faults", 5
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		labels := map[string]string{"app": fmt.Sprintf("web-%d", i)}
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i)}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}}}
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	work := t.TempDir()
	kc, tracePath := filepath.Join(work, "proxy.kubeconfig"), filepath.Join(work, "kcm.jsonl")
	const run = 3 * time.Minute
	pr := startRun(t, "proxy", "--kubeconfig", c.Kubeconfig(), "--port", "0", "--no-tui", "-o", "json", "--summary",
		"--print-kubeconfig", kc, "--trace", tracePath, "--fault", "cut@every=10s", "--fault", "gone@every=60s")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(kc); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy wrote no kubeconfig within a minute\n%s", tail(pr.errOut.String()))
		}
	}
	if err := c.StartControllerManager(kc, "deployment", "replicaset", "serviceaccount"); err != nil {
		t.Fatal(err)
	}

	// Scale at random for the run; the controllers follow through the faults.
	rng := rand.New(rand.NewPCG(1, 2))
	for end := time.Now().Add(run); time.Now().Before(end); time.Sleep(3 * time.Second) {
		name := fmt.Sprintf("web-%d", rng.IntN(n))
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, 1+rng.IntN(4))
		if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Every Deployment converges.
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		l, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		behind := 0
		for _, d := range l.Items {
			want := *d.Spec.Replicas
			if d.Status.ObservedGeneration != d.Generation || d.Status.Replicas != want || d.Status.UpdatedReplicas != want {
				behind++
			}
		}
		if behind == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d Deployments did not converge within 90 s of the last scale", behind, n)
		}
	}
	time.Sleep(3 * time.Second) // the last events reach the controllers' streams
	sums := pr.stop(t)

	// The faults acted, on the controller's streams.
	var cuts, gones int
	for _, f := range faultsOf(t, pr.out.String()) {
		switch f.Fault {
		case "cut@every=10s":
			cuts += f.Count
		case "gone@every=60s":
			gones += f.Count
		}
	}
	if cuts < 10 || gones < 2 {
		t.Errorf("the faults acted %d (cut) and %d (gone) times over %s", cuts, gones, run)
	}
	// Each stream of the controllers' informers equals a LIST of its resource.
	seen := map[string]bool{}
	for _, s := range sums {
		gvr, ok := map[string]schema.GroupVersionResource{
			"deployments.v1.apps": deploymentsGVR,
			"replicasets.v1.apps": {Group: "apps", Version: "v1", Resource: "replicasets"},
			"pods.v1":             {Version: "v1", Resource: "pods"},
		}[s.Resource]
		if !ok || s.Stream == nil || s.Stream.Namespace != "" || s.Stream.ClientLeft != nil {
			continue
		}
		seen[s.Resource] = true
		if s.Counters.Relists == 0 {
			t.Errorf("%s (%s) never relisted through gone@every=60s", s.Resource, s.Stream.UserAgent)
		}
		list := listAs(t, dyn, gvr, "")
		got := append([]summary.StoreEntry(nil), s.Store...)
		sortEntries(got)
		sortEntries(list)
		if !reflect.DeepEqual(got, list) {
			t.Errorf("%s: the stream of %s has %d objects, a LIST %d; they differ", s.Resource, s.Stream.UserAgent, len(got), len(list))
		}
	}
	for _, r := range []string{"deployments.v1.apps", "replicasets.v1.apps", "pods.v1"} {
		if !seen[r] {
			t.Errorf("no stream of %s by the controller manager", r)
		}
	}
}

// sortEntries orders a store's entries by namespace, then name.
func sortEntries(e []summary.StoreEntry) {
	slices.SortFunc(e, func(a, b summary.StoreEntry) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
}
