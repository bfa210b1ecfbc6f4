package findings

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// RequestRefused is a run failed because the server refused its requests
// in a way no retry fixes: the credentials, RBAC, a resource that is gone,
// or the request's own options.
const RequestRefused ID = "request-refused"

type requestRefused struct {
	// reqs are the requests refused in a row, up to the one that failed
	// the run: the evidence links every attempt, not the last alone.
	reqs []int64
}

func (*requestRefused) entry() Entry {
	return Entry{RequestRefused, Error, "the run failed because the server refused its requests in a way no retry fixes: 401, 403, 404 (before the first list) or 405 on every attempt, or a 400/422 refusing the request's own options (a mistyped selector)"}
}

func (r *requestRefused) observe(e *Engine, n reflector.Note) {
	if n.Kind == reflector.NoteRequestEnded && n.Request != nil && n.Request.End != nil {
		// The row the reflector counts as its permanent retries.
		if n.Request.End.Permanent(e.track.firstListed) {
			r.reqs = appendLast(r.reqs, n.Request.ID)
		} else {
			r.reqs = r.reqs[:0]
		}
	}
	d := decided(n, reflector.ReasonPermanentError, reflector.ReasonBadRequest)
	if d == nil {
		return
	}
	reqs := appendLast(slices.Clone(r.reqs), n.RequestID)
	e.raise(RequestRefused, Error, n.At, func(f *Finding) {
		f.Count++
		f.Title = "the server refused the " + cmp.Or(string(e.track.lastVerb), "request") + ": " + refusedAs(d.Code)
		if d.Reason == reflector.ReasonBadRequest {
			f.Title = fmt.Sprintf("the server refused the request's options (%d)", d.Code)
		}
		f.Evidence = Evidence{Text: saidBeyondTheStatus(d), Requests: reqs}
		f.Cause, f.Action = refusedWhy(d)
	})
}

// saidBeyondTheStatus is what the server said beyond the status the title
// names, and how often it was asked: the decision itself when the answer
// carried no Status message.
func saidBeyondTheStatus(d *reflector.Decision) string {
	if d.Said == "" {
		return d.String()
	}
	return "the server said: " + d.Said + " " + d.Refusal()
}

// refusedAs names a refusal's status code.
func refusedAs(code int32) string {
	return strings.TrimSpace(fmt.Sprint(code, " ", http.StatusText(int(code))))
}

// refusedWhy is a refusal's cause and action, by its code.
func refusedWhy(d *reflector.Decision) (cause, action string) {
	switch {
	case d.Reason == reflector.ReasonBadRequest:
		return "the server refused the request's own options (a mistyped label or field selector, or a field the resource cannot be selected by): the same request is refused every time",
			"correct the options the server names in its message (-l, --field-selector, --resource-version)"
	case d.Code == 401:
		return "the server did not accept the credentials: a token expired or was revoked, or a client certificate it does not trust",
			"refresh the kubeconfig's credentials (log in again), then check with kubectl auth whoami"
	case d.Code == 403:
		return "RBAC does not grant the user both list and watch on this resource here (a streaming list, the default first request, is a watch): a namespaced run needs them in that namespace (a Role), -A or a cluster-scoped resource cluster-wide (a ClusterRole)",
			"check each verb with kubectl auth can-i list RESOURCE -n NAMESPACE and kubectl auth can-i watch RESOURCE -n NAMESPACE (with --as USER for another user; can-i takes one verb) and grant both; README's \"RBAC needed\" lists what each mode needs"
	case d.Code == 404:
		return "the resource or the namespace is not there: a CRD removed or not yet installed, an API version the server no longer serves, or a namespace deleted",
			"check kubectl api-resources and kubectl get namespace NAMESPACE, and watch a version the server serves"
	}
	return "the server does not allow this request on this resource (" + refusedAs(d.Code) + ")",
		"check that the resource supports list and watch: kubectl api-resources -o wide"
}
