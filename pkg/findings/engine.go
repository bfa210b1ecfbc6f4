package findings

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// Options tune an Engine. The zero value is the catalogue's defaults.
type Options struct {
	// Resource and Client name whose findings they are (Finding.Resource, Finding.Client).
	Resource string
	Client   string
	// StreamAsked says the user asked for the streaming list explicitly
	// (--initial-list=stream): its refusal is then a warning, not info.
	StreamAsked bool
	// StormRelists relists within StormWindow are a relist storm (3 in 10 minutes).
	StormRelists int
	StormWindow  time.Duration
	// FlapWatches watches that end in an error or within FlapLifetime of
	// starting, within FlapWindow, are flapping (5 in 5 minutes, 10 s).
	FlapWatches  int
	FlapWindow   time.Duration
	FlapLifetime time.Duration
	// BookmarkInterval is how long a watch that asked for bookmarks may stay
	// open without one (75 s: past the API server's minute).
	BookmarkInterval time.Duration
	// LargeListBytes, LargeListObjects and LargeListTime make an initial
	// list large (100 MiB, 50,000 objects, 30 s).
	LargeListBytes   int64
	LargeListObjects int
	LargeListTime    time.Duration
	// Ignore are the ids the user silenced (--ignore-finding).
	Ignore []ID
}

func (o Options) withDefaults() Options {
	if o.StormRelists <= 0 {
		o.StormRelists = 3
	}
	if o.StormWindow <= 0 {
		o.StormWindow = 10 * time.Minute
	}
	if o.FlapWatches <= 0 {
		o.FlapWatches = 5
	}
	if o.FlapWindow <= 0 {
		o.FlapWindow = 5 * time.Minute
	}
	if o.FlapLifetime <= 0 {
		o.FlapLifetime = 10 * time.Second
	}
	if o.BookmarkInterval <= 0 {
		o.BookmarkInterval = 75 * time.Second
	}
	if o.LargeListBytes <= 0 {
		o.LargeListBytes = 100 << 20
	}
	if o.LargeListObjects <= 0 {
		o.LargeListObjects = 50000
	}
	if o.LargeListTime <= 0 {
		o.LargeListTime = 30 * time.Second
	}
	return o
}

// Source is what an engine reads of its reflector's running totals, besides
// the notes: a Reflector, a Ledger and an observed Stream have both.
type Source interface {
	Counters() reflector.Counters
	Lag() reflector.LagStats
}

// Engine raises the findings of one reflector from its notes. Observe is
// called with each note in order (from the reflector's goroutine); the
// other methods may be called from any goroutine.
type Engine struct {
	src Source

	mu      sync.Mutex
	opts    Options
	ignore  map[ID]bool
	found   map[ID]*Finding
	order   []ID // raise order
	onRaise []func(Finding)
	pending []Finding // raised during the note being observed, handed to onRaise after mu

	// what the notes told so far
	watch     *openWatch // the watch in flight
	lastAlive time.Time  // the last applied event, or the end of a watch that delivered an event or bookmark
	// the last watch that ended: how long it lived and whether it delivered anything
	lastWatchLife  time.Duration
	lastWatchQuiet bool
	lastWatchEnd   time.Time
	relists        []time.Time // when relists of the server's began
	listStart      time.Time   // when the first list's last attempt began (its first request)
	listReqs       []int64     // the requests of the list in progress
	firstListed    bool
	gones          []goneAt
	flaps          []flap
	refused        *refusal
	throttles      []int64
	apf            apfSeen
	apfNames       map[string]string // "kind/uid" → the name a 429 carried or NameFlowControl gave
	storms         []int64           // request ids that evidence the storm
	uidObjects     []Object
	backwards      []int64
	noBookmarks    []int64
	// timeoutMisses are the watches that ran to their timeout without the
	// bookmark due before it since the last watch that had one (see
	// minTimeoutMisses).
	timeoutMisses []int64
	missed        []Object
	missedTotal   int
	missedWindow  *Window
	missedReqs    []int64
	lagReqs       []int64
	probe         probeFigures // the delivery probe's, when the run has one
}

type openWatch struct {
	id         int64
	started    time.Time
	bookmarked bool // a progress bookmark came
	listEnded  bool // its streaming list's end bookmark came
	asked      bool // allowWatchBookmarks
	timeout    time.Duration
	streaming  bool
	checked    bool // the open-watch check raised or found a bookmark
	applied    int  // events it applied
	// firstEvent is when it applied its first event: from then on the
	// server has a resourceVersion newer than the watch's to bookmark.
	firstEvent time.Time
}

// apfSeen is what throttled says of the last 429 of API Priority and
// Fairness: its FlowSchema and PriorityLevel (the last UIDs given) and
// what it said.
type apfSeen struct {
	schemaUID, levelUID string
	said                string
}

type goneAt struct {
	at         time.Time
	id         int64
	afterStart time.Duration // the life of the quiet watch that got the 410 (-1: not a watch's)
	downFor    time.Duration // from the last sign of life to the 410
}

type flap struct {
	at       time.Time
	id       int64
	lifetime time.Duration
	cause    string
}

type refusal struct {
	at      time.Time
	id      int64
	cause   string
	stalled bool
}

// New returns an engine with opts; src is the reflector's (a Reflector, an
// observed Stream), read where a note needs the totals (nil: none).
func New(opts Options, src Source) *Engine {
	e := &Engine{src: src, found: map[ID]*Finding{}, opts: opts}
	e.Configure(opts)
	return e
}

// Configure sets the user's tuning (thresholds, Ignore); call it
// before the first note. The engine keeps the Resource, Client and
// StreamAsked it was made with.
func (e *Engine) Configure(opts Options) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	keep := e.opts
	e.opts = opts.withDefaults()
	e.opts.Resource, e.opts.Client, e.opts.StreamAsked = keep.Resource, keep.Client, keep.StreamAsked
	e.ignore = map[ID]bool{}
	for _, id := range opts.Ignore {
		e.ignore[id] = true
	}
	for id, f := range e.found {
		f.Ignored = e.ignore[id]
	}
}

// Name sets whose findings they are (Finding.Resource and Finding.Client).
func (e *Engine) Name(resource, client string) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.opts.Resource, e.opts.Client = resource, client
}

// OnRaise adds a listener of new findings: it is called once per finding,
// when it is first raised, on the goroutine of the note that raised it,
// after every listener of that note; and once more for throttled, with its
// evidence named, when NameFlowControl names the FlowSchema or
// PriorityLevel it gave by UID alone. It must not block.
func (e *Engine) OnRaise(f func(Finding)) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onRaise = append(e.onRaise, f)
}

// List returns the findings raised so far, in the order they were raised
// (none for a nil Engine).
func (e *Engine) List() []Finding {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Finding, 0, len(e.order))
	for _, id := range e.order {
		out = append(out, e.clone(e.found[id]))
	}
	return out
}

// Get returns the finding id, if raised.
func (e *Engine) Get(id ID) (Finding, bool) {
	if e == nil {
		return Finding{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	f, ok := e.found[id]
	if !ok {
		return Finding{}, false
	}
	return e.clone(f), true
}

func (e *Engine) clone(f *Finding) Finding {
	c := *f
	c.Evidence.Requests = slices.Clone(f.Evidence.Requests)
	c.Evidence.Objects = slices.Clone(f.Evidence.Objects)
	if f.Evidence.Window != nil {
		w := *f.Evidence.Window
		c.Evidence.Window = &w
	}
	if f.Evidence.Facts != nil {
		c.Evidence.Facts = make(map[string]string, len(f.Evidence.Facts))
		for k, v := range f.Evidence.Facts {
			c.Evidence.Facts[k] = v
		}
	}
	return c
}

// Observe reads one note. Notes must come in Seq order. A nil Engine
// observes nothing (a run measured without findings).
func (e *Engine) Observe(n reflector.Note) {
	if e == nil {
		return
	}
	e.mu.Lock()
	switch n.Kind {
	case reflector.NoteRequestStarted:
		e.requestStarted(n)
	case reflector.NoteRequestEnded:
		e.requestEnded(n)
	case reflector.NoteApplied:
		e.applied(n)
	case reflector.NoteDecision:
		e.decision(n)
	case reflector.NoteAudit:
		e.audit(n)
	case reflector.NoteListBegan:
		e.listBegan(n)
	case reflector.NoteBookmark:
		if w := e.watch; w != nil && w.id == n.RequestID && n.Bookmark != nil {
			if n.Bookmark.ListEnd {
				w.listEnded = true
			} else {
				w.bookmarked = true
			}
		}
	}
	e.checkOpenWatch(n.At)
	e.unlockAndTell()
}

// unlockAndTell releases mu, then hands the findings raised meanwhile to
// the OnRaise listeners (outside the lock: they may read the engine).
func (e *Engine) unlockAndTell() {
	pending, listeners := e.pending, e.onRaise
	e.pending = nil
	e.mu.Unlock()
	for _, f := range pending {
		for _, l := range listeners {
			l(f)
		}
	}
}

// raise creates or updates finding id; update fills it in.
func (e *Engine) raise(id ID, sev Severity, at time.Time, update func(f *Finding)) {
	f, ok := e.found[id]
	if !ok {
		f = &Finding{ID: id, Severity: sev, Resource: e.opts.Resource, Client: e.opts.Client, FirstAt: at, Ignored: e.ignore[id]}
		e.found[id] = f
		e.order = append(e.order, id)
	}
	f.LastAt = at
	update(f)
	if !ok {
		e.pending = append(e.pending, e.clone(f))
	}
}

func appendLast(ids []int64, id int64, keep int) []int64 {
	if id == 0 || (len(ids) > 0 && ids[len(ids)-1] == id) {
		return ids
	}
	ids = append(ids, id)
	if len(ids) > keep {
		ids = ids[len(ids)-keep:]
	}
	return ids
}

const keepRequests = 20
const keepObjects = 50

func (e *Engine) requestStarted(n reflector.Note) {
	r := n.Request
	if r == nil {
		return
	}
	if r.Verb == reflector.VerbWatch {
		e.watch = &openWatch{id: r.ID, started: r.Started, asked: r.Opts.AllowWatchBookmarks, streaming: r.Opts.SendInitialEvents,
			timeout: time.Duration(r.Opts.TimeoutSeconds) * time.Second}
	} else {
		e.watch = nil
	}
	if !e.firstListed && (r.Verb == reflector.VerbList || r.Opts.SendInitialEvents) {
		e.listReqs = appendLast(e.listReqs, r.ID, keepRequests)
		if r.Opts.Continue == "" {
			// A list (again) from its start: its time runs from here, not
			// from the decision to list (a wait for --max-concurrent-lists,
			// backoffs and a streaming list that stalled come before).
			e.listStart = n.At
		}
	}
}

func (e *Engine) requestEnded(n reflector.Note) {
	r := n.Request
	if r == nil || r.End == nil {
		return
	}
	end := r.End
	if isThrottle(end) {
		e.throttled(n.At, r, end)
	}
	if r.Verb == reflector.VerbWatch {
		e.watchEnded(n.At, r, end)
	}
}

// watchEnded checks a watch's end for missing bookmarks and flapping.
func (e *Engine) watchEnded(at time.Time, r *reflector.RequestInfo, end *reflector.RequestEnd) {
	w := e.watch
	e.watch = nil
	alive := false
	if w != nil && w.id == r.ID {
		// It delivered something: an event, a bookmark, or the end of its streaming list.
		alive = w.applied > 0 || w.bookmarked || w.listEnded
	}
	if alive {
		e.lastAlive = at
	}
	e.lastWatchEnd, e.lastWatchLife, e.lastWatchQuiet = at, r.Duration, !alive
	if w != nil && w.id == r.ID && w.asked && !w.checked && !w.firstEvent.IsZero() && !end.IsGone() {
		open := r.Duration
		// A watch that ran to a timeout too short for the server's
		// bookmark timer is no evidence; nor is one whose first event came
		// too late for the bookmark the server sends 2 s before the timeout.
		atTimeout := end.Reason == reflector.EndClosed && w.timeout >= minBookmarkTimeout && open >= w.timeout-time.Second &&
			at.Sub(w.firstEvent) >= preTimeoutBookmark+time.Second
		switch {
		case w.bookmarked:
			// The server sends bookmarks: a miss before this was the load's.
			e.timeoutMisses = nil
		case at.Sub(w.firstEvent) > e.opts.BookmarkInterval:
			e.noBookmark(at, r.ID, open, at.Sub(w.firstEvent), false)
		case atTimeout:
			// One watch that ran to its timeout without the bookmark due 2 s
			// before it is weak evidence: a healthy server sends that one
			// only once its watch cache has a newer resourceVersion (from
			// etcd's progress notifications, every few seconds), which a
			// loaded server can miss. Two, with no bookmark on a watch in
			// between, are the finding.
			e.timeoutMisses = appendLast(e.timeoutMisses, r.ID, keepRequests)
			if len(e.timeoutMisses) >= minTimeoutMisses {
				e.noBookmark(at, r.ID, open, at.Sub(w.firstEvent), true)
			}
		}
	}
	if end.IsGone() || end.IsTooLargeResourceVersion() {
		return
	}
	switch end.Reason {
	case reflector.EndStopped, reflector.EndCanceled:
		return
	}
	if !established(r, end) {
		return // a refused connection or an error answer: no watch was open to be cut
	}
	if w != nil && w.id == r.ID && end.Reason == reflector.EndClosed && w.timeout > 0 && r.Duration >= w.timeout-time.Second {
		return // it ran to the timeout it asked for, however short
	}
	failed := end.Reason == reflector.EndError
	short := r.Duration < e.opts.FlapLifetime
	if !failed && !short {
		return
	}
	e.flaps = append(e.flaps, flap{at: at, id: r.ID, lifetime: r.Duration, cause: end.Cause()})
	e.flaps = slices.DeleteFunc(e.flaps, func(f flap) bool { return at.Sub(f.at) > e.opts.FlapWindow })
	if len(e.flaps) < e.opts.FlapWatches {
		return
	}
	// A 410 in the window makes it a relist matter, not flapping.
	for _, g := range e.gones {
		if at.Sub(g.at) <= e.opts.FlapWindow {
			return
		}
	}
	e.flapping(at)
}

// minBookmarkTimeout is the shortest watch timeout after which a watch
// that asked for bookmarks should have had one (the API server sends one
// shortly before the timeout, on a timer of its own).
const minBookmarkTimeout = 10 * time.Second

// minTimeoutMisses is how many watches must run to their timeout without
// the bookmark due before it for no-bookmarks.
const minTimeoutMisses = 2

// preTimeoutBookmark is how long before a watch's timeout the API server's
// watch cache sends it a bookmark.
const preTimeoutBookmark = 2 * time.Second

// established says whether a watch's stream was open: it received an event
// (an ERROR event included), or it ended without an error answer and its
// error, if any, came from reading the stream. A request that failed before
// any response (Go's client says `Get "URL": …`: a refused or reset
// connection) or got an error status instead of a stream is a failed
// request, not a cut watch.
func established(r *reflector.RequestInfo, end *reflector.RequestEnd) bool {
	if r.Events > 0 {
		return true
	}
	if end.Status != nil {
		return false
	}
	return end.Err == nil || !requestFailed.MatchString(end.Err.Error())
}

// requestFailed matches the error of a Go HTTP request that got no response.
var requestFailed = regexp.MustCompile(`^[A-Z][a-z]+ "https?://`)

// checkOpenWatch raises no-bookmarks for a watch still open, with none,
// past the bookmark interval after its first event: checked on each note
// while it is open.
//
// The interval counts from the first event, not from the watch's start:
// the API server's watch cache sends a watch a bookmark only when it has a
// resourceVersion newer than the one the watch started from (a bookmark at
// the watch's own resourceVersion is dropped), so a watch of a resource
// that nothing changed is quiet on a healthy server. An event is the proof
// that there was something to bookmark.
func (e *Engine) checkOpenWatch(now time.Time) {
	w := e.watch
	if w == nil || !w.asked || w.checked || w.firstEvent.IsZero() || now.Sub(w.firstEvent) <= e.opts.BookmarkInterval {
		return
	}
	w.checked = true
	if !w.bookmarked {
		e.noBookmark(now, w.id, now.Sub(w.started), now.Sub(w.firstEvent), false)
	}
}

// noBookmark raises no-bookmarks for watch id and the earlier watches that
// ran to their timeout without one and were not counted yet (pending).
func (e *Engine) noBookmark(at time.Time, id int64, open, sinceEvent time.Duration, atTimeout bool) {
	pending := 0
	if atTimeout {
		// The misses before this one, held back until there were enough.
		for _, m := range e.timeoutMisses[:len(e.timeoutMisses)-1] {
			if !slices.Contains(e.noBookmarks, m) {
				e.noBookmarks = appendLast(e.noBookmarks, m, keepRequests)
				pending++
			}
		}
	}
	e.noBookmarks = appendLast(e.noBookmarks, id, keepRequests)
	e.raise(NoBookmarks, Warning, at, func(f *Finding) {
		f.Count += int64(1 + pending)
		how := fmt.Sprintf("stayed open %s", roundDur(open))
		if atTimeout {
			how = fmt.Sprintf("ran to its timeout (%s)", roundDur(open))
		}
		f.Title = fmt.Sprintf("no bookmark arrived on %d watch(es) that asked for them", f.Count)
		f.Evidence = Evidence{
			Text:     fmt.Sprintf("watch #%d asked for bookmarks (allowWatchBookmarks=true) and %s without one, %s after its first event showed the resource had moved on; the API server sends one about every minute, and 2s before a watch's timeout, whenever it has a newer resourceVersion than the watch's", id, how, roundDur(sinceEvent)),
			Requests: slices.Clone(e.noBookmarks),
		}
		f.Cause = "without bookmarks the cursor moves only when an object changes; after a restart or a compaction a quiet resource's resourceVersion is too old, and every reconnect relists (410 Gone). The API server sends bookmarks from its watch cache: it is disabled (--watch-cache=false, or for this resource), or the server is old"
		f.Action = "enable the API server's watch cache (--watch-cache, --watch-cache-sizes); until then expect a relist after each compaction"
		f.Docs = "https://kubernetes.io/docs/reference/using-api/api-concepts/#watch-bookmarks"
	})
}

func (e *Engine) flapping(at time.Time) {
	lifetimes := make([]time.Duration, len(e.flaps))
	var ids []int64
	causes := map[string]int{}
	failed := 0
	for i, f := range e.flaps {
		lifetimes[i] = f.lifetime
		ids = appendLast(ids, f.id, keepRequests)
		causes[f.cause]++
		if f.cause != string(reflector.EndClosed) {
			failed++
		}
	}
	sort.Slice(lifetimes, func(i, j int) bool { return lifetimes[i] < lifetimes[j] })
	typical := lifetimes[len(lifetimes)/2]
	common, commonN := "", 0
	for c, k := range causes {
		if k > commonN || (k == commonN && c < common) {
			common, commonN = c, k
		}
	}
	e.raise(WatchFlapping, Warning, at, func(f *Finding) {
		f.Count = int64(len(e.flaps))
		f.Title = fmt.Sprintf("%d watches ended early in %s (typically after %s)", len(e.flaps), roundDur(e.opts.FlapWindow), roundDur(typical))
		f.Evidence = Evidence{
			Text:     fmt.Sprintf("%d watches in the last %s ended in an error or within %s of starting, with no 410 Gone; typical lifetime %s; most common end: %s (%d)", len(e.flaps), roundDur(e.opts.FlapWindow), roundDur(e.opts.FlapLifetime), roundDur(typical), common, commonN),
			Requests: ids,
			Window:   window(e.flaps[0].at, at),
			Facts:    map[string]string{"typicalLifetime": roundDur(typical), "errors": fmt.Sprint(failed)},
		}
		f.Cause = flapCause(typical, lifetimes, common)
		f.Action = "find what cuts long-lived connections between this client and the API server: raise the idle timeout of the proxy or load balancer above the watch timeout (5-10 minutes), or check the API server's restarts and the network"
		f.Docs = "https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes"
	})
}

// flapCause reads the lifetimes and the common end: alike lifetimes are a
// timer in between; GOAWAY and refused connections a server going away.
func flapCause(typical time.Duration, lifetimes []time.Duration, common string) string {
	lc := strings.ToLower(common)
	switch {
	case strings.Contains(lc, "goaway") || strings.Contains(lc, "connection refused") || strings.Contains(lc, "503"):
		return "the API server went away under the watches (GOAWAY, refused connections, 503): restarts or a rolling update"
	case alike(lifetimes):
		return fmt.Sprintf("the watches live about %s each: something in between (a proxy, a load balancer, a NAT) cuts connections on an idle or maximum-lifetime timer", roundDur(typical))
	}
	return "watches are cut early: connection resets, a proxy or load balancer in between, or the network"
}

// alike says whether most lifetimes are within 25 % of the median.
func alike(ls []time.Duration) bool {
	if len(ls) == 0 {
		return false
	}
	m := ls[len(ls)/2]
	n := 0
	for _, l := range ls {
		if l >= m*3/4 && l <= m*5/4 {
			n++
		}
	}
	return n*4 >= len(ls)*3
}

// isThrottle says whether end is a 429 of the server's flow control (API
// Priority and Fairness, or max-in-flight), not one of the 429s that say
// something else: a watch cache still initializing after a restart, or the
// observing proxy's answer for a server it could not reach.
func isThrottle(end *reflector.RequestEnd) bool {
	st := end.Status
	if st == nil || st.Code != 429 {
		return false
	}
	m := strings.ToLower(st.Message)
	return !strings.Contains(m, "storage is (re)initializing") && !strings.Contains(m, "the server could not be reached")
}

func (e *Engine) throttled(at time.Time, r *reflector.RequestInfo, end *reflector.RequestEnd) {
	e.throttles = appendLast(e.throttles, r.ID, keepRequests)
	e.raise(Throttled, Warning, at, func(f *Finding) {
		f.Count++
		f.Title = fmt.Sprintf("the API server throttled %d request(s) (429 Too Many Requests)", f.Count)
		facts := f.Evidence.Facts
		if facts == nil {
			facts = map[string]string{}
		}
		if d := end.Status.Details; d != nil && d.RetryAfterSeconds > 0 {
			facts["retryAfter"] = roundDur(time.Duration(d.RetryAfterSeconds) * time.Second)
		}
		if t := end.Throttle; t != nil {
			if t.RetryAfter > 0 {
				facts["retryAfter"] = roundDur(t.RetryAfter)
			}
			if t.FlowSchemaUID != "" {
				e.apf.schemaUID = t.FlowSchemaUID
				e.keepName("flowschema", t.FlowSchemaUID, t.FlowSchema)
			}
			if t.PriorityLevelUID != "" {
				e.apf.levelUID = t.PriorityLevelUID
				e.keepName("prioritylevelconfiguration", t.PriorityLevelUID, t.PriorityLevel)
			}
		}
		e.apf.said = fmt.Sprintf("%d request(s) answered 429; the last, #%d (%s), said: %s", f.Count, r.ID, strings.ToUpper(string(r.Verb)), end.Cause())
		f.Evidence = Evidence{Requests: slices.Clone(e.throttles), Facts: facts}
		f.Cause = "API Priority and Fairness had no seat for the request in its priority level and its queues were full (or the level rejects): the client's requests, or others in the same level, exceed its share"
		f.Docs = "https://kubernetes.io/docs/concepts/cluster-administration/flow-control/"
		e.nameThrottled(f)
	})
}

// NameFlowControl gives the names of FlowSchemas and PriorityLevelConfigurations
// (uid → name) learned after the 429s that gave them by UID alone (the live
// Source's lookup, or a trace's `flowcontrol` line): throttled names them
// from then on, and, when they are the ones it gave by UID, says them at
// once and is told to the OnRaise listeners again.
func (e *Engine) NameFlowControl(flowSchemas, priorityLevels map[string]string) {
	if e == nil {
		return
	}
	e.mu.Lock()
	for uid, name := range flowSchemas {
		e.keepName("flowschema", uid, name)
	}
	for uid, name := range priorityLevels {
		e.keepName("prioritylevelconfiguration", uid, name)
	}
	if f, ok := e.found[Throttled]; ok {
		before := f.Evidence.Text
		e.nameThrottled(f)
		if f.Evidence.Text != before {
			e.pending = append(e.pending, e.clone(f))
		}
	}
	e.unlockAndTell()
}

// nameThrottled says throttled's FlowSchema and PriorityLevel with the
// names known so far: in its facts, its evidence and its action, which
// says how to find the names it does not know.
func (e *Engine) nameThrottled(f *Finding) {
	facts := f.Evidence.Facts
	var unnamed []string
	if uid := e.apf.schemaUID; uid != "" {
		facts["flowSchema"] = e.name("flowschema", uid)
		if e.apfNames["flowschema/"+uid] == "" && commandSafe(uid) {
			unnamed = append(unnamed, "kubectl get flowschemas -o custom-columns=NAME:.metadata.name,UID:.metadata.uid,PRIORITYLEVEL:.spec.priorityLevelConfiguration.name | grep "+uid)
		}
	}
	if uid := e.apf.levelUID; uid != "" {
		facts["priorityLevel"] = e.name("prioritylevelconfiguration", uid)
		if e.apfNames["prioritylevelconfiguration/"+uid] == "" && commandSafe(uid) {
			unnamed = append(unnamed, "kubectl get prioritylevelconfigurations -o custom-columns=NAME:.metadata.name,UID:.metadata.uid | grep "+uid)
		}
	}
	text := e.apf.said
	if fs, pl := facts["flowSchema"], facts["priorityLevel"]; fs != "" || pl != "" {
		text += fmt.Sprintf("; API Priority and Fairness classified it as FlowSchema %s, PriorityLevel %s", orDash(fs), orDash(pl))
	}
	f.Evidence.Text = text
	const lighter = "make fewer or lighter requests (metadata-only informers, selectors, a shared informer instead of many)"
	switch {
	case len(unnamed) > 0:
		f.Action = "find their names by UID (this run could not read them: its user may not, or was throttled there too), as a user who may read flowcontrol.apiserver.k8s.io: " + strings.Join(unnamed, "; ") +
			"; then give that PriorityLevel more shares (nominalConcurrencyShares) or queues, or change which FlowSchema matches this client; " + lighter
	case commandSafe(e.apfNames["flowschema/"+e.apf.schemaUID]) && commandSafe(e.apfNames["prioritylevelconfiguration/"+e.apf.levelUID]):
		fs, pl := e.apfNames["flowschema/"+e.apf.schemaUID], e.apfNames["prioritylevelconfiguration/"+e.apf.levelUID]
		f.Action = fmt.Sprintf("FlowSchema %s matches this client and sends it to PriorityLevel %s (kubectl get flowschema %s -o yaml; kubectl get prioritylevelconfiguration %s -o yaml): give %s more shares (nominalConcurrencyShares) or queues, or match this client to another level; %s", fs, pl, fs, pl, pl, lighter)
	default:
		f.Action = "see which FlowSchema matches this client (kubectl get flowschemas) and give its PriorityLevel more shares (nominalConcurrencyShares) or queues; " + lighter
	}
}

// commandSafe says whether s may stand in a command the action gives to
// copy into a shell: an object's name or UID, as the API server makes
// them. A header or a trace may say anything.
func commandSafe(s string) bool { return safeWord.MatchString(s) }

var safeWord = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$`)

// keepName keeps the name of a flow-control object, when there is one
// (the engine keeps at most keepObjects of them).
func (e *Engine) keepName(kind, uid, name string) {
	if name == "" || uid == "" {
		return
	}
	if e.apfNames == nil {
		e.apfNames = map[string]string{}
	}
	key := kind + "/" + uid
	if _, ok := e.apfNames[key]; ok || len(e.apfNames) < keepObjects {
		e.apfNames[key] = name
	}
}

// name is "NAME (uid UID)", or "uid UID" when no name is known: the name
// a 429 carried (the Source names what it can read, and a trace records
// it, so a replay names the same) or one learned after (NameFlowControl).
func (e *Engine) name(kind, uid string) string {
	if named := e.apfNames[kind+"/"+uid]; named != "" {
		return named + " (uid " + uid + ")"
	}
	return "uid " + uid
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// listBegan counts a relist of the server's (not one the user forced)
// and raises or updates relist-storm: a relist beginning is its new evidence.
func (e *Engine) listBegan(n reflector.Note) {
	b := n.List
	if b == nil || !b.Relist() || b.Cause == reflector.CauseForced {
		return
	}
	e.relists = append(e.relists, n.At)
	e.storms = appendLast(e.storms, n.RequestID, keepRequests)
	e.relists = slices.DeleteFunc(e.relists, func(t time.Time) bool { return n.At.Sub(t) > e.opts.StormWindow })
	if len(e.relists) >= e.opts.StormRelists {
		e.relistStorm(n.At)
	}
}

func (e *Engine) relistStorm(at time.Time) {
	n := len(e.relists)
	var cause []string
	atOnce, longDown := 0, 0
	for _, g := range e.gones {
		if at.Sub(g.at) > e.opts.StormWindow {
			continue
		}
		if g.afterStart >= 0 && g.afterStart < goneOnReconnect {
			atOnce++
		}
		if g.downFor > 5*time.Minute {
			longDown++
		}
	}
	if atOnce > 0 {
		cause = append(cause, fmt.Sprintf("%d 410 Gone came right after a reconnect: the resourceVersion the watch resumed from had been compacted away while it was down", atOnce))
	}
	if longDown > 0 {
		cause = append(cause, fmt.Sprintf("%d time(s) the watch was down longer than the server keeps history (etcd compacts every 5 minutes by default)", longDown))
	}
	if e.src != nil && e.src.Counters().Bookmarks == 0 {
		cause = append(cause, "no bookmark ever arrived, so a quiet resource's cursor falls behind compaction")
	}
	if len(cause) == 0 {
		cause = append(cause, "each relist follows a 410 Gone, a too-large resourceVersion or a forced relist; see the requests")
	}
	e.raise(RelistStorm, Error, at, func(f *Finding) {
		f.Count = max(f.Count, int64(n)) // the most relists seen within one window
		f.Title = fmt.Sprintf("%d relists within %s", n, roundDur(e.opts.StormWindow))
		f.Evidence = Evidence{
			Text:     fmt.Sprintf("%d relists (complete lists after the first) began within %s (the threshold is %d); each one lists every object again", n, roundDur(e.opts.StormWindow), e.opts.StormRelists),
			Requests: slices.Clone(e.storms),
			Window:   window(e.relists[0], at),
		}
		f.Cause = strings.Join(cause, "; ")
		f.Action = "keep the watch's cursor fresh: ask for bookmarks (allowWatchBookmarks) and keep the API server's watch cache on; reconnect quickly after a cut; use the streaming list (WatchListClient) so a relist is served from the watch cache; check what restarts the API server or compacts etcd so often"
		f.Docs = "https://kubernetes.io/docs/reference/using-api/api-concepts/#410-gone-responses"
	})
}

func (e *Engine) applied(n reflector.Note) {
	e.lastAlive = n.At
	if e.watch != nil {
		e.watch.applied++
		if e.watch.firstEvent.IsZero() {
			e.watch.firstEvent = n.At
		}
	}
	if n.Delivery.Known() {
		e.lagged(n)
	}
	res := n.Applied
	if res == nil || !res.Outcome.UIDMismatch() {
		return
	}
	o := Object{What: "replaced"}
	if res.Outcome == store.StaleDelete {
		o.What = "stale delete"
	}
	if res.Object != nil {
		o.Namespace, o.Name, o.NewUID = res.Object.Namespace, res.Object.Name, res.Object.UID
	}
	if res.Previous != nil {
		o.OldUID = res.Previous.UID
	}
	if len(e.uidObjects) < keepObjects {
		e.uidObjects = append(e.uidObjects, o)
	}
	e.raise(UIDMismatch, Warning, n.At, func(f *Finding) {
		f.Count++
		f.Title = fmt.Sprintf("%d object(s) replaced under the same name between events", f.Count)
		f.Evidence = Evidence{
			Text:         fmt.Sprintf("%d watch event(s) carried another UID than the cached object of the same name; the last: %s (%s) in request #%d", f.Count, o, o.What, n.RequestID),
			Requests:     appendLast(f.Evidence.Requests, n.RequestID, keepRequests),
			Objects:      slices.Clone(e.uidObjects),
			ObjectsTotal: int(f.Count),
		}
		f.Cause = "an object was deleted and recreated with the same name and the watch did not deliver the delete in between (or delivered an old instance's delete late): handlers keyed by name see one object where there were two"
		f.Action = "key per-object state by UID as well as name, and treat an update whose UID changed as a delete and a create"
		f.Docs = "https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#uids"
	})
}

func (e *Engine) decision(n reflector.Note) {
	d := n.Decision
	switch d.Reason {
	case reflector.ReasonListComplete:
		if !e.firstListed {
			e.firstListed = true
			e.initialList(n, d)
		}
	case reflector.ReasonGone:
		g := goneAt{at: n.At, id: n.RequestID, afterStart: -1}
		if !e.lastAlive.IsZero() {
			g.downFor = n.At.Sub(e.lastAlive)
		}
		if !e.lastWatchEnd.IsZero() && e.lastWatchQuiet {
			g.afterStart = e.lastWatchLife
		}
		e.gones = append(e.gones, g)
		e.gones = slices.DeleteFunc(e.gones, func(x goneAt) bool { return n.At.Sub(x.at) > max(e.opts.StormWindow, e.opts.FlapWindow) })
	case reflector.ReasonRelistDiff:
		e.relistDiff(n, d)
	case reflector.ReasonStreamRefused, reflector.ReasonInitialEventsEnd:
		e.refused = &refusal{at: n.At, id: n.RequestID, cause: d.Cause, stalled: d.Reason == reflector.ReasonInitialEventsEnd}
		if d.Reason == reflector.ReasonInitialEventsEnd {
			e.refused.cause = fmt.Sprintf("nothing for %s before the initial-events-end bookmark", roundDur(d.Wait))
		}
		e.watchListRefused(n.At, 0, 0, 0)
	case reflector.ReasonRVBackwards:
		e.backwards = appendLast(e.backwards, n.RequestID, keepRequests)
		e.raise(RVBackwards, Error, n.At, func(f *Finding) {
			f.Count++
			f.Title = fmt.Sprintf("the resourceVersion went backwards %d time(s)", f.Count)
			f.Evidence = Evidence{
				Text:     fmt.Sprintf("request #%d delivered resourceVersion %s after the cursor had reached %s (the cursor was kept)", n.RequestID, d.ResourceVersion, d.Cursor),
				Requests: slices.Clone(e.backwards),
				Facts:    map[string]string{"resourceVersion": d.ResourceVersion, "cursor": d.Cursor},
			}
			f.Cause = "the events came from a source behind the one the cursor came from: an HA API server whose watch cache lags the others (the watch reconnected to another replica), or something in between (a caching proxy) serving old data"
			f.Action = "check which API server replica served the request (its audit log, or a load balancer's session affinity); keep the client on one replica, or upgrade to a version with consistent reads from the watch cache"
			f.Docs = "https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions"
		})
	case reflector.ReasonGaveUp:
		e.raise(GaveUp, Error, n.At, func(f *Finding) {
			f.Count++
			f.Title = fmt.Sprintf("gave up after %s without progress", roundDur(d.Wait))
			f.Evidence = Evidence{Text: fmt.Sprintf("nothing arrived from the server for %s (--give-up-after); the last error: %s", roundDur(d.Wait), d.Cause),
				Requests: []int64{n.RequestID}}
			f.Cause = "the API server could not be reached or answered nothing useful for the whole time: it is down, the network or a proxy drops the requests, or credentials expired"
			f.Action = "check the API server's health (kubectl get --raw /readyz) and the connection to it; raise --give-up-after to wait longer"
		})
	}
}

// initialList checks the first list's size and time, and completes a
// streaming-list refusal's evidence with what the LIST cost.
func (e *Engine) initialList(n reflector.Note, d *reflector.Decision) {
	took := time.Duration(0)
	if !e.listStart.IsZero() {
		took = n.At.Sub(e.listStart)
	}
	bytes := d.Bytes
	if e.refused != nil {
		e.watchListRefused(n.At, d.Objects, bytes, took)
	}
	var over []string
	if bytes > e.opts.LargeListBytes {
		over = append(over, fmt.Sprintf("%s over %s", mib(bytes), mib(e.opts.LargeListBytes)))
	}
	if d.Objects > e.opts.LargeListObjects {
		over = append(over, fmt.Sprintf("%d objects over %d", d.Objects, e.opts.LargeListObjects))
	}
	if took > e.opts.LargeListTime {
		over = append(over, fmt.Sprintf("%s over %s", roundDur(took), roundDur(e.opts.LargeListTime)))
	}
	if len(over) == 0 {
		return
	}
	e.raise(LargeInitialList, Warning, n.At, func(f *Finding) {
		f.Count = 1
		f.Title = fmt.Sprintf("the initial list is large: %d objects, %s, %s", d.Objects, mibOrUnknown(bytes), roundDur(took))
		f.Evidence = Evidence{
			Text:     "the first complete list was " + strings.Join(over, ", "),
			Requests: slices.Clone(e.listReqs),
			Window:   window(e.listStart, n.At),
			Facts:    map[string]string{"objects": fmt.Sprint(d.Objects), "bytes": fmt.Sprint(bytes), "seconds": fmt.Sprintf("%.1f", took.Seconds())},
		}
		f.Cause = "every informer of this resource starts with this list, holds it all in memory while it syncs, and lists it again after each 410 Gone"
		f.Action = "cut what is listed: a metadata-only informer (--metadata-only) when the spec is not needed, protobuf (--wire protobuf), label or field selectors, or a namespace; `kubectl watchcache cost` measures what each would save"
		f.Docs = "https://kubernetes.io/docs/reference/using-api/api-concepts/#retrieving-large-results-sets-in-chunks"
	})
}

func (e *Engine) watchListRefused(at time.Time, objects int, bytes int64, took time.Duration) {
	r := e.refused
	sev := Info
	if e.opts.StreamAsked {
		sev = Warning
	}
	e.raise(WatchListUnsupported, sev, at, func(f *Finding) {
		f.Count = 1
		f.Title = "the streaming list was refused: the list fell back to LIST"
		text := fmt.Sprintf("request #%d asked for a streaming list (sendInitialEvents=true) and the server answered: %s", r.id, r.cause)
		if r.stalled {
			text = fmt.Sprintf("request #%d, a streaming list, stalled: %s", r.id, r.cause)
		}
		facts := map[string]string{"answer": r.cause}
		if objects > 0 || bytes > 0 || took > 0 {
			text += fmt.Sprintf("; the LIST that replaced it brought %d objects", objects)
			if bytes > 0 {
				text += ", " + mib(bytes)
				facts["listBytes"] = fmt.Sprint(bytes)
			}
			text += " in " + roundDur(took)
			facts["listSeconds"] = fmt.Sprintf("%.1f", took.Seconds())
			facts["listObjects"] = fmt.Sprint(objects)
		}
		f.Evidence = Evidence{Text: text, Requests: slices.Clone(e.listReqs), Facts: facts}
		f.Cause = "the API server does not serve the streaming list here: its WatchList feature is off, the server is older than 1.32, or its watch cache is off for this resource. client-go's WatchListClient falls back to LIST the same way, silently (one V(4) log line), so every (re)list costs a full LIST from etcd"
		f.Action = "enable the WatchList feature on the API server (on by default since 1.34 with the watch cache), or list with --initial-list=list and accept the LIST's memory peak"
		if r.stalled {
			f.Title = "the streaming list stalled: the list fell back to LIST"
			f.Cause = "the streaming list's initial-events-end bookmark did not come in time: a proxy or load balancer in between may hold the streamed response back (it must flush a watch as it comes), or the API server's watch cache was slow to serve it. client-go's WatchListClient falls back to LIST after such a wait too, silently, so every (re)list costs the wait and a full LIST from etcd"
			f.Action = "check what sits between the client and the API server (a buffering proxy), and the API server's watch cache for this resource; or list with --initial-list=list"
		}
		f.Docs = "https://kubernetes.io/docs/reference/using-api/api-concepts/#streaming-lists"
	})
}

func (e *Engine) relistDiff(n reflector.Note, d *reflector.Decision) {
	diff := d.Diff
	if diff == nil || len(diff.Deleted)+len(diff.Recreated) == 0 {
		return
	}
	for _, de := range diff.Deleted {
		e.addMissed(Object{Namespace: de.Ref.Namespace, Name: de.Ref.Name, What: "deleted", OldUID: de.OldUID})
	}
	for _, de := range diff.Recreated {
		e.addMissed(Object{Namespace: de.Ref.Namespace, Name: de.Ref.Name, What: "recreated", OldUID: de.OldUID, NewUID: de.NewUID})
	}
	if w := window(e.lastAlive, n.At); w != nil {
		e.missedWindow = w
	}
	e.missedReqs = appendLast(e.missedReqs, n.RequestID, keepRequests)
	deleted, recreated := len(diff.Deleted), len(diff.Recreated)
	e.raise(MissedDeletes, Warning, n.At, func(f *Finding) {
		f.Count += int64(deleted + recreated)
		f.Title = fmt.Sprintf("%d delete(s) never reached the watch", f.Count)
		text := fmt.Sprintf("the relist at resourceVersion %s found %d object(s) deleted and %d recreated under the same name with another UID that the watch never reported", diff.ResourceVersion, deleted, recreated)
		if w := e.missedWindow; w != nil {
			text += fmt.Sprintf("; the watch was down for %s, from its last event to the relist", roundSeconds(w.Seconds))
		}
		if f.Count > int64(deleted+recreated) {
			text += fmt.Sprintf(" (%d in all, over every relist)", f.Count)
		}
		f.Evidence = Evidence{Text: text, Requests: slices.Clone(e.missedReqs), Objects: slices.Clone(e.missed), ObjectsTotal: e.missedTotal, Window: e.missedWindow}
		f.Cause = "history was gone when the watch came back (410 Gone after a compaction, a restart, a long disconnect), so the deletes were never sent; the relist found them by comparing lists. A client-go informer hands such objects to OnDelete as cache.DeletedFinalStateUnknown, with the last state it knew, and a handler that expects the object itself misses them"
		f.Action = "handle cache.DeletedFinalStateUnknown in every OnDelete handler; make cleanup level-based (reconcile what exists) rather than edge-triggered on delete events; use finalizers for cleanup that must run"
		f.Docs = "https://pkg.go.dev/k8s.io/client-go/tools/cache#DeletedFinalStateUnknown"
	})
}

// goneOnReconnect is how long a watch that delivered nothing may have
// waited for its 410 Gone for the 410 to count as its answer on reconnect:
// an API server that just started holds a watch until its watch cache is
// ready, seconds on a busy machine.
const goneOnReconnect = 30 * time.Second

// Thresholds of slow-delivery: enough evidence, and how late is late.
const (
	minLagEvents    = 20
	slowLagBucket   = 3 // 15-60s
	minProbeSamples = 5
	slowProbeP99    = 2 * time.Second
	// minLate is the fewest late events, or slow probe samples, that make
	// the finding: under 100 of either, the p99 is the slowest one, and one
	// slow sample is no evidence.
	minLate = 3
)

// probeFigures are the delivery probe's figures over the whole run.
type probeFigures struct {
	samples, slow      int // slow: over slowProbeP99
	p50, p99, writeP50 time.Duration
}

// lagged reads an applied event's estimated lag (its reflector counted it
// already): a late one may raise slow-delivery.
func (e *Engine) lagged(n reflector.Note) {
	if b := reflector.LagBucketOf(n.Delivery.Lag); b >= slowLagBucket {
		e.lagReqs = appendLast(e.lagReqs, n.RequestID, keepRequests)
		e.slowDelivery(n.At) // only a late event is new evidence
	}
}

// Probe reads the delivery probe's figures over the whole run, after each
// sample (samples of them, slow over 2 s); at is the sample's time on the
// session's clock. slow-delivery may follow.
func (e *Engine) Probe(at time.Time, samples, slow int, p50, p99, writeP50 time.Duration) {
	if e == nil {
		return
	}
	e.mu.Lock()
	e.probe = probeFigures{samples: samples, slow: slow, p50: p50, p99: p99, writeP50: writeP50}
	e.slowDelivery(at)
	e.unlockAndTell()
}

// slowDelivery raises or updates slow-delivery from both measures: the
// probe's p99 over 2 s after 5 samples, or the passive estimate's p99 in
// 15-60s or later after 20 events. Count is the late events and the slow
// probe samples together.
func (e *Engine) slowDelivery(at time.Time) {
	p := e.probe
	var lag reflector.LagCounts
	if e.src != nil {
		lag = e.src.Lag().Counts
	}
	total := lag.Total()
	late := int64(0)
	for i := slowLagBucket; i < reflector.LagBucketCount; i++ {
		late += lag[i]
	}
	byProbe := p.samples >= minProbeSamples && p.p99 > slowProbeP99 && p.slow >= minLate
	byLag := total >= minLagEvents && lag.P99Bucket() >= slowLagBucket && late >= minLate
	if !byProbe && !byLag {
		return
	}
	e.raise(SlowDelivery, Warning, at, func(f *Finding) {
		f.Count = late + int64(p.slow)
		facts := map[string]string{}
		var texts, titles []string
		if total > 0 {
			// One fact, the buckets in order (facts are printed by name).
			buckets := make([]string, 0, reflector.LagBucketCount)
			for i := range reflector.LagBucketCount {
				buckets = append(buckets, fmt.Sprintf("%s %d", reflector.LagBucketName(i), lag[i]))
			}
			facts["lag"] = strings.Join(buckets, ", ")
		}
		if byLag {
			titles = append(titles, fmt.Sprintf("%d of %d events over 15s after their write", late, total))
			texts = append(texts, fmt.Sprintf("the events' estimated lag (arrival minus the object's last write, corrected by the server's Date; ±2s) has its p99 in %s over %d events", reflector.LagBucketName(lag.P99Bucket()), total))
		}
		if p.samples > 0 {
			facts["probe p50"], facts["probe p99"], facts["probe write p50"], facts["probe samples"] = roundDur(p.p50), roundDur(p.p99), roundDur(p.writeP50), fmt.Sprint(p.samples)
		}
		if byProbe {
			titles = append(titles, fmt.Sprintf("the probe's p99 %s", roundDur(p.p99)))
			texts = append(texts, fmt.Sprintf("%d updates of the probe's Lease, %d over %s: from sending each to its watch event p50 %s, p99 %s (the write itself: p50 %s)",
				p.samples, p.slow, roundDur(slowProbeP99), roundDur(p.p50), roundDur(p.p99), roundDur(p.writeP50)))
		}
		f.Title = "the watch tells late: " + strings.Join(titles, "; ")
		f.Evidence = Evidence{Text: strings.Join(texts, "; "), Requests: slices.Clone(e.lagReqs), Facts: facts}
		e.slowDeliveryWords(f)
	})
}

func (e *Engine) slowDeliveryWords(f *Finding) {
	f.Cause = "the API server is slow to tell this client what was written: an overloaded API server (its watch cache lagging etcd, slow dispatch to many watchers), API Priority and Fairness queuing, or a slow network or proxy in between; a controller acting on these events reacts as late. The probe's time runs from sending its update, so a slow write (etcd) counts too: its write p50 tells the two apart"
	f.Action = "compare with the API server's apiserver_watch_events_* and apiserver_flowcontrol_* metrics; run the probe (--probe NAMESPACE) from another place to tell the network from the server; reduce watchers of busy resources"
	f.Docs = "https://kubernetes.io/docs/concepts/cluster-administration/flow-control/"
}

func (e *Engine) addMissed(o Object) {
	e.missedTotal++
	if len(e.missed) < keepObjects {
		e.missed = append(e.missed, o)
	}
}

func (e *Engine) audit(n reflector.Note) {
	a := n.Audit
	if a == nil || !a.Drift() {
		return
	}
	var objs []Object
	add := func(list []store.DiffEntry, what string) {
		for _, d := range list {
			if len(objs) < keepObjects {
				objs = append(objs, Object{Namespace: d.Ref.Namespace, Name: d.Ref.Name, What: what, OldUID: d.OldUID, NewUID: d.NewUID})
			}
		}
	}
	add(a.Missing, "missing")
	add(a.Extra, "extra")
	add(a.Different, "different")
	total := len(a.Missing) + len(a.Extra) + len(a.Different)
	e.raise(CacheDrift, Error, n.At, func(f *Finding) {
		f.Count++
		f.Title = fmt.Sprintf("the cache differs from a fresh list: %d missing, %d extra, %d different", len(a.Missing), len(a.Extra), len(a.Different))
		f.Evidence = Evidence{Text: a.String(), Objects: objs, ObjectsTotal: total, Requests: []int64{n.RequestID},
			Facts: map[string]string{"listed": fmt.Sprint(a.Listed), "cached": fmt.Sprint(a.Cached), "resourceVersion": a.ResourceVersion}}
		f.Cause = "the watch's view and the server's disagree: events were lost or applied out of order, or objects changed between the list and the watch; a cache that drifts serves wrong answers until the next relist"
		f.Action = "relist (r on the dashboard) and audit again; if it drifts again, record a trace (--trace) and look at the events of the objects named here"
	})
}

func roundDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func mib(b int64) string {
	if b < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(b)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

func mibOrUnknown(b int64) string {
	if b <= 0 {
		return "size unknown"
	}
	return mib(b)
}
