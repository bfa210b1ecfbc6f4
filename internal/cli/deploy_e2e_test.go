package cli

import (
	"context"
	"net/http"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

// tokenKubeconfig writes what in-cluster configuration reads for the
// ServiceAccount ns/name, as a kubeconfig: the server, its CA and a token
// from the TokenRequest API, nothing of the admin's.
func tokenKubeconfig(t *testing.T, cs kubernetes.Interface, admin *rest.Config, ns, name string) string {
	t.Helper()
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "serviceaccount.kubeconfig")
	if err := testcluster.WriteKubeconfig(kc, &rest.Config{Host: admin.Host, BearerToken: tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData, CAFile: admin.CAFile}}); err != nil {
		t.Fatal(err)
	}
	return kc
}

// appliedMonitorArgs reads the applied Deployment's container and returns its
// arguments as the kubelet would run them ($(POD_NAMESPACE) expanded from the
// downward API), with --listen on a free loopback port.
func appliedMonitorArgs(t *testing.T, cs kubernetes.Interface, ns string) (args []string, serviceAccount string, memoryRequest int64) {
	t.Helper()
	d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), "kubectl-watchcache", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	vars := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			vars[e.Name] = d.Namespace
		case e.ValueFrom == nil:
			vars[e.Name] = e.Value
		}
	}
	for i, a := range c.Args {
		for k, v := range vars {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		if strings.Contains(a, "$(") {
			t.Fatalf("argument %q names a variable the test cannot expand", c.Args[i])
		}
		if i > 0 && c.Args[i-1] == "--listen" {
			a = "127.0.0.1:0"
		}
		args = append(args, a)
	}
	return args, d.Spec.Template.Spec.ServiceAccountName, c.Resources.Requests.Memory().Value()
}

// TestE2EDeployBaseAppliesAndItsRBACIsEnoughAndNoMore applies deploy/base to
// the real apiserver with kubectl apply -k --server-side, then runs the
// monitor as the applied ServiceAccount (a TokenRequest token, nothing else)
// with the applied Deployment's own arguments: it syncs every resource and
// its probe's Leases and /readyz turns 200; SIGTERM ends it with the Lease
// gone. The same arguments with Secrets added fail with the server's words:
// the verb, the resource and the ServiceAccount. Then the ServiceMonitor and
// PrometheusRule CRDs (vendored from the prometheus-operator module) are
// installed and deploy/overlays/prometheus applies too.
func TestE2EDeployBaseAppliesAndItsRBACIsEnoughAndNoMore(t *testing.T) {
	c := cluster(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	root, err := testcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := pluginPath(t)
	start := time.Now()
	if out, errOut, err := kubectl(t, dir, "apply", "-k", filepath.Join(root, "deploy", "base"), "--server-side"); err != nil {
		t.Fatalf("kubectl apply -k deploy/base --server-side: %v\n%s%s", err, out, errOut)
	} else {
		t.Logf("kubectl apply -k deploy/base --server-side (%s):\n%s", time.Since(start).Round(time.Millisecond), out)
	}
	const ns = "watchcache"
	args, sa, memoryRequest := appliedMonitorArgs(t, cs, ns)
	kc := tokenKubeconfig(t, cs, c.Config(), ns, sa)
	resources := strings.Split(args[1], ",")
	t.Logf("the applied container's args, as run: %q", args)

	p := startPlugin(t, dir, kc, args...)
	addr := p.servingAt(t)
	for range len(resources) + 1 { // each resource, and the probe's Leases
		p.waitForLine(t, `"reason":"list-complete"`)
	}
	if code, body := get(t, "http://"+addr+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz once every list completed: %d %s", code, body)
	}
	code, body := get(t, "http://"+addr+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, r := range resources {
		if !regexp.MustCompile(`watchcache_state\{[^}]*resource="` + regexp.QuoteMeta(strings.SplitN(r, ".", 2)[0]) + `\.[^}]*state="Watching"\} 1`).MatchString(body) {
			t.Errorf("%s is not Watching:\n%s", r, tail(body))
		}
	}
	// The request holds the process with its (few) objects.
	if m := regexp.MustCompile(`(?m)^process_resident_memory_bytes (\S+)$`).FindStringSubmatch(body); m == nil {
		t.Error("/metrics has no process_resident_memory_bytes")
	} else if rss, _ := strconv.ParseFloat(m[1], 64); rss >= float64(memoryRequest) {
		t.Errorf("the monitor's resident memory, %.1f MiB, is over the Deployment's request, %.1f MiB", rss/(1<<20), float64(memoryRequest)/(1<<20))
	} else {
		t.Logf("the monitor's resident memory: %.1f MiB (the Deployment requests %.1f MiB)", rss/(1<<20), float64(memoryRequest)/(1<<20))
	}
	p.terminate(t, 5*time.Second)
	if leases, err := cs.CoordinationV1().Leases(ns).List(context.Background(), metav1.ListOptions{}); err != nil || len(leases.Items) != 0 {
		t.Errorf("the probe's Lease outlived the monitor: %v %v", leases, err)
	}

	// No more: the same arguments and one resource more.
	more := append([]string{}, args...)
	more[1] += ",secrets"
	p = startPlugin(t, dir, kc, more...)
	select {
	case err := <-p.exited:
		if err == nil {
			t.Fatal("the monitor of a resource its ClusterRole does not allow exited 0")
		}
		msg := p.errOut.String()
		if !regexp.MustCompile(`cannot (list|watch) resource "secrets"`).MatchString(msg) || !strings.Contains(msg, "system:serviceaccount:"+ns+":"+sa) {
			t.Errorf("the forbidden resource's error does not name the verb, resource and ServiceAccount:\n%s", msg)
		} else {
			t.Logf("with secrets: %s", strings.TrimSpace(tail(msg)))
		}
	case <-time.After(time.Minute):
		t.Fatal("the monitor of a forbidden resource ran on for a minute")
	}

	// The Prometheus component, once its CRDs are installed.
	crds := filepath.Join("testdata", "prometheus-operator-crd")
	for _, args := range [][]string{
		{"apply", "--server-side", "-f", filepath.Join(crds, "monitoring.coreos.com_servicemonitors.yaml"), "-f", filepath.Join(crds, "monitoring.coreos.com_prometheusrules.yaml")},
		{"wait", "--for", "condition=Established", "--timeout", "60s", "crd/servicemonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com"},
		{"apply", "-k", filepath.Join(root, "deploy", "overlays", "prometheus"), "--server-side"},
	} {
		if out, errOut, err := kubectl(t, dir, args...); err != nil {
			t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		} else {
			t.Logf("kubectl %s:\n%s", strings.Join(args[:2], " "), out)
		}
	}
	dyn := dynamic.NewForConfigOrDie(c.Config())
	pr, err := dyn.Resource(schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"}).Namespace(ns).Get(context.Background(), "kubectl-watchcache", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := prometheusRuleAlerts(t, []*unstructured.Unstructured{pr}), prometheusRuleAlerts(t, kustomizeBuild(t, "deploy/overlays/prometheus")); !reflect.DeepEqual(got, want) {
		t.Errorf("the stored PrometheusRule's alerts:\n%q\nwant the overlay's:\n%q", got, want)
	}
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}).Namespace(ns).Get(context.Background(), "kubectl-watchcache", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	if _, err := cs.CoreV1().Services(ns).Get(context.Background(), "kubectl-watchcache", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
}
