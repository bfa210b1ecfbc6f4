package observed

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// Feed rebuilds the streams of an observed trace (trace.Header.Observed)
// from its lines, as the proxy built them from the live traffic: each
// resource's recorded requests, pages, events and ends are fed to a Stream
// of its own. It is the feed of a trace.Replay (trace.Replay.Feed), which
// reads, paces and clocks the lines: no reflector of ours runs, nothing is
// decided again, so nothing can diverge.
type Feed struct {
	rd       *trace.Reader
	now      func() time.Time
	onStream func(*Stream)

	open []*openRequest // the feeding goroutine's alone, as Line is

	// mu guards streams for Streams, called from other goroutines; only the
	// feeding goroutine appends to it, and reads it without mu.
	mu      sync.Mutex
	streams []*Stream
}

// openRequest is a resource's request being replayed.
type openRequest struct {
	req  *Request
	page *reflector.Page // the items of a LIST so far
}

// NewFeed feeds the streams of rd's trace, its header read, on the clock
// now (the replay's); onStream is called for each resource as its stream
// appears, before it is fed: at once for the header's resources.
func NewFeed(rd *trace.Reader, now func() time.Time, onStream func(*Stream)) (*Feed, error) {
	if !rd.Header().Observed {
		return nil, errors.New("not an observed trace: replay it through the reflector")
	}
	f := &Feed{rd: rd, now: now, onStream: onStream}
	for _, rh := range rd.Header().Resources {
		f.addStream(rh, nil, 0)
	}
	return f, nil
}

// Streams are the streams fed so far.
func (r *Feed) Streams() []*Stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Stream(nil), r.streams...)
}

// Close ends every stream: the trace is over.
func (r *Feed) Close() {
	for _, s := range r.Streams() {
		s.Close()
	}
}

// addStream adds the stream of a resource: numbered id as the proxy numbered
// it (0, in a trace that does not record it: its place), asking for what its
// client's Accept says (or, without one, what the resource's options say).
func (r *Feed) addStream(rh trace.ResourceHeader, c *trace.Client, id int64) {
	var client Client
	asked := Asked{Wire: rh.Options.Wire, MetadataOnly: rh.Options.MetadataOnly}
	if c != nil {
		client = Client{UserAgent: c.UserAgent, RemoteAddr: c.RemoteAddr}
		if c.Accept != "" {
			asked = ParseAccept(c.Accept)
			asked.Accept = c.Accept
		}
	}
	n := len(r.streams) + 1
	if id > 0 {
		n = int(id)
	}
	s := NewStream(n, client, rh.Target(), r.now)
	s.Asked = asked
	s.Options = Options{Strategy: rh.Options.Strategy, PageSize: rh.Options.PageSize}
	if r.onStream != nil {
		r.onStream(s)
	}
	r.mu.Lock()
	r.streams = append(r.streams, s)
	r.mu.Unlock()
	r.open = append(r.open, nil)
}

// Line feeds one line to its stream (a resource line adds a stream).
func (r *Feed) Line(l *trace.Line) error {
	switch l.K {
	case trace.KindResource:
		// The reader has added it to the header.
		r.addStream(r.rd.Header().Resources[l.R], l.Client, l.ID)
		return nil
	case trace.KindFlowControl:
		// Names the proxy learned after the 429s that gave them by UID.
		for _, s := range r.Streams() {
			s.Findings().NameFlowControl(l.FlowSchemas, l.PriorityLevels)
		}
		return nil
	}
	s, o := r.streams[l.R], r.open[l.R]
	switch l.K {
	case trace.KindRequest:
		var opts reflector.RequestOptions
		if l.Opts != nil {
			opts = *l.Opts
		}
		var started time.Time // the line's time, unless the request came before its answer
		if l.Wait > 0 {
			started = r.now().Add(-time.Duration(l.Wait))
		}
		r.open[l.R] = &openRequest{req: s.BeginAnswered(reflector.Verb(l.Verb), opts, started, l.ContentType), page: &reflector.Page{}}
	case trace.KindItem:
		obj, err := wire.DecodeObject(l.Object, false)
		if err != nil {
			// A line the stream cannot take, as a reflector's replay says it
			// ("t.jsonl:5: decoding object: …"), which replay, explain and report refuse.
			return &trace.LineError{Name: r.rd.Name(), Line: r.rd.LineNumber(), Err: err}
		}
		o.page.Items = append(o.page.Items, reflector.Item{Object: obj})
	case trace.KindPage:
		o.page.ResourceVersion, o.page.Continue, o.page.RemainingItemCount, o.page.Bytes = l.ResourceVersion, l.Continue, l.RemainingItemCount, l.Bytes
		o.req.Page(o.page)
	case trace.KindEvent:
		ev, err := wire.DecodeWatchEvent(l.Type, l.Object, false)
		if err != nil {
			return &trace.LineError{Name: r.rd.Name(), Line: r.rd.LineNumber(), Err: err}
		}
		// As recorded: the delivery estimate, the changes, and the size of
		// the streaming list the bookmark ends.
		ev.Delivery, ev.Changes, ev.Bytes = l.Delivery(), l.Changes, l.Bytes
		o.req.Event(ev)
	case trace.KindEnd:
		o.req.End(endOf(l))
		r.open[l.R] = nil
	case trace.KindNote:
		// The other notes are the stream's own, noted again as it is fed;
		// that its client left, or was forgotten, is only in the note.
		switch reflector.Reason(l.Reason) {
		case reflector.ReasonClientLeft:
			s.ClientLeft(r.now().Add(-time.Duration(l.Wait)))
		case reflector.ReasonClientGone:
			s.Forget()
		case reflector.ReasonFault:
			// What the proxy injected is only in its notes.
			s.Fault(Fault{Spec: l.Fault, Count: l.Count, What: strings.TrimPrefix(l.Detail, "--fault "+l.Fault+": ")})
		}
	}
	return nil
}

// endOf is the request end an end line records.
func endOf(l *trace.Line) *reflector.RequestEnd {
	end := &reflector.RequestEnd{Reason: reflector.EndReason(l.Reason), Status: l.Status.APIStatus(), Throttle: l.Throttle.Reflector()}
	if l.Error != "" {
		end.Err = errors.New(l.Error)
	}
	return end
}
