package findings

import (
	"slices"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// track is what several rules read of the notes so far, kept once: the
// engine reads each note into it before its rules read the note.
type track struct {
	watch *openWatch // the watch in flight
	// ended is the watch the note being read ended (its RequestEnded), if
	// it was the one in flight.
	ended *openWatch
	// seen is the run's last signs of life as they stand; beforeList is
	// seen as it stood before the last complete list: where what that
	// list's relist diff found missing can have gone missing.
	seen, beforeList signs
	// the last watch that ended: how long it lived and whether it
	// delivered nothing
	lastWatchLife  time.Duration
	lastWatchQuiet bool
	// the first list: whether it completed (firstList: with the note being
	// read), and its requests
	firstListed, firstList bool
	listReqs               []int64
	// lastVerb is the verb of the last request started.
	lastVerb reflector.Verb
	// faults are the specs of the faults the observing proxy injected so
	// far (proxy --fault), by fault name: each finding that such a fault
	// provokes names it as its cause (see provokedBy).
	faults map[string]string
}

// signs are the last signs of life of a run.
type signs struct {
	// alive is the last applied event or complete list, or the end of a
	// watch that delivered an event or bookmark; list the last complete
	// list.
	alive, list time.Time
	// watch is the last watch that ended, aliveWatch the last that ended
	// having delivered something: the one that was up when something went
	// missing (the one after it may only have been answered 410).
	watch, aliveWatch int64
	// quiet are the watches that ended after alive having delivered
	// nothing, and quietOpen how long they were open in all: time after
	// the last sign of life in which a watch was up, only silent.
	quiet     []int64
	quietOpen time.Duration
	// dropped counts the DELETED events the observing proxy dropped
	// (--fault drop-deletes) since the last complete list.
	dropped int
}

// quietOpenFor is how long a watch that delivered nothing must have
// lived to count as open: one refused, cut at once or answered 410 was
// not up.
const quietOpenFor = time.Second

// lived is a sign of life at at: no watch since has been quiet.
func (s *signs) lived(at time.Time) {
	s.alive, s.quiet, s.quietOpen = at, nil, 0
}

type openWatch struct {
	id         int64
	started    time.Time
	bookmarked bool // a progress bookmark came
	listEnded  bool // its streaming list's end bookmark came
	streaming  bool // it is a streaming list (sendInitialEvents=true)
	asked      bool // allowWatchBookmarks
	timeout    time.Duration
	applied    int  // events it applied
	ranOut     bool // it ended closed at the timeout it asked for (within a second)
	// firstEvent is when it applied its first event: from then on the
	// server has a resourceVersion newer than the watch's to bookmark.
	firstEvent time.Time
}

func (t *track) observe(n reflector.Note) {
	t.ended, t.firstList = nil, false
	switch n.Kind {
	case reflector.NoteRequestStarted:
		if n.Request != nil {
			t.requestStarted(n.Request)
		}
	case reflector.NoteRequestEnded:
		if r := endedWatch(n); r != nil {
			t.watchEnded(n.At, r)
		}
	case reflector.NoteApplied:
		t.seen.lived(n.At)
		if w := t.watch; w != nil {
			w.applied++
			if w.firstEvent.IsZero() {
				w.firstEvent = n.At
			}
		}
	case reflector.NoteBookmark:
		if w := t.watch; w != nil && w.id == n.RequestID && n.Bookmark != nil {
			if n.Bookmark.ListEnd {
				w.listEnded = true
			} else {
				w.bookmarked = true
			}
		}
	case reflector.NoteDecision:
		if decided(n, reflector.ReasonListComplete) != nil {
			// The cache was whole as of the list: nothing was missed before it.
			t.beforeList = t.seen
			t.seen.lived(n.At)
			t.seen.list, t.seen.dropped = n.At, 0
			if !t.firstListed {
				t.firstListed, t.firstList = true, true
			}
		}
		if d := decided(n, reflector.ReasonFault); d != nil && d.Fault != "" {
			if t.faults == nil {
				t.faults = map[string]string{}
			}
			t.faults[faultName(d.Fault)] = d.Fault
			if faultName(d.Fault) == "drop-deletes" {
				t.seen.dropped += int(max(d.Count, 1))
			}
		}
	}
}

// faultName is the name of a --fault spec: "gone" of "gone@every=20s".
func faultName(spec string) string {
	name, _, _ := strings.Cut(spec, "@")
	name, _, _ = strings.Cut(name, "=")
	return name
}

// provokedBy are the faults of proxy --fault that provoke each finding.
func provokedBy(id ID) []string {
	return map[ID][]string{MissedDeletes: {"drop-deletes", "gone"}, UIDMismatch: {"drop-deletes"}, RelistStorm: {"gone"}, NoBookmarks: {"no-bookmarks"},
		WatchListUnsupported: {"stall-initial-list"}, Throttled: {"throttle"}, WatchFlapping: {"cut"},
		SlowDelivery: {"delay"}, RVBackwards: {"stale"}}[id]
}

// injected says which faults the proxy injected that provoke the finding
// id ("" when none did): "--fault drop-deletes, --fault gone@every=20s".
func (t *track) injected(id ID) string {
	var specs []string
	for _, name := range provokedBy(id) {
		if spec, ok := t.faults[name]; ok {
			specs = append(specs, "--fault "+spec)
		}
	}
	return strings.Join(specs, ", ")
}

func (t *track) requestStarted(r *reflector.RequestInfo) {
	t.lastVerb = r.Verb
	if r.Verb == reflector.VerbWatch {
		t.watch = &openWatch{id: r.ID, started: r.Started, asked: r.Opts.AllowWatchBookmarks, streaming: r.Opts.SendInitialEvents,
			timeout: time.Duration(r.Opts.TimeoutSeconds) * time.Second}
	} else {
		t.watch = nil
	}
	if !t.firstListed && (r.Verb == reflector.VerbList || r.Opts.SendInitialEvents) {
		t.listReqs = appendLast(t.listReqs, r.ID)
	}
}

func (t *track) watchEnded(at time.Time, r *reflector.RequestInfo) {
	w := t.watch
	t.watch = nil
	alive := false
	if w != nil && w.id == r.ID {
		t.ended = w
		w.ranOut = r.End.Reason == reflector.EndClosed && w.timeout > 0 && r.Duration >= w.timeout-time.Second
		// It delivered something: an event, a bookmark, or the end of its streaming list.
		alive = w.applied > 0 || w.bookmarked || w.listEnded
	}
	if alive {
		t.seen.lived(at)
		t.seen.aliveWatch = r.ID
	} else if w != nil && w.id == r.ID && !w.streaming && r.Duration >= quietOpenFor {
		// A watch, not a streaming list that broke before its end
		// bookmark (its initial events are no events applied): that was
		// a list in progress, not a watch that said nothing.
		t.seen.quiet = appendLast(t.seen.quiet, r.ID)
		t.seen.quietOpen += r.Duration
	}
	t.seen.watch, t.lastWatchLife, t.lastWatchQuiet = r.ID, r.Duration, !alive
}

// listTook is how long the list that the list-complete note n completed
// took (0 when it does not say), from the request that began it, not from
// the decision to list: a wait for --max-concurrent-lists, backoffs and a
// streaming list that stalled come before.
func listTook(n reflector.Note) time.Duration {
	if d := n.Decision; d != nil && !d.Began.IsZero() {
		return n.At.Sub(d.Began)
	}
	return 0
}

// tookText says how long a list took, listTook's: "time unknown" when
// its note does not say, as a list's bytes say "size unknown".
func tookText(took time.Duration) string {
	if took <= 0 {
		return "time unknown"
	}
	return roundDur(took)
}

// endedWatch is the watch request a RequestEnded note ended, if it is one.
func endedWatch(n reflector.Note) *reflector.RequestInfo {
	if r := n.Request; n.Kind == reflector.NoteRequestEnded && r != nil && r.End != nil && r.Verb == reflector.VerbWatch {
		return r
	}
	return nil
}

// decided is the note's decision, if it is one of reasons.
func decided(n reflector.Note, reasons ...reflector.Reason) *reflector.Decision {
	if d := n.Decision; n.Kind == reflector.NoteDecision && d != nil && slices.Contains(reasons, d.Reason) {
		return d
	}
	return nil
}

// window is the span from to to, if both are known.
func window(from, to time.Time) *Window {
	if from.IsZero() || to.IsZero() {
		return nil
	}
	return &Window{From: from, To: to, Seconds: to.Sub(from).Seconds()}
}
