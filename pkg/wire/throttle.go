package wire

import (
	"net/http"
	"strconv"
	"strings"
	"time"

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
	return &reflector.Throttle{
		RetryAfter:       retryAfter(h.Get("Retry-After"), now),
		FlowSchemaUID:    strings.TrimSpace(h.Get(HeaderFlowSchemaUID)),
		PriorityLevelUID: strings.TrimSpace(h.Get(HeaderPriorityLevelUID)),
	}
}

// retryAfter reads a Retry-After value: delay-seconds or an HTTP date (RFC
// 9110); 0 when absent or unreadable, and for a wait not positive or over
// a day, however written (a date a day ahead is a clock that is off, and
// the reflector waits at least what it says: --give-up-after cannot cut it).
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	var d time.Duration
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s > 0 && s <= 24*3600 {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now).Round(time.Second)
	}
	if d <= 0 || d > 24*time.Hour {
		return 0
	}
	return d
}
