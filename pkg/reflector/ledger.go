package reflector

import (
	"slices"
	"sync"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/ring"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// Ledger is what a reflector records, apart from what it decides: it turns
// requests, LIST pages, watch events and request ends into store writes
// (Init, InitApply, InitDone, Apply, Delete, Bookmark), the counters, the
// cursor, the last bookmark, the relist diff, the request history (all of
// Stats), and numbers the notes and hands them to their listeners in order.
//
// A Reflector records through one, deciding the rest (what to request next,
// timers, backoff, giving up); the observing proxy's streams
// (internal/observed) feed one from another client's traffic. Both make the
// same calls, so a counter means the same thing wherever it is shown: see
// "Counters" in docs/design.md.
//
// The requests of a Ledger are recorded one after another, as a reflector
// makes them: StartRequest, then ReceivedPage or Event…, then EndRequest,
// then ApplyPage or CompleteList. Stats, Counters, Note, Decide and Close
// may be called from other goroutines.
type Ledger struct {
	now    func() time.Time
	writer *store.Writer

	// wmu serializes the writer, which is not safe for concurrent use:
	// Close may come from another goroutine than the requests'.
	wmu sync.Mutex

	mu        sync.Mutex
	stats     Stats
	churn     diff.Churn             // what the diffed MODIFIED events changed (--diff)
	history   ring.Ring[RequestInfo] // the last finished requests
	current   *RequestInfo
	latency   ring.Ring[time.Duration] // the last apply latencies, for percentiles
	nextID    int64
	lastReq   int64 // the request in flight or last ended, for notes
	listing   bool  // a list has begun (Init) and is not complete
	listed    bool  // a complete list was installed
	streaming bool  // the request in flight is a streaming list not yet complete
	// forgetting: ClientGone has begun (Stats.Forgotten is set once the
	// store is emptied).
	forgetting bool
	// stateAdds: the watch in flight began from "" or "0" without
	// sendInitialEvents and has had only ADDED events so far: the server's
	// synthetic ADDED events of every object at its start, in no
	// resourceVersion order. They are the state, not news: none moves the
	// cursor backwards (it takes the highest), none is a duplicate, and
	// their delivery lag is not estimated. The first other event ends them.
	// Only another program's client watches so (an observed stream): our
	// reflector resumes from a cursor or streams its list.
	stateAdds bool
	listBytes int64 // the bodies of the list in progress, as received (Decision.Bytes)
	// What the decisions say of lists: one was decided (from then on it
	// counts in Totals.Lists), when, and why the next relist begins.
	listDecided   bool
	listDecidedAt time.Time
	relistCause   ListCause
	listBeganIn   int64     // the request the last list began in
	listBeganAt   time.Time // when that request was sent (Decision.Began)
	// after is the last request whose end can lead to a list: a watch's
	// end, or a LIST's 410 or too-large answer (ListBegan.After).
	after int64

	// noteMu keeps notes in Seq order through the listeners when notes
	// come from several goroutines; listeners are called without mu, so
	// they may read the ledger.
	noteMu sync.Mutex
	// notesEnded: the run that fed the ledger has ended; a note reported
	// after it (Reflector.Report) reaches no listener. Guarded by noteMu.
	notesEnded bool
	seq        uint64
	// lastAt is the last note's time: a note's time never goes back
	// (guarded by noteMu).
	lastAt    time.Time
	listeners []func(Note)
}

// NewLedger records into w, stamping notes and times with now; it keeps the
// last history finished requests.
func NewLedger(w *store.Writer, now func() time.Time, history int) *Ledger {
	if now == nil {
		now = time.Now
	}
	if history < 1 {
		history = 1
	}
	l := &Ledger{now: now, writer: w, history: ring.New[RequestInfo](history), latency: ring.New[time.Duration](1024), relistCause: CauseError}
	l.stats.StateSince = now()
	return l
}

// OnNote adds a listener of the notes. Listeners are called in Seq order,
// synchronously and without the ledger's lock (they may read it), and must
// not block. Add them before anything is recorded.
func (l *Ledger) OnNote(f func(Note)) {
	l.noteMu.Lock()
	defer l.noteMu.Unlock()
	l.listeners = append(l.listeners, f)
}

// Start records when the run began (Stats.Started).
func (l *Ledger) Start(at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats.Started = at
}

// StartRequest records a request sent at started (zero: now) with its
// options, notes it, and returns it. The returned RequestInfo is the
// ledger's: read it, but change it only through the ledger. A watch with
// sendInitialEvents is a streaming list: its list begins with its first event.
func (l *Ledger) StartRequest(verb Verb, opts RequestOptions, started time.Time) *RequestInfo {
	if started.IsZero() {
		started = l.now()
	}
	l.mu.Lock()
	l.nextID++
	info := &RequestInfo{ID: l.nextID, Verb: verb, Opts: opts, Started: started}
	l.lastReq = info.ID
	l.current = info
	l.streaming = verb == VerbWatch && opts.SendInitialEvents
	l.stateAdds = verb == VerbWatch && !opts.SendInitialEvents && (opts.ResourceVersion == "" || opts.ResourceVersion == "0")
	l.stats.Totals.Requests++
	if verb == VerbWatch {
		l.stats.Counters.Watches++
	}
	snapshot := *info
	l.mu.Unlock()
	// When it was sent: an observed request is fed once its answer came.
	l.Note(Note{Kind: NoteRequestStarted, Request: &snapshot, At: started})
	return info
}

// ReceivedPage records that a LIST page arrived whole for info (its items
// are applied by ApplyPage, once the request's end is recorded).
func (l *Ledger) ReceivedPage(info *RequestInfo, page *Page) {
	l.mu.Lock()
	defer l.mu.Unlock()
	info.Items += len(page.Items)
	info.Bytes += page.Bytes
	l.stats.LastReceived = l.now()
}

// ApplyPage applies a received page of info to the list: a page of a LIST
// without a continue token begins a list (and counts it; a relist after the
// first), as does any page when no list is in progress (its first page was
// not seen). The caller completes the list (CompleteList) after its last
// page, the one without a continue token.
func (l *Ledger) ApplyPage(info *RequestInfo, page *Page) error {
	l.mu.Lock()
	l.stats.Counters.ListPages++
	begin := info.Opts.Continue == "" || !l.listing
	l.mu.Unlock()
	if begin {
		l.beginList(info)
	}
	l.mu.Lock()
	l.listBytes += page.Bytes
	l.mu.Unlock()
	l.wmu.Lock()
	for _, it := range page.Items {
		if it.Object == nil {
			continue
		}
		if _, err := l.writer.ApplyEvent(store.Event{Type: store.InitApply, Object: it.Object}); err != nil {
			l.wmu.Unlock()
			return err
		}
	}
	l.wmu.Unlock()
	l.Note(Note{Kind: NotePage, Page: &PageApplied{Items: len(page.Items), Bytes: page.Bytes, Last: page.Continue == ""}})
	return nil
}

// beginList starts buffering a new full list in info (readers keep the old
// snapshot until CompleteList), counts it (a relist by its cause) and notes it.
func (l *Ledger) beginList(info *RequestInfo) {
	l.wmu.Lock()
	_, _ = l.writer.ApplyEvent(store.Event{Type: store.Init})
	l.wmu.Unlock()
	l.mu.Lock()
	l.listing, l.listBytes = true, 0
	l.listBeganIn, l.listBeganAt = l.lastReq, info.Started
	c := &l.stats.Counters
	c.Lists++
	b := ListBegan{Number: c.Lists, Stream: l.streaming, After: l.after}
	if c.Lists > 1 {
		c.Relists++
		b.Cause = l.relistCause
		*l.stats.Totals.Relists.of(b.Cause)++
	} else {
		b.After = 0
	}
	l.mu.Unlock()
	l.Note(Note{Kind: NoteListBegan, List: &b})
}

// Event records one watch event of info that arrived at arrived. During a
// streaming list the first event (an initial event or the end bookmark)
// begins the list, ADDED and MODIFIED fill it and DELETED is ignored; after
// it, ADDED, MODIFIED and DELETED are applied to the store (noted, counted,
// and the cursor moved). Bookmarks are counted (a streaming list's end apart
// from progress bookmarks); a progress bookmark moves the cursor. ERROR
// changes nothing (the request's end says it). complete is true for the
// bookmark that ends a streaming list: the caller completes it
// (CompleteList) at that bookmark's resourceVersion, which moves the cursor
// there. err is the store's.
func (l *Ledger) Event(info *RequestInfo, ev WatchEvent, arrived time.Time) (complete bool, err error) {
	l.mu.Lock()
	info.Events++
	if ev.Type != EventError {
		l.stats.LastReceived = arrived
	}
	streaming := l.streaming
	begin := streaming && !l.listing && ev.Type != EventError
	if ev.Type != EventAdded {
		l.stateAdds = false
	}
	stateAdd := l.stateAdds
	l.mu.Unlock()
	if begin {
		l.beginList(info)
	}
	switch ev.Type {
	case EventError:
		return false, nil
	case EventBookmark:
		if ev.Item.Object == nil {
			return false, nil
		}
		end := streaming && ev.InitialEventsEnd
		l.bookmark(ev.Item.Object.ResourceVersion, end)
		if end {
			l.mu.Lock()
			l.listBytes = ev.Bytes
			l.mu.Unlock()
			return true, nil
		}
		return false, nil
	case EventAdded, EventModified, EventDeleted:
		if ev.Item.Object == nil {
			return false, nil
		}
		if streaming {
			if ev.Type == EventDeleted {
				return false, nil
			}
			l.wmu.Lock()
			defer l.wmu.Unlock()
			_, err := l.writer.ApplyEvent(store.Event{Type: store.InitApply, Object: ev.Item.Object})
			return false, err
		}
		if stateAdd {
			ev.Delivery = Delivery{} // the object's state at the watch's start, not news
		}
		return false, l.applyWatchEvent(ev, arrived, stateAdd)
	}
	return false, nil
}

// applyWatchEvent applies one ADDED/MODIFIED/DELETED event and moves the
// cursor; stateAdd says it is one of a watch's synthetic ADDED events
// (Ledger.stateAdds).
func (l *Ledger) applyWatchEvent(ev WatchEvent, arrived time.Time, stateAdd bool) error {
	typ := store.Apply
	if ev.Type == EventDeleted {
		typ = store.Delete
	}
	l.wmu.Lock()
	res, err := l.writer.ApplyEvent(store.Event{Type: typ, Object: ev.Item.Object})
	l.wmu.Unlock()
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.latency.Push(l.now().Sub(arrived))
	if ev.Delivery.Known() {
		l.stats.Lag.add(ev.Delivery.Lag)
	}
	c := &l.stats.Counters
	switch ev.Type {
	case EventAdded:
		c.Added++
	case EventModified:
		c.Modified++
	case EventDeleted:
		c.Deleted++
	}
	if res.Outcome.UIDMismatch() {
		c.UIDMismatches++
	}
	if res.Outcome == store.Duplicate && !stateAdd {
		c.Duplicates++
	}
	if ev.Changes != nil {
		l.churn.Add(ev.Item.Object.Ref().String(), ev.Changes)
	}
	l.mu.Unlock()
	// Counted first: a listener reads the totals with the event in them.
	l.Note(Note{Kind: NoteApplied, Event: ev.Type, Applied: &res, Delivery: ev.Delivery, Changes: ev.Changes})
	l.advance(ev.Item.Object.ResourceVersion, stateAdd) // after the event's note: it may decide on it
	return nil
}

// bookmark counts a bookmark, notes it and moves the cursor to its
// resourceVersion: a streaming list's end (listEnd) apart from a progress bookmark,
// which alone is timed (Stats.BookmarkAt): the end of a list says nothing of
// whether the server sends bookmarks. A list's end leaves the cursor to
// CompleteList, which moves it once the list is installed: a cursor at a
// resourceVersion says the store holds what was there then (Audit stops
// waiting on it), and the old snapshot is served until the install.
func (l *Ledger) bookmark(rv string, listEnd bool) {
	l.wmu.Lock()
	_, _ = l.writer.ApplyEvent(store.Event{Type: store.Bookmark, ResourceVersion: rv})
	l.wmu.Unlock()
	l.mu.Lock()
	if listEnd {
		l.stats.Counters.InitialEventsEnd++
	} else {
		l.stats.Counters.Bookmarks++
		l.stats.BookmarkRV = rv
		l.stats.BookmarkAt = l.now()
	}
	l.mu.Unlock()
	l.Note(Note{Kind: NoteBookmark, Bookmark: &Bookmark{ResourceVersion: rv, ListEnd: listEnd}})
	if !listEnd {
		l.advance(rv, false) // after the bookmark's note, as an event's: it may decide on it
	}
}

// advance moves the cursor to rv, noting (and refusing) a move backwards;
// unordered (a watch's state adds, Ledger.stateAdds) refuses it quietly.
func (l *Ledger) advance(rv string, unordered bool) {
	if rv == "" {
		return
	}
	l.mu.Lock()
	last := l.stats.ResourceVersion
	backwards := ResourceVersionBackwards(rv, last)
	switch {
	case !backwards:
		l.stats.ResourceVersion = rv
	case unordered:
		backwards = false
	default:
		l.stats.Counters.ResourceVersionBackwards++
	}
	l.mu.Unlock()
	if backwards {
		l.Decide(Decision{State: StateWatching, Reason: ReasonRVBackwards, ResourceVersion: rv, Cursor: last})
	}
}

// EndRequest records how info ended, adds it to the history and notes it,
// then counts what the end says: a 410 Gone (Gone, LastGone), a too-large
// resourceVersion, or a watch past its list ended in another error
// (WatchErrors). A 410 or a too-large resourceVersion ends the list in
// progress, as does the end of a streaming list before its end bookmark.
func (l *Ledger) EndRequest(info *RequestInfo, end *RequestEnd) {
	now := l.now()
	l.mu.Lock()
	info.Duration = now.Sub(info.Started)
	info.End = end
	l.history.Push(*info)
	if l.current == info {
		l.current = nil
	}
	snapshot := *info
	l.countEnd(info, end, now)
	l.mu.Unlock()
	// Counted first: a listener reads the totals with this end in them.
	l.Note(Note{Kind: NoteRequestEnded, Request: &snapshot})
}

// countEnd counts what a request's end says; mu held.
func (l *Ledger) countEnd(info *RequestInfo, end *RequestEnd, now time.Time) {
	streamingList := info.Verb == VerbWatch && l.streaming
	l.streaming = false
	if streamingList {
		l.listing = false
	}
	c, t := &l.stats.Counters, &l.stats.Totals
	switch {
	case end.IsGone():
		c.Gone++
		switch {
		case info.Verb == VerbWatch:
			t.Gone.Watch++
		case info.Opts.Continue != "":
			t.Gone.Continue++
		default:
			t.Gone.List++
		}
		l.stats.LastGone = now
		l.listing = false
	case end.IsTooLargeResourceVersion():
		c.TooLargeResourceVersion++
		l.listing = false
	case info.Verb == VerbWatch && end.Reason == EndError && !streamingList:
		c.WatchErrors++
	}
	if info.Verb == VerbWatch || end.IsGone() || end.IsTooLargeResourceVersion() {
		l.after = info.ID
	}
	if info.Verb == VerbList {
		countPage(&t.Pages, end)
	}
}

// countPage counts a LIST request's end by how it ended.
func countPage(p *PageResults, end *RequestEnd) {
	switch {
	case end.Reason == EndClosed:
		p.OK++
	case end.Reason == EndTimeout:
		p.Timeout++
	case end.Reason == EndCanceled:
		p.Canceled++
	case end.Reason == EndStopped:
		p.Stopped++
	case end.IsGone():
		p.Gone++
	case end.IsTooLargeResourceVersion():
		p.TooLarge++
	default:
		p.Error++
	}
}

// CompleteList installs the list received so far (InitDone: readers get
// the new snapshot at once), moves the cursor to the list's
// resourceVersion and notes the list-complete decision, which leaves the
// state next: Watching for a reflector, which watches at once; Listed for
// another program's client after a LIST (internal/observed), until its next
// request says what it does. relist says whether a list was installed
// before; diff is what this one changed.
func (l *Ledger) CompleteList(rv string, next State) (diff *store.RelistDiff, relist bool, err error) {
	l.wmu.Lock()
	res, err := l.writer.ApplyEvent(store.Event{Type: store.InitDone, ResourceVersion: rv})
	l.wmu.Unlock()
	if err != nil {
		return nil, false, err
	}
	l.mu.Lock()
	relist = l.listed
	l.listed, l.listing, l.streaming = true, false, false
	bytes := l.listBytes
	l.stats.ResourceVersion = rv
	if relist {
		l.stats.LastRelistDiff, l.stats.LastRelistAt = res.Diff, l.now()
	} else {
		l.stats.Synced = l.now()
	}
	decided, took, began := l.listDecided, time.Duration(0), l.listBeganAt
	if decided {
		// An observed client's list is decided once its answer came: it
		// began, at the latest, when its request was sent.
		from := l.listDecidedAt
		if !began.IsZero() && began.Before(from) {
			from = began
		}
		took = l.now().Sub(from)
	}
	l.mu.Unlock()
	n := 0
	if res.Diff != nil {
		n = res.Diff.After
	}
	l.Decide(Decision{State: next, Reason: ReasonListComplete, ResourceVersion: rv, Objects: n, Bytes: bytes, Relist: relist, Decided: decided, Took: took, Began: began})
	return res.Diff, relist, nil
}

// NoteRelistDiff notes what a completed relist changed (missed deletes,
// recreates and updates), and sums it (Totals.Missed); nothing for a first list.
func (l *Ledger) NoteRelistDiff(rv string, diff *store.RelistDiff, relist bool) {
	if !relist || diff == nil {
		return
	}
	l.mu.Lock()
	m := &l.stats.Totals.Missed
	m.Deletes += int64(len(diff.Deleted))
	m.Recreates += int64(len(diff.Recreated))
	m.Updates += int64(len(diff.Updated))
	m.Adds += int64(len(diff.Added))
	after := l.stats.State // what the list-complete decision left: Watching, or Listed
	l.mu.Unlock()
	l.Decide(Decision{State: after, Reason: ReasonRelistDiff, ResourceVersion: rv, Diff: diff})
}

// Listing reports whether a list has begun and is not complete.
func (l *Ledger) Listing() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.listing
}

// Listed reports whether a complete list was installed.
func (l *Ledger) Listed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.listed
}

// RecordError records the last request error's cause (Stats.LastError);
// "" once a request succeeded, so that an error shows only while it stands.
func (l *Ledger) RecordError(cause string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats.LastError = cause
}

// BackingOff records a wait after an error, until until.
func (l *Ledger) BackingOff(until time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats.Counters.Backoffs++
	l.stats.BackoffUntil = until
	l.stats.Totals.BackoffWait += max(until.Sub(l.now()), 0)
}

// BackoffOver records the end of a wait.
func (l *Ledger) BackoffOver() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats.BackoffUntil = time.Time{}
}

// ClientLeft records that an observed stream's client left at since (see
// Stats.ClientLeft) and notes it; the state stays what it was. Nothing is
// noted again while the client is away.
func (l *Ledger) ClientLeft(since time.Time) {
	l.mu.Lock()
	if !l.stats.ClientLeft.IsZero() {
		l.mu.Unlock()
		return
	}
	l.stats.ClientLeft, l.stats.ClientLeftState = since, l.stats.State
	l.stats.ClientLeftWas = l.stats.State.String()
	state, was := l.stats.State, l.stats.ClientLeftWas
	l.mu.Unlock()
	l.Decide(Decision{State: state, Reason: ReasonClientLeft, Wait: max(l.now().Sub(since), 0), Cause: was})
}

// ClientGone records that the observing proxy forgot an observed stream
// whose client left and stayed away: the objects it held are dropped (its
// store emptied and closed) and noted, with how long the client was away.
// Nothing is done unless the client has left, nor done twice; it says
// whether it was done.
func (l *Ledger) ClientGone() bool {
	l.mu.Lock()
	since, state := l.stats.ClientLeft, l.stats.State
	if since.IsZero() || l.forgetting {
		l.mu.Unlock()
		return false
	}
	l.forgetting = true
	l.mu.Unlock()
	l.wmu.Lock()
	n := l.writer.Forget()
	l.wmu.Unlock()
	l.mu.Lock()
	l.stats.Forgotten, l.stats.ForgottenObjects = true, n // together: Stats never says 0 forgotten of a store still full
	l.mu.Unlock()
	l.Decide(Decision{State: state, Reason: ReasonClientGone, Wait: max(l.now().Sub(since), 0), Objects: n})
	return true
}

// ClientBack records that the client of a stream it had left sent a
// request again, and notes it; nothing when it had not left.
func (l *Ledger) ClientBack() {
	l.mu.Lock()
	since := l.stats.ClientLeft
	l.stats.ClientLeft, l.stats.ClientLeftState, l.stats.ClientLeftWas = time.Time{}, StateEmpty, ""
	state := l.stats.State
	l.mu.Unlock()
	if !since.IsZero() {
		l.Decide(Decision{State: state, Reason: ReasonClientBack, Wait: max(l.now().Sub(since), 0)})
	}
}

// SetState moves to s; StateSince changes only when the state does.
func (l *Ledger) SetState(s State) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stats.State != s {
		l.stats.State = s
		l.stats.StateSince = l.now()
	}
}

// Decide moves to d.State, counts what d says of lists (see Totals) and
// notes the decision.
func (l *Ledger) Decide(d Decision) {
	l.SetState(d.State)
	l.mu.Lock()
	l.decided(d)
	l.mu.Unlock()
	l.Note(Note{Kind: NoteDecision, Decision: &d})
}

// decided counts a decision: a list decided (and the cause of the relist
// it begins), restarted before it completed, completed, failed or
// canceled. A list counts in Totals.Lists from the decision to make it.
// mu held.
func (l *Ledger) decided(d Decision) {
	t := &l.stats.Totals
	t.Decisions++
	decide := func(cause ListCause) {
		if l.listDecided {
			t.Lists.Restarted++
		}
		l.listDecided, l.listDecidedAt = true, l.now()
		if cause != "" {
			l.relistCause = cause
		}
	}
	end := func(count *int64) {
		if l.listDecided {
			*count++
			l.listDecided = false
		}
	}
	switch d.Reason {
	case ReasonInitialList:
		decide("")
	case ReasonGone, ReasonContinueGone:
		decide(CauseGone)
	case ReasonTooLargeRV:
		decide(CauseTooLarge)
	case ReasonForcedRelist:
		decide(CauseForced)
	case ReasonStreamRefused, ReasonInitialEventsEnd:
		decide(CauseFallback)
	case ReasonWatchError:
		if d.Streaming && l.listBeganIn == l.lastReq {
			// The streaming list had begun: its retry is a list of its own.
			l.relistCause = CauseError
		}
	case ReasonListComplete:
		t.Lists.Complete++
		l.listDecided = false
	case ReasonPermanentError, ReasonBadRequest, ReasonGaveUp:
		end(&t.Lists.Failed)
	case ReasonStopped:
		end(&t.Lists.Canceled)
	}
}

// Fault counts a fault the observing proxy injected (Stats.Faults: count
// more times d.Fault acted) and notes d, its decision, in the state the
// stream is in.
func (l *Ledger) Fault(d Decision) {
	l.mu.Lock()
	d.Reason, d.State = ReasonFault, l.stats.State
	i := slices.IndexFunc(l.stats.Faults, func(f FaultCount) bool { return f.Fault == d.Fault })
	if i < 0 {
		l.stats.Faults = append(l.stats.Faults, FaultCount{Fault: d.Fault, First: l.now()})
		i = len(l.stats.Faults) - 1
	}
	l.stats.Faults[i].Count += d.Count
	l.mu.Unlock()
	l.Note(Note{Kind: NoteDecision, Decision: &d})
}

// Faults are Stats().Faults without the cost of the rest of Stats.
func (l *Ledger) Faults() []FaultCount {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.stats.Faults)
}

// Note stamps n with its sequence number, time (now, unless n has one),
// state and request, and hands it to the listeners; notes reach them in Seq
// order (a fact keeps the Seq of the note before it).
func (l *Ledger) Note(n Note) {
	l.noteMu.Lock()
	defer l.noteMu.Unlock()
	if l.notesEnded {
		return
	}
	if n.At.IsZero() {
		n.At = l.now()
	}
	if n.At.Before(l.lastAt) {
		// A request observed once its answer came was sent before the
		// notes of the one before it were: its note comes in their order,
		// at the last one's time (its RequestInfo keeps when it was sent).
		n.At = l.lastAt
	}
	l.lastAt = n.At
	l.mu.Lock()
	n.State, n.RequestID = l.stats.State, l.lastReq
	l.mu.Unlock()
	if !n.Kind.Fact() {
		l.seq++
	}
	n.Seq = l.seq
	for _, f := range l.listeners {
		f(n)
	}
}

// endNotes ends the notes: the listeners (a closed line output, a finished
// trace) hear nothing more, whatever Reflector.Report says after the run.
func (l *Ledger) endNotes() {
	l.noteMu.Lock()
	l.notesEnded = true
	l.noteMu.Unlock()
}

// Close closes the store's writer: nothing more is written.
func (l *Ledger) Close() {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.writer.Close()
}

// State is the current state.
func (l *Ledger) State() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats.State
}

// Cursor is the last resourceVersion seen.
func (l *Ledger) Cursor() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats.ResourceVersion
}

// Counters returns the running totals: Stats().Counters without the cost
// of the rest of Stats, cheap enough to call from a note listener.
func (l *Ledger) Counters() Counters {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats.Counters
}

// Lag is the passive delivery estimate so far (Stats().Lag without the
// cost of the rest of Stats): the figures a findings rule reads.
func (l *Ledger) Lag() LagStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats.Lag
}

// Churn is what the MODIFIED events diffed so far changed (--diff): the
// totals, and the top paths and objects.
func (l *Ledger) Churn(top int) diff.Summary {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.churn.Summary(top)
}

// SetAwaiting says whether the current request info still waits for the
// server's answer (RequestInfo.Awaiting).
func (l *Ledger) SetAwaiting(info *RequestInfo, awaiting bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.current == info {
		info.Awaiting = awaiting
	}
}

// Stats returns a snapshot of everything recorded.
func (l *Ledger) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.Faults = slices.Clone(l.stats.Faults)
	if l.current != nil {
		c := *l.current
		s.Current = &c
	}
	s.Requests = l.history.Items()
	s.ApplyLatency = latencyOf(l.latency.Items())
	return s
}
