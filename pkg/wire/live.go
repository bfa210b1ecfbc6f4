package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/jsonscan"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// LiveSource is the [reflector.Source] for a real cluster. It uses client-go's
// transport (authentication, TLS, impersonation, exec plugins from the
// rest.Config) and decodes the answers itself, straight into the store's
// compact form: no typed objects or map[string]any trees are built. It asks
// for protobuf or JSON (see LiveOptions.Wire and ResolveWire) and decodes
// what the server answers by its Content-Type, so a JSON answer to a
// protobuf request is decoded as JSON; a 406 Not Acceptable to a protobuf
// request makes it ask for JSON from then on. With MetadataOnly the server is
// asked for PartialObjectMetadata, so only metadata crosses the wire.
type LiveSource struct {
	client   *http.Client
	base     *url.URL
	target   reflector.Target
	opts     LiveOptions
	wire     reflector.Wire
	dropRaw  bool
	fellBack atomic.Bool // the server refused protobuf: ask for JSON
	// answered counts the server's answers (LIST pages, watch streams,
	// errors) in protobuf and in JSON.
	answeredProtobuf, answeredJSON atomic.Int64
}

// Answered is how many answers (LIST pages, watch streams and error
// responses) the server sent in wire so far: what it spoke, whatever was
// asked.
func (s *LiveSource) Answered(wire reflector.Wire) int64 {
	if wire == reflector.WireProtobuf {
		return s.answeredProtobuf.Load()
	}
	return s.answeredJSON.Load()
}

// NewLiveSource builds a LiveSource for target on the cluster of cfg, with
// the wire chosen by [reflector.WireAuto]. keepBody keeps each object's JSON
// in the store (full-object mode).
func NewLiveSource(cfg *rest.Config, target reflector.Target, metadataOnly, keepBody bool) (*LiveSource, error) {
	return NewLiveSourceWith(cfg, target, LiveOptions{MetadataOnly: metadataOnly, KeepBody: keepBody})
}

// NewLiveSourceWith builds a LiveSource for target on the cluster of cfg with o;
// it fails when o's wire cannot serve o (see ResolveWire).
func NewLiveSourceWith(cfg *rest.Config, target reflector.Target, o LiveOptions) (*LiveSource, error) {
	wire, err := ResolveWire(target.Resource, o)
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	// Watches are long requests bounded by timeoutSeconds and the idle
	// timeout, and a big LIST may take minutes: a client-wide timeout would
	// cut them. Requests end when the reflector cancels them.
	cfg.Timeout = 0
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the HTTP client: %w", err)
	}
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("parsing the server URL: %w", err)
	}
	return &LiveSource{client: client, base: base, target: target, opts: o, wire: wire}, nil
}

// Wire is the encoding the source asks for: protobuf or JSON, as resolved
// from its options, and JSON once the server has refused protobuf.
func (s *LiveSource) Wire() reflector.Wire {
	if s.wire == reflector.WireProtobuf && !s.fellBack.Load() {
		return reflector.WireProtobuf
	}
	return reflector.WireJSON
}

// DropRaw makes the source leave [reflector.Item].Raw nil, except in
// full-object mode (keepBody), where it is the object's Body: nothing but a
// trace recorder reads Raw, and without one each object's JSON need not be copied (a LIST
// page would otherwise be held whole, as copies, until it is applied). Call
// it before the first request.
func (s *LiveSource) DropRaw() { s.dropRaw = true }

// collectionPath is /api/v1[/namespaces/NS]/RESOURCE or /apis/G/V[/namespaces/NS]/RESOURCE.
func (s *LiveSource) collectionPath() string {
	gvr := s.target.Resource.GVR
	p := path.Join("/apis", gvr.Group, gvr.Version)
	if gvr.Group == "" {
		p = path.Join("/api", gvr.Version)
	}
	if s.target.Resource.Namespaced && s.target.Namespace != "" {
		p = path.Join(p, "namespaces", s.target.Namespace)
	}
	return path.Join(s.base.Path, p, gvr.Resource)
}

func (s *LiveSource) url(watch bool, o reflector.RequestOptions) string {
	q := url.Values{}
	if watch {
		q.Set("watch", "true")
	}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("resourceVersion", o.ResourceVersion)
	set("resourceVersionMatch", o.ResourceVersionMatch)
	set("continue", o.Continue)
	set("labelSelector", s.target.LabelSelector)
	set("fieldSelector", s.target.FieldSelector)
	if o.Limit > 0 {
		q.Set("limit", strconv.FormatInt(o.Limit, 10))
	}
	if o.SendInitialEvents {
		q.Set("sendInitialEvents", "true")
	}
	if o.AllowWatchBookmarks {
		q.Set("allowWatchBookmarks", "true")
	}
	if o.TimeoutSeconds > 0 {
		q.Set("timeoutSeconds", strconv.FormatInt(o.TimeoutSeconds, 10))
	}
	u := *s.base
	u.Path = s.collectionPath()
	u.RawQuery = q.Encode()
	return u.String()
}

// accept is the Accept header for a request in wire: the same as client-go's
// typed (protobuf) or dynamic (JSON) and metadata clients send.
func (s *LiveSource) accept(watch bool, wire reflector.Wire) string {
	if !s.opts.MetadataOnly {
		if wire == reflector.WireProtobuf {
			return ContentTypeProtobuf + ", application/json"
		}
		return "application/json"
	}
	as := ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	if watch {
		as = ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	}
	if wire == reflector.WireProtobuf {
		return ContentTypeProtobuf + as + ",application/json" + as + ",application/json"
	}
	return "application/json" + as + ",application/json"
}

// do sends one request and returns its response and when it was sent:
// with the response's Date it tells the server's clock (ServerClockOf).
func (s *LiveSource) do(ctx context.Context, verb reflector.Verb, opts reflector.RequestOptions) (*http.Response, time.Time, error) {
	watch := verb == reflector.VerbWatch
	for {
		wire := s.Wire()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url(watch, opts), nil)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("building %s request: %w", verb, err)
		}
		req.Header.Set("Accept", s.accept(watch, wire))
		sent := time.Now()
		resp, err := s.client.Do(req)
		if err != nil {
			return nil, sent, reflector.EndOf(err)
		}
		if isProtobuf(resp.Header.Get("Content-Type")) {
			s.answeredProtobuf.Add(1)
		} else {
			s.answeredJSON.Add(1)
		}
		if resp.StatusCode == http.StatusNotAcceptable && wire == reflector.WireProtobuf {
			// The server (or a proxy) takes no protobuf for this resource: JSON from now on.
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			s.fellBack.Store(true)
			continue
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			end := &reflector.RequestEnd{Reason: reflector.EndError, Status: responseStatus(resp.StatusCode, body, string(verb), s.target.Resource.GVR.GroupResource()),
				Throttle: ThrottleOf(resp.StatusCode, resp.Header, time.Now())}
			s.opts.Names.Fill(ctx, end.Throttle)
			return nil, sent, end
		}
		return resp, sent, nil
	}
}

// responseStatus is the Status of an error response: the body when it is a
// Status (in JSON or protobuf), otherwise the one client-go would make for
// the HTTP code.
func responseStatus(code int, body []byte, verb string, gr schema.GroupResource) *metav1.Status {
	if bytes.HasPrefix(body, []byte(protoMagic)) {
		if st, err := decodeProtoStatus(body); err == nil {
			if st.Code == 0 {
				st.Code = int32(code)
			}
			return st
		}
	}
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
		if st.Code == 0 {
			st.Code = int32(code)
		}
		return &st
	}
	se := apierrors.NewGenericServerResponse(code, verb, gr, "", string(body), 0, false)
	return &se.ErrStatus
}

// List implements [reflector.Source]. The page is decoded while it is read.
func (s *LiveSource) List(ctx context.Context, opts reflector.RequestOptions) (*reflector.Page, error) {
	resp, _, err := s.do(ctx, reflector.VerbList, opts)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var page *reflector.Page
	body := &CountingReader{R: resp.Body}
	if isProtobuf(resp.Header.Get("Content-Type")) {
		page, err = decodeProtoList(body, !s.dropRaw)
	} else {
		page, err = decodeListKeeping(body, s.opts.KeepBody, !s.dropRaw)
	}
	if err != nil {
		var re *jsonscan.ReadError
		if errors.As(err, &re) {
			return nil, reflector.EndOf(fmt.Errorf("reading list response: %w", re.Err))
		}
		return nil, &reflector.RequestEnd{Reason: reflector.EndError, Err: err}
	}
	// The body as decoded: Go's transport takes off a gzip Content-Encoding
	// it asked for, so this is the uncompressed size, compressed or not on
	// the wire.
	page.Bytes = body.N
	return page, nil
}

// CountingReader counts the bytes read through it.
type CountingReader struct {
	R io.Reader
	N int64
}

// Read implements io.Reader.
func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}

// Watch implements [reflector.Source].
func (s *LiveSource) Watch(ctx context.Context, opts reflector.RequestOptions) (reflector.Stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	resp, sent, err := s.do(ctx, reflector.VerbWatch, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	st := &liveStream{ctx: ctx, cancel: cancel, body: resp.Body, keepBody: s.opts.KeepBody, keepRaw: !s.dropRaw,
		clock: ServerClockOf(resp.Header, sent), now: time.Now}
	if isProtobuf(resp.Header.Get("Content-Type")) {
		st.proto = &protoStream{}
		st.proto.body.reset(resp.Body)
		return st, nil
	}
	st.dec.sc.ResetReader(resp.Body, MaxObjectBytes)
	return st, nil
}

// liveStream reads a watch stream. In JSON: one {"type":…,"object":…} value
// after another, each read in one pass as it arrives, its object decoded in
// place (see decodeListFrom). In protobuf: one length-prefixed frame after
// another, each read whole (up to MaxObjectBytes) and decoded in place.
type liveStream struct {
	ctx      context.Context
	cancel   context.CancelFunc
	body     io.ReadCloser
	dec      objectDecoder // its scanner reads the body; its scratch space serves every event
	proto    *protoStream  // set for a protobuf stream
	keepBody bool
	keepRaw  bool
	once     sync.Once
	// clock is the server's clock by the response's Date, now the arrival
	// clock: together they give each event's Delivery.Lag.
	clock ServerClock
	now   func() time.Time
}

// protoStream is a protobuf watch body and its decoder.
type protoStream struct {
	body protoBody
	dec  protoDecoder
}

func (s *liveStream) Next() (reflector.WatchEvent, error) {
	var ev reflector.WatchEvent
	var done bool
	var err error
	if s.proto != nil {
		ev, done, err = s.proto.dec.nextEvent(&s.proto.body, s.keepRaw)
	} else {
		ev, done, err = s.dec.nextEvent(s.keepBody, s.keepRaw)
	}
	if done || err != nil {
		return s.end(err)
	}
	if ev.Delivery.Known() && s.now != nil {
		ev.Delivery.Lag = s.clock.Lag(s.now(), ev.Delivery.Written)
	}
	if ev.InitialEventsEnd {
		ev.Bytes = s.consumed()
	}
	return ev, nil
}

// consumed is how much of the body the events read so far took, as
// decoded (after any Content-Encoding), up to the end of the last event.
func (s *liveStream) consumed() int64 {
	if s.proto != nil {
		return s.proto.body.off
	}
	return s.dec.sc.InputOffset()
}

// nextEvent reads the next event of a watch body at d's scanner; done
// reports that the body ended between events.
func (d *objectDecoder) nextEvent(keepBody, keepRaw bool) (ev reflector.WatchEvent, done bool, err error) {
	sc := &d.sc
	sc.Commit() // the previous event is done with
	if sc.AtEOF() {
		return ev, true, nil
	}
	if err := sc.Err(); err != nil {
		return ev, false, err
	}
	sc.Commit() // at the event's first byte: the size bound counts from here
	ev, err = d.wireEvent(keepBody, keepRaw)
	return ev, false, err
}

// end closes the stream and says how it ended; err is nil when the body
// ended between events.
func (s *liveStream) end(err error) (reflector.WatchEvent, error) {
	// Read our context before Close cancels it: only our own cancellation is "canceled".
	ctxErr := s.ctx.Err()
	s.Close()
	var de *eventDecodeError
	switch {
	case ctxErr != nil:
		return reflector.WatchEvent{}, reflector.EndOf(ctxErr)
	case err == nil:
		return reflector.WatchEvent{}, &reflector.RequestEnd{Reason: reflector.EndClosed}
	case errors.As(err, &de):
		return reflector.WatchEvent{}, &reflector.RequestEnd{Reason: reflector.EndError, Err: de.err}
	case errors.Is(err, jsonscan.ErrTooLarge):
		return reflector.WatchEvent{}, &reflector.RequestEnd{Reason: reflector.EndError, Err: fmt.Errorf("watch event larger than the %d MiB limit: %w", MaxObjectBytes>>20, err)}
	case errors.Is(err, errTooLarge):
		return reflector.WatchEvent{}, &reflector.RequestEnd{Reason: reflector.EndError, Err: err}
	}
	return reflector.WatchEvent{}, &reflector.RequestEnd{Reason: reflector.EndError, Err: fmt.Errorf("reading watch stream: %w", bodyError(err))}
}

// eventDecodeError is an event that was read whole but did not decode.
type eventDecodeError struct{ err error }

func (e *eventDecodeError) Error() string { return e.err.Error() }
func (e *eventDecodeError) Unwrap() error { return e.err }

// wireEvent reads one watch event at the scanner. When its type comes before
// its object, as the API server writes it, the object is decoded in place
// while it is read; otherwise (and for ERROR events) its JSON is decoded once
// the type is known. Reading errors stay in the scanner; an object that does
// not decode is an *eventDecodeError. Without keepBody and keepRaw, the
// object's JSON is not copied (Item.Raw is nil).
func (d *objectDecoder) wireEvent(keepBody, keepRaw bool) (reflector.WatchEvent, error) {
	sc := &d.sc
	var typ, decodedAs string
	var raw []byte
	var obj *store.Object
	var end bool
	if sc.Object() {
		for key, ok := sc.Key(); ok; key, ok = sc.Key() {
			switch string(key) {
			case "type":
				if t, ok := sc.String(); ok {
					typ = eventTypeName(t)
				}
			case "object":
				sc.Peek()
				start := sc.InputOffset()
				decodedAs = ""
				switch reflector.EventType(typ) {
				case reflector.EventAdded, reflector.EventModified, reflector.EventDeleted, reflector.EventBookmark:
					var err error
					if obj, end, err = d.object(); err != nil {
						if sc.Err() == nil || isSyntaxError(sc.Err()) {
							return reflector.WatchEvent{}, &eventDecodeError{fmt.Errorf("%s event: decoding object: %w", typ, err)}
						}
						return reflector.WatchEvent{}, err // reading failed
					}
					decodedAs = typ
				default:
					sc.Skip()
				}
				raw = sc.Since(start)
			default:
				sc.Skip()
			}
		}
	}
	if err := sc.Err(); err != nil {
		return reflector.WatchEvent{}, err
	}
	if decodedAs == "" || decodedAs != typ {
		// The type came after the object (or changed): decode it now, as DecodeWatchEvent does.
		var fresh objectDecoder
		ev, err := fresh.watchEvent(typ, bytes.Clone(raw), keepBody)
		if err != nil {
			return ev, &eventDecodeError{err}
		}
		if !keepBody && !keepRaw {
			ev.Item.Raw = nil
		}
		return ev, nil
	}
	// The object outlives the read buffer (the store and traces keep it).
	var object []byte
	if keepBody || keepRaw {
		object = bytes.Clone(raw)
	}
	if keepBody && reflector.EventType(typ) != reflector.EventBookmark {
		obj.Body = object
	}
	return reflector.WatchEvent{Type: reflector.EventType(typ), Item: reflector.Item{Object: obj, Raw: object}, InitialEventsEnd: reflector.EventType(typ) == reflector.EventBookmark && end,
		Delivery: d.delivery(reflector.EventType(typ), obj)}, nil
}

// isSyntaxError reports whether err is malformed JSON or a value of the wrong type.
func isSyntaxError(err error) bool {
	var se *jsonscan.SyntaxError
	return errors.As(err, &se)
}

// eventTypeName returns the event type as a string without allocating for the known ones.
func eventTypeName(t []byte) string {
	for _, known := range []reflector.EventType{reflector.EventAdded, reflector.EventModified, reflector.EventDeleted, reflector.EventBookmark, reflector.EventError} {
		if string(t) == string(known) {
			return string(known)
		}
	}
	return string(t)
}

func (s *liveStream) Close() {
	s.once.Do(func() {
		s.cancel()
		_ = s.body.Close()
	})
}
