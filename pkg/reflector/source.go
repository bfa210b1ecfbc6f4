package reflector

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// Verb is the kind of request the reflector makes.
type Verb string

const (
	// VerbList is one LIST page.
	VerbList Verb = "list"
	// VerbWatch is one WATCH stream (streaming lists included).
	VerbWatch Verb = "watch"
)

// RequestOptions are the exact query options of one request, as sent. The JSON
// names are the trace format's `opts` fields.
type RequestOptions struct {
	ResourceVersion      string `json:"resourceVersion,omitempty"`
	ResourceVersionMatch string `json:"resourceVersionMatch,omitempty"`
	Limit                int64  `json:"limit,omitempty"`
	Continue             string `json:"continue,omitempty"`
	SendInitialEvents    bool   `json:"sendInitialEvents,omitempty"`
	AllowWatchBookmarks  bool   `json:"allowWatchBookmarks,omitempty"`
	TimeoutSeconds       int64  `json:"timeoutSeconds,omitempty"`
}

// Item is one object as a Source delivered it: the compact form for the store
// and the object's JSON as served (for traces and full-object mode).
type Item struct {
	Object *store.Object
	Raw    json.RawMessage
}

// Page is one LIST response.
type Page struct {
	Items []Item
	// ResourceVersion is the collection's resourceVersion.
	ResourceVersion string
	// Continue is the token for the next page; empty on the last page.
	Continue string
	// RemainingItemCount is the server's estimate of items after this page, when it sends one.
	RemainingItemCount *int64
	// Bytes is the size of the response's body as received (0 when not known).
	Bytes int64
}

// EventType is a watch event's wire type.
type EventType string

// Watch event types as the API server sends them.
const (
	EventAdded    EventType = "ADDED"
	EventModified EventType = "MODIFIED"
	EventDeleted  EventType = "DELETED"
	EventBookmark EventType = "BOOKMARK"
	EventError    EventType = "ERROR"
)

// WatchEvent is one event of a watch stream. Item is set for ADDED, MODIFIED,
// DELETED and BOOKMARK (a bookmark carries only kind, apiVersion and
// metadata.resourceVersion, plus annotations); Status is set for ERROR.
type WatchEvent struct {
	Type   EventType
	Item   Item
	Status *metav1.Status
	// InitialEventsEnd is true on the bookmark that ends a streaming list
	// (annotation k8s.io/initial-events-end: "true").
	InitialEventsEnd bool
	// Delivery is when the object was last written and how late the event
	// arrived, when the Source knows (ADDED, MODIFIED, DELETED).
	Delivery Delivery
	// Changes is, for a MODIFIED event with --diff, what it changed against
	// the object's previous version (nil without --diff).
	Changes *diff.Changes
	// Bytes is set on the bookmark that ends a streaming list: the size of
	// the watch's body as received up to it, the streaming list's whole
	// cost on the wire (0 when the Source does not say).
	Bytes int64
}

// Stream is one open watch. Next blocks until the next event or the end of
// the stream; it returns a *RequestEnd when the stream is over.
type Stream interface {
	Next() (WatchEvent, error)
	// Close ends the stream and releases its connection; Next then returns an end.
	Close()
}

// Source is the wire-level API the reflector uses: LIST one page, and WATCH.
// A request that fails returns a *RequestEnd: the server's answer in its
// Status (so the HTTP status and reason survive), a transport error in its
// Err (EndOf classifies it).
type Source interface {
	List(ctx context.Context, opts RequestOptions) (*Page, error)
	Watch(ctx context.Context, opts RequestOptions) (Stream, error)
}

// A Stopper is a Source that can know, before the next request, that the
// run stops there: a replay whose recorded run was stopped between two
// requests. Run then stops as if its context had ended, without counting a
// request that the recording never made.
type Stopper interface {
	StopsHere(ctx context.Context) bool
}

// EndReason says why a request ended.
type EndReason string

// Why a request ended (the trace format's `end.reason`).
const (
	// EndClosed: the server ended it normally (a LIST answered, a watch's server-side timeout, EOF).
	EndClosed EndReason = "closed"
	// EndTimeout: the client gave up (the idle timeout caught a silent connection).
	EndTimeout EndReason = "timeout"
	// EndError: an HTTP error status, an ERROR watch event, or a transport error.
	EndError EndReason = "error"
	// EndCanceled: the reflector cut it short to act (a forced relist, a
	// streaming-list fallback), or, in a proxy's view, its client left.
	EndCanceled EndReason = "canceled"
	// EndStopped: the run ended while it was open, because the user asked
	// (--duration, --once, ctrl+c, q) or a --fail-on rule stopped the run. It is
	// neither a timeout nor an error.
	EndStopped EndReason = "stopped"
)

// RequestEnd is how a Stream reports its end, and how Sources report a failed
// request: the reason, the server's Status when there was one, and the
// underlying error.
type RequestEnd struct {
	Reason EndReason
	Status *metav1.Status
	Err    error
	// Throttle is what the server said with a 429 Too Many Requests: its
	// Retry-After and how API Priority and Fairness classified the
	// request (nil for other answers, and when not recorded).
	Throttle *Throttle
}

// Throttle is a 429's response headers: Retry-After, and the UIDs of the
// FlowSchema and PriorityLevelConfiguration that API Priority and Fairness
// chose (X-Kubernetes-PF-FlowSchema-UID, X-Kubernetes-PF-PriorityLevel-UID),
// with their names when the Source could read them
// (flowcontrol.apiserver.k8s.io; "" otherwise). The names travel with the
// answer, so a trace records them and its replay names what the live run
// named.
type Throttle struct {
	RetryAfter       time.Duration `json:"retryAfter,omitempty"`
	FlowSchemaUID    string        `json:"flowSchemaUID,omitempty"`
	PriorityLevelUID string        `json:"priorityLevelUID,omitempty"`
	FlowSchema       string        `json:"flowSchema,omitempty"`
	PriorityLevel    string        `json:"priorityLevel,omitempty"`
}

func (e *RequestEnd) Error() string {
	switch {
	case e.Err != nil:
		return fmt.Sprintf("%s: %v", e.Reason, e.Err)
	case e.Status != nil:
		return fmt.Sprintf("%s: %s", e.Reason, e.Status.Message)
	}
	return string(e.Reason)
}

func (e *RequestEnd) Unwrap() error { return e.Err }

// StatusOf returns the API Status carried by err, if any.
func StatusOf(err error) *metav1.Status {
	var ee *RequestEnd
	if errors.As(err, &ee) && ee.Status != nil {
		return ee.Status
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		return &s
	}
	return nil
}

// EndOf classifies err as a request end. A nil err is a normal close.
func EndOf(err error) *RequestEnd {
	if err == nil {
		return &RequestEnd{Reason: EndClosed}
	}
	var ee *RequestEnd
	if errors.As(err, &ee) {
		return ee
	}
	if errors.Is(err, context.Canceled) {
		return &RequestEnd{Reason: EndCanceled, Err: err}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &RequestEnd{Reason: EndTimeout, Err: err}
	}
	return &RequestEnd{Reason: EndError, Status: StatusOf(err), Err: err}
}

// Cause is what ended the request, for decisions and messages: the server's
// Status ("410 Expired: too old resource version: 211 (214)"), else the
// error, else the reason word.
func (e *RequestEnd) Cause() string {
	switch {
	case e.Status != nil:
		return fmt.Sprintf("%d %s: %s", e.Status.Code, e.Status.Reason, e.Status.Message)
	case e.Err != nil:
		return causeFirst(e.Err.Error())
	}
	return string(e.Reason)
}

// Said is the message of the server's Status, "" when the answer had none.
func (e *RequestEnd) Said() string {
	if e.Status == nil {
		return ""
	}
	return e.Status.Message
}

// causeFirst puts a transport error's cause before its request, so that a
// clipped line still says what went wrong: Go's
//
//	Get "https://10.0.0.1:6443/api/v1/namespaces/shop/configmaps?allowWatchBookmarks=true&…": dial tcp 10.0.0.1:6443: connect: connection refused
//
// becomes
//
//	connection refused (GET /api/v1/namespaces/shop/configmaps?allowWatchBookmarks=true&…)
//
// It works on the message, not the error's type, so a replay, which has only
// the recorded message, says what the live run said.
func causeFirst(msg string) string {
	op, rest, ok := strings.Cut(msg, " \"")
	if !ok || op == "" || strings.ToUpper(op[:1]) != op[:1] || strings.ContainsAny(op, " :") {
		return msg
	}
	rawURL, cause, ok := strings.Cut(rest, "\": ")
	if !ok {
		return msg
	}
	// A socket error's own words are its last part: "dial tcp 10.0.0.1:6443:
	// connect: connection refused", "read tcp …: read: connection reset by peer".
	for _, p := range []string{"dial ", "read ", "write "} {
		if strings.HasPrefix(cause, p) {
			if i := strings.LastIndex(cause, ": "); i >= 0 {
				cause = cause[i+2:]
			}
			break
		}
	}
	return fmt.Sprintf("%s (%s %s)", cause, strings.ToUpper(op), shortRequest(rawURL))
}

// shortRequest is a request's path and the start of its query.
func shortRequest(rawURL string) string {
	const maxQuery = 40
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	s := u.EscapedPath()
	if q := u.RawQuery; q != "" {
		s += "?" + format.ClipBytes(q, maxQuery)
	}
	return s
}

// IsGone reports a 410 Gone (Expired) answer, as the reflector classifies it.
func (e *RequestEnd) IsGone() bool { return IsGone(e.Status) }

// IsTooLargeResourceVersion reports the server's "too large resource version"
// answer, as the reflector classifies it.
func (e *RequestEnd) IsTooLargeResourceVersion() bool { return IsTooLargeResourceVersion(e.Status) }

// Permanent says the answer is one that retrying will not fix without
// someone acting, as the reflector counts its permanent retries: see
// Permanent; listed says a list has completed.
func (e *RequestEnd) Permanent(listed bool) bool { return Permanent(e.Status, listed) }

// Code is the HTTP status code of the server's answer, 0 without one.
func (e *RequestEnd) Code() int32 {
	if e.Status == nil {
		return 0
	}
	return e.Status.Code
}

// Format renders the options as sent: only those that were set, and
// resourceVersion="" for a consistent read. compact abbreviates the names and
// long continue tokens, for narrow columns: rv=211 bookmarks timeout=397s.
func (o RequestOptions) Format(compact bool) string {
	pick := func(long, short string) string {
		if compact {
			return short
		}
		return long
	}
	// A proxied client chose them: no control character reaches a screen.
	rv, match, cont := format.PrintableString(o.ResourceVersion), format.PrintableString(o.ResourceVersionMatch), format.PrintableString(o.Continue)
	parts := []string{pick("resourceVersion=", "rv=") + cmp.Or(rv, `""`)}
	add := func(set bool, part string) {
		if set {
			parts = append(parts, part)
		}
	}
	timeout := strconv.FormatInt(o.TimeoutSeconds, 10)
	add(match != "", pick("resourceVersionMatch=", "match=")+match)
	add(o.Limit > 0, "limit="+strconv.FormatInt(o.Limit, 10))
	add(cont != "", "continue="+pick(cont, format.ClipBytes(cont, 10)))
	add(o.SendInitialEvents, pick("sendInitialEvents=true", "sendInitialEvents"))
	add(o.AllowWatchBookmarks, pick("allowWatchBookmarks=true", "bookmarks"))
	add(o.TimeoutSeconds > 0, pick("timeoutSeconds="+timeout, "timeout="+timeout+"s"))
	return strings.Join(parts, " ")
}

// Format says how a request ended; nil (still running) is "running". Short
// is the reason and status code ("closed", "error 410"); otherwise the
// server's Status or the error follows: "error 410 Expired: too old resource
// version: 211 (214)", "canceled: forced relist".
func (e *RequestEnd) Format(short bool) string {
	if e == nil {
		return "running"
	}
	s := string(e.Reason)
	if e.Status != nil && e.Status.Code != 0 {
		s += " " + strconv.Itoa(int(e.Status.Code))
	}
	if short {
		return s
	}
	switch {
	case e.Status != nil:
		if e.Status.Reason != "" {
			s += " " + string(e.Status.Reason)
		}
		if e.Status.Message != "" {
			s += ": " + e.Status.Message
		}
	case e.Err != nil && e.Reason != EndClosed && e.Reason != EndStopped: // "stopped" says it all
		s += ": " + e.Err.Error()
	}
	return s
}
