package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/jsonscan"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire/request"
)

// Source is the [reflector.Source] for a real cluster. It uses client-go's
// transport (authentication, TLS, impersonation, exec plugins from the
// rest.Config) and decodes the answers with package wire, straight into the
// store's compact form: no typed objects or map[string]any trees are built.
// It asks for protobuf or JSON (see Options.Wire and ResolveWire) and decodes
// what the server answers by its Content-Type, so a JSON answer to a
// protobuf request is decoded as JSON; a 406 Not Acceptable to a protobuf
// request makes it ask for JSON from then on. With MetadataOnly the server is
// asked for PartialObjectMetadata, so only metadata crosses the wire.
type Source struct {
	client     *http.Client
	collection *url.URL
	target     reflector.Target
	opts       Options
	wire       reflector.Wire
	gzip       bool        // ask for gzip and inflate it here (see gunzip)
	fellBack   atomic.Bool // the server refused protobuf: ask for JSON
}

// NewSource builds a Source for target on the cluster of cfg with o; it
// fails when o's wire cannot serve o (see ResolveWire).
func NewSource(cfg *rest.Config, target reflector.Target, o Options) (*Source, error) {
	wire, err := ResolveWire(target.Resource, o)
	if err != nil {
		return nil, err
	}
	// Watches are long requests bounded by timeoutSeconds and the idle
	// timeout, and a big LIST may take minutes: a client-wide timeout would
	// cut them. Requests end when the reflector cancels them.
	client, base, err := HTTPClient(cfg, 0)
	if err != nil {
		return nil, err
	}
	return &Source{client: client, collection: CollectionURL(base, target), target: target, opts: o, wire: wire, gzip: !cfg.DisableCompression}, nil
}

// HTTPClient is client-go's HTTP client for cfg (its authentication, TLS,
// impersonation and exec plugins) with timeout as its client-wide timeout
// (0: none), and the URL of cfg's server.
func HTTPClient(cfg *rest.Config, timeout time.Duration) (*http.Client, *url.URL, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = timeout
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("building the HTTP client: %w", err)
	}
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing the server URL: %w", err)
	}
	return client, base, nil
}

// CollectionURL is the URL of t's collection on the server at base: its
// namespace's for a namespaced resource with a namespace, otherwise all of it.
func CollectionURL(base *url.URL, t reflector.Target) *url.URL {
	gvr, ns := t.Resource.GVR, ""
	if t.Resource.Namespaced {
		ns = t.Namespace
	}
	return request.CollectionURL(base, gvr.Group, gvr.Version, ns, gvr.Resource)
}

// Wire is the encoding the source asks for: protobuf or JSON, as resolved
// from its options, and JSON once the server has refused protobuf.
func (s *Source) Wire() reflector.Wire {
	if s.wire == reflector.WireProtobuf && !s.fellBack.Load() {
		return reflector.WireProtobuf
	}
	return reflector.WireJSON
}

// do sends one request and returns its response and when it was sent:
// with the response's Date it tells the server's clock (wire.ServerClockOf).
func (s *Source) do(ctx context.Context, verb reflector.Verb, opts reflector.RequestOptions) (*http.Response, time.Time, error) {
	for {
		asked := s.Wire()
		req, err := request.Request{Watch: verb == reflector.VerbWatch, Options: request.Options(opts),
			LabelSelector: s.target.LabelSelector, FieldSelector: s.target.FieldSelector,
			Protobuf: asked == reflector.WireProtobuf, MetadataOnly: s.opts.MetadataOnly}.Get(ctx, s.collection)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("building %s request: %w", verb, err)
		}
		if s.gzip {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		sent := time.Now()
		resp, err := s.client.Do(req)
		if err != nil {
			return nil, sent, reflector.EndOf(err)
		}
		if h := s.opts.Warnings; h != nil {
			ws, _ := utilnet.ParseWarningHeaders(resp.Header.Values("Warning"))
			for _, w := range ws {
				h.HandleWarningHeader(w.Code, w.Agent, w.Text)
			}
		}
		if s.gzip && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
			resp.Body = &gunzip{body: resp.Body}
		}
		if resp.StatusCode == http.StatusNotAcceptable && asked == reflector.WireProtobuf {
			// The server (or a proxy) takes no protobuf for this resource: JSON from now on.
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			s.fellBack.Store(true)
			continue
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			end := &reflector.RequestEnd{Reason: reflector.EndError, Status: wire.ResponseStatus(resp.StatusCode, body, verb, s.target.Resource.GVR.GroupResource()),
				Throttle: wire.ThrottleOf(resp.StatusCode, resp.Header, time.Now())}
			s.opts.Names.Fill(ctx, end.Throttle)
			return nil, sent, end
		}
		return resp, sent, nil
	}
}

// List implements [reflector.Source]. The page is decoded while it is read.
func (s *Source) List(ctx context.Context, opts reflector.RequestOptions) (*reflector.Page, error) {
	resp, _, err := s.do(ctx, reflector.VerbList, opts)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	// The page's Bytes is the body as decoded: a gzip Content-Encoding is
	// taken off (gunzip), so this is the uncompressed size, compressed or
	// not on the wire.
	page, err := wire.DecodeListBody(resp.Body, resp.Header.Get("Content-Type"), s.opts.KeepBody, !s.opts.DropRaw)
	if err != nil {
		var re *jsonscan.ReadError
		if errors.As(err, &re) {
			return nil, reflector.EndOf(fmt.Errorf("reading list response: %w", re.Err))
		}
		return nil, &reflector.RequestEnd{Reason: reflector.EndError, Err: err}
	}
	return page, nil
}

// Watch implements [reflector.Source].
func (s *Source) Watch(ctx context.Context, opts reflector.RequestOptions) (reflector.Stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	resp, sent, err := s.do(ctx, reflector.VerbWatch, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	return wire.DecodeWatchBody(ctx, cancel, resp.Body, resp.Header.Get("Content-Type"), wire.WatchOptions{
		KeepBody: s.opts.KeepBody, KeepRaw: !s.opts.DropRaw, Clock: wire.ServerClockOf(resp.Header, sent), Now: time.Now,
		InitialEvents: opts.SendInitialEvents, Selected: s.target.LabelSelector != "" || s.target.FieldSelector != ""}), nil
}

// gunzip is a response body with its gzip Content-Encoding taken off, as
// Go's transport does when it asks for gzip itself (which it does unless
// the request says what it accepts), but inflated by klauspost/compress,
// whose inflate is faster than the standard library's: on a streaming list
// of 50,000 ConfigMaps, where inflating is about a fifth of the plugin's CPU,
// the plugin's CPU went from 0.56 to 0.53 s (docs/benchmarks.md). Like the
// transport's, it reads the gzip header at the first Read, not before: a
// watch's body may stay empty until its first event.
type gunzip struct {
	body io.ReadCloser
	zr   *gzip.Reader
	err  error // the gzip header's, for every later Read
}

func (g *gunzip) Read(p []byte) (int, error) {
	if g.zr == nil {
		if g.err != nil {
			return 0, g.err
		}
		zr, err := gzip.NewReader(g.body)
		if err != nil {
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	return g.zr.Read(p)
}

// Close closes the body; a Read blocked on it returns.
func (g *gunzip) Close() error { return g.body.Close() }
