package live

import (
	"context"
	"sync"
	"time"

	flowcontrolapi "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	flowcontrolv1 "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// FlowControlNames names the FlowSchemas and PriorityLevelConfigurations
// that a 429's headers give by UID, reading flowcontrol.apiserver.k8s.io/v1
// with the user's credentials. It reads them lazily, at the first UID it
// does not know (both lists: they are a few dozen small objects), and
// caches what it read. It is safe for concurrent use, and shared by the
// Sources of a run.
//
// A throttled client is the one whose lookups are throttled too (the lookup
// goes through API Priority and Fairness like any request), so the names
// of a 429 are often learned after it: a UID that Fill returns without a
// name is wanted, and a lookup that later names it tells the OnNamed
// listeners. A failed lookup is retried while a UID is wanted, after the
// server's Retry-After, backing off from 1 s to a minute, without waiting
// for another 429; Finish looks once more at the end of the run. A user who
// may not read them (401, 403), or a server without the v1 API (404), is
// not asked again. After a lookup that succeeded, the next waits for a 429 at
// least 10 s later (or Finish).
type FlowControlNames struct {
	client rest.Interface
	// Wait is how long Fill waits for a lookup in flight (1 s by default):
	// it is called on a reflector's goroutine, which backs off after a 429
	// anyway, so a short wait names the first 429 without holding the
	// reflector up for long. Set it before the first Fill.
	Wait  time.Duration
	clock clock.WithDelayedExecution

	mu      sync.Mutex
	schemas map[string]string // uid → name
	levels  map[string]string
	// wantSchemas and wantLevels are the UIDs a Fill returned without a
	// name: the lookup that names one tells onNamed.
	wantSchemas map[string]bool
	wantLevels  map[string]bool
	onNamed     []func(Named)
	denied      bool                // 401, 403 or 404: never ask again
	failures    int                 // lookups failed in a row
	next        time.Time           // no lookup before this (but Finish's)
	serverNext  time.Time           // the end of the Retry-After of the last failed lookup
	inFlight    chan struct{}       // closed when the lookup in flight ends (after onNamed)
	retry       clock.Timer         // the retry of a failed lookup, armed while a UID is wanted
	retryGen    int                 // numbers the retries armed
	finished    bool                // Finish was called: no lookup but its own
	over        bool                // Finish returned: a lookup that outlived it tells no listener
	afterRead   func()              // tests: called after each lookup ends
	finishWaits func(time.Duration) // tests: called when Finish waits for a Retry-After
}

// Named is what a lookup learned of the UIDs that Fill returned without a
// name: FlowSchemas and PriorityLevelConfigurations, uid → name.
type Named struct {
	FlowSchemas    map[string]string
	PriorityLevels map[string]string
}

// NewFlowControlNames builds a FlowControlNames for the cluster and user of cfg.
func NewFlowControlNames(cfg *rest.Config) (*FlowControlNames, error) {
	return newFlowControlNames(cfg, clock.RealClock{})
}

func newFlowControlNames(cfg *rest.Config, clk clock.WithDelayedExecution) (*FlowControlNames, error) {
	c, err := flowcontrolv1.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, err
	}
	return &FlowControlNames{client: c.RESTClient(), Wait: time.Second, clock: clk,
		schemas: map[string]string{}, levels: map[string]string{}, wantSchemas: map[string]bool{}, wantLevels: map[string]bool{}}, nil
}

const (
	// lookupTimeout bounds one lookup (both lists).
	lookupTimeout = 10 * time.Second
	// retryLookup is the least time from a lookup that succeeded to the next.
	retryLookup = 10 * time.Second
	// firstRetry and maxRetry bound the backoff between failed lookups.
	firstRetry = time.Second
	maxRetry   = time.Minute
	// finishWait bounds Finish: the end of a run waits no longer for names.
	finishWait = 5 * time.Second
	// maxWanted bounds the UIDs of each kind waiting for a name.
	maxWanted = 64
)

// OnNamed adds a listener of the names learned after the Fill that wanted
// them. It is called on the goroutine of the lookup (or of Finish), before
// a Fill waiting for that lookup fills its answer, and must not block. Add
// listeners before the first Fill.
func (n *FlowControlNames) OnNamed(f func(Named)) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.onNamed = append(n.onNamed, f)
}

// Fill sets t's FlowSchema and PriorityLevel names from its UIDs, looking
// them up when one is unknown (waiting at most Wait, or until ctx ends);
// a name it cannot learn stays "", and is wanted: a later lookup that
// learns it tells the OnNamed listeners. A nil n or t does nothing.
func (n *FlowControlNames) Fill(ctx context.Context, t *reflector.Throttle) {
	if n == nil || t == nil || (t.FlowSchemaUID == "" && t.PriorityLevelUID == "") {
		return
	}
	if n.fill(t, false) {
		return
	}
	if done := n.lookup(); done != nil {
		timer := n.clock.NewTimer(n.Wait)
		select {
		case <-done:
		case <-timer.C():
		case <-ctx.Done():
		}
		timer.Stop()
	}
	n.fill(t, true)
}

// fill names t from the cache and says whether both names are known. With
// want, a name still unknown is wanted, and a lookup that failed is
// retried (under one lock with the cache: a lookup that ends after it tells
// the listeners).
func (n *FlowControlNames) fill(t *reflector.Throttle, want bool) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	fs := nameFrom(n.schemas, t.FlowSchemaUID, &t.FlowSchema)
	pl := nameFrom(n.levels, t.PriorityLevelUID, &t.PriorityLevel)
	if want && (!fs || !pl) {
		if !fs && len(n.wantSchemas) < maxWanted {
			n.wantSchemas[t.FlowSchemaUID] = true
		}
		if !pl && len(n.wantLevels) < maxWanted {
			n.wantLevels[t.PriorityLevelUID] = true
		}
		n.scheduleLocked()
	}
	return fs && pl
}

// nameFrom sets *name from names when uid has one there, and says whether
// the name is known (or not asked for: no uid).
func nameFrom(names map[string]string, uid string, name *string) bool {
	if uid == "" || *name != "" {
		return true
	}
	*name = names[uid]
	return *name != ""
}

// lookup starts a lookup unless one is in flight (it returns that one's
// channel) or none may be made now (nil). Once Finish has returned, there
// is none to wait for: a lookup that outlived it fills the cache alone.
func (n *FlowControlNames) lookup() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.over {
		return nil
	}
	if n.inFlight != nil {
		return n.inFlight
	}
	if n.denied || n.finished || n.clock.Now().Before(n.next) {
		return nil
	}
	return n.startLocked()
}

func (n *FlowControlNames) startLocked() chan struct{} {
	if n.retry != nil {
		n.retry.Stop()
		n.retry = nil
	}
	done := make(chan struct{})
	n.inFlight = done
	go n.read(done)
	return done
}

// scheduleLocked arms the retry of a failed lookup, at n.next, while a UID
// is wanted. Not while a lookup is in flight (its end decides), nor after
// one that succeeded (the next 429 or Finish looks again), nor once denied
// or finished.
func (n *FlowControlNames) scheduleLocked() {
	if n.retry != nil || n.inFlight != nil || n.denied || n.finished || n.failures == 0 || !n.wantedLocked() {
		return
	}
	n.retryGen++
	gen := n.retryGen
	// On a goroutine of its own: a clock may call it holding its own lock.
	n.retry = n.clock.AfterFunc(max(n.next.Sub(n.clock.Now()), 0), func() { go n.retried(gen) })
}

// retried is the retry armed as gen: it looks up unless it was stopped
// since (another retry armed, a lookup begun, Finish).
func (n *FlowControlNames) retried(gen int) {
	n.mu.Lock()
	if n.retry == nil || gen != n.retryGen {
		n.mu.Unlock()
		return
	}
	n.retry = nil
	n.mu.Unlock()
	n.lookup()
}

func (n *FlowControlNames) wantedLocked() bool { return len(n.wantSchemas)+len(n.wantLevels) > 0 }

// read lists both kinds, caches their names, tells the listeners what was
// wanted and is now named, and decides when to look again.
func (n *FlowControlNames) read(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	var fs flowcontrolapi.FlowSchemaList
	var pls flowcontrolapi.PriorityLevelConfigurationList
	// One request each: the retries after a 429 are this type's, on its clock.
	err := n.client.Get().Resource("flowschemas").MaxRetries(0).Do(ctx).Into(&fs)
	if err == nil {
		err = n.client.Get().Resource("prioritylevelconfigurations").MaxRetries(0).Do(ctx).Into(&pls)
	}
	n.mu.Lock()
	n.inFlight = nil
	// What was read is kept, even when the other list failed.
	for _, o := range fs.Items {
		n.schemas[string(o.UID)] = o.Name
	}
	for _, o := range pls.Items {
		n.levels[string(o.UID)] = o.Name
	}
	named := Named{FlowSchemas: learned(n.wantSchemas, n.schemas), PriorityLevels: learned(n.wantLevels, n.levels)}
	now := n.clock.Now()
	switch {
	case err == nil:
		// A UID still unknown is of an object created since, or deleted:
		// looked for again at a later 429 or at the end, not at once.
		n.failures = 0
		n.next = now.Add(retryLookup)
	case apierrors.IsForbidden(err), apierrors.IsNotFound(err), apierrors.IsUnauthorized(err):
		n.denied = true
	default:
		n.failures++
		n.next = now.Add(retryWait(n.failures))
		if s, ok := apierrors.SuggestsClientDelay(err); ok && s > 0 {
			if n.serverNext = now.Add(time.Duration(s) * time.Second); n.serverNext.After(n.next) {
				n.next = n.serverNext
			}
		}
		n.scheduleLocked()
	}
	listeners, hook := n.onNamed, n.afterRead
	if n.over {
		listeners = nil // the run's outputs are closed: the cache keeps what was learned
	}
	n.mu.Unlock()
	if len(named.FlowSchemas)+len(named.PriorityLevels) > 0 {
		for _, l := range listeners {
			l(named)
		}
	}
	close(done)
	if hook != nil {
		hook()
	}
}

// learned takes out of want the UIDs names now names, and returns them
// with their names (nil when none).
func learned(want map[string]bool, names map[string]string) map[string]string {
	var out map[string]string
	for uid := range want {
		if name := names[uid]; name != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[uid] = name
			delete(want, uid)
		}
	}
	return out
}

// retryWait is the least time after the failures-th failed lookup in a row
// before the next: 1 s, doubling, at most a minute.
func retryWait(failures int) time.Duration {
	return min(firstRetry<<min(failures-1, 8), maxRetry)
}

// Finish ends the lookups at the end of a run: it stops the retries and,
// while a UID that Fill returned without a name is still unknown (and the
// user may read the names), waits for the lookup in flight and looks once
// more, after the server's Retry-After if one is running, again after each
// 429 while time is left: at most 5 s in all, or until ctx ends. The
// listeners hear what it learns before it returns, and nothing after: a
// lookup that outlives it fills the cache alone. After it, Fill names from
// the cache alone. A nil n does nothing.
func (n *FlowControlNames) Finish(ctx context.Context) {
	if n == nil {
		return
	}
	defer func() {
		n.mu.Lock()
		n.over = true
		n.mu.Unlock()
	}()
	n.mu.Lock()
	n.finished = true
	if n.retry != nil {
		n.retry.Stop()
		n.retry = nil
	}
	deadline := n.clock.Now().Add(finishWait)
	n.mu.Unlock()
	looked := false
	for {
		n.mu.Lock()
		now := n.clock.Now()
		done := n.inFlight
		var wait time.Duration
		switch {
		case n.denied || !n.wantedLocked(), done == nil && looked && n.failures == 0:
			// Nothing to learn, or a lookup after the run learned what it could.
			n.mu.Unlock()
			return
		case done != nil:
			wait = deadline.Sub(now)
		default:
			wait = max(n.serverNext.Sub(now), 0)
			if !now.Add(wait).Before(deadline) {
				n.mu.Unlock()
				return
			}
			if wait == 0 {
				done, looked = n.startLocked(), true
				wait = deadline.Sub(now)
			}
		}
		hook := n.finishWaits
		n.mu.Unlock()
		timer := n.clock.NewTimer(wait)
		if done == nil && hook != nil {
			hook(wait)
		}
		select {
		case <-done: // nil while waiting for the Retry-After
		case <-timer.C():
			if done != nil {
				return // the lookup outlived the time left
			}
		case <-ctx.Done():
			timer.Stop()
			return
		}
		timer.Stop()
	}
}
