package probe

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// probeLease is a probe Lease named NamePrefix+suffix in ns, created at
// created, with the given duration (0: none), acquire and renew times
// (zero: unset).
func probeLease(ns, suffix string, created time.Time, seconds int32, acquired, renewed time.Time) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Name: NamePrefix + suffix, Namespace: ns, Labels: map[string]string{LabelKey: LabelValue},
		CreationTimestamp: metav1.NewTime(created),
	}}
	if seconds != 0 {
		l.Spec.LeaseDurationSeconds = &seconds
	}
	if !acquired.IsZero() {
		t := metav1.NewMicroTime(acquired)
		l.Spec.AcquireTime = &t
	}
	if !renewed.IsZero() {
		t := metav1.NewMicroTime(renewed)
		l.Spec.RenewTime = &t
	}
	return l
}

func TestLeftoversAreTheExpiredProbeLeasesAndCleanupLeavesTheLiveOnes(t *testing.T) {
	const ns = "probed"
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	long := now.Add(-time.Hour)
	var never time.Time
	client := fake.NewClientset(
		// Renewed 5 s ago, for 60 s: a running probe's.
		probeLease(ns, "live", long, 60, long, now.Add(-5*time.Second)),
		// Renewed ten minutes ago, for 60 s: its run was killed.
		probeLease(ns, "killed", long, 60, long, now.Add(-10*time.Minute)),
		// Never renewed: acquired (then created) 10 s ago, for 60 s.
		probeLease(ns, "acquired", now.Add(-10*time.Second), 60, now.Add(-10*time.Second), never),
		// Never renewed: created 10 s ago, then an hour ago.
		probeLease(ns, "created-now", now.Add(-10*time.Second), 60, never, never),
		probeLease(ns, "created-long-ago", long, 60, never, never),
		// Renewed just now, but without a duration: no probe wrote it so.
		probeLease(ns, "no-duration", long, 0, never, now),
		// Not a probe's: a probe Lease's name without the label, and the
		// label on another name.
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: NamePrefix + "unlabelled", Namespace: ns}},
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Namespace: ns, Labels: map[string]string{LabelKey: LabelValue}}},
		// Another namespace's.
		probeLease("elsewhere", "killed", long, 60, long, long),
	)
	ctx := context.Background()
	left, err := Leftovers(ctx, client, ns, now)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(left)
	want := []string{NamePrefix + "created-long-ago", NamePrefix + "killed", NamePrefix + "no-duration"}
	if !slices.Equal(left, want) {
		t.Fatalf("leftovers %v, want %v", left, want)
	}
	if err := Cleanup(ctx, client, ns, left); err != nil {
		t.Fatal(err)
	}
	leases, err := List(ctx, client, ns)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range leases {
		kept = append(kept, l.Name)
	}
	slices.Sort(kept)
	want = []string{NamePrefix + "acquired", NamePrefix + "created-now", NamePrefix + "live"}
	if !slices.Equal(kept, want) {
		t.Errorf("probe Leases after the cleanup %v, want the live ones %v", kept, want)
	}
}

func TestAProbesOwnLeaseIsLeftOverOnlyOnceItsRenewalsStopForItsDuration(t *testing.T) {
	const ns = "probed"
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	client := fake.NewClientset()
	ctx := context.Background()
	p, err := Create(ctx, client, Options{Namespace: ns, Interval: time.Second, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := client.CoordinationV1().Leases(ns).Get(ctx, p.Name(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := lease.Spec.LeaseDurationSeconds; d == nil || *d != 60 {
		t.Fatalf("leaseDurationSeconds %v at a 1s interval, want 60 (at least a minute)", d)
	}
	if got := LeaseDuration(30 * time.Second); got != 5*time.Minute {
		t.Errorf("lease duration at a 30s interval: %s, want ten intervals", got)
	}
	leftovers := func(at time.Time) []string {
		t.Helper()
		left, err := Leftovers(ctx, client, ns, at)
		if err != nil {
			t.Fatal(err)
		}
		return left
	}
	if left := leftovers(now.Add(59 * time.Second)); len(left) != 0 {
		t.Fatalf("leftovers 59s after the Lease was created: %v, want none", left)
	}
	now = now.Add(50 * time.Second)
	if err := p.renew(ctx); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(now.Add(59 * time.Second)); len(left) != 0 {
		t.Fatalf("leftovers 59s after a renewal: %v, want none", left)
	}
	if left := leftovers(now.Add(61 * time.Second)); !slices.Equal(left, []string{p.Name()}) {
		t.Errorf("leftovers 61s after the last renewal: %v, want the Lease %s", left, p.Name())
	}
}

func TestARenewalWhoseEventNeverCameIsLostAfterTenIntervalsOrAMinute(t *testing.T) {
	if got := LostAfter(time.Second); got != time.Minute {
		t.Errorf("lost after %s at a 1s interval, want a minute", got)
	}
	if got := LostAfter(30 * time.Second); got != 5*time.Minute {
		t.Errorf("lost after %s at a 30s interval, want ten intervals", got)
	}
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now := start
	type lost struct {
		at time.Duration
		rv string
	}
	var samples []Sample
	var losts []lost
	client := fake.NewClientset()
	// The fake answers updates without a resourceVersion: number them.
	updates := 0
	client.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		updates++
		l := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		l.ResourceVersion = strconv.Itoa(updates)
		return true, l, nil
	})
	ctx := context.Background()
	p, err := Create(ctx, client, Options{Namespace: "probed", Interval: time.Second, Now: func() time.Time { return now },
		OnSample: func(s Sample, _ string) { samples = append(samples, s) },
		OnLost:   func(at time.Time, rv string) { losts = append(losts, lost{at.Sub(start), rv}) }})
	if err != nil {
		t.Fatal(err)
	}
	// renew renews at d after start and returns its update's resourceVersion.
	renew := func(d time.Duration) string {
		t.Helper()
		now = start.Add(d)
		if err := p.renew(ctx); err != nil {
			t.Fatal(err)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.lease.ResourceVersion
	}
	first := renew(0) // its event never comes as a watch event
	second := renew(30 * time.Second)
	p.Observed(second, start.Add(30*time.Second+time.Millisecond))
	late := renew(59 * time.Second)
	if len(losts) != 0 || len(samples) != 1 {
		t.Fatalf("59s after the first renewal: lost %v, samples %v; want none lost and the second's sample", losts, samples)
	}
	last := renew(60 * time.Second)
	if want := []lost{{0, first}}; !slices.Equal(losts, want) {
		t.Fatalf("a minute after the first renewal: lost %v, want %v", losts, want)
	}
	// Its event, coming now, is no sample (it is waited for no more), and
	// is forgotten in turn.
	p.Observed(first, start.Add(61*time.Second))
	p.Observed(late, start.Add(61*time.Second))
	if len(samples) != 2 || samples[1].Event != 2*time.Second {
		t.Fatalf("samples %v, want the second's and the late one's (2s)", samples)
	}
	renew(121 * time.Second)
	if want := []lost{{0, first}, {60 * time.Second, last}}; !slices.Equal(losts, want) {
		t.Errorf("lost %v, want %v", losts, want)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.arrived) != 0 || len(p.sent) != 1 {
		t.Errorf("%d events waiting for their update, %d renewals for their event; want none and the last renewal", len(p.arrived), len(p.sent))
	}
}

// TestCheckAsksForEveryVerbTheProbeUses: a renewal refused for a conflict
// reads the Lease again (get); a Role without get let the run start, and
// after one conflict every renewal failed. Check asks for get too.
func TestCheckAsksForEveryVerbTheProbeUses(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		r.Status.Allowed = r.Spec.ResourceAttributes.Verb != "get"
		return true, r, nil
	})
	err := Check(context.Background(), client, "default")
	if err == nil || !strings.Contains(err.Error(), `forbidden: cannot get leases.coordination.k8s.io in namespace "default"`) {
		t.Errorf("Check without get: %v, want it refused", err)
	}
}
