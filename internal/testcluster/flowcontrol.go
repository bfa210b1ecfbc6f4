package testcluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// Throttling is a PriorityLevelConfiguration with very few seats that
// rejects what it cannot seat at once (limitResponse Reject), and the
// FlowSchema that routes some users' LISTs and WATCHes of ConfigMaps to it:
// under parallel lists, API Priority and Fairness answers those users 429.
type Throttling struct {
	FlowSchema, PriorityLevel       string // their names
	FlowSchemaUID, PriorityLevelUID string
}

// The names of the objects Throttle creates.
const (
	ThrottlingFlowSchema    = "throttled-users"
	ThrottlingPriorityLevel = "few-seats"
)

// Throttle creates the Throttling for users, with the admin's
// credentials, gives users read access to the ConfigMaps of namespace ns,
// and readers (some of users, or others) read access to the FlowSchemas
// and PriorityLevelConfigurations. It waits until the server classifies by
// the new FlowSchema.
func (c *Cluster) Throttle(ctx context.Context, ns string, users, readers []string) (Throttling, error) {
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		return Throttling{}, err
	}
	pl := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ThrottlingPriorityLevel},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				// One share of the server's concurrency: a few seats.
				NominalConcurrencyShares: ptr.To[int32](1),
				LendablePercent:          ptr.To[int32](0),
				BorrowingLimitPercent:    ptr.To[int32](0),
				LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			},
		},
	}
	pl, err = cs.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, pl, metav1.CreateOptions{})
	if err != nil {
		return Throttling{}, fmt.Errorf("creating the priority level: %w", err)
	}
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: ThrottlingFlowSchema},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: ThrottlingPriorityLevel},
			MatchingPrecedence:         500, // before global-default and the service accounts'
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{"list", "watch"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, Namespaces: []string{flowcontrolv1.NamespaceEvery},
				}},
			}},
		},
	}
	for _, u := range users {
		fs.Spec.Rules[0].Subjects = append(fs.Spec.Rules[0].Subjects, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: u}})
	}
	fs, err = cs.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{})
	if err != nil {
		return Throttling{}, fmt.Errorf("creating the flow schema: %w", err)
	}
	if err := grant(ctx, cs, ThrottlingFlowSchema, ns, users, readers); err != nil {
		return Throttling{}, err
	}
	t := Throttling{FlowSchema: fs.Name, PriorityLevel: pl.Name, FlowSchemaUID: string(fs.UID), PriorityLevelUID: string(pl.UID)}
	// The server classifies by the new schema once its configuration
	// controller has read it: a user's answers then name it in their headers.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, h, err := c.listAs(ctx, users[0], ns, 1)
		if err != nil {
			return Throttling{}, err
		}
		got := h.Get("X-Kubernetes-PF-FlowSchema-UID")
		if got == t.FlowSchemaUID {
			return t, nil
		}
		if time.Now().After(deadline) {
			return Throttling{}, fmt.Errorf("%s's lists are answered %d and classified by flow schema %q, not %s", users[0], code, got, t.FlowSchemaUID)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// listAs lists the ConfigMaps of ns as user, once, and returns the answer's
// code and headers.
func (c *Cluster) listAs(ctx context.Context, user, ns string, limit int) (int, http.Header, error) {
	cfg, err := c.UserConfig(user)
	if err != nil {
		return 0, nil, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, nil, err
	}
	return listWith(ctx, hc, c.URL()+"/api/v1/namespaces/"+ns+"/configmaps?limit="+strconv.Itoa(limit))
}

func listWith(ctx context.Context, hc *http.Client, url string) (int, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header, nil
}

// ListLoad lists every ConfigMap of ns as user from n goroutines at once,
// over and over, until ctx ends (no retries, no rate limit: the load that
// fills a priority level's seats). The returned wait ends the load and
// says how many lists were answered 429.
func (c *Cluster) ListLoad(ctx context.Context, user, ns string, n int) (wait func() (throttled int), err error) {
	cfg, err := c.UserConfig(user)
	if err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	throttled := 0
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				code, _, err := listWith(ctx, hc, c.URL()+"/api/v1/namespaces/"+ns+"/configmaps")
				if err == nil && code == http.StatusTooManyRequests {
					mu.Lock()
					throttled++
					mu.Unlock()
				}
			}
		}()
	}
	return func() int {
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return throttled
	}, nil
}

// grant gives users get/list/watch of ConfigMaps in ns, and readers get/list
// of the flow-control objects.
func grant(ctx context.Context, cs *kubernetes.Clientset, name, ns string, users, readers []string) error {
	subjects := func(us []string) []rbacv1.Subject {
		var s []rbacv1.Subject
		for _, u := range us {
			s = append(s, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
		}
		return s
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the role: %w", err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects(users),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("binding the role: %w", err)
	}
	if len(readers) == 0 {
		return nil
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name + "-flowcontrol-reader"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{flowcontrolv1.GroupName}, Resources: []string{"flowschemas", "prioritylevelconfigurations"}}}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the cluster role: %w", err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-flowcontrol-reader"}, Subjects: subjects(readers),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name + "-flowcontrol-reader"}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("binding the cluster role: %w", err)
	}
	return nil
}
