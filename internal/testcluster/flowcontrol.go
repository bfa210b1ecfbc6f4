package testcluster

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// Throttling is a PriorityLevelConfiguration that rejects what it cannot
// seat at once (limitResponse Reject), and the FlowSchema that routes some
// users' requests to it. Throttle's has a few seats, for the users' LISTs
// and WATCHes of ConfigMaps: under parallel lists, API Priority and
// Fairness answers them 429. ThrottleEverything's has none, for every
// request of the users: all are answered 429 until Unthrottle.
type Throttling struct {
	FlowSchema, PriorityLevel       string // their names
	FlowSchemaUID, PriorityLevelUID string
	users                           []string
	ns                              string
	release                         func() // ends what holds the level's seat
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
	return c.throttle(ctx, ns, users, readers, ThrottlingFlowSchema, ThrottlingPriorityLevel, 1, []flowcontrolv1.PolicyRulesWithSubjects{{
		ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
			Verbs: []string{"list", "watch"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, Namespaces: []string{flowcontrolv1.NamespaceEvery},
		}},
	}})
}

// The names of the objects ThrottleEverything creates.
const (
	RejectingFlowSchema    = "every-request"
	RejectingPriorityLevel = "no-seats"
)

// ThrottleEverything routes every request of users to a
// PriorityLevelConfiguration that rejects them all: a FlowSchema matches
// every verb on every resource of every group, namespaced or not, the
// flow-control objects included, and every non-resource URL (discovery,
// /version). Users may read the ConfigMaps of ns and readers the
// flow-control objects (rejected all the same). The level has no seats of
// its own (nominalConcurrencyShares 0, nothing to borrow), but API Priority
// and Fairness still seats one request when nothing else of the level
// executes, so holder (another user of Options.Users, matched too) holds
// that one: it creates a ConfigMap that a validating webhook served here
// answers only at Unthrottle (or after its 30 s timeout, when holder
// creates another at once). It returns once users[0] is answered 429.
func (c *Cluster) ThrottleEverything(ctx context.Context, ns string, users, readers []string, holder string) (Throttling, error) {
	matched := append(append([]string(nil), users...), holder)
	th, err := c.throttle(ctx, ns, matched, readers, RejectingFlowSchema, RejectingPriorityLevel, 0, []flowcontrolv1.PolicyRulesWithSubjects{{
		ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
			Verbs: []string{flowcontrolv1.VerbAll}, APIGroups: []string{flowcontrolv1.APIGroupAll}, Resources: []string{flowcontrolv1.ResourceAll},
			ClusterScope: true, Namespaces: []string{flowcontrolv1.NamespaceEvery},
		}},
		NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{flowcontrolv1.VerbAll}, NonResourceURLs: []string{flowcontrolv1.NonResourceAll}}},
	}})
	if err != nil {
		return Throttling{}, err
	}
	th.release, err = c.holdSeat(ctx, holder, RejectingFlowSchema+"-hold")
	if err != nil {
		return Throttling{}, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, err := c.listAs(ctx, users[0], ns, 1)
		if err != nil {
			return Throttling{}, err
		}
		if code == http.StatusTooManyRequests {
			return th, nil
		}
		if time.Now().After(deadline) {
			return Throttling{}, fmt.Errorf("%s's lists are answered %d while %s holds the seat of priority level %s, want 429", users[0], code, holder, th.PriorityLevel)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// holdSeat makes user hold a seat of its priority level: it creates
// ConfigMaps in namespace hold, one after another, whose validating webhook
// (served here) answers once release is called (or the cluster stops). It
// returns once the webhook holds one.
func (c *Cluster) holdSeat(ctx context.Context, user, hold string) (release func(), err error) {
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		return nil, err
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hold, Labels: map[string]string{holdLabel: hold}}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", hold, err)
	}
	if _, err := cs.RbacV1().Roles(hold).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: hold},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating the role: %w", err)
	}
	if _, err := cs.RbacV1().RoleBindings(hold).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: hold},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: hold}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("binding the role: %w", err)
	}
	held, released := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(released) }) }
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		select {
		case held <- struct{}{}:
		default:
		}
		select {
		case <-released:
		case <-r.Context().Done():
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		review.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	}))
	c.atStop(func() {
		release()
		srv.Close()
	})
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	url := srv.URL + "/hold"
	none := admissionregistrationv1.SideEffectClassNone
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: hold},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "hold.watchcache.test",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{holdLabel: hold}},
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](30),
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
		}},
	}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating the webhook: %w", err)
	}
	ucfg, err := c.UserConfig(user)
	if err != nil {
		return nil, err
	}
	ucs, err := kubernetes.NewForConfig(ucfg)
	if err != nil {
		return nil, err
	}
	// Until released: a create ends at once while the server does not call
	// the webhook yet, and after 30 s when it gives up on it.
	go func() {
		for {
			select {
			case <-released:
				return
			default:
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "hold-"}}
			if _, err := ucs.CoreV1().ConfigMaps(hold).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
				select {
				case <-released:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
	}()
	select {
	case <-held:
		return release, nil
	case <-time.After(30 * time.Second):
		release()
		return nil, fmt.Errorf("%s's ConfigMap in %s did not reach the webhook within 30 s", user, hold)
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// holdLabel marks the namespace whose ConfigMaps holdSeat's webhook holds.
const holdLabel = "watchcache.test/hold"

// Unthrottle gives th's PriorityLevelConfiguration seats (shares of the
// server's concurrency, as global-default has) and releases what holds
// one, and waits until the server seats the first of its users again.
func (c *Cluster) Unthrottle(ctx context.Context, th Throttling) error {
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		return err
	}
	patch := []byte(`{"spec":{"limited":{"nominalConcurrencyShares":20}}}`)
	if _, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Patch(ctx, th.PriorityLevel, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("giving priority level %s seats: %w", th.PriorityLevel, err)
	}
	if th.release != nil {
		th.release()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, err := c.listAs(ctx, th.users[0], th.ns, 1)
		if err != nil {
			return err
		}
		if code != http.StatusTooManyRequests {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s's lists are still answered 429 after priority level %s got seats", th.users[0], th.PriorityLevel)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// throttle creates a PriorityLevelConfiguration of shares that rejects
// what it cannot seat, and a FlowSchema of rules (for users) that routes to
// it; see Throttle.
func (c *Cluster) throttle(ctx context.Context, ns string, users, readers []string, fsName, plName string, shares int32, rules []flowcontrolv1.PolicyRulesWithSubjects) (Throttling, error) {
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		return Throttling{}, err
	}
	pl := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: plName},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				// One share of the server's concurrency is a few seats; none is none.
				NominalConcurrencyShares: ptr.To(shares),
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
		ObjectMeta: metav1.ObjectMeta{Name: fsName},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: plName},
			MatchingPrecedence:         500, // before global-default and the service accounts'
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules:                      rules,
		},
	}
	for i := range fs.Spec.Rules {
		for _, u := range users {
			fs.Spec.Rules[i].Subjects = append(fs.Spec.Rules[i].Subjects, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: u}})
		}
	}
	fs, err = cs.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{})
	if err != nil {
		return Throttling{}, fmt.Errorf("creating the flow schema: %w", err)
	}
	if err := grant(ctx, cs, fsName, ns, users, readers); err != nil {
		return Throttling{}, err
	}
	t := Throttling{FlowSchema: fs.Name, PriorityLevel: pl.Name, FlowSchemaUID: string(fs.UID), PriorityLevelUID: string(pl.UID), users: users, ns: ns}
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
	var throttled atomic.Int64
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				if code, _, err := listWith(ctx, hc, c.URL()+"/api/v1/namespaces/"+ns+"/configmaps"); err == nil && code == http.StatusTooManyRequests {
					throttled.Add(1)
				}
			}
		})
	}
	return func() int {
		cancel()
		wg.Wait()
		return int(throttled.Load())
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
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
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
