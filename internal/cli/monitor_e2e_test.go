package cli

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

// serviceAccountKubeconfig makes a ServiceAccount in ns with a ClusterRole
// of get, list and watch on rules' resources (and, with leases, the
// probe's verbs on Leases in ns), and writes what in-cluster configuration
// reads, as a kubeconfig: the server, its CA and a token from the
// TokenRequest API. No credential of the admin's is in it.
func serviceAccountKubeconfig(t *testing.T, cs kubernetes.Interface, admin *rest.Config, ns string, rules []rbacv1.PolicyRule, leases bool) string {
	t.Helper()
	ctx := context.Background()
	name := "watchcache-" + ns
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "watchcache"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "watchcache", Namespace: ns}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if leases {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "watchcache-probe"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"},
			Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "delete"}}}}
		if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "watchcache-probe"}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "watchcache-probe"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "watchcache", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sa := &rest.Config{Host: admin.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData, CAFile: admin.CAFile}}
	kc := filepath.Join(t.TempDir(), "serviceaccount.kubeconfig")
	if err := testcluster.WriteKubeconfig(kc, sa); err != nil {
		t.Fatal(err)
	}
	return kc
}

// get is the status and body of url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestE2EMonitorRunsAsItsServiceAccountAndStopsOnSIGTERM runs the monitor
// as a process, as a ServiceAccount whose ClusterRole allows get, list and
// watch on ConfigMaps and Deployments (and the probe's Leases in its
// namespace), with a token from the TokenRequest API: it syncs both,
// /readyz turns ready, /metrics answers, only what matters is logged; SIGTERM ends it within 5 s with its probe's Lease deleted. Asked for
// Secrets too, which the role does not allow, the whole run fails with the
// server's words: the user, the verb and the resource it may not use (a
// streaming list is a watch; a LIST, a list).
func TestE2EMonitorRunsAsItsServiceAccountAndStopsOnSIGTERM(t *testing.T) {
	c := cluster(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	const ns = "monitor-sa"
	kc := serviceAccountKubeconfig(t, cs, c.Config(), ns, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch"}},
	}, true)
	dir := pluginPath(t)

	// Enough and no more: one resource the role does not allow is an error.
	p := startPlugin(t, dir, kc, "monitor", "configmaps,secrets", "-A", "--listen", "127.0.0.1:0")
	select {
	case err := <-p.exited:
		if err == nil {
			t.Fatal("the monitor of a forbidden resource exited 0")
		}
		if msg := p.errOut.String(); !regexp.MustCompile(`cannot (list|watch) resource "secrets"`).MatchString(msg) || !strings.Contains(msg, "system:serviceaccount:"+ns+":watchcache") {
			t.Errorf("the forbidden resource's error does not name the verb, resource and user:\n%s", msg)
		}
	case <-time.After(time.Minute):
		t.Fatal("the monitor of a forbidden resource ran on for a minute")
	}

	p = startPlugin(t, dir, kc, "monitor", "configmaps,deployments.apps", "-A", "--listen", "127.0.0.1:0", "--probe", ns, "--probe-interval", "1s")
	addr := p.servingAt(t)
	if code, body := get(t, "http://"+addr+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d %s", code, body)
	}
	for range 3 { // configmaps, deployments and the probe's Leases
		p.waitForLine(t, `"reason":"list-complete"`)
	}
	if code, body := get(t, "http://"+addr+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after every list completed: %d %s", code, body)
	}
	if code, body := get(t, "http://"+addr+"/metrics"); code != http.StatusOK || !strings.Contains(body, `watchcache_store_objects{`) {
		t.Errorf("/metrics: %d %s", code, tail(body))
	}
	// A ConfigMap changed is no line; the probe's renewals are none either.
	ctx := context.Background()
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "quiet"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	leases, err := cs.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(leases.Items) != 1 {
		t.Fatalf("the probe's Lease: %v %v", leases, err)
	}
	start := time.Now()
	p.terminate(t, 5*time.Second)
	t.Logf("SIGTERM to exit: %s", time.Since(start).Round(time.Millisecond))
	if leases, err := cs.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{}); err != nil || len(leases.Items) != 0 {
		t.Errorf("the probe's Lease outlived the monitor: %v %v", leases, err)
	}
	p.mu.Lock()
	out := p.out.String()
	p.mu.Unlock()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(line, `"type":"event"`) || strings.Contains(line, `"type":"request-started"`) {
			t.Errorf("the monitor logged what does not matter: %s", line)
		}
	}
	if n := strings.Count(out, `"reason":"stopped"`); n != 3 {
		t.Errorf("%d stopped lines, want one per resource (3)\n%s", n, out)
	}
}
