package observed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// Replay plays an observed trace (trace.Header.Observed) back as recorded:
// each resource's recorded requests, pages, events and ends are fed to a
// Stream of its own, which rebuilds the client's cache and counters as the
// proxy did live. No reflector of ours runs: nothing is decided again, so
// there is nothing to compare, and nothing can diverge.
type Replay struct {
	rd       *trace.Reader
	player   *trace.Player
	onStream func(*Stream)

	mu      sync.Mutex
	now     time.Time
	streams []*Stream
	open    []*openRequest
}

// openRequest is a resource's request being replayed.
type openRequest struct {
	req  *Request
	page *reflector.Page // the items of a LIST so far
}

// NewReplay replays rd's lines at speed (0 as fast as possible, 1 in real
// time, N times faster); onStream is called for each resource as its stream
// appears, before it is fed.
func NewReplay(rd *trace.Reader, speed float64, onStream func(*Stream)) (*Replay, error) {
	if !rd.Header().Observed {
		return nil, errors.New("not an observed trace: replay it through the reflector")
	}
	return &Replay{rd: rd, player: trace.NewPlayer(speed), onStream: onStream, now: rd.Header().StartedAt}, nil
}

// Player paces the replay: pause, step, speed and jumps forward, as a
// reflector replay's (trace.Replay.Player) does.
func (r *Replay) Player() *trace.Player { return r.player }

// Now is the replay's clock: the header's start plus the last line's at.
func (r *Replay) Now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

// Streams are the streams replayed so far.
func (r *Replay) Streams() []*Stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Stream(nil), r.streams...)
}

// Progress is how far the replay has read the trace, in bytes.
func (r *Replay) Progress() (done, total int64) { return r.rd.Offset(), r.rd.Size() }

// Run replays the trace until its end or ctx ends; every stream is closed
// when it returns. A malformed line is an error naming it.
func (r *Replay) Run(ctx context.Context) error {
	defer func() {
		for _, s := range r.Streams() {
			s.Close()
		}
	}()
	start := r.rd.Header().StartedAt
	for _, rh := range r.rd.Header().Resources {
		r.addStream(rh, nil, 0)
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil
		}
		l, err := r.rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := r.player.Wait(ctx, time.Duration(l.At)); err != nil {
			return nil
		}
		at := start.Add(time.Duration(l.At))
		r.mu.Lock()
		if at.After(r.now) {
			r.now = at
		}
		r.mu.Unlock()
		if err := r.line(l); err != nil {
			return err
		}
		r.player.Served(time.Duration(l.At), l.K)
	}
}

// addStream adds the stream of a resource: numbered id as the proxy numbered
// it (0, in a trace that does not record it: its place), asking for what its
// client's Accept says (or, without one, what the resource's options say).
func (r *Replay) addStream(rh trace.ResourceHeader, c *trace.Client, id int64) {
	var client Client
	asked := Asked{Wire: rh.Options.Wire, MetadataOnly: rh.Options.MetadataOnly}
	if c != nil {
		client = Client{UserAgent: c.UserAgent, RemoteAddr: c.RemoteAddr}
		if c.Accept != "" {
			asked = ParseAccept(c.Accept)
			asked.Accept = c.Accept
		}
	}
	r.mu.Lock()
	n := len(r.streams) + 1
	r.mu.Unlock()
	if id > 0 {
		n = int(id)
	}
	s := NewStream(n, client, rh.Target(), r.Now)
	s.Asked = asked
	s.Options = Options{Strategy: rh.Options.Strategy, PageSize: rh.Options.PageSize}
	if r.onStream != nil {
		r.onStream(s)
	}
	r.mu.Lock()
	r.streams = append(r.streams, s)
	r.open = append(r.open, nil)
	r.mu.Unlock()
}

// line feeds one line to its stream.
func (r *Replay) line(l *trace.Line) error {
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
	r.mu.Lock()
	s, o := r.streams[l.R], r.open[l.R]
	r.mu.Unlock()
	setOpen := func(o *openRequest) {
		r.mu.Lock()
		r.open[l.R] = o
		r.mu.Unlock()
	}
	switch l.K {
	case trace.KindRequest:
		var opts reflector.RequestOptions
		if l.Opts != nil {
			opts = *l.Opts
		}
		setOpen(&openRequest{req: s.BeginAnswered(reflector.Verb(l.Verb), opts, time.Time{}, l.ContentType), page: &reflector.Page{}})
	case trace.KindItem:
		obj, err := wire.DecodeObject(l.Object, false)
		if err != nil {
			return fmt.Errorf("replaying line %d: item: %w", r.rd.LineNumber(), err)
		}
		o.page.Items = append(o.page.Items, reflector.Item{Object: obj})
	case trace.KindPage:
		o.page.ResourceVersion, o.page.Continue, o.page.RemainingItemCount, o.page.Bytes = l.ResourceVersion, l.Continue, l.RemainingItemCount, l.Bytes
		o.req.Page(o.page)
	case trace.KindEvent:
		if reflector.EventType(l.Type) == reflector.EventError {
			var st metav1.Status
			_ = json.Unmarshal(l.Object, &st)
			o.req.Event(reflector.WatchEvent{Type: reflector.EventError, Status: &st})
			return nil
		}
		ev, err := wire.DecodeWatchEvent(l.Type, l.Object, false)
		if err != nil {
			return fmt.Errorf("replaying line %d: event: %w", r.rd.LineNumber(), err)
		}
		ev.Delivery = l.Delivery() // the recorded estimate
		o.req.Event(ev)
	case trace.KindEnd:
		o.req.End(endOf(l))
		setOpen(nil)
	case trace.KindNote:
		// The other notes are the stream's own, noted again as it is fed;
		// that its client left is only in the note.
		if reflector.Reason(l.Reason) == reflector.ReasonClientLeft {
			s.ClientLeft(r.Now().Add(-time.Duration(l.Wait)))
		}
	}
	return nil
}

// endOf is the request end an end line records.
func endOf(l *trace.Line) *reflector.RequestEnd {
	end := &reflector.RequestEnd{Reason: reflector.EndReason(l.Reason)}
	if l.Status != nil {
		st := &metav1.Status{Code: l.Status.Code, Reason: metav1.StatusReason(l.Status.Reason), Message: l.Status.Message}
		for _, c := range l.Status.Causes {
			if st.Details == nil {
				st.Details = &metav1.StatusDetails{}
			}
			st.Details.Causes = append(st.Details.Causes, metav1.StatusCause{Type: metav1.CauseType(c)})
		}
		end.Status = st
	}
	if l.Error != "" {
		end.Err = errors.New(l.Error)
	}
	end.Throttle = l.Throttle.Reflector()
	return end
}
