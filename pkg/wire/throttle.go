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
// 9110); 0 when absent or unreadable, for a delay not positive or over a
// day, and for a date not after now (a later date is taken however far).
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
