package findings

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

func TestRequestRefusedSaysTheRefusalItsCauseAndWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		d                      reflector.Decision
		title, cause, evidence string
		verb                   reflector.Verb // of the refused request
	}{
		{reflector.Decision{Reason: reflector.ReasonPermanentError, Code: 403, Attempts: 2, Cause: `403 Forbidden: secrets is forbidden: User "alice" cannot watch resource "secrets"`, Said: `secrets is forbidden: User "alice" cannot watch resource "secrets"`},
			"the server refused the watch: 403 Forbidden", "RBAC does not grant the user both list and watch",
			`the server said: secrets is forbidden: User "alice" cannot watch resource "secrets" (gave up after 2 attempts)`, reflector.VerbWatch},
		// --initial-list=list: the LIST was refused, not a watch.
		{reflector.Decision{Reason: reflector.ReasonPermanentError, Code: 403, Attempts: 2, Cause: `403 Forbidden: pods is forbidden: User "bob" cannot list resource "pods"`, Said: `pods is forbidden: User "bob" cannot list resource "pods"`},
			"the server refused the list: 403 Forbidden", "RBAC does not grant the user both list and watch",
			`the server said: pods is forbidden: User "bob" cannot list resource "pods" (gave up after 2 attempts)`, reflector.VerbList},
		{reflector.Decision{Reason: reflector.ReasonPermanentError, Code: 401, Attempts: 2, Cause: "401 Unauthorized"},
			"the server refused the watch: 401 Unauthorized", "did not accept the credentials", "401 Unauthorized (gave up after 2 attempts)", reflector.VerbWatch},
		{reflector.Decision{Reason: reflector.ReasonPermanentError, Code: 404, Attempts: 2, Cause: "404 NotFound: the server could not find the requested resource", Said: "the server could not find the requested resource"},
			"the server refused the watch: 404 Not Found", "a CRD removed", "the server said: the server could not find the requested resource (gave up after 2 attempts)", reflector.VerbWatch},
		{reflector.Decision{Reason: reflector.ReasonBadRequest, Code: 400, Cause: `400 BadRequest: unable to parse requirement: found '=', expected: identifier`, Said: `unable to parse requirement: found '=', expected: identifier`},
			"the server refused the request's options (400)", "mistyped label or field selector",
			"the server said: unable to parse requirement: found '=', expected: identifier (the request's options are wrong: the same request would be refused again)", reflector.VerbList},
	} {
		f := newFeed(t, Options{})
		f.note(reflector.Note{Kind: reflector.NoteRequestStarted, Request: &reflector.RequestInfo{ID: 1, Verb: tc.verb}})
		tc.d.State = reflector.StateFailed
		f.decide(tc.d)
		got, ok := f.e.Get(RequestRefused)
		if !ok || got.Severity != Error || got.Title != tc.title || !strings.Contains(got.Cause, tc.cause) || got.Action == "" {
			t.Errorf("%s %d: got %v %+v, want %q, a cause saying %q and an action", tc.d.Reason, tc.d.Code, ok, got, tc.title, tc.cause)
		}
		// The evidence is what the server said beyond the status the title
		// names (a FINDING line is "title: evidence"; it said the status twice).
		if got.Evidence.Text != tc.evidence {
			t.Errorf("%s %d: evidence %q, want %q", tc.d.Reason, tc.d.Code, got.Evidence.Text, tc.evidence)
		}
	}
	// kubectl auth can-i takes one verb: "list,watch" is a verb of that
	// name, which a user who may list and watch may not.
	_, action := refusedWhy(&reflector.Decision{Reason: reflector.ReasonPermanentError, Code: 403})
	if strings.Contains(action, "list,watch") || !strings.Contains(action, "can-i list RESOURCE") || !strings.Contains(action, "can-i watch RESOURCE") {
		t.Errorf("403's action %q, want a can-i command for each verb", action)
	}
	f := newFeed(t, Options{})
	f.decide(reflector.Decision{State: reflector.StateStopped, Reason: reflector.ReasonGaveUp, Cause: "connection refused"})
	if _, ok := f.e.Get(RequestRefused); ok {
		t.Error("gave-up raised request-refused too")
	}
}

// The evidence links every request refused in a row, up to the one that
// failed the run (a reviewer saw [2] where #1 was refused too); a request
// answered in between begins the row again.
func TestRequestRefusedLinksEveryRefusedAttempt(t *testing.T) {
	f := newFeed(t, Options{})
	forbidden := func() *reflector.RequestEnd {
		return &reflector.RequestEnd{Reason: reflector.EndError, Status: &metav1.Status{Code: 403, Reason: metav1.StatusReasonForbidden}}
	}
	f.request(reflector.VerbWatch, bookmarked, time.Second, 0, forbidden(), nil)        // #1
	f.request(reflector.VerbList, reflector.RequestOptions{}, time.Second, 0, nil, nil) // #2, answered
	f.request(reflector.VerbWatch, bookmarked, time.Second, 0, forbidden(), nil)        // #3
	f.request(reflector.VerbWatch, bookmarked, time.Second, 0, forbidden(), nil)        // #4
	f.decide(reflector.Decision{State: reflector.StateFailed, Reason: reflector.ReasonPermanentError, Code: 403, Attempts: 2})
	got, ok := f.e.Get(RequestRefused)
	if !ok || !slices.Equal(got.Evidence.Requests, []int64{3, 4}) {
		t.Fatalf("want request-refused linking #3 and #4: %v %v", ok, got.Evidence.Requests)
	}
}
