package store

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// refModel is the obviously-correct reference: plain maps of object values,
// each rule written out once, the relist diff computed over the sorted union of refs.
type refModel struct {
	live      map[Ref]Object
	buffer    map[Ref]Object
	relisting bool
	ready     bool
	lastDiff  *RelistDiff // the diff of the last InitDone
}

// step applies ev to the model; ok is false for an event the Writer must reject.
func (m *refModel) step(ev Event) (out Outcome, prev *Object, ok bool) {
	switch ev.Type {
	case Init:
		m.buffer, m.relisting = map[Ref]Object{}, true
		return RelistStarted, nil, true
	case InitApply:
		if !m.relisting || ev.Object == nil || ev.Object.Name == "" {
			return 0, nil, false
		}
		m.buffer[ev.Object.Ref()] = *ev.Object
		return Buffered, nil, true
	case InitDone:
		if !m.relisting {
			return 0, nil, false
		}
		m.lastDiff = modelDiff(m.live, m.buffer, ev.ResourceVersion, !m.ready)
		m.live, m.buffer, m.relisting, m.ready = m.buffer, nil, false, true
		return Relisted, nil, true
	case Bookmark:
		return Ignored, nil, true
	case Apply, Delete:
		if ev.Object == nil || ev.Object.Name == "" {
			return 0, nil, false
		}
	default:
		return 0, nil, false
	}
	o := *ev.Object
	cur, found := m.live[o.Ref()]
	if found {
		prev = &cur
	}
	if ev.Type == Apply {
		switch {
		case !found:
			out = Added
		case cur.UID != o.UID:
			out = Replaced
		case cur.ResourceVersion == o.ResourceVersion:
			return Duplicate, prev, true
		default:
			out = Modified
		}
		m.live[o.Ref()] = o
		return out, prev, true
	}
	switch {
	case !found:
		return AbsentDelete, prev, true
	case cur.UID != o.UID:
		return StaleDelete, prev, true
	}
	delete(m.live, o.Ref())
	return Deleted, prev, true
}

func modelDiff(old, next map[Ref]Object, rv string, first bool) *RelistDiff {
	d := &RelistDiff{ResourceVersion: rv, Before: len(old), After: len(next)}
	if first && len(old) == 0 {
		return d // every object is added: counted, not listed
	}
	refs := slices.Collect(maps.Keys(old))
	for ref := range next {
		if _, ok := old[ref]; !ok {
			refs = append(refs, ref)
		}
	}
	slices.SortFunc(refs, Ref.Compare)
	for _, ref := range refs {
		o, inOld := old[ref]
		n, inNext := next[ref]
		e := DiffEntry{Ref: ref, OldUID: o.UID, NewUID: n.UID, OldResourceVersion: o.ResourceVersion, NewResourceVersion: n.ResourceVersion}
		switch {
		case !inNext:
			d.Deleted = append(d.Deleted, e)
		case !inOld:
			d.Added = append(d.Added, e)
		case o.UID != n.UID:
			d.Recreated = append(d.Recreated, e)
		case o.ResourceVersion != n.ResourceVersion:
			d.Updated = append(d.Updated, e)
		default:
			d.Unchanged++
		}
	}
	return d
}

// eventGen draws events over a tiny universe so that every rule fires often:
// 6 refs, 3 UIDs, 5 resourceVersions.
type eventGen struct {
	r *rand.Rand
	m *refModel
}

var (
	modelNamespaces = []string{"a", "b"}
	modelNames      = []string{"x", "y", "z"}
)

func (g *eventGen) object() *Object {
	o := obj(modelNamespaces[g.r.IntN(2)], modelNames[g.r.IntN(3)],
		"u"+strconv.Itoa(g.r.IntN(3)), strconv.Itoa(g.r.IntN(5)))
	if g.r.IntN(3) == 0 {
		labels := map[string]string{}
		for i := range g.r.IntN(12) {
			labels["k"+strconv.Itoa(i)] = "v"
		}
		o.Labels = MakeLabels(labels)
	}
	if g.r.IntN(3) == 0 {
		o.Body = make([]byte, g.r.IntN(64))
	}
	return o
}

// liveCopy returns a new pointer equal to a random live entry, or nil.
func (g *eventGen) liveCopy() *Object {
	if len(g.m.live) == 0 {
		return nil
	}
	refs := slices.SortedFunc(maps.Keys(g.m.live), Ref.Compare)
	o := g.m.live[refs[g.r.IntN(len(refs))]]
	return &o
}

func (g *eventGen) next() Event {
	p := g.r.IntN(100)
	switch {
	case p < 30:
		if o := g.liveCopy(); o != nil && g.r.IntN(3) == 0 {
			return evApply(o) // a duplicate delivery
		}
		return evApply(g.object())
	case p < 50:
		if o := g.liveCopy(); o != nil && g.r.IntN(2) == 0 {
			return evDelete(o) // the right UID
		}
		return evDelete(g.object()) // absent, or most likely a stale UID
	case p < 54:
		return evBookmark(strconv.Itoa(g.r.IntN(5)))
	case p < 57:
		return [...]Event{evInitApply(g.object()), evInitDone("0"), {Type: Apply}, evDelete(obj("a", "", "u0", "1")), {Type: 99}}[g.r.IntN(5)]
	case g.m.relisting && p < 85:
		if o := g.liveCopy(); o != nil && g.r.IntN(2) == 0 {
			return evInitApply(o) // unchanged in the diff
		}
		return evInitApply(g.object())
	case g.m.relisting && p < 97:
		return evInitDone(strconv.Itoa(g.r.IntN(5)))
	case p < 66 || g.m.relisting:
		return evInit()
	}
	return evApply(g.object())
}

func TestWriterMatchesAReferenceModelOnRandomEvents(t *testing.T) {
	const seeds, eventsPerSeed = 4, 5000 // 20,000 events, each followed by a full comparison
	total := 0
	seen := map[Outcome]int{}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			st, w := New()
			sub := st.Subscribe(eventsPerSeed)
			m := &refModel{live: map[Ref]Object{}}
			g := &eventGen{r: rand.New(rand.NewPCG(seed, 0x5eed)), m: m}
			var history []string
			for i := range eventsPerSeed {
				ev := g.next()
				history = append(history, describeEvent(ev))
				wantOut, wantPrev, valid := m.step(ev)
				r, err := w.ApplyEvent(ev)
				fail := func(format string, args ...any) {
					t.Helper()
					t.Fatalf("step %d: %s\nlast events:\n  %s", i, fmt.Sprintf(format, args...),
						joinLast(history, 12))
				}
				seen[wantOut]++
				if !valid {
					if !errors.Is(err, ErrInvalidEvent) {
						fail("invalid event accepted: got %v, want an error wrapping ErrInvalidEvent", err)
					}
				} else {
					if err != nil {
						fail("unexpected error %v", err)
					}
					if r.Outcome == Relisted && !diffEqual(r.Diff, m.lastDiff) {
						fail("relist diff: got %+v, want %+v", r.Diff, m.lastDiff)
					}
					if r.Outcome != wantOut {
						fail("outcome: got %v, want %v", r.Outcome, wantOut)
					}
					if got, want := describeOpt(r.Previous), describeOpt(wantPrev); got != want {
						fail("previous: got %q, want %q", got, want)
					}
					if wantOut.changesLive() {
						select {
						case c := <-sub.Changes():
							if c.Outcome != r.Outcome || c.Object != r.Object || c.Diff != r.Diff {
								fail("subscriber got %v, want %v", c.Outcome, r.Outcome)
							}
						default:
							fail("subscriber got nothing for %v", r.Outcome)
						}
					}
				}
				checkAgainstModel(t, st, m, fail)
				total++
			}
			if got := sub.Missed(); got != 0 {
				t.Errorf("subscriber missed %d changes, want 0", got)
			}
		})
	}
	if total < 10_000 {
		t.Errorf("checked %d events, want at least 10,000", total)
	}
	for o := RelistStarted; o <= Ignored; o++ {
		if seen[o] < 20 {
			t.Errorf("outcome %v happened %d times, want at least 20: the generator no longer exercises it", o, seen[o])
		}
	}
	if seen[0] < 20 {
		t.Errorf("invalid events happened %d times, want at least 20", seen[0])
	}
	t.Logf("outcomes: %v", seen)
}

func checkAgainstModel(t *testing.T, st *Store, m *refModel, fail func(string, ...any)) {
	t.Helper()
	objs := st.List()
	var want []*Object
	var wantBytes int64
	for _, o := range m.live {
		want = append(want, &o)
	}
	if got, want := describe(objs), describe(want); !slices.Equal(got, want) {
		fail("List: got %q, want %q", got, want)
	}
	for _, o := range objs {
		wantBytes += estimateBytes(o)
	}
	if got, want := st.Len(), len(m.live); got != want {
		fail("Len: got %d, want %d", got, want)
	}
	for _, ns := range modelNamespaces {
		for _, name := range modelNames {
			ref := Ref{ns, name}
			got, ok := st.Get(ref)
			want, wantOK := m.live[ref]
			if ok != wantOK || ok && (got.UID != want.UID || got.ResourceVersion != want.ResourceVersion) {
				fail("Get(%s): got %q %v, want %q %v", ref, describeOpt(got), ok, describeOpt(&want), wantOK)
			}
		}
	}
	if got, want := st.Ready(), m.ready; got != want {
		fail("Ready: got %v, want %v", got, want)
	}
	c := st.Counters()
	if c.Objects != len(m.live) {
		fail("Counters.Objects: got %d, want %d", c.Objects, len(m.live))
	}
	if c.BytesHeld != wantBytes {
		fail("BytesHeld: got %d, want the sum over live objects %d", c.BytesHeld, wantBytes)
	}
}

func describeEvent(ev Event) string {
	return fmt.Sprintf("%v %s %s", ev.Type, describeOpt(ev.Object), ev.ResourceVersion)
}

func describeOpt(o *Object) string {
	if o == nil {
		return "-"
	}
	return fmt.Sprintf("%s %s %s", o.Ref(), o.UID, o.ResourceVersion)
}

func joinLast(lines []string, n int) string {
	s := ""
	for _, l := range lines[max(0, len(lines)-n):] {
		s += l + "\n  "
	}
	return s
}

// changesLive reports whether the outcome altered the live snapshot; only these
// reach subscribers.
func (o Outcome) changesLive() bool {
	switch o {
	case Relisted, Added, Modified, Replaced, Deleted:
		return true
	}
	return false
}
