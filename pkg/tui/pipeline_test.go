package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// liveFeed is a real store and note buffer, as the CLI wires them.
func liveFeed(t *testing.T) (program.Feed, *store.Writer) {
	t.Helper()
	st, w := store.New()
	return program.Feed{
		Stats: demoStats,
		Store: st,
		Notes: program.NewNoteBuffer(8),
	}, w
}

func mustApply(t *testing.T, w *store.Writer, ev store.Event) {
	t.Helper()
	if _, err := w.ApplyEvent(ev); err != nil {
		t.Fatal(err)
	}
}

// run executes a command with a deadline, so a pump that never returns
// fails the test instead of hanging it.
func run(t *testing.T, cmd func() any) any {
	t.Helper()
	got := make(chan any, 1)
	go func() { got <- cmd() }()
	select {
	case msg := <-got:
		return msg
	case <-time.After(10 * time.Second):
		t.Fatal("command did not return")
		return nil
	}
}

func TestPollTakesOneSnapshotOfEverythingTheFeedOffers(t *testing.T) {
	feed, w := liveFeed(t)
	mustApply(t, w, store.Event{Type: store.Init})
	mustApply(t, w, store.Event{Type: store.InitApply, Object: obj("a", "b", "u", "1")})
	mustApply(t, w, store.Event{Type: store.InitDone, ResourceVersion: "1"})
	for range 10 {
		feed.Notes.Push(reflector.Note{Kind: reflector.NoteDecision})
	}
	clock := newFakeClock()
	opts := demoOptions(clock)
	opts.Progress = func() (int64, int64) { return 7, 10 }
	m := New(opts, demoResource(feed))
	t.Cleanup(m.Close)
	msg := run(t, func() any { return m.pollCmd(0)() })
	s, ok := msg.(program.SnapshotMsg)
	if !ok {
		t.Fatalf("poll returned %T, want snapshotMsg", msg)
	}
	if !s.HasStats || s.Stats.ResourceVersion != "1290" {
		t.Errorf("stats not taken: %+v", s.Stats)
	}
	if !s.HasStore || !s.StoreReady || s.Counters.Objects != 1 {
		t.Errorf("store: ready %v, objects %d; want ready with 1", s.StoreReady, s.Counters.Objects)
	}
	if !s.HasProgress || s.Done != 7 || s.Total != 10 {
		t.Errorf("progress %d/%d, want 7/10", s.Done, s.Total)
	}
	if s.NotesLost != 2 {
		t.Errorf("notesLost = %d, want 2", s.NotesLost)
	}
	if !s.At.Equal(t0) {
		t.Errorf("at = %v, want the injected clock's %v", s.At, t0)
	}
}

func TestNotesEnterThroughTheChannelReadingCommand(t *testing.T) {
	feed, _ := liveFeed(t)
	m := New(demoOptions(newFakeClock()), demoResource(feed))
	t.Cleanup(m.Close)
	for _, n := range demoNotes() {
		feed.Notes.Push(n)
	}
	msg := run(t, func() any { return m.notesCmd(0)() })
	notes, ok := msg.(program.NotesMsg)
	if !ok || len(notes.Notes) != 5 {
		t.Fatalf("got %T with %d notes, want notesMsg with 5", msg, len(notes.Notes))
	}
	next, cmd := m.Update(notes)
	if cmd == nil {
		t.Error("the notes reader did not re-arm itself")
	}
	mustContain(t, screen(resize(next.(Model), 160, 48)), `gone: 410 Gone at resourceVersion "211": history is gone`)
}

func TestStoreChangesEnterAsNotesInTheOrderTheyHappened(t *testing.T) {
	feed, _ := liveFeed(t)
	m := New(demoOptions(newFakeClock()), demoResource(feed))
	t.Cleanup(m.Close)
	fresh := obj("default", "fresh", "u-1", "2")
	for _, n := range []reflector.Note{
		{Seq: 1, At: at(0), Kind: reflector.NoteDecision, Decision: &reflector.Decision{Reason: reflector.ReasonInitialList, List: &reflector.ListMethod{}}},
		{Seq: 2, At: at(0), Kind: reflector.NoteDecision, RequestID: 1, Decision: &reflector.Decision{Reason: reflector.ReasonListComplete, ResourceVersion: "1", Objects: 1}},
		{Seq: 3, At: at(time.Second), Kind: reflector.NoteApplied, RequestID: 2, Event: reflector.EventAdded, Applied: &store.Result{Outcome: store.Added, Object: fresh}},
	} {
		feed.Notes.Push(n)
	}
	msg := run(t, func() any { return m.notesCmd(0)() })
	notes, ok := msg.(program.NotesMsg)
	if !ok || len(notes.Notes) != 3 {
		t.Fatalf("got %T with %d notes, want the 3 notes", msg, len(notes.Notes))
	}
	next, cmd := m.Update(notes)
	if cmd == nil {
		t.Error("the notes reader did not re-arm itself")
	}
	s := screen(resize(next.(Model), 80, 24))
	mustContain(t, s, "LIST", "initial list installed at rv 1: 1 object\n", "ADDED    default/fresh")
	if i, j := strings.Index(s, "initial list installed"), strings.Index(s, "ADDED    default/fresh"); i > j {
		t.Errorf("the list is shown after the event that followed it:\n%s", s)
	}
	if h, ok := next.(Model).history.Get(fresh.Ref()); !ok || h.Len() != 1 {
		t.Errorf("object history of %s: %v, want its one version", fresh.Ref(), ok)
	}
}

func TestDroppedNotesAreSkippedNeverReorderedAndTheLogSaysWhere(t *testing.T) {
	feed, _ := liveFeed(t) // a NoteBuffer of 8
	m := New(demoOptions(newFakeClock()), demoResource(feed))
	t.Cleanup(m.Close)
	for seq := uint64(1); seq <= 20; seq++ {
		feed.Notes.Push(reflector.Note{Seq: seq, At: at(time.Duration(seq) * time.Second), Kind: reflector.NoteApplied,
			Applied: &store.Result{Outcome: store.Added, Object: obj("ns", fmt.Sprintf("obj-%02d", seq), "u", fmt.Sprint(seq))}})
	}
	if got := feed.Notes.Dropped(); got != 12 {
		t.Fatalf("dropped %d notes, want 12 (a buffer of 8)", got)
	}
	m = update(m, run(t, func() any { return m.notesCmd(0)() }).(program.NotesMsg))
	// The screen catches up: the next notes come in order after the gap.
	feed.Notes.Push(reflector.Note{Seq: 21, At: at(21 * time.Second), Kind: reflector.NoteApplied,
		Applied: &store.Result{Outcome: store.Added, Object: obj("ns", "obj-21", "u", "21")}})
	m = update(m, run(t, func() any { return m.notesCmd(0)() }).(program.NotesMsg))
	var got []string
	for i := range m.log.Entries.Len() {
		e := m.log.Entries.At(i)
		got = append(got, fmt.Sprintf("%d:%s", e.Seq, e.Message()))
	}
	want := []string{"1:ns/obj-01", "2:ns/obj-02", "3:ns/obj-03", "4:ns/obj-04", "5:ns/obj-05", "6:ns/obj-06", "7:ns/obj-07", "8:ns/obj-08",
		"9:12 lines dropped here: the screen could not keep up", "21:ns/obj-21"}
	if len(got) != len(want) {
		t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("log entry %d: got %q, want %q…", i, got[i], want[i])
		}
	}
}

func TestCloseStopsTheReadersWaitingOnEmptyChannels(t *testing.T) {
	feed, _ := liveFeed(t)
	m := New(demoOptions(newFakeClock()), demoResource(feed))
	notes := m.notesCmd(0)
	var wg sync.WaitGroup
	got := make([]any, 1)
	for i, cmd := range []func() any{func() any { return notes() }} {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = cmd() }()
	}
	m.Close()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("readers still blocked after Close")
	}
	if got[0] != nil {
		t.Errorf("notes reader returned %#v after Close, want nil", got[0])
	}
}

func TestRunReturnsWhenTheContextEnds(t *testing.T) {
	feed, _ := liveFeed(t)
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	t.Cleanup(func() { inW.Close() })
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, demoOptions(newFakeClock()), []program.Resource{demoResource(feed)}, inR, out)
	}()
	waitFor(t, out, "kubectl watchcache")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil when the context ends", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the context ended")
	}
}

func TestRunReturnsWhenTheUserQuits(t *testing.T) {
	for _, k := range []string{"q", "\x03"} { // q, ctrl+c
		t.Run(fmt.Sprintf("%q", k), func(t *testing.T) {
			feed, _ := liveFeed(t)
			inR, inW := io.Pipe()
			t.Cleanup(func() { inW.Close() })
			out := &syncBuffer{}
			done := make(chan error, 1)
			go func() {
				done <- Run(context.Background(), demoOptions(newFakeClock()), []program.Resource{demoResource(feed)}, inR, out)
			}()
			waitFor(t, out, "kubectl watchcache")
			go io.WriteString(inW, k) //nolint:errcheck // the pipe closes at cleanup
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run = %v, want nil", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return after the quit key")
			}
		})
	}
}

func TestNoColorDropsColorsEvenWhenColorIsForced(t *testing.T) {
	sgrColor := regexp.MustCompile(`\x1b\[[0-9;]*3[0-7]m|\x1b\[[0-9;]*38;`)
	for _, tt := range []struct {
		name     string
		noColor  bool
		env      string
		wantSGRs bool
	}{
		{"forced color", false, "", true},
		{"Options.NoColor", true, "", false},
		{"NO_COLOR", false, "yes", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CLICOLOR_FORCE", "1")
			t.Setenv("NO_COLOR", tt.env)
			feed, _ := liveFeed(t)
			opts := demoOptions(newFakeClock())
			opts.NoColor = tt.noColor
			ctx, cancel := context.WithCancel(context.Background())
			inR, inW := io.Pipe()
			t.Cleanup(func() { inW.Close() })
			out := &syncBuffer{}
			done := make(chan error, 1)
			go func() { done <- Run(ctx, opts, []program.Resource{demoResource(feed)}, inR, out) }()
			waitFor(t, out, "Watching")
			cancel()
			<-done
			if got := sgrColor.MatchString(out.String()); got != tt.wantSGRs {
				t.Errorf("color codes in the output: %v, want %v", got, tt.wantSGRs)
			}
		})
	}
}

// syncBuffer is an output the program writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// grew is signalled on every write, so waiting needs no polling sleep.
	grew chan struct{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.grew == nil {
		b.grew = make(chan struct{}, 1)
	}
	select {
	case b.grew <- struct{}{}:
	default:
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) signal() chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.grew == nil {
		b.grew = make(chan struct{}, 1)
	}
	return b.grew
}

// waitFor blocks until the output contains s, woken by each write.
func waitFor(t *testing.T, b *syncBuffer, s string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !bytes.Contains([]byte(b.String()), []byte(s)) {
		select {
		case <-b.signal():
		case <-deadline:
			t.Fatalf("output never contained %q:\n%q", s, b.String())
		}
	}
}
