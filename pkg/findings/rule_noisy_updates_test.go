package findings

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// modified feeds one diffed MODIFIED event of object i, a second later.
func (f *feed) modified(i int, ch *diff.Changes) {
	f.advance(time.Second)
	f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Changes: ch,
		Applied: &store.Result{Outcome: store.Modified, Object: &store.Object{Namespace: "ns", Name: fmt.Sprintf("cm-%d", i%50), UID: "u"}}})
}

func heartbeat() *diff.Changes {
	return &diff.Changes{TimestampOnly: true, Paths: []diff.Change{
		{Path: `.metadata.annotations["example.com/at"]`, Op: diff.Changed, Manager: "stamper", Operation: "Update"},
		{Path: ".metadata.resourceVersion", Op: diff.Changed, Meta: true}}}
}

func dataChange() *diff.Changes {
	return &diff.Changes{Paths: []diff.Change{{Path: ".data.value", Op: diff.Changed, Manager: "writer", Operation: "Update"}}}
}

func TestNoisyUpdatesNamesTheStampedPathAndItsWriter(t *testing.T) {
	f := newFeed(t, Options{})
	for i := range noisyMinEvents - 1 {
		f.modified(i, heartbeat())
	}
	if f.has(NoisyUpdates) {
		t.Fatal("raised before 100 events")
	}
	f.modified(0, heartbeat())
	got, ok := f.e.Get(NoisyUpdates)
	if !ok {
		t.Fatal("100 timestamp-only events of 50 objects did not raise noisy-updates")
	}
	if got.Evidence.Facts["path"] != `.metadata.annotations["example.com/at"]` || got.Evidence.Facts["manager"] != "stamper" || got.Evidence.Facts["share"] != "100%" {
		t.Errorf("facts: %v", got.Evidence.Facts)
	}
	if !strings.Contains(got.Evidence.Text, "50 objects") || !strings.Contains(got.Action, "predicate") {
		t.Errorf("evidence %q, action %q", got.Evidence.Text, got.Action)
	}
}

func TestNoisyUpdatesStaysQuietOnRealChangesAndForgetsOldMinutes(t *testing.T) {
	f := newFeed(t, Options{})
	for i := range 300 {
		f.modified(i, dataChange())
	}
	if f.has(NoisyUpdates) {
		t.Fatal("data changes raised noisy-updates")
	}
	// Half stamps, half data: at the threshold, raised.
	g := newFeed(t, Options{})
	for i := range 120 {
		if i%2 == 0 {
			g.modified(i, heartbeat())
		} else {
			g.modified(i, dataChange())
		}
	}
	if !g.has(NoisyUpdates) {
		t.Error("half timestamp-only events did not raise noisy-updates")
	}
	// 99 stamps, then six minutes of nothing, then one more: the window forgot them.
	h := newFeed(t, Options{})
	for i := range noisyMinEvents - 1 {
		h.modified(i, heartbeat())
	}
	h.advance(6 * time.Minute)
	h.modified(0, heartbeat())
	if h.has(NoisyUpdates) {
		t.Error("events older than the window counted")
	}
}

func TestNoisyUpdatesSeesOneStatusFieldRewrittenOnNearlyEveryEvent(t *testing.T) {
	f := newFeed(t, Options{})
	counter := &diff.Changes{Paths: []diff.Change{{Path: ".status.heartbeatCount", Op: diff.Changed, Manager: "agent", Subresource: "status"}}}
	for i := range 95 {
		f.modified(i, counter)
	}
	for i := range 5 {
		f.modified(i, dataChange())
	}
	got, ok := f.e.Get(NoisyUpdates)
	if !ok || got.Evidence.Facts["path"] != ".status.heartbeatCount" || got.Evidence.Facts["manager"] != "agent/status" {
		t.Fatalf("%v %+v", ok, got.Evidence)
	}
	// Skipped events are not evidence.
	s := newFeed(t, Options{})
	for i := range 200 {
		s.modified(i, diff.Skip(diff.SkipNoPrevious))
	}
	if s.has(NoisyUpdates) {
		t.Error("events not diffed raised it")
	}
}

// TestNoisyUpdatesIsRaisedWhenItsEventsComeFast: 105 heartbeats within
// 15 s were checked once a second, while the window had fewer than 100,
// and never again. Every event is checked: the one that makes the share.
func TestNoisyUpdatesIsRaisedWhenItsEventsComeFast(t *testing.T) {
	feedEvents := func(f *feed, n int, every time.Duration, ch func() *diff.Changes) {
		for range n {
			f.advance(every)
			f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Changes: ch(),
				Applied: &store.Result{Outcome: store.Modified, Object: &store.Object{Namespace: "ns", Name: "c1", UID: "u"}}})
		}
	}
	f := newFeed(t, Options{})
	feedEvents(f, noisyMinEvents, 140*time.Millisecond, heartbeat)
	if !f.has(NoisyUpdates) {
		t.Error("the 100th heartbeat, 140ms after the 99th, did not raise noisy-updates")
	}
	// 100 real changes, then heartbeats 5ms apart: the 100th makes half.
	f = newFeed(t, Options{})
	feedEvents(f, noisyMinEvents, 140*time.Millisecond, dataChange)
	f.advance(2 * time.Second)
	feedEvents(f, noisyMinEvents-1, 5*time.Millisecond, heartbeat)
	if f.has(NoisyUpdates) {
		t.Fatal("99 heartbeats of 199 events raised noisy-updates")
	}
	feedEvents(f, 1, 5*time.Millisecond, heartbeat)
	if got, ok := f.e.Get(NoisyUpdates); !ok || got.Count != 2*noisyMinEvents {
		t.Errorf("the 100th heartbeat of 200 events, 5ms after the 99th: %v %+v, want noisy-updates raised", ok, got)
	}
}

// Applies of the same values under a new field manager each change only
// managedFields: the finding says so, and names no path nor writer it
// does not have (it said "changed only times", the path "" and "a writer
// the object's managedFields do not name").
func TestNoisyUpdatesOfManagedFieldsAloneSaySo(t *testing.T) {
	f := newFeed(t, Options{})
	reapply := &diff.Changes{TimestampOnly: true, Paths: []diff.Change{
		{Path: ".metadata.managedFields", Op: diff.Changed, Meta: true},
		{Path: ".metadata.resourceVersion", Op: diff.Changed, Meta: true}}}
	for i := range noisyMinEvents {
		f.modified(i, reapply)
	}
	got, ok := f.e.Get(NoisyUpdates)
	if !ok {
		t.Fatal("100 events that changed only managedFields did not raise noisy-updates")
	}
	if got.Evidence.Facts["path"] != ".metadata.managedFields" || got.Evidence.Facts["manager"] != "" {
		t.Errorf("facts: %v", got.Evidence.Facts)
	}
	if want := "100 of the last 100 MODIFIED events (100%) changed only who manages the fields (managedFields), not a value"; got.Title != want {
		t.Errorf("title %q, want %q", got.Title, want)
	}
	for _, text := range []string{got.Evidence.Text, got.Cause} {
		if strings.Contains(text, "is ,") || strings.Contains(text, "rewrites  ") || strings.Contains(text, "do not name") {
			t.Errorf("says a path or writer it does not have: %q", text)
		}
	}
	if !strings.Contains(got.Evidence.Text, "of 50 objects;") {
		t.Errorf("evidence %q does not count the window's objects", got.Evidence.Text)
	}
}

// Every event of a burst counts at once: the finding's count agreed with
// the churn pane only at the next note (a bookmark, a minute later) or the
// run's end. Its objects are those of the noisy events: a data change to
// another object is none of them.
func TestNoisyUpdatesCountsEveryEventOfABurstAtOnce(t *testing.T) {
	f := newFeed(t, Options{})
	for i := range noisyMinEvents + 5 {
		f.advance(5 * time.Millisecond)
		name, ch := "c1", heartbeat()
		if i%10 == 9 {
			name, ch = "c2", dataChange()
		}
		f.note(reflector.Note{Kind: reflector.NoteApplied, Event: reflector.EventModified, Changes: ch,
			Applied: &store.Result{Outcome: store.Modified, Object: &store.Object{Namespace: "ns", Name: name, UID: "u"}}})
	}
	got, _ := f.e.Get(NoisyUpdates)
	if got.Count != noisyMinEvents+5 {
		t.Errorf("count %d right after the burst, want %d", got.Count, noisyMinEvents+5)
	}
	if want := "95 of the last 105 MODIFIED events (90%) changed only times"; got.Title != want {
		t.Errorf("title %q, want %q", got.Title, want)
	}
	if !strings.Contains(got.Evidence.Text, "changed only times, of 1 object;") {
		t.Errorf("evidence %q, want the one object whose events changed only times", got.Evidence.Text)
	}
}

// What the finding says does not depend on when it was read: it is what
// the last event that held it left (a dashboard reads it often, --no-tui
// at the end; the two runs' summaries differed).
func TestNoisyUpdatesSaysTheSameWhenEverItIsRead(t *testing.T) {
	final := func(readBetween bool) Finding {
		f := newFeed(t, Options{})
		for i := range noisyMinEvents + 10 {
			f.modified(i, heartbeat())
			if readBetween && i == noisyMinEvents+5 {
				f.e.Get(NoisyUpdates)
			}
		}
		for i := range 200 {
			f.modified(i, dataChange())
		}
		got, _ := f.e.Get(NoisyUpdates)
		return got
	}
	read, unread := final(true), final(false)
	if read.Title != unread.Title || read.Count != unread.Count || !read.LastAt.Equal(unread.LastAt) || read.Evidence.Text != unread.Evidence.Text {
		t.Errorf("read during the run: %q (%d, %v); read at the end only: %q (%d, %v)", read.Title, read.Count, read.LastAt, unread.Title, unread.Count, unread.LastAt)
	}
	if want := "110 of the last 220 MODIFIED events (50%) changed only times"; unread.Title != want {
		t.Errorf("title %q, want %q: the last event that held it", unread.Title, want)
	}
}

// The share among the facts is the one the title gives: a reviewer read
// "119 of the last 140 MODIFIED events (85%) changed only times" beside
// "share: 86%", the share of the events whose only change was that path
// (one of which changed it to something not a time).
func TestNoisyUpdatesShareIsTheTitles(t *testing.T) {
	f := newFeed(t, Options{})
	notATime := &diff.Changes{Paths: []diff.Change{{Path: `.metadata.annotations["example.com/at"]`, Op: diff.Changed, Manager: "stamper"}}}
	f.modified(0, notATime)
	for i := range 39 {
		f.modified(i, dataChange())
	}
	for i := range 60 {
		f.modified(i, heartbeat())
	}
	got, ok := f.e.Get(NoisyUpdates)
	if !ok || !strings.Contains(got.Title, "(60%) changed only times") || got.Evidence.Facts["share"] != "60%" {
		t.Errorf("%v: title %q, share %q; want 60%% in both", ok, got.Title, got.Evidence.Facts["share"])
	}
}

// README promises noisy-updates "over the last 5 minutes (in minutes of
// the clock: the one under way and the 4 before it)": events of 10:00:59
// count with those of 10:04:59, not with those of 10:05:00, a second
// later (a window sliding over 5 minutes would count them in both).
func TestNoisyUpdatesWindowIsTheMinuteUnderWayAndTheFourBefore(t *testing.T) {
	at := func(clock string) time.Time {
		c, _ := time.Parse(time.TimeOnly, clock)
		return time.Date(2026, 12, 1, c.Hour(), c.Minute(), c.Second(), 0, time.UTC)
	}
	for _, tc := range []struct {
		second string
		want   bool
	}{{"10:04:59", true}, {"10:05:00", false}} {
		f := newFeed(t, Options{})
		for i := range noisyMinEvents / 2 {
			f.now = at("10:00:58") // modified moves it on a second
			f.modified(i, heartbeat())
		}
		for i := range noisyMinEvents / 2 {
			f.now = at(tc.second).Add(-time.Second)
			f.modified(i, heartbeat())
		}
		if f.has(NoisyUpdates) != tc.want {
			t.Errorf("50 events at 10:00:59, 50 more at %s: raised %v, want %v", tc.second, !tc.want, tc.want)
		}
	}
}

// Two writers each stamping their own time on half of the updates make the
// finding together: its cause and evidence name both, each with its path
// and share (a reviewer read only the first, of 50.2 % and 49.8 %); and a
// share under 100 % is never said as 100 % (the title said 1991 of 2001,
// 99.5 %, was 100 %).
func TestNoisyUpdatesNamesEveryWriterAndNeverRoundsUpTo100(t *testing.T) {
	f := newFeed(t, Options{})
	stamp := func(writer string) *diff.Changes {
		return &diff.Changes{TimestampOnly: true, Paths: []diff.Change{
			{Path: `.metadata.annotations["example.com/heartbeat-` + writer + `"]`, Op: diff.Changed, Manager: "mgr-" + writer, Operation: "Update"},
			{Path: ".metadata.resourceVersion", Op: diff.Changed, Meta: true}}}
	}
	for i := range 199 {
		f.modified(i, stamp([]string{"a", "b"}[i%2]))
	}
	f.modified(0, dataChange()) // 199 of 200: 99.5 %
	got, ok := f.e.Get(NoisyUpdates)
	if !ok {
		t.Fatal("noisy-updates not raised")
	}
	const title = "199 of the last 200 MODIFIED events (99.5%) changed only times"
	if got.Title != title || got.Evidence.Facts["share"] != "99.5%" {
		t.Errorf("title %q, share %q; want %q", got.Title, got.Evidence.Facts["share"], title)
	}
	for _, want := range []string{`mgr-a rewrites .metadata.annotations["example.com/heartbeat-a"] (in 50.0% of the events), mgr-b rewrites .metadata.annotations["example.com/heartbeat-b"] (in 49.5% of the events)`} {
		if !strings.HasPrefix(got.Cause, want) {
			t.Errorf("cause %q, want it to begin %q", got.Cause, want)
		}
	}
	if want := `.metadata.annotations["example.com/heartbeat-a"], written by mgr-a (100 events, 50.0%); .metadata.annotations["example.com/heartbeat-b"], written by mgr-b (99 events, 49.5%)`; !strings.Contains(got.Evidence.Text, want) {
		t.Errorf("evidence %q, want it to say %q", got.Evidence.Text, want)
	}
}

// One writer stamping two paths in every update (a kubelet its conditions'
// heartbeats) is one writer: the cause names it alone, never "between
// them", as if two writers split the updates.
func TestNoisyUpdatesOfOneWriterStampingTwoPathsNamesItOnce(t *testing.T) {
	f := newFeed(t, Options{})
	for i := range 150 {
		f.modified(i, &diff.Changes{TimestampOnly: true, Paths: []diff.Change{
			{Path: ".status.conditions[0].lastHeartbeatTime", Op: diff.Changed, Manager: "kubelet", Operation: "Update"},
			{Path: ".status.conditions[1].lastHeartbeatTime", Op: diff.Changed, Manager: "kubelet", Operation: "Update"}}})
	}
	got, ok := f.e.Get(NoisyUpdates)
	if !ok {
		t.Fatal("noisy-updates not raised")
	}
	if strings.Contains(got.Cause, "between them") || strings.Count(got.Cause, "kubelet rewrites") != 1 {
		t.Errorf("cause %q: want kubelet named once, as the one writer", got.Cause)
	}
}
