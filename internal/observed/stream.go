// Package observed rebuilds what a client's reflector did from the traffic it
// exchanged with the API server: its requests with their options as sent,
// the pages and events it received, the 410s it got, the lists and relists it
// made (and each relist's diff), its bookmarks, and the cache it holds,
// rebuilt in a store.Writer from what it received. Nothing here decides
// anything or sends a request: a Stream only follows.
//
// The observing proxy (internal/proxy) feeds a Stream from responses it
// forwards; the replay of an observed trace feeds one from the trace's
// lines. Either way the Stream records through a reflector.Ledger, the
// one a reflector records through, so its Notes, Stats and Counters mean
// what a reflector's mean, and the dashboard, the line output, the metrics
// and the trace recorder take it as they take a reflector.
package observed

import (
	"fmt"
	"mime"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/fault"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// maxRequests is how many finished requests Stats keeps, as a reflector does.
const maxRequests = 50

// Client is who opened a stream: the User-Agent it sent and the address of
// the connection its first request came on.
type Client struct {
	UserAgent  string
	RemoteAddr string
}

// String is "USER-AGENT at ADDRESS".
func (c Client) String() string {
	ua := c.UserAgent
	if ua == "" {
		ua = "(no User-Agent)"
	}
	if c.RemoteAddr == "" {
		return ua
	}
	return ua + " at " + c.RemoteAddr
}

// Asked is what a client asks for on a stream's requests, read from their
// Accept header: the encoding it prefers, and whether it asks for metadata
// only (as=PartialObjectMetadata or PartialObjectMetadataList, a metadata
// informer) or for Tables (as=Table, kubectl get). Two reflectors of one
// program that ask differently (a typed informer over protobuf and a
// metadata informer of the same resource) are two streams.
type Asked struct {
	// Accept is the header as the stream's first request sent it ("" if none).
	Accept       string
	Wire         reflector.Wire
	MetadataOnly bool
	Table        bool
}

// ParseAccept reads what an Accept header asks for. The encoding is that of
// its first media type that parses, whatever it is and whatever its q:
// protobuf (application/vnd.kubernetes.protobuf), else JSON (also for no
// header or */*, as the server answers). The accept itself is not kept
// (Asked.Accept is left ""): a metadata informer's LIST asks
// as=PartialObjectMetadataList and its WATCH as=PartialObjectMetadata, and
// both are one stream's.
func ParseAccept(accept string) Asked {
	a := Asked{Wire: reflector.WireJSON}
	first := true
	for _, r := range strings.Split(accept, ",") {
		typ, params, err := mime.ParseMediaType(strings.TrimSpace(r))
		if err != nil {
			continue
		}
		if first && typ == "application/vnd.kubernetes.protobuf" {
			a.Wire = reflector.WireProtobuf
		}
		first = false
		switch params["as"] {
		case "PartialObjectMetadata", "PartialObjectMetadataList":
			a.MetadataOnly = true
		case "Table":
			a.Table = true
		}
	}
	return a
}

// Recording receives everything a Stream observes, in order, for a trace.
// Calls for one Stream never overlap.
type Recording interface {
	// Request records a request's start; contentType is the response's
	// Content-Type when the request was answered with success ("" otherwise),
	// started when it came (zero: now).
	Request(id int64, verb reflector.Verb, opts reflector.RequestOptions, contentType string, started time.Time)
	Page(id int64, page *reflector.Page)
	Event(id int64, ev reflector.WatchEvent)
	End(id int64, end *reflector.RequestEnd)
}

// Stream is one client reflector's view of one resource (in one namespace,
// with one pair of selectors), rebuilt from its traffic: a reflector.Ledger
// fed with what the client sent and received, and the client's identity.
// What the ledger records is the client's; the decisions noted (a 410, a
// relist, a watch closed) are read from its traffic, never made. It is safe
// for concurrent use; the requests of one Stream must be fed one after
// another (BeginAnswered, then the request's Page or Events, then End), as a
// reflector makes them.
type Stream struct {
	// ID numbers the streams of a proxy from 1, in the order they are
	// announced (and recorded); a replay takes the recorded one.
	ID     int
	Client Client
	target reflector.Target
	// Asked is what the client asked for (see Asked), and Options how its
	// first request lists (Strategy list or stream, PageSize; empty when the
	// first request seen was a watch). Both are set before the stream is
	// announced, and never change.
	Asked   Asked
	Options Options
	// created is when the stream was made, its start until its first
	// request, sent earlier, moves it back; begun: that request came.
	created time.Time
	begun   bool

	now    func() time.Time
	st     *store.Store
	ledger *reflector.Ledger
	// listeners get each note first, then findings reads it (so a
	// finding's line follows the note that raised it).
	listeners []func(reflector.Note)
	findings  *findings.Engine

	// feedMu serializes what feeds the ledger (the requests, Close), so a
	// Close from another goroutine never lands inside a request's record.
	feedMu    sync.Mutex
	current   *Request
	announced bool // the initial-list decision was noted
	closed    bool
	// endedBy is the --fault gone that ended the open watch, if one did:
	// its close is then the fault's, not the server's.
	endedBy string
	// rec records the stream in a trace, if one is (Record).
	rec Recording
	// versions holds the objects' last JSON for --diff (nil without it):
	// set once, by Diff before the stream is fed or shown, so read without
	// a lock; what it holds changes under feedMu.
	versions *diff.Versions

	mu          sync.Mutex // guards contentType, read by listeners
	contentType string
}

// Diff diffs the stream's MODIFIED events (proxy --diff) against each
// object's previous version, holding up to maxObjects of them; the changes
// keep values when keepValues is set. Only JSON streams are diffed: an event
// of a protobuf stream says why it was not. Call it before the stream is fed
// or handed to another goroutine (session.Observe does, from the proxy's
// OnStream): Diffs then reads versions without feedMu.
func (s *Stream) Diff(maxObjects int, keepValues bool) {
	s.versions = diff.NewVersions(maxObjects, keepValues)
}

// Diffs says its MODIFIED events are diffed as they come (Diff, on a
// stream whose objects can be: notDiffed). It takes no feedMu, which a
// whole list's page holds: the dashboard asks from the screen's goroutine,
// and a listener (called under feedMu) may ask too.
func (s *Stream) Diffs() bool {
	return s.versions != nil && s.notDiffed() == ""
}

// diffEvent gives a MODIFIED event its changes and keeps the versions up
// to date (feedMu held).
func (s *Stream) diffEvent(ev *reflector.WatchEvent) {
	v, o := s.versions, ev.Item.Object
	if v == nil || o == nil {
		return
	}
	if why := s.notDiffed(); ev.Changes == nil && why != "" {
		if ev.Type == reflector.EventModified {
			ev.Changes = diff.Skip(why)
		}
		return
	}
	ev.Changes = v.Event(string(ev.Type), o.Ref().String(), o.UID, ev.Item.Raw, ev.Changes)
}

// notDiffed is why the stream's events are not diffed, "" when they are:
// what the proxy decodes of a protobuf object is not the object, and a
// metadata-only object or a table row (kubectl get) has no spec or data to
// compare: every update would look like a change of managedFields alone.
func (s *Stream) notDiffed() string {
	switch {
	case s.Wire() == reflector.WireProtobuf:
		return diff.SkipProtobuf
	case s.Asked.Table:
		return diff.SkipTable
	case s.Asked.MetadataOnly:
		return diff.SkipMetadata
	}
	return ""
}

// Fault is a fault the observing proxy injected into the stream's traffic
// (kubectl watchcache proxy --fault): the spec as given, what it did, and
// how many times it acted (0 for what only prepares an act).
type Fault struct {
	Spec  string
	What  string
	Count int
}

// Fault records a fault injected into the stream's traffic, where it
// happened among the stream's requests and events: a note (a decision of
// reason fault that keeps the state), counted in the ledger's Stats.Faults
// for the summary and the dashboard. Nothing is recorded on a closed
// stream.
func (s *Stream) Fault(f Fault) {
	s.feedMu.Lock()
	defer s.feedMu.Unlock()
	if s.closed {
		return
	}
	s.ledger.Fault(reflector.Decision{Fault: f.Spec, Cause: f.What, Count: f.Count})
	if spec, err := fault.Parse(f.Spec); err == nil && spec.Name == fault.Gone && f.Count == 0 {
		// gone's firing ended the open watch as a server ends one (its
		// count is of the 410s it answers): the watch's close is its doing.
		s.endedBy = f.Spec
	}
}

// Faults are the faults injected into the stream so far, in the order they first acted.
func (s *Stream) Faults() []summary.FaultSummary {
	var out []summary.FaultSummary
	for _, f := range s.ledger.Faults() {
		out = append(out, summary.FaultSummary{Fault: f.Fault, Stream: s.ID, At: f.First, Count: f.Count})
	}
	return out
}

// Options are how a client lists, as its stream's first request shows.
type Options struct {
	Strategy reflector.Strategy // list or stream ("" unknown)
	PageSize int64
}

// OptionsOf are the options a stream's first request shows: a LIST
// without a continue token lists (with its limit as the page size), a watch
// with sendInitialEvents streams; anything else shows nothing.
func OptionsOf(verb reflector.Verb, opts reflector.RequestOptions) Options {
	switch {
	case verb == reflector.VerbList && opts.Continue == "":
		return Options{Strategy: reflector.StrategyList, PageSize: opts.Limit}
	case verb == reflector.VerbWatch && opts.SendInitialEvents:
		return Options{Strategy: reflector.StrategyStream}
	}
	return Options{}
}

// NewStream starts following one client reflector. now is the clock of its
// notes and stats (time.Now live; a replay's virtual clock).
func NewStream(id int, client Client, target reflector.Target, now func() time.Time) *Stream {
	if now == nil {
		now = time.Now
	}
	st, w := store.New()
	s := &Stream{ID: id, Client: client, target: target, now: now, st: st, ledger: reflector.NewLedger(w, now, maxRequests)}
	s.findings = findings.New(findings.Options{Resource: target.Resource.String(), Client: client.String()}, s.ledger)
	s.ledger.OnNote(s.note)
	s.created = now()
	s.ledger.Start(s.created)
	return s
}

// Target is what the client's reflector watches.
func (s *Stream) Target() reflector.Target { return s.target }

// Name names the stream on every line and row: its resource, namespace and
// number, "configmaps.v1@demo#3".
func (s *Stream) Name() string {
	n := s.target.Resource.String()
	if s.target.Namespace != "" {
		n += "@" + s.target.Namespace
	}
	return fmt.Sprintf("%s#%d", n, s.ID)
}

// Summary is the stream's summary at now: the reflector's, and whose
// reflector it is and what it asked for (`stream`).
func (s *Stream) Summary(now time.Time) summary.Summary {
	stats := s.Stats()
	sum := summary.New(s.target.Resource, stats, s.Store(), s.findings.List(), now)
	sum.Stream = &summary.StreamSummary{ID: s.ID, Namespace: s.target.Namespace, LabelSelector: s.target.LabelSelector, FieldSelector: s.target.FieldSelector,
		UserAgent: s.Client.UserAgent, RemoteAddr: s.Client.RemoteAddr, Accept: s.Asked.Accept, ContentType: s.ContentType(), Wire: s.Asked.Wire,
		MetadataOnly: s.Asked.MetadataOnly, Table: s.Asked.Table, Strategy: s.Options.Strategy, PageSize: s.Options.PageSize,
		ClientLeft: summary.ClientLeftOf(stats, now)}
	sum.Faults = s.Faults()
	sum.Churn = summary.ChurnOf(s.ledger.Churn(summary.ChurnTop))
	return sum
}

func (s *Stream) note(n reflector.Note) {
	for _, f := range s.listeners {
		f(n)
	}
	s.findings.Observe(n)
}

// OnNote adds a listener of the stream's notes; call it before the stream is
// fed. Listeners are called in order, right after each change, on the
// goroutine feeding the stream with feedMu held (not the ledger's lock):
// they may read the stream (its Stats, Store, Wire, Diffs), but must not
// feed it (BeginAnswered, Fault, ClientLeft, Forget, Close: a deadlock),
// nor block.
func (s *Stream) OnNote(f func(reflector.Note)) { s.listeners = append(s.listeners, f) }

// Findings is the stream's findings engine: it reads every note after the
// listeners (Configure it before the stream is fed).
func (s *Stream) Findings() *findings.Engine { return s.findings }

// Churn is what the stream's diffed MODIFIED events changed (proxy --diff,
// or a trace that recorded the changes), with the top paths and objects.
func (s *Stream) Churn(top int) diff.Summary { return s.ledger.Churn(top) }

// Record sends everything observed from now on to rec; call it before the
// stream is fed.
func (s *Stream) Record(rec Recording) {
	s.feedMu.Lock()
	defer s.feedMu.Unlock()
	s.rec = rec
}

// Store is the cache the client holds, as rebuilt from what it received.
func (s *Stream) Store() *store.Store { return s.st }

// Stats is a snapshot in the reflector's terms.
func (s *Stream) Stats() reflector.Stats { return s.ledger.Stats() }

// State is the state the client's reflector is in, as its traffic shows it.
func (s *Stream) State() reflector.State { return s.ledger.State() }

// Cursor is the last resourceVersion the client's reflector was seen to
// get: the one it resumes from.
func (s *Stream) Cursor() string { return s.ledger.Cursor() }

// Counters are the stream's running totals.
func (s *Stream) Counters() reflector.Counters { return s.ledger.Counters() }

// Wire is the encoding of the last successful response the client
// received, as its ContentType says ("" before one).
func (s *Stream) Wire() reflector.Wire {
	switch ct := s.ContentType(); {
	case ct == "":
		return ""
	case wire.IsProtobuf(ct):
		return reflector.WireProtobuf
	}
	return reflector.WireJSON
}

// ContentType is the Content-Type of the last successful response the
// client received ("" before one).
func (s *Stream) ContentType() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.contentType
}

// setContentType records the Content-Type of a successful response.
func (s *Stream) setContentType(ct string) {
	if ct == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.contentType = ct
}

// Close ends the stream: its store gets no more changes.
func (s *Stream) Close() {
	s.feedMu.Lock()
	defer s.feedMu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if s.current != nil {
		// The run ended with the request open: the run stopped it.
		s.finish(s.current, &reflector.RequestEnd{Reason: reflector.EndStopped, Err: reflector.ErrStopped})
	}
	s.ledger.Decide(reflector.Decision{State: reflector.StateStopped, Reason: reflector.ReasonStopped})
	s.ledger.Close()
}

// ClientLeft records that the stream's client left at since: every
// connection its requests came on had closed then, with no request open.
// The stream keeps the state it was in (Stats.ClientLeft and
// ClientLeftState say it left, and when); the client's next request, if it
// comes back, ends that. Nothing is recorded on a closed stream, or while a
// request is open.
func (s *Stream) ClientLeft(since time.Time) {
	s.feedMu.Lock()
	defer s.feedMu.Unlock()
	if s.closed || s.current != nil {
		return
	}
	s.ledger.ClientLeft(since)
}

// Forget drops what the stream's client held once it left and stayed away
// (see reflector.Ledger.ClientGone), and the objects' JSON kept for --diff:
// the proxy no longer gives the stream requests. Nothing is forgotten on a
// closed stream, while a request is open, or before the client left.
func (s *Stream) Forget() {
	s.feedMu.Lock()
	defer s.feedMu.Unlock()
	if s.closed || s.current != nil {
		return
	}
	if s.ledger.ClientGone() && s.versions != nil {
		s.versions.Reset()
	}
}

// StartsAfresh says whether a request is one a client makes only when it
// starts with nothing: a LIST (without a continue token) or a WATCH from
// resourceVersion "" or "0". A client-go reflector starts so (a LIST from
// "0", or a streaming list from ""), as kubectl get does (a LIST from "");
// once it has listed, it resumes from the resourceVersion it holds (a watch
// from its cursor, a relist from its last list's), and lists from "" again
// only after that resourceVersion was refused (410), on the connection the
// refusal came on.
func StartsAfresh(verb reflector.Verb, opts reflector.RequestOptions) bool {
	if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		return false
	}
	return verb == reflector.VerbWatch || (verb == reflector.VerbList && opts.Continue == "")
}

// Request is one observed LIST or WATCH of a Stream.
type Request struct {
	s    *Stream
	info *reflector.RequestInfo
	// page is the LIST response received, applied once the request's end is
	// recorded (as a reflector applies a page after its request ended).
	page *reflector.Page
	// streamingList: a watch with sendInitialEvents whose end bookmark has not come
	streamingList bool
}

// BeginAnswered records the start of a request with its options as sent,
// and returns it: a request the client sent at started (zero: now; it is
// fed to the stream once its answer came), answered with success with a
// body of contentType ("" for a request that failed or was not answered).
// A LIST without a continue token, or a watch with sendInitialEvents,
// starts a complete list (a relist after the first), counted when its
// first page or first event arrives, as a reflector counts it.
func (s *Stream) BeginAnswered(verb reflector.Verb, opts reflector.RequestOptions, started time.Time, contentType string) *Request {
	s.feedMu.Lock()
	defer s.feedMu.Unlock()
	if s.current != nil {
		// The client started another request before we saw the last one end.
		s.finish(s.current, &reflector.RequestEnd{Reason: reflector.EndCanceled})
	}
	// A client that had left is back (it resumed, on a new connection).
	s.ledger.ClientBack()
	if !s.begun {
		s.begun = true
		if !started.IsZero() && started.Before(s.created) {
			// The stream began with its first request, sent before the
			// proxy made the stream (after discovery named its resource).
			s.ledger.Start(started)
		}
	}
	streamed := verb == reflector.VerbWatch && opts.SendInitialEvents
	listing := s.ledger.Listing()
	startsList := (verb == reflector.VerbList && (opts.Continue == "" || !listing)) || streamed
	state := reflector.StateWatching
	switch {
	case streamed:
		state = reflector.StateStreamingList
	case startsList && (s.ledger.Listed() || s.ledger.Counters().Lists > 0):
		state = reflector.StateRelisting
	case startsList:
		state = reflector.StateListing
	case listing:
		state = s.ledger.State()
	}
	s.ledger.SetState(state)
	if startsList && s.versions != nil {
		s.versions.Reset()
	}
	r := &Request{s: s, streamingList: streamed}
	r.info = s.ledger.StartRequest(verb, opts, started)
	if contentType != "" {
		s.ledger.RecordError("") // answered: the last error no longer stands
	}
	s.current = r
	s.setContentType(contentType)
	if rec := s.rec; rec != nil {
		rec.Request(r.info.ID, verb, opts, contentType, started)
	}
	if startsList && !s.announced {
		s.announced = true
		m := reflector.ListMethod{Stream: streamed, PageSize: opts.Limit}
		s.ledger.Decide(reflector.Decision{State: state, Reason: reflector.ReasonInitialList, List: &m})
	}
	return r
}

// ID is the request's number in its stream, from 1.
func (r *Request) ID() int64 { return r.info.ID }

// Page records a LIST response the client received whole.
func (r *Request) Page(page *reflector.Page) {
	s := r.s
	s.feedMu.Lock()
	defer s.feedMu.Unlock()
	if v := s.versions; v != nil && s.notDiffed() == "" { // a table's rows or metadata are never diffed: nothing to hold
		for _, it := range page.Items {
			if o := it.Object; o != nil {
				v.Hold(o.Ref().String(), o.UID, it.Raw)
			}
		}
	}
	if rec := s.rec; rec != nil {
		rec.Page(r.info.ID, page)
	}
	s.ledger.ReceivedPage(r.info, page)
	r.page = page
}

// Event records one watch event the client received.
func (r *Request) Event(ev reflector.WatchEvent) {
	s := r.s
	s.feedMu.Lock()
	defer s.feedMu.Unlock()
	s.diffEvent(&ev)
	if rec := s.rec; rec != nil {
		rec.Event(r.info.ID, ev)
	}
	// The store's errors are those of a closed stream: nothing to record.
	complete, _ := s.ledger.Event(r.info, ev, s.now())
	if complete {
		r.streamingList = false
		rv := ev.Item.Object.ResourceVersion
		// A streaming list is a watch already, and goes on.
		if diff, relist, err := s.ledger.CompleteList(rv, reflector.StateWatching); err == nil {
			s.ledger.NoteRelistDiff(rv, diff, relist)
		}
	}
}

// End records how the request ended: closed, error (with the server's
// Status, or the error), or canceled by the client.
func (r *Request) End(end *reflector.RequestEnd) {
	s := r.s
	s.feedMu.Lock()
	defer s.feedMu.Unlock()
	if s.current != r {
		return // already ended (the client moved on before we saw this end)
	}
	s.finish(r, end)
}

// relistState is the state a 410 or a too-large resourceVersion leads to:
// Relisting once the client has listed, its first list again before that.
func (s *Stream) relistState() reflector.State {
	if s.ledger.Listed() {
		return reflector.StateRelisting
	}
	return reflector.StateListing
}

// finish records the end of r, the current request, and notes the
// decisions its end shows the client made. Caller holds feedMu.
func (s *Stream) finish(r *Request, end *reflector.RequestEnd) {
	s.current = nil
	defer func() { s.endedBy = "" }()
	info := r.info
	if rec := s.rec; rec != nil {
		rec.End(info.ID, end)
	}
	s.ledger.EndRequest(info, end)
	if r.page != nil {
		_ = s.ledger.ApplyPage(info, r.page)
	}
	if end.Reason == reflector.EndError && (end.Status != nil || end.Err != nil) && !end.IsGone() && !end.IsTooLargeResourceVersion() {
		// As the reflector records it: a 410 is a relist, not an error.
		s.ledger.RecordError(end.Cause())
	}
	watch := info.Verb == reflector.VerbWatch
	switch {
	case end.IsGone(), end.IsTooLargeResourceVersion():
		// As the reflector decides them: a relist (the first list again,
		// before one completed), the whole list again on a continue token.
		d := reflector.Decision{State: s.relistState(), Reason: reflector.ReasonGone, ResourceVersion: info.Opts.ResourceVersion, Code: end.Code(), Cause: end.Cause()}
		switch {
		case end.IsTooLargeResourceVersion():
			d.Reason = reflector.ReasonTooLargeRV
		case info.Verb == reflector.VerbList && info.Opts.Continue != "":
			d.Reason = reflector.ReasonContinueGone
		}
		s.ledger.Decide(d)
	case end.Reason == reflector.EndError && watch:
		s.ledger.Decide(reflector.Decision{State: s.ledger.State(), Reason: reflector.ReasonWatchError, ResourceVersion: s.ledger.Cursor(), Code: end.Code(), Cause: end.Cause(), Streaming: r.streamingList, Observed: true})
	case end.Reason == reflector.EndError:
		s.ledger.Decide(reflector.Decision{State: s.ledger.State(), Reason: reflector.ReasonRequestError, Code: end.Code(), Cause: end.Cause()})
	case watch && end.Reason == reflector.EndClosed && !r.streamingList:
		d := reflector.Decision{State: reflector.StateWatching, Reason: reflector.ReasonWatchClosed, ResourceVersion: s.ledger.Cursor(),
			AtOnce: info.ClosedAtOnce(), Observed: true}
		if s.endedBy != "" {
			d.Fault, d.AtOnce = s.endedBy, false
		}
		s.ledger.Decide(d)
	}
	if r.page != nil && r.page.Continue == "" && end.Reason == reflector.EndClosed {
		// The list is complete once its last page's response is: installed
		// after the request's end, as a reflector does.
		rv := r.page.ResourceVersion
		// Listed until the client's next request says what it does (kubectl
		// get never watches).
		if diff, relist, err := s.ledger.CompleteList(rv, reflector.StateListed); err == nil {
			s.ledger.NoteRelistDiff(rv, diff, relist)
		}
	}
}

// Describe is what the stream watches and how, and whose it is, as a
// trace's resource line records them: its target, with what its client
// asked for and how it lists in the options (Wire, MetadataOnly, Strategy,
// PageSize), and its client with its Accept. The caller adds what the
// recording decides (Objects, UnsafeSecrets).
func (s *Stream) Describe() (trace.ResourceHeader, trace.Client) {
	t := s.target
	rh := trace.ResourceHeader{Resource: t.Resource, Namespace: t.Namespace, LabelSelector: t.LabelSelector, FieldSelector: t.FieldSelector,
		Options: trace.Options{Strategy: s.Options.Strategy, PageSize: s.Options.PageSize, MetadataOnly: s.Asked.MetadataOnly, Wire: s.Asked.Wire}}
	return rh, trace.Client{UserAgent: s.Client.UserAgent, RemoteAddr: s.Client.RemoteAddr, Accept: s.Asked.Accept}
}
