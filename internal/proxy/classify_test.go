package proxy

import (
	"bytes"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

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

// A watch whose server refused the connection (an apiserver restarting)
// ends in an error, as our reflector's does: its client was answered 429
// and retries; it neither canceled nor left (the handler's return, which
// cancels the request's context, came before the stream was fed).
func TestAWatchTheServerRefusedEndsInAnError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := "http://" + ln.Addr().String()
	ln.Close()
	p, srv, addr := serveProxy(t, Options{Config: &rest.Config{Host: server}})
	defer func() {
		_ = srv.Close()
		p.Close()
	}()
	const ua = "refused-test"
	for range 5 {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=10", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", ua)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("answered %d, want 429", resp.StatusCode)
		}
	}
	p.Wait()
	streams := streamsOf(p, ua, configMapsGVR)
	if len(streams) != 1 {
		t.Fatalf("%d streams, want 1", len(streams))
	}
	for _, r := range streams[0].Stats().Requests {
		if r.End == nil || r.End.Reason != reflector.EndError || !utilnet.IsConnectionRefused(r.End.Err) {
			t.Errorf("request #%d ended %+v, want an error: the connection refused", r.ID, r.End)
		}
	}
}

// refused is a refused connection, as the dialer reports it.
type refused struct{}

func (*refused) Error() string { return "dial tcp 127.0.0.1:6443: connect: connection refused" }
func (*refused) Unwrap() error { return syscall.ECONNREFUSED }

var podsGR = schema.GroupResource{Resource: "pods"}

// failing is a body that gives its parts, then err.
type failing struct {
	chunks
	err error
}

func (f *failing) Read(p []byte) (int, error) {
	if len(f.parts) == 0 {
		return 0, f.err
	}
	return f.chunks.Read(p)
}

// A body cut mid-stream (a server's cut, --fault cut) aborts the client's
// connection, and the stream's end has the cut's error; the forwarder
// (httputil.ReverseProxy, as UpgradeAwareHandler makes it, whose log is
// the process's stderr) logs nothing: its line came out over the dashboard.
func TestACutBodyAbortsTheClientWithoutALogLine(t *testing.T) {
	q := newQueue()
	cut := errors.New("cut by the test")
	var logged bytes.Buffer
	rp := &httputil.ReverseProxy{
		Rewrite:  func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: "http", Host: "upstream"}) },
		ErrorLog: log.New(&logged, "", 0),
		Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
			body := &teeBody{ctx: t.Context(), body: &failing{chunks: chunks{parts: []string{`{"type":"ADDED"}`}}, err: cut}, q: q, remaining: -1}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: body, ContentLength: -1}, nil
		}),
	}
	srv := httptest.NewServer(rp)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/pods?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err == nil {
		t.Errorf("the client read %q to a clean end, want its connection aborted", got)
	}
	if _, err := io.ReadAll(q); !errors.Is(err, cut) {
		t.Errorf("the stream ended with %v, want the cut", err)
	}
	if logged.Len() > 0 {
		t.Errorf("the forwarder logged %q", logged.String())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
