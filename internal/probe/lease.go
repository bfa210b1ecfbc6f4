package probe

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// NamePrefix begins every probe Lease's name; LabelKey=LabelValue marks
// them, so that a Lease left by a killed run can be found and removed.
const (
	NamePrefix = "kubectl-watchcache-probe-"
	LabelKey   = "app.kubernetes.io/managed-by"
	LabelValue = "kubectl-watchcache-probe"
)

// Leases is the resource the probe writes and watches.
func Leases() reflector.Resource {
	return reflector.Resource{GVR: schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, Kind: "Lease", Namespaced: true}
}

// Target is the watch of the probe's Lease name in namespace: a field
// selector on its name, so it sees no other object.
func Target(namespace, name string) reflector.Target {
	return reflector.Target{Resource: Leases(), Namespace: namespace, FieldSelector: "metadata.name=" + name}
}

// Check makes sure the probe can run in namespace before the run starts:
// that the user may get, create, update, delete, list and watch Leases there
// (SelfSubjectAccessReview), and that the namespace exists. Its error says
// why not, in the server's words.
func Check(ctx context.Context, client kubernetes.Interface, namespace string) error {
	for _, verb := range []string{"create", "update", "delete", "list", "watch", "get"} {
		r, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: namespace, Verb: verb, Group: "coordination.k8s.io", Resource: "leases",
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("--probe %s: checking permission to %s Leases: %w", namespace, verb, err)
		}
		if !r.Status.Allowed {
			why := r.Status.Reason
			if why == "" {
				why = "no RBAC rule allows it"
			}
			return fmt.Errorf("--probe %s: forbidden: cannot %s leases.coordination.k8s.io in namespace %q (%s); the probe needs get, create, update, delete, list and watch on Leases there (get reads the Lease again after a conflict)", namespace, verb, namespace, why)
		}
	}
	if _, err := client.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{}); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("--probe %s: namespace %q not found", namespace, namespace)
		case apierrors.IsForbidden(err):
			// May not read namespaces: creating the Lease says whether it exists.
		default:
			return fmt.Errorf("--probe %s: %w", namespace, err)
		}
	}
	return nil
}

// List is the probe Leases in namespace (by label and name), those of
// running probes and those killed runs left alike.
func List(ctx context.Context, client kubernetes.Interface, namespace string) ([]coordinationv1.Lease, error) {
	l, err := client.CoordinationV1().Leases(namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelKey + "=" + LabelValue})
	if err != nil {
		return nil, fmt.Errorf("listing probe Leases in %s: %w", namespace, err)
	}
	var leases []coordinationv1.Lease
	for _, lease := range l.Items {
		if strings.HasPrefix(lease.Name, NamePrefix) {
			leases = append(leases, lease)
		}
	}
	return leases, nil
}

// Expired reports whether lease's holder stopped renewing it by now: its
// last renewal (spec.renewTime; never renewed, spec.acquireTime, else its
// creationTimestamp) plus spec.leaseDurationSeconds is in the past. A
// Lease without leaseDurationSeconds is expired: every probe sets it.
// The times are the holder's clock against ours; a probe's duration
// (LeaseDuration) is long enough to hide a skew of some seconds.
func Expired(lease *coordinationv1.Lease, now time.Time) bool {
	if lease.Spec.LeaseDurationSeconds == nil {
		return true
	}
	last := lease.CreationTimestamp.Time
	switch {
	case lease.Spec.RenewTime != nil:
		last = lease.Spec.RenewTime.Time
	case lease.Spec.AcquireTime != nil:
		last = lease.Spec.AcquireTime.Time
	}
	return last.Add(time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second).Before(now)
}

// Leftovers are the names of the probe Leases in namespace that expired
// by now (Expired): those of runs that were killed before they could
// delete theirs. The Lease of a probe still running, renewed within its
// duration, is none of them.
func Leftovers(ctx context.Context, client kubernetes.Interface, namespace string, now time.Time) ([]string, error) {
	leases, err := List(ctx, client, namespace)
	if err != nil {
		return nil, err
	}
	var names []string
	for i := range leases {
		if Expired(&leases[i], now) {
			names = append(names, leases[i].Name)
		}
	}
	return names, nil
}

// LeaseDuration is the spec.leaseDurationSeconds of a probe renewed every
// interval: LostAfter (ten renewals, and at least a minute) in whole
// seconds, so that a few failed renewals or a skew between two users'
// clocks do not make a running probe's Lease look left behind.
func LeaseDuration(interval time.Duration) time.Duration {
	return LostAfter(interval).Truncate(time.Second)
}

// Cleanup deletes the probe Leases names (of Leftovers) in namespace.
func Cleanup(ctx context.Context, client kubernetes.Interface, namespace string, names []string) error {
	var errs []error
	for _, name := range names {
		if err := client.CoordinationV1().Leases(namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting Lease %s/%s: %w", namespace, name, err))
		}
	}
	return errors.Join(errs...)
}

// Prober renews its Lease and matches each renewal with its watch event.
type Prober struct {
	client    kubernetes.Interface
	namespace string
	name      string
	interval  time.Duration
	now       func() time.Time
	onSample  func(Sample, string)
	onLost    func(time.Time, string)
	lostAfter time.Duration

	mu      sync.Mutex
	lease   *coordinationv1.Lease
	sent    map[string]sent      // by the resourceVersion the update answered
	arrived map[string]time.Time // events that came before their update's answer
}

type sent struct{ at, answered time.Time }

// Options configure a Prober.
type Options struct {
	Namespace string
	// Interval is the time between renewals (default 5 s).
	Interval time.Duration
	// Now is the clock of the samples (default time.Now).
	Now func() time.Time
	// OnSample is called with each sample and the resourceVersion of its
	// update, from Run's goroutine or Observed's caller.
	OnSample func(s Sample, resourceVersion string)
	// OnLost is called, from Run's goroutine, with each renewal whose
	// watch event did not come within LostAfter(Interval) of sending it
	// (it came as a list item, before the Lease's watch was up or after a
	// relist, or never): when it was sent and the resourceVersion of its
	// update. It makes no sample.
	OnLost func(sent time.Time, resourceVersion string)
}

// LostAfter is how long after sending a renewal of a probe renewed every
// interval its watch event may come: ten intervals, and at least a
// minute. A renewal whose event did not come by then is lost.
func LostAfter(interval time.Duration) time.Duration {
	return max(10*interval, time.Minute)
}

// Create creates the probe's Lease (a random name under NamePrefix,
// labelled) and returns its Prober.
func Create(ctx context.Context, client kubernetes.Interface, o Options) (*Prober, error) {
	if o.Interval <= 0 {
		o.Interval = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	p := &Prober{client: client, namespace: o.Namespace, interval: o.Interval, now: o.Now, onSample: o.OnSample,
		onLost: o.OnLost, lostAfter: LostAfter(o.Interval), sent: map[string]sent{}, arrived: map[string]time.Time{}}
	holder := "kubectl-watchcache"
	seconds := int32(min(LeaseDuration(o.Interval)/time.Second, math.MaxInt32))
	renew := metav1.NewMicroTime(p.now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: NamePrefix + rand.String(8), Namespace: o.Namespace, Labels: map[string]string{LabelKey: LabelValue}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, AcquireTime: &renew, RenewTime: &renew},
	}
	created, err := client.CoordinationV1().Leases(o.Namespace).Create(ctx, lease, metav1.CreateOptions{FieldManager: "kubectl-watchcache-probe"})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("--probe %s: namespace %q not found", o.Namespace, o.Namespace)
		}
		return nil, fmt.Errorf("--probe %s: creating the probe's Lease: %w", o.Namespace, err)
	}
	p.lease, p.name = created, created.Name
	return p, nil
}

// Name is the Lease's name.
func (p *Prober) Name() string { return p.name }

// Namespace is the Lease's namespace.
func (p *Prober) Namespace() string { return p.namespace }

// Run renews the Lease every interval until ctx ends; an update that
// fails is reported to onErr (nil: ignored) and the next one goes on.
func (p *Prober) Run(ctx context.Context, onErr func(error)) {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := p.renew(ctx); err != nil && ctx.Err() == nil && onErr != nil {
			onErr(err)
		}
	}
}

// renew sends one update of spec.renewTime and records when it was sent
// and answered, after expiring the renewals sent lostAfter before.
func (p *Prober) renew(ctx context.Context) error {
	at := p.now()
	p.mu.Lock()
	lease := p.lease.DeepCopy()
	lost := p.expire(at)
	p.mu.Unlock()
	if p.onLost != nil {
		for _, l := range lost {
			p.onLost(l.at, l.rv)
		}
	}
	renew := metav1.NewMicroTime(at)
	lease.Spec.RenewTime = &renew
	updated, err := p.client.CoordinationV1().Leases(p.namespace).Update(ctx, lease, metav1.UpdateOptions{FieldManager: "kubectl-watchcache-probe"})
	answered := p.now()
	if err != nil {
		if apierrors.IsConflict(err) {
			if fresh, gerr := p.client.CoordinationV1().Leases(p.namespace).Get(ctx, p.name, metav1.GetOptions{}); gerr == nil {
				p.mu.Lock()
				p.lease = fresh
				p.mu.Unlock()
			}
		}
		return fmt.Errorf("renewing the probe's Lease %s/%s: %w", p.namespace, p.name, err)
	}
	rv := updated.ResourceVersion
	p.mu.Lock()
	p.lease = updated
	eventAt, came := p.arrived[rv]
	if came {
		delete(p.arrived, rv)
	} else {
		p.sent[rv] = sent{at: at, answered: answered}
	}
	p.mu.Unlock()
	if came {
		p.sample(sent{at: at, answered: answered}, eventAt, rv)
	}
	return nil
}

// lostRenewal is a renewal expired from sent: when it was sent, and the
// resourceVersion of its update.
type lostRenewal struct {
	at time.Time
	rv string
}

// expire removes from sent the renewals sent lostAfter or longer before
// now, and returns them, oldest first; it forgets the events that came as
// long ago without their update's answer (one that failed, say). Call it
// with mu held.
func (p *Prober) expire(now time.Time) []lostRenewal {
	cutoff := now.Add(-p.lostAfter)
	var lost []lostRenewal
	for rv, s := range p.sent {
		if !s.at.After(cutoff) {
			delete(p.sent, rv)
			lost = append(lost, lostRenewal{at: s.at, rv: rv})
		}
	}
	for rv, at := range p.arrived {
		if !at.After(cutoff) {
			delete(p.arrived, rv)
		}
	}
	slices.SortFunc(lost, func(a, b lostRenewal) int { return a.at.Compare(b.at) })
	return lost
}

// Observed is called when the Lease's watch delivered its object at
// resourceVersion rv, at arrived.
func (p *Prober) Observed(rv string, arrived time.Time) {
	p.mu.Lock()
	s, ok := p.sent[rv]
	if ok {
		delete(p.sent, rv)
	} else if len(p.arrived) < 64 {
		p.arrived[rv] = arrived // its update's answer is still on its way
	}
	p.mu.Unlock()
	if ok {
		p.sample(s, arrived, rv)
	}
}

func (p *Prober) sample(s sent, eventAt time.Time, rv string) {
	if p.onSample != nil {
		p.onSample(Sample{At: s.at, Write: s.answered.Sub(s.at), Event: eventAt.Sub(s.at)}, rv)
	}
}

// Delete deletes the Lease (an absent one is no error). It takes a context
// of its own: the run's has usually ended.
func (p *Prober) Delete(ctx context.Context) error {
	err := p.client.CoordinationV1().Leases(p.namespace).Delete(ctx, p.name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the probe's Lease %s/%s: %w", p.namespace, p.name, err)
	}
	return nil
}
