// Package proxy is the observing proxy of "kubectl watchcache proxy": a
// kubectl proxy (every request forwarded to the cluster with the user's
// credentials, Host checked against the accepted hosts) that, on the way,
// watches every LIST and WATCH its clients make. Each response is teed as it
// streams: the client receives the server's bytes unchanged, each chunk
// written and flushed as it arrives, and a copy goes to a decoder (JSON or
// protobuf, watch framing, streaming lists) that feeds an observed.Stream:
// one per client reflector, that is per (client, resource, namespace,
// selectors, what it asks for: encoding, metadata only, Tables), rebuilding
// the cache that client holds.
//
// Serve it with the http.Server NewServer returns: the proxy follows its
// clients' TCP connections, so that two processes with one User-Agent are
// two clients, and a stream whose client has gone says so.
package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilproxy "k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/klog/v2"
	kubectlproxy "k8s.io/kubectl/pkg/proxy"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/fault"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// DefaultAcceptHosts is kubectl proxy's default --accept-hosts.
const DefaultAcceptHosts = kubectlproxy.DefaultHostAcceptRE

// maxErrorBody bounds what is read of an error response to find its Status.
const maxErrorBody = 1 << 20

// sameClientGrace is how long a request waits for one of its client's busy
// streams to be released before it is taken for another reflector's (see
// assign).
const sameClientGrace = 500 * time.Millisecond

// processedGrace is how long a request that starts afresh waits for a
// stream of its client's whose request was forwarded whole to be processed
// (its stream's state then says whether the client relists): that takes
// milliseconds, but a loaded machine may take longer than sameClientGrace.
const processedGrace = 10 * time.Second

// DefaultClientLeftAfter is how long a stream's client must have been gone
// (every connection it used closed, no request open) before its stream says
// it left: a client-go reflector cut off (an apiserver restart, a GOAWAY)
// reconnects at once or after a backoff of 0.8 s, 1.6 s, 3.2 s…, so a
// shorter wait would see it leave and come back.
const DefaultClientLeftAfter = 5 * time.Second

// DefaultForgetAfter is how long a stream's client must have left before
// the proxy forgets what it held (its stream keeps its counts): twice
// client-go's longest backoff, 30 s. A client that comes back after that
// is a new stream. Without it, every kubectl get kept its list until exit.
const DefaultForgetAfter = time.Minute

// Options configure a Proxy.
type Options struct {
	// Config is the cluster and the user's credentials every request is sent with.
	Config *rest.Config
	// AcceptHosts are the Host header values accepted (the port left out);
	// any other Host is answered 403. Default: DefaultAcceptHosts.
	AcceptHosts []*regexp.Regexp
	// OnStream is called once for every new stream, before its first
	// request is fed to it: add note listeners and recordings there. It is
	// called from the stream's own goroutine, never on the forwarding path.
	OnStream func(*observed.Stream)
	// Now is the clock of the streams' notes and stats; default time.Now.
	Now func() time.Time
	// KeepRaw keeps each observed object's JSON (Item.Raw) for a trace;
	// without it only the compact objects are kept.
	KeepRaw bool
	// ClientLeftAfter is how long a stream's client must have been gone
	// before its stream says it left; default DefaultClientLeftAfter.
	ClientLeftAfter time.Duration
	// ForgetAfter is how long a stream's client must have left before its
	// stream forgets what the client held (observed.Stream.Forget) and no
	// request joins it again; default DefaultForgetAfter.
	ForgetAfter time.Duration
	// OnFlowControlNames is called with the names (uid → name) of
	// FlowSchemas and PriorityLevels learned after the 429s that gave them
	// by UID, once the streams' findings have them (record them there). It
	// must not block.
	OnFlowControlNames func(flowSchemas, priorityLevels map[string]string)
	// Faults are injected into the LISTs and WATCHes of the streams
	// FaultTarget matches (kubectl watchcache proxy --fault); FaultSeed
	// seeds their @p. Without faults, every byte is forwarded unchanged.
	Faults      []fault.Spec
	FaultTarget fault.Target
	FaultSeed   int64
}

// Proxy forwards requests to the cluster and observes its LISTs and WATCHes.
// It is an http.Handler.
type Proxy struct {
	opts    Options
	handler http.Handler
	mapper  meta.ResettableRESTMapper
	// unservedTargets are the --fault-target resources the server did not
	// serve at the start.
	unservedTargets []fault.GroupResource
	// names names the FlowSchema and PriorityLevel of the 429s the proxy
	// forwards, read with the user's credentials (as the requests are sent).
	names *live.FlowControlNames

	// creating serializes the creation of streams: a stream's number, its
	// announcement (OnStream, which records its resource line) and its place
	// in streams come in one order.
	creating sync.Mutex
	mu       sync.Mutex
	slots    map[streamKey][]*slot
	released chan struct{} // closed (and replaced) when a slot is released or a request processed
	streams  []*observed.Stream
	nextID   int
	jobs     sync.WaitGroup
	// conns are the clients' open connections (NewServer's ConnContext
	// adds each, its ConnState removes it when it closes).
	conns   map[net.Conn]*conn
	closing atomic.Bool // Stopping or Close has begun: no more client-left checks; a request cut from then on was stopped
	// inj injects Options.Faults; nil without them.
	inj *injector
}

// conn is one TCP connection of a client to the proxy.
type conn struct {
	closed bool
	slots  map[*slot]bool // the streams whose requests came on it
}

// connKey is the context key of a request's *conn.
type connKey struct{}

// connOf is the connection req came on (nil when the server is not NewServer's).
func connOf(req *http.Request) *conn {
	c, _ := req.Context().Value(connKey{}).(*conn)
	return c
}

// streamKey is what makes two requests part of one client reflector's stream.
type streamKey struct {
	userAgent string
	host      string // the client's address without its port
	gvr       schema.GroupVersionResource
	namespace string
	label     string
	field     string
	// asked is what the client asks for (encoding, metadata only, Tables):
	// a typed and a metadata informer of one resource are two reflectors.
	asked observed.Asked
}

// slot is one stream in the making and then in use: its requests are
// processed one after another, in the order they came.
type slot struct {
	key    streamKey // its place in Proxy.slots
	client observed.Client
	asked  observed.Asked // with the first request's Accept
	busy   bool           // a request of it is being forwarded
	tail   chan struct{}  // closed when its last queued request is processed
	stream *observed.Stream

	// conns are the open connections its requests came on (a closed one
	// is dropped, so a long-lived stream does not grow with every
	// connection its clients opened), connected says a request came on a
	// tracked connection at all; pending counts its requests not processed
	// yet. When every connection has closed and nothing is pending, its
	// client may have left: leftGen numbers that check (a later request or
	// check cancels it), left says the stream was told.
	conns     map[*conn]bool
	connected bool
	pending   int
	leftGen   int
	left      bool
	// relisting: its last request processed was answered 410 (or a too
	// large resourceVersion): the client's next is a relist, perhaps from "".
	relisting bool
	// synced: its client holds a resourceVersion (its stream came to
	// Listed or Watching, and no 410 since): it resumes from it, and never
	// starts afresh again (see assign).
	synced bool
	// cont is the continue token of its last page, until its next request:
	// its client's next request is the LIST that sends it back (see assign).
	cont string
	// cursor is its stream's last resourceVersion, once processed: the one
	// its client resumes from.
	cursor string
}

// takesAfresh says whether a request that starts afresh may be the slot's
// client's: one still connected, or one whose last answer was a 410 (a
// reflector relists from "" after it, and may have dropped its connection
// on the way), or not processed yet.
func (sl *slot) takesAfresh() bool { return !sl.gone() || sl.relisting || sl.pending > 0 }

// gone says every connection the slot's requests came on has closed.
func (sl *slot) gone() bool { return sl.connected && len(sl.conns) == 0 }

// New builds the proxy for opts.Config.
func New(opts Options) (*Proxy, error) {
	if opts.Config == nil {
		return nil, errors.New("proxy: no cluster configuration")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.AcceptHosts == nil {
		hosts, err := kubectlproxy.MakeRegexpArray(DefaultAcceptHosts)
		if err != nil {
			return nil, fmt.Errorf("proxy: accepted hosts: %w", err)
		}
		opts.AcceptHosts = hosts
	}
	host := opts.Config.Host
	if !strings.HasSuffix(host, "/") {
		host += "/"
	}
	target, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("proxy: server URL %q: %w", opts.Config.Host, err)
	}
	rt, err := rest.TransportFor(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("proxy: transport: %w", err)
	}
	upgrade, err := upgradeTransport(opts.Config)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("proxy: discovery: %w", err)
	}
	names, err := live.NewFlowControlNames(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("proxy: flow control names: %w", err)
	}
	if opts.ClientLeftAfter <= 0 {
		opts.ClientLeftAfter = DefaultClientLeftAfter
	}
	if opts.ForgetAfter <= 0 {
		opts.ForgetAfter = DefaultForgetAfter
	}
	p := &Proxy{opts: opts, slots: map[streamKey][]*slot{}, released: make(chan struct{}), names: names, conns: map[net.Conn]*conn{},
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
	names.OnNamed(p.named)
	if len(opts.Faults) > 0 {
		expander := restmapper.NewShortcutExpander(p.mapper, dc, func(string) {})
		p.opts.FaultTarget, p.unservedTargets = resolveTarget(expander, opts.FaultTarget)
		p.inj = newInjector(opts.Faults, p.opts.FaultTarget, opts.FaultSeed, time.Now())
	}
	h := utilproxy.NewUpgradeAwareHandler(target, &observingTransport{p: p, rt: rt}, false, false, responder{})
	h.UpgradeTransport = upgrade
	h.UseRequestLocation = true
	h.UseLocationHost = true
	h.AppendLocationPath = true
	h.FlushInterval = -1 // every chunk is written and flushed as it arrives
	filter := &kubectlproxy.FilterServer{
		AcceptPaths:   kubectlproxy.MakeRegexpArrayOrDie(kubectlproxy.DefaultPathAcceptRE),
		RejectPaths:   kubectlproxy.MakeRegexpArrayOrDie(kubectlproxy.DefaultPathRejectRE),
		AcceptHosts:   opts.AcceptHosts,
		RejectMethods: kubectlproxy.MakeRegexpArrayOrDie(kubectlproxy.DefaultMethodRejectRE),
	}
	p.handler = filter.HandlerFor(h)
	return p, nil
}

// upgradeTransport is kubectl proxy's transport for upgraded connections
// (exec, attach, port-forward): HTTP/1.1 with the user's credentials.
func upgradeTransport(cfg *rest.Config) (utilproxy.UpgradeRequestRoundTripper, error) {
	rt, err := rest.HTTPWrappersForConfig(cfg, utilproxy.MirrorRequest)
	if err != nil {
		return nil, fmt.Errorf("proxy: transport: %w", err)
	}
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("proxy: TLS: %w", err)
	}
	base := &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext}
	return utilproxy.NewUpgradeRequestRoundTripper(base, rt), nil
}

// responder answers a request the server could not be reached for. A
// refused connection is answered 429 Too Many Requests with Retry-After: a
// client-go reflector treats a refused connection and a 429 alike (it backs
// off and retries the same watch), where any other answer would make it
// relist, so a client behind the proxy does what it does without it while
// the apiserver restarts. Any other failure is a 502, as a gateway's.
type responder struct{}

// Error implements utilproxy.ErrorResponder.
func (responder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	klog.V(2).Infof("Error while proxying request: %v", err)
	code, reason := http.StatusBadGateway, metav1.StatusReasonInternalError
	if utilnet.IsConnectionRefused(err) {
		code, reason = http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests
		w.Header().Set("Retry-After", "1")
	}
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: int32(code), Reason: reason,
		Message: "kubectl watchcache proxy: the server could not be reached: " + err.Error()}
	if code == http.StatusTooManyRequests {
		st.Details = &metav1.StatusDetails{RetryAfterSeconds: 1}
	}
	b, _ := json.Marshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, req *http.Request) { p.handler.ServeHTTP(w, req) }

// NewServer is an http.Server for the proxy that tells it about its
// clients' connections (ConnContext and ConnState): which connection each
// request came on, and when each closes.
func (p *Proxy) NewServer() *http.Server {
	return &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, ConnContext: p.connContext, ConnState: p.connState}
}

// connContext tracks a new connection and puts it in its requests' context.
func (p *Proxy) connContext(ctx context.Context, c net.Conn) context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	cn := &conn{slots: map[*slot]bool{}}
	p.conns[c] = cn
	return context.WithValue(ctx, connKey{}, cn)
}

// connState follows a connection to its end: closed (or hijacked for an
// upgrade, after which no LIST or WATCH comes on it), it is one less open
// connection for each stream that used it.
func (p *Proxy) connState(c net.Conn, state http.ConnState) {
	if state != http.StateClosed && state != http.StateHijacked {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	cn := p.conns[c]
	if cn == nil || cn.closed {
		return
	}
	delete(p.conns, c)
	cn.closed = true
	at := p.opts.Now()
	for sl := range cn.slots {
		delete(sl.conns, cn)
		p.checkLeft(sl, at)
	}
}

// checkLeft starts the wait after which the slot's stream says its client
// left, when every connection it used has closed and nothing is pending:
// at is when that became true. Caller holds p.mu.
func (p *Proxy) checkLeft(sl *slot, at time.Time) {
	if sl.left || sl.pending > 0 || !sl.gone() || p.closing.Load() {
		return
	}
	sl.leftGen++
	gen := sl.leftGen
	time.AfterFunc(p.opts.ClientLeftAfter, func() { p.clientLeft(sl, gen, at) })
}

// clientLeft tells the slot's stream that its client left at since, unless
// a request came since the check gen began (after its stream's last request).
func (p *Proxy) clientLeft(sl *slot, gen int, since time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing.Load() || sl.leftGen != gen || sl.left || sl.pending > 0 || !sl.gone() {
		return
	}
	sl.left = true
	p.tell(sl, func(s *observed.Stream) { s.ClientLeft(since) })
	// ForgetAfter counts from when it left, as the client-left note's wait does.
	time.AfterFunc(max(p.opts.ForgetAfter-p.opts.Now().Sub(since), 0), func() { p.forget(sl, gen) })
}

// forget forgets the slot, whose client left with the check gen and has
// not come back since: no request joins it again (a client that comes back
// is a new stream), and its stream drops what the client held.
func (p *Proxy) forget(sl *slot, gen int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing.Load() || sl.leftGen != gen || !sl.left || sl.pending > 0 {
		return
	}
	p.slots[sl.key] = slices.DeleteFunc(p.slots[sl.key], func(s *slot) bool { return s == sl })
	if len(p.slots[sl.key]) == 0 {
		delete(p.slots, sl.key)
	}
	if p.inj != nil {
		p.inj.forget(sl)
	}
	p.tell(sl, (*observed.Stream).Forget)
}

// tell calls f with the slot's stream once its requests queued so far are
// processed, in their order. Caller holds p.mu.
func (p *Proxy) tell(sl *slot, f func(*observed.Stream)) {
	prev, mine := sl.tail, make(chan struct{})
	sl.tail = mine
	p.jobs.Add(1)
	go func() {
		defer p.jobs.Done()
		defer close(mine)
		<-prev
		if sl.stream != nil {
			f(sl.stream)
		}
	}()
}

// Streams are the streams observed so far, in the order they appeared.
func (p *Proxy) Streams() []*observed.Stream {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*observed.Stream(nil), p.streams...)
}

// Wait waits until every job is done: each observed request processed to
// its end (so the streams hold all of it), and each stream told what its
// timers decided. A request still open, a watch, is waited for too: call
// it once the requests it waits for have ended.
func (p *Proxy) Wait() { p.jobs.Wait() }

// named hands the names learned after the 429s that gave them by UID to
// every stream's findings, then to OnFlowControlNames.
func (p *Proxy) named(n live.Named) {
	for _, s := range p.Streams() {
		s.Findings().NameFlowControl(n.FlowSchemas, n.PriorityLevels)
	}
	if f := p.opts.OnFlowControlNames; f != nil {
		f(n.FlowSchemas, n.PriorityLevels)
	}
}

// Stopping says the run is ending: a request cut from now on (when the
// proxy's server closes its connections) was stopped by the run, not left by
// its client, no stream's client is said to have left, and a request that
// comes from now on is forwarded unobserved. Call it before closing the
// server; Close follows. It sets closing under mu, which observe and the
// timers that tell a stream (clientLeft, forget) hold while they check it
// and add their job: each job is added before Close waits for them, or not
// at all.
func (p *Proxy) Stopping() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closing.Store(true)
}

// observe adds the job of a request about to be observed; false once the
// run is ending (see Stopping). A request that came before Close is
// observed to its end; one that came after would add a job while Close
// waits for them (a WaitGroup reused), or feed a stream Close has closed.
func (p *Proxy) observe() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing.Load() {
		return false
	}
	p.jobs.Add(1)
	return true
}

// Close ends every stream (after the requests in progress are processed,
// and a last lookup of the names its 429s gave by UID alone).
func (p *Proxy) Close() {
	p.Stopping()
	if p.inj != nil {
		p.inj.close()
	}
	p.jobs.Wait()
	p.names.Finish(context.Background())
	for _, s := range p.Streams() {
		s.Close()
	}
}

// observingTransport forwards every request and tees the LISTs and WATCHes.
type observingTransport struct {
	p  *Proxy
	rt http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *observingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c, ok := classify(req)
	if !ok || !t.p.observe() {
		return t.rt.RoundTrip(req)
	}
	sl, prev, mine := t.p.assign(c, req)
	j := &job{p: t.p, slot: sl, call: c, prev: prev, mine: mine, ctx: req.Context(), ready: make(chan struct{}), started: t.p.opts.Now()}
	go j.run()
	var resp *http.Response
	var err error
	if inj := t.p.inj; inj != nil && inj.matches(c, req.UserAgent()) {
		j.faults = &faultLog{}
		resp, err = inj.roundTrip(t.rt, req, c, sl, j.faults)
	} else {
		resp, err = t.rt.RoundTrip(req)
	}
	if err != nil {
		j.err, j.canceled = err, req.Context().Err() != nil
		t.p.release(sl)
		close(j.ready)
		return nil, err
	}
	j.code, j.header, j.answered = resp.StatusCode, resp.Header.Clone(), time.Now()
	j.q = newQueue()
	resp.Body = &teeBody{ctx: req.Context(), body: resp.Body, q: j.q, remaining: resp.ContentLength, ended: func() { t.p.release(sl) }}
	close(j.ready)
	return resp, nil
}

// assign finds the stream a request belongs to: the client's stream of the
// same resource, namespace and selectors, asking for the same (encoding,
// metadata only, Tables; another encoding only when none asks for this one
// and that stream is free), that has no request in progress
// (a reflector makes one at a time), or a new one. A stream whose client
// has gone (every connection it used has closed) takes no request that
// starts afresh (observed.StartsAfresh), unless its last answer was a 410:
// that is another process's first request, not a relist; it takes a request that resumes it (a watch from
// its cursor, a relist from its resourceVersion: the same client back on a
// new connection). It returns the channel the request waits on (the
// stream's previous request) and the one it closes once processed.
func (p *Proxy) assign(c call, req *http.Request) (sl *slot, prev, mine chan struct{}) {
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		host = req.RemoteAddr
	}
	accept := req.Header.Get("Accept")
	asked := observed.ParseAccept(accept)
	key := streamKey{userAgent: req.UserAgent(), host: host, gvr: c.gvr, namespace: c.namespace, label: c.label, field: c.field, asked: asked}
	cn := connOf(req)
	fresh := cn != nil && observed.StartsAfresh(c.verb, c.opts)
	// A page after the first sends back the continue token of the page
	// before it: the stream whose last page gave that token is its client's,
	// whatever connection it comes on (kubectl get runs in parallel page
	// the same list, each on connections of its own).
	continuing := c.verb == reflector.VerbList && c.opts.Continue != ""
	// A request that resumes from a resourceVersion is the client's whose
	// stream is at it: two informers of one program share its connections,
	// and either may send its next request on the other's.
	rv := c.opts.ResourceVersion
	resuming := !continuing && rv != "" && rv != "0"
	// decided: a request whose stream the streams' processed state decides.
	decided := fresh || continuing || resuming
	// freeOf finds the client's own stream first: one that used this
	// connection, then one whose client is still connected, then one whose
	// client has gone. Patient, it leaves a stream whose request in progress
	// is not processed yet to a request that starts afresh on another
	// connection (whether that stream's client is synced is not known yet).
	freeOf := func(k streamKey, patient bool) *slot {
		if continuing {
			for _, s := range p.slots[k] {
				if !s.busy && s.cont == c.opts.Continue {
					return s
				}
			}
		}
		if resuming {
			// The one stream at that resourceVersion (the one that used this
			// connection first); several are no sign of whose it is.
			var at *slot
			n := 0
			for _, s := range p.slots[k] {
				if s.busy || s.cursor != rv {
					continue
				}
				if cn != nil && s.conns[cn] {
					return s
				}
				at, n = s, n+1
			}
			if n == 1 {
				return at
			}
		}
		var live, gone *slot
		for _, s := range p.slots[k] {
			switch {
			case s.busy:
			case cn != nil && s.conns[cn]:
				return s
			case fresh && s.cont != "":
				// In the middle of its client's list (its next request is
				// that list's next page): this is another process's first.
			case fresh && s.synced:
				// Its client resumes from its resourceVersion, on whatever
				// connection: a request on another connection that starts
				// afresh is another process's first, even when the proxy
				// has not seen that client's connections close yet.
			case patient && decided && s.pending > 0:
			case !s.gone():
				if live == nil {
					live = s
				}
			case !fresh || s.takesAfresh():
				gone = s // the latest
			}
		}
		if live != nil {
			return live
		}
		return gone
	}
	// undecided: a stream of this client is forwarding a request (busy),
	// or, for a request that starts afresh, has one not processed yet.
	undecided := func() (busy, pending bool) {
		for _, s := range p.slots[key] {
			busy = busy || s.busy
			pending = pending || (decided && s.pending > 0)
		}
		return busy, pending
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	sl = freeOf(key, true)
	if sl == nil && len(p.slots[key]) == 0 {
		// No stream asks for this encoding: a free stream of the client
		// that asks for another, and otherwise the same, takes the request
		// (a client that changed its mind between two requests, as a
		// reflector does not; two reflectors that ask in two encodings at
		// once are kept apart, since the other's is busy).
		for _, w := range []reflector.Wire{reflector.WireJSON, reflector.WireProtobuf} {
			if other := key; w != key.asked.Wire {
				other.asked.Wire = w
				if sl = freeOf(other, true); sl != nil {
					break
				}
			}
		}
	}
	// No stream is free while one of this client's is undecided. A
	// reflector makes one request at a time, but the one it just left may
	// not be seen ending yet: a watch it closed on a 410 ERROR event is
	// released when the server's end of the body is read, which races with
	// the client's next request (its relist), and is processed later still.
	// Wait a moment for a release (sameClientGrace), or for a request
	// forwarded whole to be processed (processedGrace), before taking this
	// request for another reflector's.
	start := time.Now()
	for sl == nil {
		released := p.released
		limit := sameClientGrace
		busy, pending := undecided()
		if !busy && !pending {
			break // decided: nothing of the client's is in progress
		}
		if !busy {
			limit = processedGrace
		}
		p.mu.Unlock()
		waiting := true
		grace := time.NewTimer(limit - time.Since(start))
		select {
		case <-released:
		case <-grace.C:
			waiting = false
		case <-req.Context().Done():
			waiting = false
		}
		grace.Stop()
		p.mu.Lock()
		sl = freeOf(key, waiting)
		if !waiting {
			break
		}
	}
	if sl == nil {
		closed := make(chan struct{})
		close(closed)
		asked.Accept = accept
		sl = &slot{key: key, client: observed.Client{UserAgent: req.UserAgent(), RemoteAddr: req.RemoteAddr}, asked: asked, tail: closed, conns: map[*conn]bool{}}
		p.slots[key] = append(p.slots[key], sl)
	}
	sl.busy = true
	sl.cont = "" // its client's next request is this one
	sl.pending++
	sl.leftGen++ // cancels a wait for its client to have left
	sl.left = false
	if cn != nil {
		sl.connected = true
		if !cn.closed && !sl.conns[cn] {
			sl.conns[cn] = true
			cn.slots[sl] = true
		}
	}
	prev, mine = sl.tail, make(chan struct{})
	sl.tail = mine
	return sl, prev, mine
}

// processed marks one of the slot's requests as processed (its stream has
// all of it, and is now in state st at cursor; Relisting: it was answered
// 410, or a too large resourceVersion, so the client's next request is a
// relist): with every connection it used closed, its client may have left.
func (p *Proxy) processed(sl *slot, st reflector.State, cursor string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sl.pending--
	sl.cursor = cursor
	sl.relisting = st == reflector.StateRelisting
	switch st {
	case reflector.StateListed, reflector.StateWatching:
		sl.synced = true
	case reflector.StateRelisting:
		sl.synced = false
	}
	p.checkLeft(sl, p.opts.Now())
	p.changed()
}

// release marks the slot's request as forwarded: the client may make its next.
func (p *Proxy) release(sl *slot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sl.busy = false
	p.changed()
}

// changed wakes the requests waiting in assign. Caller holds p.mu.
func (p *Proxy) changed() {
	close(p.released)
	p.released = make(chan struct{})
}

// stream returns the slot's stream, creating it (and announcing it) at its
// first request. It runs on the slot's processing goroutine. Streams are
// numbered in the order they are announced, so a stream's number is also
// its place among the resource lines of a trace OnStream records, and in
// Streams.
func (p *Proxy) stream(sl *slot, c call) *observed.Stream {
	if sl.stream != nil {
		return sl.stream
	}
	target := reflector.Target{Resource: p.resource(c), Namespace: c.namespace, LabelSelector: c.label, FieldSelector: c.field}
	p.creating.Lock()
	defer p.creating.Unlock()
	p.nextID++
	s := observed.NewStream(p.nextID, sl.client, target, p.opts.Now)
	s.Asked = sl.asked
	s.Options = observed.OptionsOf(c.verb, c.opts)
	if p.opts.OnStream != nil {
		p.opts.OnStream(s)
	}
	p.mu.Lock()
	p.streams = append(p.streams, s)
	p.mu.Unlock()
	sl.stream = s
	return s
}

// resource names the resource of c with its kind and scope, from discovery
// when it knows the resource (the path alone says little of a cluster-wide list).
func (p *Proxy) resource(c call) reflector.Resource {
	res := reflector.Resource{GVR: c.gvr, Namespaced: c.inNS}
	gvk, err := p.mapper.KindFor(c.gvr)
	if err != nil {
		p.mapper.Reset() // a CRD created since the last discovery
		gvk, err = p.mapper.KindFor(c.gvr)
	}
	if err != nil {
		return res
	}
	res.Kind = gvk.Kind
	if m, err := p.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		res.Namespaced = m.Scope.Name() == meta.RESTScopeNameNamespace
	}
	return res
}

// job observes one request: it waits for the stream's previous request,
// then for the response, and feeds what the client received to the stream.
type job struct {
	p    *Proxy
	slot *slot
	call call
	prev chan struct{}
	mine chan struct{}
	ctx  context.Context
	// started is when the request came
	started time.Time

	ready    chan struct{} // closed once the fields below are set
	err      error         // the round trip failed
	canceled bool          // its context was done then (the client left, the run ended), not later by the answer's handler
	code     int
	header   http.Header
	answered time.Time // when the response headers came (wall clock: Retry-After's dates)
	q        *queue
	// faults is what the injected faults did to the request (nil when none may).
	faults *faultLog
	s      *observed.Stream
	// feeding orders a watch's events and its faults' notes; fed counts
	// the events fed, so that a note placed after them is noted at once
	// (faultEvery), not only before the next frame the fault lets pass.
	feeding sync.Mutex
	fed     int64
}

// faultEvery is how often a watch with faults notes what they did while
// no frame passes: a delete dropped on a quiet resource says so then.
const faultEvery = 250 * time.Millisecond

// flushFaults notes in the stream what the faults did up to the frame
// about to be fed (n frames fed before it; n < 0: all of it).
func (j *job) flushFaults(n int64) {
	if j.faults == nil {
		return
	}
	for _, f := range j.faults.upTo(n) {
		j.s.Fault(f)
	}
}

// endRequest ends r, after what the faults did to it.
func (j *job) endRequest(r *observed.Request, end *reflector.RequestEnd) {
	j.feeding.Lock() // after a note noteFaults is making
	defer j.feeding.Unlock()
	j.flushFaults(-1)
	r.End(end)
}

func (j *job) run() {
	defer j.p.jobs.Done()
	defer close(j.mine)
	<-j.prev
	j.s = j.p.stream(j.slot, j.call)
	// Once processed: a stream left Relisting (a 410) awaits its client's relist.
	defer func() { j.p.processed(j.slot, j.s.State(), j.s.Cursor()) }()
	<-j.ready
	var ct string
	if j.err == nil && j.code >= 200 && j.code <= 299 {
		ct = j.header.Get("Content-Type")
	}
	r := j.s.BeginAnswered(j.call.verb, j.call.opts, j.started, ct)
	j.flushFaults(0)
	if j.err != nil {
		j.endRequest(r, j.endOf(j.err))
		return
	}
	defer j.q.Close()
	var body io.Reader = j.q
	if strings.EqualFold(j.header.Get("Content-Encoding"), "gzip") {
		gz, err := gzip.NewReader(j.q)
		if err != nil {
			j.endRequest(r, j.end(err))
			return
		}
		body = gz
	}
	if j.code < 200 || j.code > 299 {
		b, _ := io.ReadAll(io.LimitReader(body, maxErrorBody))
		st := wire.ResponseStatus(j.code, b, j.call.verb, j.call.gvr.GroupResource())
		end := &reflector.RequestEnd{Reason: reflector.EndError, Status: st, Throttle: wire.ThrottleOf(j.code, j.header, j.answered)}
		// On the stream's own goroutine, never the forwarding path; the
		// client's request is over by now (its context done), so the
		// lookup's wait is bounded by the names' own.
		j.p.names.Fill(context.Background(), end.Throttle)
		j.endRequest(r, end)
		return
	}
	// kubectl get asks for Tables, which only JSON carries.
	table, keep := j.slot.asked.Table && !wire.IsProtobuf(ct), j.p.opts.KeepRaw
	if j.call.verb == reflector.VerbList {
		var page *reflector.Page
		var err error
		if table {
			counted := &wire.CountingReader{R: body}
			if page, err = decodeTableList(counted, keep); err == nil {
				page.Bytes = counted.N
			}
		} else {
			page, err = wire.DecodeListResponse(body, ct, keep)
		}
		if err == nil {
			r.Page(page)
			j.p.paged(j.slot, page.Continue) // the request that sends it back is the same client's
		}
		j.endRequest(r, j.end(err))
		return
	}
	if table {
		j.events(r, newTableWatch(body, keep).next)
		return
	}
	st, err := wire.DecodeWatchResponse(io.NopCloser(body), ct, wire.WatchOptions{KeepRaw: keep, Clock: wire.ServerClockOf(j.header, j.started), Now: j.p.opts.Now,
		InitialEvents: j.call.opts.SendInitialEvents, Selected: j.call.label != "" || j.call.field != ""})
	if err != nil {
		j.endRequest(r, j.end(err))
		return
	}
	defer st.Close()
	j.events(r, st.Next)
}

// events feeds a watch's events to the stream until next fails (a
// *reflector.RequestEnd of EndClosed: the body's normal end) or the server
// sends an ERROR event.
func (j *job) events(r *observed.Request, next func() (reflector.WatchEvent, error)) {
	if j.faults != nil {
		stop := make(chan struct{})
		defer close(stop)
		go j.noteFaults(stop)
	}
	for {
		ev, err := next()
		if err != nil {
			if end := (*reflector.RequestEnd)(nil); errors.As(err, &end) && end.Reason == reflector.EndClosed {
				err = nil
			}
			j.endRequest(r, j.end(err))
			return
		}
		j.feeding.Lock()
		j.flushFaults(j.fed)
		r.Event(ev)
		j.fed++
		j.feeding.Unlock()
		if ev.Type == reflector.EventError {
			j.endRequest(r, &reflector.RequestEnd{Reason: reflector.EndError, Status: ev.Status})
			return
		}
	}
}

// noteFaults notes, every faultEvery until stop, what the faults did after
// the events already fed: between two of them, in their order.
func (j *job) noteFaults(stop <-chan struct{}) {
	t := time.NewTicker(faultEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			j.feeding.Lock()
			j.flushFaults(j.fed)
			j.feeding.Unlock()
		}
	}
}

// paged keeps the continue token of the slot's last page, unless a later
// request of it has come already.
func (p *Proxy) paged(sl *slot, cont string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if sl.pending == 1 {
		sl.cont = cont
	}
}

// end is how the request ended: how the body the client received ended
// (complete, cut by the server, or left by the client), else decodeErr, the
// decoder's error.
func (j *job) end(decodeErr error) *reflector.RequestEnd {
	if j.q.result() == nil {
		// The decoder stopped first: wait for the body's end (how it ended is its result).
		_, _ = io.Copy(io.Discard, j.q)
	}
	switch res := j.q.result(); {
	case errors.Is(res, errClientGone) && j.p.closing.Load():
		return stoppedEnd()
	case errors.Is(res, errClientGone):
		return &reflector.RequestEnd{Reason: reflector.EndCanceled, Err: res}
	case res != nil && !errors.Is(res, io.EOF):
		return &reflector.RequestEnd{Reason: reflector.EndError, Err: res}
	case decodeErr != nil:
		return &reflector.RequestEnd{Reason: reflector.EndError, Err: decodeErr}
	}
	return &reflector.RequestEnd{Reason: reflector.EndClosed}
}

// endOf classifies a transport error; a request its client canceled is
// canceled, one cut because the run ended is stopped.
func (j *job) endOf(err error) *reflector.RequestEnd {
	switch {
	case j.canceled && j.p.closing.Load():
		return stoppedEnd()
	case j.canceled:
		return &reflector.RequestEnd{Reason: reflector.EndCanceled, Err: err}
	}
	return &reflector.RequestEnd{Reason: reflector.EndError, Err: err}
}

// stoppedEnd is the end of a request the run's end cut, as our reflector
// says it (README: "the request they end says stopped").
func stoppedEnd() *reflector.RequestEnd {
	return &reflector.RequestEnd{Reason: reflector.EndStopped, Err: reflector.ErrStopped}
}
