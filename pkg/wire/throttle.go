package wire

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	flowcontrolv1 "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// The response headers of API Priority and Fairness: the UIDs of the
// FlowSchema that matched a request and of the PriorityLevelConfiguration
// it was sent to (set on every answer the server classified, 429s included).
const (
	HeaderFlowSchemaUID    = "X-Kubernetes-PF-FlowSchema-UID"
	HeaderPriorityLevelUID = "X-Kubernetes-PF-PriorityLevel-UID"
)

// ThrottleOf is what a 429 Too Many Requests said in its headers:
// Retry-After (seconds, or an HTTP date, read at now) and the FlowSchema and
// PriorityLevel UIDs. It is nil for any other code.
func ThrottleOf(code int, h http.Header, now time.Time) *reflector.Throttle {
	if code != http.StatusTooManyRequests {
		return nil
	}
	t := &reflector.Throttle{
		RetryAfter:       retryAfter(h.Get("Retry-After"), now),
		FlowSchemaUID:    strings.TrimSpace(h.Get(HeaderFlowSchemaUID)),
		PriorityLevelUID: strings.TrimSpace(h.Get(HeaderPriorityLevelUID)),
	}
	return t
}

// retryAfter reads a Retry-After value: delay-seconds or an HTTP date (RFC
// 9110); 0 when absent or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 || s > 24*3600 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now).Round(time.Second)
	}
	return 0
}

// FlowControlNames names the FlowSchemas and PriorityLevelConfigurations
// that a 429's headers give by UID, reading flowcontrol.apiserver.k8s.io/v1
// with the user's credentials. It reads them lazily, at the first UID it
// does not know (both lists, once: they are a few dozen small objects), and
// caches what it read. A user who may not read them (403), or a server
// without the v1 API (404), is not asked again; another failure (a 429 of
// its own: the lookup goes through API Priority and Fairness too) is
// retried at a later 429, no sooner than RetryAfter or 10 s. It is safe for
// concurrent use, and shared by the Sources of a run.
type FlowControlNames struct {
	client flowcontrolv1.FlowcontrolV1Interface
	// Wait is how long Fill waits for a lookup in flight (1 s by default):
	// it is called on a reflector's goroutine, which backs off after a 429
	// anyway, so a short wait names the first 429 without holding the
	// reflector up for long. Set it before the first Fill.
	Wait time.Duration
	now  func() time.Time

	mu       sync.Mutex
	schemas  map[string]string // uid → name
	levels   map[string]string
	denied   bool          // 403 or 404: never ask again
	next     time.Time     // no lookup before this
	inFlight chan struct{} // closed when the lookup in flight ends
}

// NewFlowControlNames builds a FlowControlNames for the cluster and user of cfg.
func NewFlowControlNames(cfg *rest.Config) (*FlowControlNames, error) {
	cfg = rest.CopyConfig(cfg)
	c, err := flowcontrolv1.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return newFlowControlNames(c, time.Now), nil
}

func newFlowControlNames(c flowcontrolv1.FlowcontrolV1Interface, now func() time.Time) *FlowControlNames {
	return &FlowControlNames{client: c, Wait: time.Second, now: now, schemas: map[string]string{}, levels: map[string]string{}}
}

// lookupTimeout bounds one lookup (both lists).
const lookupTimeout = 10 * time.Second

// retryLookup is the least time between two failed lookups.
const retryLookup = 10 * time.Second

// Fill sets t's FlowSchema and PriorityLevel names from its UIDs, looking
// them up when one is unknown (waiting at most Wait, or until ctx ends);
// a name it cannot learn stays "". A nil n or t does nothing.
func (n *FlowControlNames) Fill(ctx context.Context, t *reflector.Throttle) {
	if n == nil || t == nil || (t.FlowSchemaUID == "" && t.PriorityLevelUID == "") {
		return
	}
	if n.fill(t) {
		return
	}
	done := n.lookup()
	if done == nil {
		return
	}
	timer := time.NewTimer(n.Wait)
	defer timer.Stop()
	select {
	case <-done:
		n.fill(t)
	case <-timer.C:
	case <-ctx.Done():
	}
}

// fill names t from the cache and says whether both names are known.
func (n *FlowControlNames) fill(t *reflector.Throttle) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if t.FlowSchemaUID != "" && t.FlowSchema == "" {
		t.FlowSchema = n.schemas[t.FlowSchemaUID]
	}
	if t.PriorityLevelUID != "" && t.PriorityLevel == "" {
		t.PriorityLevel = n.levels[t.PriorityLevelUID]
	}
	return (t.FlowSchemaUID == "" || t.FlowSchema != "") && (t.PriorityLevelUID == "" || t.PriorityLevel != "")
}

// lookup starts a lookup unless one is in flight (it returns that one's
// channel) or none may be made now (nil).
func (n *FlowControlNames) lookup() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.inFlight != nil {
		return n.inFlight
	}
	if n.denied || n.now().Before(n.next) {
		return nil
	}
	done := make(chan struct{})
	n.inFlight = done
	go n.read(done)
	return done
}

// read lists both kinds and caches their names.
func (n *FlowControlNames) read(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	schemas, levels := map[string]string{}, map[string]string{}
	fs, err := n.client.FlowSchemas().List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, o := range fs.Items {
			schemas[string(o.UID)] = o.Name
		}
		pls, lerr := n.client.PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
		err = lerr
		if lerr == nil {
			for _, o := range pls.Items {
				levels[string(o.UID)] = o.Name
			}
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	defer close(done)
	n.inFlight = nil
	// What was read is kept, even when the other list failed.
	for k, v := range schemas {
		n.schemas[k] = v
	}
	for k, v := range levels {
		n.levels[k] = v
	}
	switch {
	case err == nil:
		// A UID still unknown is of an object created since: read again
		// at a later 429, not at once.
		n.next = n.now().Add(retryLookup)
	case apierrors.IsForbidden(err), apierrors.IsNotFound(err), apierrors.IsUnauthorized(err):
		n.denied = true
	default:
		wait := retryLookup
		if s, ok := apierrors.SuggestsClientDelay(err); ok && time.Duration(s)*time.Second > wait {
			wait = time.Duration(s) * time.Second
		}
		n.next = n.now().Add(wait)
	}
}
