package findings

import (
	"strings"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

func TestRequestRefusedSaysTheRefusalItsCauseAndWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		d            reflector.Decision
		title, cause string
	}{
		{reflector.Decision{Reason: reflector.ReasonPermanentError, Code: 403, Attempts: 2, Cause: `403 Forbidden: secrets is forbidden: User "alice" cannot watch resource "secrets"`},
			"the server refused the watch: 403 Forbidden", "RBAC grants the user no list or watch"},
		{reflector.Decision{Reason: reflector.ReasonPermanentError, Code: 401, Attempts: 2, Cause: "401 Unauthorized"},
			"the server refused the watch: 401 Unauthorized", "did not accept the credentials"},
		{reflector.Decision{Reason: reflector.ReasonPermanentError, Code: 404, Attempts: 2, Cause: "404 Not Found"},
			"the server refused the watch: 404 Not Found", "a CRD removed"},
		{reflector.Decision{Reason: reflector.ReasonBadRequest, Code: 400, Cause: `400 BadRequest: unable to parse requirement: found '=', expected: identifier`},
			"the server refused the request's options (400)", "mistyped label or field selector"},
	} {
		f := newFeed(t, Options{})
		tc.d.State = reflector.StateFailed
		f.decide(tc.d)
		got, ok := f.e.Get(RequestRefused)
		if !ok || got.Severity != Error || got.Title != tc.title || !strings.Contains(got.Cause, tc.cause) || got.Action == "" {
			t.Errorf("%s %d: got %v %+v, want %q, a cause saying %q and an action", tc.d.Reason, tc.d.Code, ok, got, tc.title, tc.cause)
		}
		if !strings.HasPrefix(got.Evidence.Text, tc.d.Cause) {
			t.Errorf("%s %d: evidence %q, want the server's answer", tc.d.Reason, tc.d.Code, got.Evidence.Text)
		}
	}
	f := newFeed(t, Options{})
	f.decide(reflector.Decision{State: reflector.StateStopped, Reason: reflector.ReasonGaveUp, Cause: "connection refused"})
	if _, ok := f.e.Get(RequestRefused); ok {
		t.Error("gave-up raised request-refused too")
	}
}
