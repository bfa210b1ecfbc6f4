package reflector

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// call is one scripted answer of the fake source.
type call struct {
	verb Verb
	// LIST answer.
	page *Page
	// WATCH answer: events, then end (nil end = hang until canceled).
	events []WatchEvent
	end    error
	// gap is how long the source's clock advances before each event and
	// before the end (a manualClock; see harness.clock).
	gap time.Duration
	// err fails the request itself.
	err error
}

// fakeSource answers requests from a script and records what was asked. When
// the script is exhausted, requests hang until their context ends.
type fakeSource struct {
	t       *testing.T
	mu      sync.Mutex
	script  []call
	asked   []Request
	drained chan struct{}
	clock   *manualClock // advanced by calls' gaps when set
}

// Request is what the fake source was asked.
type Request struct {
	Verb Verb
	Opts RequestOptions
}

func newFake(t *testing.T, script ...call) *fakeSource {
	return &fakeSource{t: t, script: script, drained: make(chan struct{})}
}

func (f *fakeSource) next(verb Verb, opts RequestOptions) (call, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, Request{verb, opts})
	if len(f.script) == 0 {
		f.drainedLocked()
		return call{}, false
	}
	c := f.script[0]
	f.script = f.script[1:]
	if c.verb != verb {
		f.t.Errorf("request %d: got %s, want %s", len(f.asked), verb, c.verb)
	}
	return c, true
}

// drainedLocked signals that the reflector is waiting on something the script does not answer.
func (f *fakeSource) drainedLocked() {
	select {
	case <-f.drained:
	default:
		close(f.drained)
	}
}

// hanging is called when a stream has delivered its events and now hangs.
func (f *fakeSource) hanging() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.script) == 0 {
		f.drainedLocked()
	}
}

func (f *fakeSource) requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.asked...)
}

func (f *fakeSource) List(ctx context.Context, opts RequestOptions) (*Page, error) {
	c, ok := f.next(VerbList, opts)
	if !ok {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return c.page, c.err
}

func (f *fakeSource) Watch(ctx context.Context, opts RequestOptions) (Stream, error) {
	c, ok := f.next(VerbWatch, opts)
	if !ok {
		return &fakeStream{ctx: ctx, src: f}, nil
	}
	if c.err != nil {
		return nil, c.err
	}
	return &fakeStream{ctx: ctx, src: f, events: c.events, end: c.end, ends: c.end != nil, gap: c.gap}, nil
}

type fakeStream struct {
	ctx    context.Context
	src    *fakeSource
	events []WatchEvent
	end    error
	ends   bool
	gap    time.Duration
}

func (s *fakeStream) Next() (WatchEvent, error) {
	if s.gap > 0 && (len(s.events) > 0 || s.ends) {
		s.src.clock.Advance(s.gap)
		if err := s.ctx.Err(); err != nil {
			// A timer of the reflector's fired during the gap.
			return WatchEvent{}, EndOf(err)
		}
	}
	if len(s.events) > 0 {
		ev := s.events[0]
		s.events = s.events[1:]
		return ev, nil
	}
	if s.ends {
		return WatchEvent{}, s.end
	}
	s.src.hanging()
	<-s.ctx.Done()
	return WatchEvent{}, EndOf(s.ctx.Err())
}

func (s *fakeStream) Close() {}

func obj(name, uid, rv string) *store.Object {
	return &store.Object{Namespace: "ns", Name: name, UID: uid, ResourceVersion: rv}
}

func page(rv, cont string, objs ...*store.Object) *Page {
	p := &Page{ResourceVersion: rv, Continue: cont}
	for _, o := range objs {
		p.Items = append(p.Items, Item{Object: o})
	}
	return p
}

func ev(t EventType, o *store.Object) WatchEvent { return WatchEvent{Type: t, Item: Item{Object: o}} }

func bookmark(rv string, initialEnd bool) WatchEvent {
	return WatchEvent{Type: EventBookmark, Item: Item{Object: &store.Object{ResourceVersion: rv}}, InitialEventsEnd: initialEnd}
}

func status(code int32, reason metav1.StatusReason, msg string) *metav1.Status {
	return &metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}
}

func errorEvent(code int32, reason metav1.StatusReason, msg string) WatchEvent {
	return WatchEvent{Type: EventError, Status: status(code, reason, msg)}
}

func httpErr(code int32, reason metav1.StatusReason, msg string) error {
	return &RequestEnd{Reason: EndError, Status: status(code, reason, msg)}
}

var closed = &RequestEnd{Reason: EndClosed}

// harness runs a reflector on a fake source until the script is drained.
type harness struct {
	r     *Reflector
	st    *store.Store
	src   *fakeSource
	mu    sync.Mutex
	notes []Note
	err   error
}

func runFake(t *testing.T, cfg Config, script ...call) *harness {
	t.Helper()
	h := &harness{src: newFake(t, script...)}
	if c, ok := cfg.Clock.(*manualClock); ok {
		h.src.clock = c
	}
	cfg.Source = h.src
	if cfg.Backoff.Initial == 0 {
		cfg.Backoff = Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}
	}
	cfg.OnNote = func(n Note) {
		h.mu.Lock()
		h.notes = append(h.notes, n)
		h.mu.Unlock()
	}
	st, w := store.New()
	r, err := New(cfg, w, st)
	if err != nil {
		t.Fatal(err)
	}
	h.r, h.st = r, st
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	select {
	case <-h.src.drained:
		// The reflector is now waiting on a request the script does not answer.
		cancel()
		h.err = <-done
	case h.err = <-done: // it stopped by itself
	case <-time.After(10 * time.Second):
		t.Fatalf("script not drained; asked %v", h.src.requests())
	}
	cancel()
	return h
}

func (h *harness) reasons() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, n := range h.notes {
		if n.Kind == NoteDecision {
			out = append(out, string(n.Reason()))
		}
	}
	return out
}

func (h *harness) storeState() string {
	var parts []string
	for _, o := range h.st.List() {
		parts = append(parts, fmt.Sprintf("%s:%s@%s", o.Name, o.UID, o.ResourceVersion))
	}
	return strings.Join(sortedCopy(parts), " ")
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// askedSummary renders the requests as "list rv= limit=" / "watch rv=" words.
func (h *harness) askedSummary() []string {
	var out []string
	for _, r := range h.src.requests() {
		s := fmt.Sprintf("%s rv=%s", r.Verb, r.Opts.ResourceVersion)
		if r.Opts.Continue != "" {
			s += " continue=" + r.Opts.Continue
		}
		if r.Opts.SendInitialEvents {
			s += " sendInitialEvents"
		}
		out = append(out, s)
	}
	return out
}

// startManual runs a reflector on src until the test ends.
func startManual(t *testing.T, src *fakeSource) (*store.Store, *Reflector) {
	t.Helper()
	r, st := runInBackground(t, Config{Source: src, Backoff: Backoff{Initial: time.Millisecond}})
	return st, r
}

// runInBackground runs a reflector of cfg until the test ends; it returns
// the reflector and its store.
func runInBackground(t *testing.T, cfg Config) (*Reflector, *store.Store) {
	t.Helper()
	st, w := store.New()
	r, err := New(cfg, w, st)
	if err != nil {
		t.Fatal(err)
	}
	run(t, r)
	return r, st
}

// run runs r until the test ends.
func run(t *testing.T, r *Reflector) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

func sortedNames(st *store.Store) string {
	var names []string
	for _, o := range st.List() {
		names = append(names, o.Name)
	}
	return strings.Join(sortedCopy(names), " ")
}
