package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

func TestOnlyListsAndWatchesOfCollectionsAreObserved(t *testing.T) {
	for _, tc := range []struct {
		method, url string
		want        string // "" = not observed
	}{
		{"GET", "/api/v1/namespaces/ns/pods?limit=500&resourceVersion=0", "list /v1, Resource=pods ns=ns rv=0 limit=500"},
		{"GET", "/api/v1/pods?watch=true&resourceVersion=10&allowWatchBookmarks=true&timeoutSeconds=300", "watch /v1, Resource=pods ns= rv=10 bookmarks timeout=300s"},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&labelSelector=app%3Dweb",
			"watch apps/v1, Resource=deployments ns=ns rv=\"\" match=NotOlderThan sendInitialEvents -l app=web"},
		{"GET", "/api/v1/watch/namespaces/ns/configmaps?resourceVersion=5", "watch /v1, Resource=configmaps ns=ns rv=5"},
		{"GET", "/api/v1/namespaces", "list /v1, Resource=namespaces ns= rv=\"\""},
		{"GET", "/api/v1/namespaces/ns", ""},             // one namespace
		{"GET", "/api/v1/namespaces/ns/pods/p", ""},      // one pod
		{"GET", "/api/v1/namespaces/ns/pods/p/log", ""},  // a subresource
		{"POST", "/api/v1/namespaces/ns/configmaps", ""}, // a write
		{"GET", "/apis", ""},                             // discovery
		{"GET", "/apis/apps/v1", ""},                     // discovery
		{"GET", "/healthz", ""},
	} {
		req := httptest.NewRequest(tc.method, tc.url, nil)
		c, ok := classify(req)
		got := ""
		if ok {
			got = string(c.verb) + " " + c.gvr.String() + " ns=" + c.namespace + " " + c.opts.Format(true)
			if c.label != "" {
				got += " -l " + c.label
			}
		}
		if got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.method, tc.url, got, tc.want)
		}
	}
}

// chunks reads a body a chunk at a time.
type chunks struct{ parts []string }

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	c.parts[0] = c.parts[0][n:]
	if c.parts[0] == "" {
		c.parts = c.parts[1:]
	}
	return n, nil
}
func (c *chunks) Close() error { return nil }

// The tee hands the forwarder every byte unchanged and the observer a copy;
// a body of known length ends when its last byte is read, before anyone
// reads EOF.
func TestTheTeeForwardsEveryByteAndTellsTheEnd(t *testing.T) {
	q := newQueue()
	ended := 0
	body := &teeBody{ctx: t.Context(), body: &chunks{parts: []string{"hello ", "wor", "ld"}}, q: q, remaining: 11, ended: func() { ended++ }}
	buf := make([]byte, 6)
	var forwarded strings.Builder
	for forwarded.Len() < 11 {
		n, err := body.Read(buf)
		forwarded.Write(buf[:n])
		if err != nil {
			t.Fatal(err)
		}
	}
	if ended != 1 {
		t.Fatalf("the end was reported %d times once the last byte was read, want once", ended)
	}
	_ = body.Close()
	observed, err := io.ReadAll(q)
	if err != nil {
		t.Fatal(err)
	}
	if forwarded.String() != "hello world" || string(observed) != "hello world" || ended != 1 {
		t.Errorf("forwarded %q, observed %q, %d ends", forwarded.String(), observed, ended)
	}
}

// A body the proxy stops reading early (the client went away) ends as such.
func TestATeeClosedEarlyEndsAsTheClientGone(t *testing.T) {
	q := newQueue()
	body := &teeBody{ctx: t.Context(), body: &chunks{parts: []string{"abc", "def"}}, q: q, remaining: -1}
	buf := make([]byte, 3)
	if _, err := body.Read(buf); err != nil {
		t.Fatal(err)
	}
	_ = body.Close()
	b, err := io.ReadAll(q)
	if string(b) != "abc" || err != errClientGone {
		t.Errorf("observed %q and %v, want abc and %v", b, err, errClientGone)
	}
}

// A refused connection to the server is answered 429 with Retry-After (as
// client-go retries a watch then, as on a refused connection), anything else 502.
func TestTheResponderAnswersARefusedConnection429(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
	}{
		{&refused{}, http.StatusTooManyRequests},
		{io.ErrUnexpectedEOF, http.StatusBadGateway},
	} {
		w := httptest.NewRecorder()
		responder{}.Error(w, httptest.NewRequest("GET", "/api/v1/pods?watch=true", nil), tc.err)
		st := wire.ResponseStatus(w.Code, w.Body.Bytes(), reflector.VerbWatch, podsGR)
		if w.Code != tc.code || st.Code != int32(tc.code) || !strings.Contains(st.Message, "could not be reached") {
			t.Errorf("%v: %d %+v, want %d", tc.err, w.Code, st, tc.code)
		}
		if (tc.code == http.StatusTooManyRequests) != (w.Header().Get("Retry-After") == "1") {
			t.Errorf("%v: Retry-After %q", tc.err, w.Header().Get("Retry-After"))
		}
	}
}

// refused is a refused connection, as the dialer reports it.
type refused struct{}

func (*refused) Error() string { return "dial tcp 127.0.0.1:6443: connect: connection refused" }
func (*refused) Unwrap() error { return syscall.ECONNREFUSED }

var podsGR = schema.GroupResource{Resource: "pods"}
