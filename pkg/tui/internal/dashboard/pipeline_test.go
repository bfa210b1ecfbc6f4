package dashboard

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

func mustApply(t *testing.T, w *store.Writer, ev store.Event) {
	t.Helper()
	if _, err := w.ApplyEvent(ev); err != nil {
		t.Fatal(err)
	}
}

func TestPollTakesOneSnapshotOfEverythingTheFeedOffers(t *testing.T) {
	feed, w := tuitest.LiveFeed(t)
	mustApply(t, w, store.Event{Type: store.Init})
	mustApply(t, w, store.Event{Type: store.InitApply, Object: tuitest.Obj("a", "b", "u", "1")})
	mustApply(t, w, store.Event{Type: store.InitDone, ResourceVersion: "1"})
	for range 10 {
		feed.Notes.Push(reflector.Note{Kind: reflector.NoteDecision})
	}
	clock := tuitest.NewFakeClock()
	opts := tuitest.DemoOptions(clock)
	m := newAlone(opts, tuitest.DemoResource(feed))
	t.Cleanup(m.Close)
	msg := runOff(t, func() any { return m.PollCmd(0)() })
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
	if s.NotesLost != 2 {
		t.Errorf("notesLost = %d, want 2", s.NotesLost)
	}
	if !s.At.Equal(tuitest.T0()) {
		t.Errorf("at = %v, want the injected clock's %v", s.At, tuitest.T0())
	}
}

func TestNotesEnterThroughTheChannelReadingCommand(t *testing.T) {
	feed, _ := tuitest.LiveFeed(t)
	m := newAlone(tuitest.DemoOptions(tuitest.NewFakeClock()), tuitest.DemoResource(feed))
	t.Cleanup(m.Close)
	for _, n := range tuitest.DemoNotes() {
		feed.Notes.Push(n)
	}
	msg := runOff(t, func() any { return m.notesCmd(0)() })
	notes, ok := msg.(program.NotesMsg)
	if !ok || len(notes.Notes) != 5 {
		t.Fatalf("got %T with %d notes, want notesMsg with 5", msg, len(notes.Notes))
	}
	next, cmd := m.Update(notes)
	if cmd == nil {
		t.Error("the notes reader did not re-arm itself")
	}
	tuitest.MustContain(t, screen(resize(next.(Model), 160, 48)), `gone: 410 Gone at resourceVersion "211": history is gone`)
}

func TestStoreChangesEnterAsNotesInTheOrderTheyHappened(t *testing.T) {
	feed, _ := tuitest.LiveFeed(t)
	m := newAlone(tuitest.DemoOptions(tuitest.NewFakeClock()), tuitest.DemoResource(feed))
	t.Cleanup(m.Close)
	fresh := tuitest.Obj("default", "fresh", "u-1", "2")
	for _, n := range []reflector.Note{
		{Seq: 1, At: tuitest.At(0), Kind: reflector.NoteDecision, Decision: &reflector.Decision{Reason: reflector.ReasonInitialList, List: &reflector.ListMethod{}}},
		{Seq: 2, At: tuitest.At(0), Kind: reflector.NoteDecision, RequestID: 1, Decision: &reflector.Decision{Reason: reflector.ReasonListComplete, ResourceVersion: "1", Objects: 1}},
		{Seq: 3, At: tuitest.At(time.Second), Kind: reflector.NoteApplied, RequestID: 2, Event: reflector.EventAdded, Applied: &store.Result{Outcome: store.Added, Object: fresh}},
	} {
		feed.Notes.Push(n)
	}
	msg := runOff(t, func() any { return m.notesCmd(0)() })
	notes, ok := msg.(program.NotesMsg)
	if !ok || len(notes.Notes) != 3 {
		t.Fatalf("got %T with %d notes, want the 3 notes", msg, len(notes.Notes))
	}
	next, cmd := m.Update(notes)
	if cmd == nil {
		t.Error("the notes reader did not re-arm itself")
	}
	s := screen(resize(next.(Model), 80, 24))
	tuitest.MustContain(t, s, "LIST", "initial list installed at rv 1: 1 object\n", "ADDED    default/fresh")
	if i, j := strings.Index(s, "initial list installed"), strings.Index(s, "ADDED    default/fresh"); i > j {
		t.Errorf("the list is shown after the event that followed it:\n%s", s)
	}
	if h, ok := next.(Model).history.Get(fresh.Ref()); !ok || h.Len() != 1 {
		t.Errorf("object history of %s: %v, want its one version", fresh.Ref(), ok)
	}
}

func TestDroppedNotesAreSkippedNeverReorderedAndTheLogSaysWhere(t *testing.T) {
	feed, _ := tuitest.LiveFeed(t) // a NoteBuffer of 8
	m := newAlone(tuitest.DemoOptions(tuitest.NewFakeClock()), tuitest.DemoResource(feed))
	t.Cleanup(m.Close)
	for seq := uint64(1); seq <= 20; seq++ {
		feed.Notes.Push(reflector.Note{Seq: seq, At: tuitest.At(time.Duration(seq) * time.Second), Kind: reflector.NoteApplied,
			Applied: &store.Result{Outcome: store.Added, Object: tuitest.Obj("ns", fmt.Sprintf("obj-%02d", seq), "u", fmt.Sprint(seq))}})
	}
	if got := feed.Notes.Dropped(); got != 12 {
		t.Fatalf("dropped %d notes, want 12 (a buffer of 8)", got)
	}
	m = update(m, runOff(t, func() any { return m.notesCmd(0)() }).(program.NotesMsg))
	// The screen catches up: the next notes come in order after the gap.
	feed.Notes.Push(reflector.Note{Seq: 21, At: tuitest.At(21 * time.Second), Kind: reflector.NoteApplied,
		Applied: &store.Result{Outcome: store.Added, Object: tuitest.Obj("ns", "obj-21", "u", "21")}})
	m = update(m, runOff(t, func() any { return m.notesCmd(0)() }).(program.NotesMsg))
	var got []string
	for i := range m.Log.Entries.Len() {
		e := m.Log.Entries.At(i)
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

// Notes missing before the first one delivered are said as any others:
// a reflector numbers its notes from 1.
func TestNotesMissingAtTheStartAreSaidToo(t *testing.T) {
	m := newAlone(tuitest.DemoOptions(tuitest.NewFakeClock()), tuitest.DemoResource(program.Feed{}))
	t.Cleanup(m.Close)
	m = update(m, program.NotesMsg{Notes: []reflector.Note{{Seq: 4, At: tuitest.At(time.Second), Kind: reflector.NoteApplied,
		Applied: &store.Result{Outcome: store.Added, Object: tuitest.Obj("ns", "obj-04", "u", "4")}}}})
	var got []string
	for i := range m.Log.Entries.Len() {
		e := m.Log.Entries.At(i)
		got = append(got, fmt.Sprintf("%d:%s", e.Seq, e.Message()))
	}
	if want := "1:3 lines dropped here: the screen could not keep up|4:ns/obj-04  rv 4  uid u"; strings.Join(got, "|") != want {
		t.Errorf("log %q, want %q", strings.Join(got, "|"), want)
	}
}

// A full buffer of the default capacity comes in one delivery: what waits
// for the next comes a Refresh later, and the buffer would drop meanwhile.
func TestAFullDefaultBufferIsDeliveredAtOnce(t *testing.T) {
	feed := program.Feed{Notes: program.NewNoteBuffer(program.DefaultNoteBuffer)}
	m := newAlone(tuitest.DemoOptions(tuitest.NewFakeClock()), tuitest.DemoResource(feed))
	t.Cleanup(m.Close)
	for seq := range uint64(program.DefaultNoteBuffer) {
		feed.Notes.Push(reflector.Note{Seq: seq + 1, Kind: reflector.NoteApplied})
	}
	if got := len(m.notesCmd(0)().(program.NotesMsg).Notes); got != program.DefaultNoteBuffer || feed.Notes.Len() != 0 {
		t.Errorf("one delivery took %d notes and left %d, want all %d", got, feed.Notes.Len(), program.DefaultNoteBuffer)
	}
}

func TestCloseStopsTheReadersWaitingOnEmptyChannels(t *testing.T) {
	feed, _ := tuitest.LiveFeed(t)
	m := newAlone(tuitest.DemoOptions(tuitest.NewFakeClock()), tuitest.DemoResource(feed))
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

// runOff executes a command with a deadline, so a pump that never returns
// fails the test instead of hanging it.
func runOff(t *testing.T, cmd func() any) any {
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
