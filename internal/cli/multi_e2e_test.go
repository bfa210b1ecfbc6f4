package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/causal"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

var (
	configMapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	widgetsGVR     = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
)

// listAs lists gvr in ns as a summary's store lists it.
func listAs(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string) []summary.StoreEntry {
	t.Helper()
	l, err := dyn.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]summary.StoreEntry, 0, len(l.Items))
	for _, o := range l.Items {
		out = append(out, summary.StoreEntry{Namespace: o.GetNamespace(), Name: o.GetName(), UID: string(o.GetUID()), ResourceVersion: o.GetResourceVersion()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// allSummaries decodes the {"resources": [...]} object that ends -o json output.
func allSummaries(t *testing.T, out string) []summary.Summary {
	t.Helper()
	sums, err := summary.Decode([]byte(out))
	if err != nil {
		t.Fatalf("want the summaries as the last line: %v", err)
	}
	return sums
}

// TestE2EThreeResourcesAtOnceSurviveARestartWithCompaction watches a
// built-in type, an apps type and a CRD (named through its category) while
// all three churn, through an apiserver restart with etcd compacted in the
// gap: each resource sees its own 410 and relist, each cache equals its LIST,
// every line is in causal order, and the version 2 trace replays to the same
// summaries.
func TestE2EThreeResourcesAtOnceSurviveARestartWithCompaction(t *testing.T) {
	t.Parallel() // on a cluster of its own, which it restarts
	c := testcluster.ForTest(t, testcluster.Options{})
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	if err := testcluster.InstallWidgets(context.Background(), c.Config()); err != nil {
		t.Fatal(err)
	}
	ns := "three"
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	proxy, err := c.NewProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	kubeconfig := filepath.Join(t.TempDir(), "proxy.kubeconfig")
	if err := testcluster.WriteKubeconfig(kubeconfig, proxy.Config(c.Config())); err != nil {
		t.Fatal(err)
	}
	var churns []*testcluster.Churn
	for _, o := range []testcluster.ChurnOptions{
		{Resource: configMapsGVR, Prefix: "cm"},
		{Resource: deploymentsGVR, Object: testcluster.Deployment, Prefix: "web"},
		{Resource: widgetsGVR, Object: testcluster.Widget, Prefix: "w"},
	} {
		o.Namespace, o.Names, o.Rate = ns, 30, 15
		ch, err := testcluster.StartChurn(c.Config(), o)
		if err != nil {
			t.Fatal(err)
		}
		defer ch.Stop()
		churns = append(churns, ch)
	}
	dir := pluginPath(t)
	tracePath := filepath.Join(t.TempDir(), "three.jsonl")
	const giveUpAfter = 25 * time.Second // see the reflector's long-watch test
	p := startPlugin(t, dir, kubeconfig, "configmaps,deployments.apps", "watchcache-test", "-n", ns, "--no-tui", "-o", "json", "--summary",
		"--trace", tracePath, "--give-up-after", giveUpAfter.String(), "--duration", "3m")
	for range 3 {
		p.waitForLine(t, `"reason":"list-complete"`)
	}
	time.Sleep(giveUpAfter + 2*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	proxy.Refuse(time.Hour)
	proxy.CutAll()
	time.Sleep(time.Second)
	if err := c.RestartCompacted(ctx, func() { proxy.Refuse(0) }); err != nil {
		t.Fatal(err)
	}
	// Each resource relists once its storage is back: a CRD's comes last
	// (503 before its paths are installed, 429 while its storage initializes,
	// each retried after a backoff).
	for range 3 {
		p.waitForLine(t, `"reason":"list-complete"`)
	}
	for _, ch := range churns {
		t.Logf("churn: %s", ch.Stop())
	}
	time.Sleep(3 * time.Second)
	out, _ := p.interrupt(t)

	sums := allSummaries(t, out)
	want := []struct {
		name string
		gvr  schema.GroupVersionResource
	}{{"configmaps.v1", configMapsGVR}, {"deployments.v1.apps", deploymentsGVR}, {"widgets.v1.example.com", widgetsGVR}}
	if len(sums) != len(want) {
		t.Fatalf("summaries: got %d, want %d in argument order", len(sums), len(want))
	}
	for i, w := range want {
		s := sums[i]
		if s.Resource != w.name {
			t.Errorf("summary %d: resource %s, want %s", i, s.Resource, w.name)
			continue
		}
		if listed := listAs(t, dyn, w.gvr, ns); !reflect.DeepEqual(s.Store, listed) {
			t.Errorf("%s: the cache differs from a LIST: %d cached, %d listed", w.name, len(s.Store), len(listed))
		}
		if s.Counters.Gone == 0 || s.Counters.Relists == 0 {
			t.Errorf("%s: want its own 410 and relist, got counters %+v", w.name, s.Counters)
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, w.name) && (strings.Contains(line, `"kind":"request"`) || strings.Contains(line, `"kind":"decision"`) || strings.Contains(line, "error")) {
					t.Log(line)
				}
			}
		}
		t.Logf("%s: %d objects, counters %+v", w.name, s.Objects, s.Counters)
	}
	lines, err := causal.FromJSON([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l.Resource == "" {
			t.Fatalf("a line without its resource: %+v", l)
		}
	}
	if err := causal.Check(lines); err != nil {
		t.Errorf("the JSON lines: %v", err)
	}

	replayed, stderr, err := kubectl(t, dir, "watchcache", "replay", tracePath, "--speed", "0", "--no-tui", "--summary", "-o", "json", "--strict")
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, stderr)
	}
	rsums := allSummaries(t, replayed)
	for i := range sums {
		checkSyncTimes(t, sums[i], rsums[i])
		sums[i], rsums[i] = sums[i].WithoutClockReadings(), rsums[i].WithoutClockReadings()
	}
	if !reflect.DeepEqual(sums, rsums) {
		t.Errorf("the replay's summaries differ from the live run's")
	}
}

// TestE2EAForbiddenResourceFailsAloneAndTheRunExitsOne: a user who may watch
// ConfigMaps but not Secrets watches both; Secrets fail, ConfigMaps go on,
// and the run exits 1 naming the resource that failed and why.
func TestE2EAForbiddenResourceFailsAloneAndTheRunExitsOne(t *testing.T) {
	c := cluster(t)
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := "forbidden-one"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "configmaps-only"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "configmaps-only"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "configmaps-only"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "nobody"}}}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createIn(t, cs, ns, 3)
	cfg, err := c.UserConfig("nobody")
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "nobody.yaml")
	if err := testcluster.WriteKubeconfig(kc, cfg); err != nil {
		t.Fatal(err)
	}
	// Discovery is open to every authenticated user: both names resolve.
	code, out, stderr := run(t, "configmaps,secrets", "--kubeconfig", kc, "-n", ns, "--no-tui", "--once", "--summary", "-o", "json")
	if code != ExitFailure {
		t.Errorf("exit code: got %d, want %d", code, ExitFailure)
	}
	if want := `secrets.v1: failed to perform initial object list (a streaming list, which is a watch): 403 Forbidden: secrets is forbidden: User "nobody" cannot watch resource "secrets"`; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	sums := allSummaries(t, out)
	if len(sums) != 2 || sums[0].Objects != 3 || sums[1].Objects != 0 {
		t.Errorf("summaries: %+v, want configmaps with 3 objects and secrets with none", sums)
	}
}

// createIn creates n ConfigMaps in ns.
func createIn(t *testing.T, cs kubernetes.Interface, ns string, n int) {
	t.Helper()
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestE2EACategoryOverMaxResourcesIsAUsageErrorThatCountsWhatItWouldWatch:
// `all` over --max-resources exits 2, as other bad flags do, and the count it
// gives is the number of resources the same run watches with room for them.
func TestE2EACategoryOverMaxResourcesIsAUsageErrorThatCountsWhatItWouldWatch(t *testing.T) {
	kc := kubeconfig(t)
	code, _, stderr := run(t, "all", "-n", "default", "--kubeconfig", kc, "--no-tui", "--once", "--max-resources", "3")
	m := regexp.MustCompile(`category "all" expands to (\d+) resources, more than --max-resources=3`).FindStringSubmatch(stderr)
	if code != ExitUsage || m == nil {
		t.Fatalf("all --max-resources 3: exit %d, stderr %q; want exit %d and the count", code, stderr, ExitUsage)
	}
	code, out, stderr := run(t, "all", "-n", "default", "--kubeconfig", kc, "--no-tui", "--once", "--summary", "-o", "json")
	if code != ExitOK {
		t.Fatalf("all: exit %d\n%s", code, stderr)
	}
	if got := strconv.Itoa(len(allSummaries(t, out))); got != m[1] {
		t.Errorf("all watched %s resources; --max-resources 3 said it expands to %s", got, m[1])
	}
}

// A namespace that does not exist (a name mistyped) is watched, as kubectl
// get -w does, with a warning that nothing is in it; one that exists, none.
func TestE2EAMissingNamespaceIsWatchedWithAWarning(t *testing.T) {
	kc := kubeconfig(t)
	code, out, stderr := run(t, "configmaps", "-n", "no-such-namespace", "--kubeconfig", kc, "--no-tui", "--once")
	if want := "warning: namespace \"no-such-namespace\" not found: nothing is in it to watch until it is created\n"; code != ExitOK || stderr != want {
		t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr, ExitOK, want)
	}
	if !strings.Contains(out, "list complete: 0 objects") {
		t.Errorf("the watch of the missing namespace did not list it empty:\n%s", out)
	}
	if code, _, stderr := run(t, "configmaps", "-n", "default", "--kubeconfig", kc, "--no-tui", "--once"); code != ExitOK || stderr != "" {
		t.Errorf("namespace default: exit %d, stderr %q; want exit %d and no warning", code, stderr, ExitOK)
	}
}

// TestE2EAnExactReadListsTheObjectsAtThatResourceVersion: with the default
// --initial-list (auto), --resource-version-match Exact reads the state at
// that resourceVersion, by a LIST: a streaming list reads NotOlderThan only,
// and would hold today's objects instead.
func TestE2EAnExactReadListsTheObjectsAtThatResourceVersion(t *testing.T) {
	c := cluster(t)
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := fmt.Sprintf("exact-read-%d", time.Now().UnixNano()%1_000_000_000)
	newNamespaceIn(t, cs, ns, 3)
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv := list.ResourceVersion
	for i := range 2 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("later-%d", i)}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr := run(t, "configmaps", "-n", ns, "--kubeconfig", c.Kubeconfig(), "--no-tui", "--once", "--summary", "-o", "json",
		"--resource-version", rv, "--resource-version-match", "Exact")
	if code != ExitOK {
		t.Fatalf("exit code %d, want %d; stderr:\n%s", code, ExitOK, stderr)
	}
	// The list is what was asked; the summary may hold more, from the
	// watch that follows it until --once stops the run (the later two
	// come on it at once).
	if want := fmt.Sprintf(`"reason":"list-complete","detail":"list complete: %d objects at resourceVersion %s"`, len(list.Items), rv); !strings.Contains(out, want) {
		t.Errorf("the lines do not show the list of the %d objects at resourceVersion %s (%s):\n%s", len(list.Items), rv, want, out)
	}
	if sums := allSummaries(t, out); len(sums) != 1 || sums[0].Counters.Lists != 1 {
		t.Errorf("summaries: %+v, want one resource with one list", sums)
	}
	if want := `"resourceVersionMatch":"Exact"`; !strings.Contains(out, want) {
		t.Errorf("the lines do not show a request with %s:\n%s", want, out)
	}
}
