package store

import "fmt"

// Writer is the only thing that changes the cache. It belongs to one
// reflector and is not safe for concurrent use: apply events from one goroutine.
type Writer struct {
	c *cache
	// buffer collects a list between Init and InitDone, in the order it
	// came; nil outside a list. InitDone makes it the live map, sized at
	// once: a map that grows while it fills moves its entries again at
	// each growth (a first list has no size to start from).
	buffer []*Object
	ready  bool
	closed bool
}

// ApplyEvent applies one event and returns, synchronously, what it did:
//
//   - Init opens a fresh relist buffer (dropping an unfinished one); readers keep
//     the old snapshot.
//   - InitApply puts the object in the buffer (a later one under the same ref wins).
//   - InitDone swaps the buffer in as the live snapshot with one pointer
//     assignment and returns the RelistDiff. The first InitDone makes the Store ready.
//   - Apply and Delete act on the live snapshot at once, also during a relist
//     (the following InitDone replaces their effect with the list's).
//     Apply: Added, Modified (same UID, other resourceVersion, in either
//     direction: resourceVersions are never compared for order), Replaced
//     (other UID) or Duplicate (same UID and resourceVersion; no change).
//     Delete: Deleted (same UID), StaleDelete (other UID; no change) or
//     AbsentDelete (no entry; no change).
//   - Bookmark is Ignored: it never changes stored objects.
//
// Objects handed in must not be modified afterwards: the cache keeps them and
// readers share them. An event that breaks these rules changes nothing and
// returns an error wrapping ErrInvalidEvent; after Close, every event returns
// one wrapping ErrClosed.
func (w *Writer) ApplyEvent(ev Event) (Result, error) {
	if w.closed {
		return Result{}, fmt.Errorf("store: applying %v: %w", ev.Type, ErrClosed)
	}
	switch ev.Type {
	case Init:
		// Sized like the live snapshot: relists mostly return about as many objects.
		w.buffer = make([]*Object, 0, len(w.c.objects))
		return Result{Outcome: RelistStarted}, nil
	case InitApply:
		if err := w.check(ev, true); err != nil {
			return Result{}, err
		}
		w.buffer = append(w.buffer, ev.Object)
		return Result{Outcome: Buffered, Object: ev.Object}, nil
	case InitDone:
		if w.buffer == nil {
			return Result{}, fmt.Errorf("store: InitDone without a preceding Init (start every list with Init): %w", ErrInvalidEvent)
		}
		return w.swap(ev.ResourceVersion), nil
	case Apply:
		if err := w.check(ev, false); err != nil {
			return Result{}, err
		}
		return w.apply(ev.Object), nil
	case Delete:
		if err := w.check(ev, false); err != nil {
			return Result{}, err
		}
		return w.delete(ev.Object), nil
	case Bookmark:
		return Result{Outcome: Ignored}, nil
	}
	return Result{}, fmt.Errorf("store: unknown event type %d: %w", ev.Type, ErrInvalidEvent)
}

// check validates an event that carries an object.
func (w *Writer) check(ev Event, relist bool) error {
	if relist && w.buffer == nil {
		return fmt.Errorf("store: InitApply without a preceding Init (start every list with Init): %w", ErrInvalidEvent)
	}
	if ev.Object == nil {
		return fmt.Errorf("store: %v without an object: %w", ev.Type, ErrInvalidEvent)
	}
	if ev.Object.Name == "" {
		return fmt.Errorf("store: %v of an object without a name (uid %q): %w", ev.Type, ev.Object.UID, ErrInvalidEvent)
	}
	return nil
}

// swap installs the list's buffer as the live map. The map and the diff are
// made before taking the lock: only the Writer mutates the live map, so
// reading it here is safe, and readers are blocked just for the pointer
// assignment.
func (w *Writer) swap(rv string) Result {
	c := w.c
	next := make(map[Ref]entry, len(w.buffer))
	var nextBytes int64
	for _, obj := range w.buffer {
		e := entry{obj: obj, bytes: estimateBytes(obj)}
		next[obj.Ref()] = e // a later one under the same ref wins
		nextBytes += e.bytes
	}
	if len(next) != len(w.buffer) { // a ref listed twice: count the winners only
		nextBytes = 0
		for _, e := range next {
			nextBytes += e.bytes
		}
	}
	w.buffer = nil
	diff := diffRelist(c.objects, next, rv, !w.ready)

	c.mu.Lock()
	c.objects = next
	c.len.Store(int64(len(next)))
	c.bytesHeld.Store(nextBytes)
	c.mu.Unlock()

	// Ready only after the swap: whoever WaitUntilReady releases sees the list.
	if !w.ready {
		w.ready = true
		close(c.ready)
	}
	r := Result{Outcome: Relisted, Diff: diff}
	w.publish(r)
	return r
}

func (w *Writer) apply(obj *Object) Result {
	c := w.c
	ref := obj.Ref()
	prev, ok := c.objects[ref]
	r := Result{Object: obj, Previous: prev.obj}
	switch {
	case !ok:
		r.Outcome = Added
	case prev.obj.UID != obj.UID:
		r.Outcome = Replaced
	case prev.obj.ResourceVersion == obj.ResourceVersion:
		// Idempotence: the same event twice changes nothing.
		r.Outcome = Duplicate
		return r
	default:
		r.Outcome = Modified
	}

	e := entry{obj: obj, bytes: estimateBytes(obj)}
	c.mu.Lock()
	c.objects[ref] = e
	if !ok {
		c.len.Store(int64(len(c.objects)))
	}
	c.mu.Unlock()

	c.bytesHeld.Add(e.bytes - prev.bytes) // prev is the zero entry when Added
	w.publish(r)
	return r
}

func (w *Writer) delete(obj *Object) Result {
	c := w.c
	ref := obj.Ref()
	prev, ok := c.objects[ref]
	r := Result{Object: obj, Previous: prev.obj}
	switch {
	case !ok:
		r.Outcome = AbsentDelete
		return r
	case prev.obj.UID != obj.UID:
		// The UID guard: a late delete of an older instance must not
		// remove the instance that now lives under the same name.
		r.Outcome = StaleDelete
		return r
	}
	r.Outcome = Deleted
	c.mu.Lock()
	delete(c.objects, ref)
	c.len.Store(int64(len(c.objects)))
	c.mu.Unlock()
	c.bytesHeld.Add(-prev.bytes)
	w.publish(r)
	return r
}

// publish hands a change to every subscriber without ever blocking: a
// subscriber whose buffer is full misses it, and its Missed count grows.
func (w *Writer) publish(r Result) {
	c := w.c
	if c.nsubs.Load() == 0 {
		return
	}
	c.subMu.Lock()
	defer c.subMu.Unlock()
	for s := range c.subs {
		select {
		case s.ch <- r:
		default:
			s.missed.Add(1)
		}
	}
}

// Forget drops every object of the live snapshot (and a list in progress),
// then closes the Writer (see Close): the cache is empty from then on. It
// returns how many objects it dropped. An observing proxy forgets what a
// client that left held.
func (w *Writer) Forget() int {
	c := w.c
	c.mu.Lock()
	n := len(c.objects)
	c.objects = map[Ref]entry{}
	c.len.Store(0)
	c.bytesHeld.Store(0)
	c.mu.Unlock()
	w.Close()
	return n
}

// Close tells readers that no more events will come: every subscription's
// channel is closed, WaitUntilReady stops waiting (with ErrClosed if the cache
// never became ready), and later events are rejected. The last snapshot stays
// readable. Close is idempotent.
func (w *Writer) Close() {
	if w.closed {
		return
	}
	w.closed = true
	w.buffer = nil
	c := w.c
	close(c.closed)
	c.subMu.Lock()
	defer c.subMu.Unlock()
	for s := range c.subs {
		close(s.ch)
	}
	c.subs = nil
	c.subsClosed = true
	c.nsubs.Store(0)
}
