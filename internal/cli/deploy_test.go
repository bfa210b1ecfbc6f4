package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

// kustomizeBuild renders the kustomization at dir (from the repository's
// root) as kubectl kustomize does, offline.
func kustomizeBuild(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	root, err := testcluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, dir))
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range m.Resources() {
		mp, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: mp})
	}
	return objs
}

// object finds the one object of kind and name among objs, decoded into into.
func object(t *testing.T, objs []*unstructured.Unstructured, kind, name string, into any) {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no %s %s in the build", kind, name)
}

// groupResource is "resource.group" as the plugin's arguments name it
// ("deployments.apps", "pods") split into its group and resource.
func groupResource(arg string) (group, resource string) {
	resource, group, _ = strings.Cut(arg, ".")
	return group, resource
}

// monitorContainer is the base's Deployment and its monitor container.
func monitorContainer(t *testing.T, objs []*unstructured.Unstructured) (*appsv1.Deployment, corev1.Container) {
	t.Helper()
	var d appsv1.Deployment
	object(t, objs, "Deployment", "kubectl-watchcache", &d)
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("the Deployment has %d containers, want the monitor alone", n)
	}
	return &d, d.Spec.Template.Spec.Containers[0]
}

// TestTheDeployBaseWatchesOnlyWhatItsClusterRoleAllows renders deploy/base
// and holds it to issue 37: the monitor's arguments watch exactly what the
// ClusterRole allows, with get, list and watch only, never Secrets; the probe's
// Leases in its own namespace; the container locked down, probed and sized;
// the Service's port named metrics.
func TestTheDeployBaseWatchesOnlyWhatItsClusterRoleAllows(t *testing.T) {
	objs := kustomizeBuild(t, "deploy/base")
	for _, o := range objs {
		if o.GetKind() != "Namespace" && o.GetKind() != "ClusterRole" && o.GetKind() != "ClusterRoleBinding" && o.GetNamespace() != "watchcache" {
			t.Errorf("%s %s is in namespace %q, want watchcache", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
	d, c := monitorContainer(t, objs)
	if len(c.Args) < 2 || c.Args[0] != "monitor" {
		t.Fatalf("the container's args: %q, want monitor RESOURCES ...", c.Args)
	}
	if !reflect.DeepEqual(c.Args[2:], []string{"-A", "--listen", ":8080", "--probe", "$(POD_NAMESPACE)"}) {
		t.Errorf("the container's flags: %q", c.Args[2:])
	}
	if len(c.Env) == 0 || c.Env[0].Name != "POD_NAMESPACE" || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.FieldRef == nil || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.namespace" {
		t.Errorf("POD_NAMESPACE is not the pod's namespace from the downward API: %+v", c.Env)
	}
	var watched []string
	for _, a := range strings.Split(c.Args[1], ",") {
		g, r := groupResource(a)
		watched = append(watched, g+"/"+r)
	}
	sort.Strings(watched)

	var cr rbacv1.ClusterRole
	object(t, objs, "ClusterRole", "kubectl-watchcache", &cr)
	var allowed []string
	for _, rule := range cr.Rules {
		if !reflect.DeepEqual(rule.Verbs, []string{"get", "list", "watch"}) || len(rule.ResourceNames) > 0 || len(rule.NonResourceURLs) > 0 {
			t.Errorf("a ClusterRole rule is not get, list and watch on whole resources: %+v", rule)
		}
		for _, g := range rule.APIGroups {
			for _, r := range rule.Resources {
				if g == "*" || r == "*" || r == "secrets" || strings.Contains(r, "/") {
					t.Errorf("the ClusterRole allows %s/%s", g, r)
				}
				allowed = append(allowed, g+"/"+r)
			}
		}
	}
	sort.Strings(allowed)
	if !reflect.DeepEqual(watched, allowed) {
		t.Errorf("the monitor watches %q, its ClusterRole allows %q: want the same", watched, allowed)
	}
	var crb rbacv1.ClusterRoleBinding
	object(t, objs, "ClusterRoleBinding", "kubectl-watchcache", &crb)
	sa := rbacv1.Subject{Kind: "ServiceAccount", Name: d.Spec.Template.Spec.ServiceAccountName, Namespace: "watchcache"}
	if crb.RoleRef.Name != cr.Name || !reflect.DeepEqual(crb.Subjects, []rbacv1.Subject{sa}) {
		t.Errorf("the ClusterRoleBinding: %+v, want %s bound to %+v", crb, cr.Name, sa)
	}
	var role rbacv1.Role
	object(t, objs, "Role", "kubectl-watchcache-probe", &role)
	if len(role.Rules) != 1 || !reflect.DeepEqual(role.Rules[0].APIGroups, []string{"coordination.k8s.io"}) || !reflect.DeepEqual(role.Rules[0].Resources, []string{"leases"}) {
		t.Errorf("the probe's Role is not about Leases alone: %+v", role.Rules)
	}
	var rb rbacv1.RoleBinding
	object(t, objs, "RoleBinding", "kubectl-watchcache-probe", &rb)
	if rb.RoleRef.Name != role.Name || !reflect.DeepEqual(rb.Subjects, []rbacv1.Subject{sa}) {
		t.Errorf("the probe's RoleBinding: %+v", rb)
	}

	sc := c.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 65532 ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("the container's securityContext: %+v", sc)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" ||
		c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("the container's probes: liveness %+v, readiness %+v", c.LivenessProbe, c.ReadinessProbe)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
		if req.IsZero() || lim.IsZero() || req.Cmp(lim) > 0 {
			t.Errorf("the container's %s: request %s, limit %s", r, req.String(), lim.String())
		}
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("the container's ports: %+v", c.Ports)
	}
	var svc corev1.Service
	object(t, objs, "Service", "kubectl-watchcache", &svc)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].Port != 8080 ||
		!reflect.DeepEqual(svc.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("the Service: ports %+v, selector %v; the pods' labels %v", svc.Spec.Ports, svc.Spec.Selector, d.Spec.Template.Labels)
	}
}

// prometheusRuleAlerts is the overlay's PrometheusRule's alerts: name and expression.
func prometheusRuleAlerts(t *testing.T, objs []*unstructured.Unstructured) [][2]string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "PrometheusRule" {
			continue
		}
		groups, _, _ := unstructured.NestedSlice(o.Object, "spec", "groups")
		var alerts [][2]string
		for _, g := range groups {
			rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
			for _, r := range rules {
				name, _, _ := unstructured.NestedString(r.(map[string]any), "alert")
				expr, _, _ := unstructured.NestedString(r.(map[string]any), "expr")
				alerts = append(alerts, [2]string{name, expr})
			}
		}
		return alerts
	}
	t.Fatal("no PrometheusRule in the build")
	return nil
}

var (
	readmeMetric = regexp.MustCompile("(?m)^\\| `(watchcache_[a-z_]+)` \\|")
	promqlString = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promqlRange  = regexp.MustCompile(`\[[^\]]*\]`)
	promqlWord   = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
)

// TestThePrometheusComponentScrapesTheServiceAndAlertsOnDocumentedMetrics
// renders deploy/overlays/prometheus: the ServiceMonitor scrapes the base's
// Service by its port's name, and every alert's expression names only
// metrics README documents ("Metrics"), their labels and PromQL's words.
func TestThePrometheusComponentScrapesTheServiceAndAlertsOnDocumentedMetrics(t *testing.T) {
	objs := kustomizeBuild(t, "deploy/overlays/prometheus")
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	metrics := map[string]bool{}
	for _, m := range readmeMetric.FindAllStringSubmatch(string(readme), -1) {
		metrics[m[1]] = true
	}
	if len(metrics) < 20 {
		t.Fatalf("found %d metrics in README's table", len(metrics))
	}
	words := map[string]bool{}
	for _, w := range strings.Fields(`sum max min increase rate without by and or unless bool
		resource namespace label_selector field_selector cause on kind state id severity`) {
		words[w] = true
	}
	alerts := prometheusRuleAlerts(t, objs)
	if len(alerts) == 0 {
		t.Fatal("the PrometheusRule has no alerts")
	}
	for _, a := range alerts {
		stripped := promqlRange.ReplaceAllString(promqlString.ReplaceAllString(a[1], ""), "")
		named := false
		for _, w := range promqlWord.FindAllString(stripped, -1) {
			switch {
			case metrics[w]:
				named = true
			case !words[w]:
				t.Errorf("alert %s: %q is neither a documented metric nor a word of PromQL: %s", a[0], w, a[1])
			}
		}
		if !named {
			t.Errorf("alert %s names no metric: %s", a[0], a[1])
		}
	}

	var sm struct {
		Spec struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			Endpoints []struct {
				Port string `json:"port"`
				Path string `json:"path"`
			} `json:"endpoints"`
		} `json:"spec"`
	}
	object(t, objs, "ServiceMonitor", "kubectl-watchcache", &sm)
	var svc corev1.Service
	object(t, objs, "Service", "kubectl-watchcache", &svc)
	for k, v := range sm.Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%s, the Service is labelled %v", k, v, svc.Labels)
		}
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("the ServiceMonitor's endpoints: %+v", sm.Spec.Endpoints)
	}
	if !slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == "Deployment" }) {
		t.Error("the overlay has no Deployment: it must include the base")
	}
}

// readmeAlertRow is a row of README's table of the PrometheusRule's alerts:
// | `Alert` | `--fail-on rule` | `expression` |.
var readmeAlertRow = regexp.MustCompile("(?m)^\\| `(Watchcache[A-Za-z]+)` \\| `([^`]+)` \\| `((?:[^`])+)` \\|$")

// TestREADMEListsThePrometheusRulesAlerts: README's "In the cluster:
// monitor" lists the PrometheusRule's alerts, each with its expression as
// the component has it, in the same order, and the --fail-on rule it stands
// for names a measure of README's "Alert rules".
func TestREADMEListsThePrometheusRulesAlerts(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(readme)
	start := strings.Index(doc, "\n## In the cluster: monitor\n")
	if start < 0 {
		t.Fatal(`README has no section "In the cluster: monitor"`)
	}
	section := doc[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var documented [][2]string
	for _, m := range readmeAlertRow.FindAllStringSubmatch(section, -1) {
		documented = append(documented, [2]string{m[1], strings.ReplaceAll(m[3], `\|`, "|")})
		measure, _, _ := strings.Cut(strings.NewReplacer(">=", ">").Replace(m[2]), ">")
		if !strings.Contains(doc, "| `"+measure+"` |") {
			t.Errorf("alert %s stands for --fail-on %s, whose measure README's alert rules do not list", m[1], m[2])
		}
	}
	if got := prometheusRuleAlerts(t, kustomizeBuild(t, "deploy/overlays/prometheus")); !reflect.DeepEqual(got, documented) {
		t.Errorf("the PrometheusRule's alerts:\n%q\nREADME's:\n%q", got, documented)
	}
}
