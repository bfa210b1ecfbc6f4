package store

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// cache is the state a Writer and its Stores share.
type cache struct {
	// mu guards objects. The Writer holds it only for O(1) steps (one map
	// assignment or the relist pointer swap); readers hold it to copy.
	mu sync.RWMutex
	// objects is the live snapshot. Objects in it are immutable, so readers may
	// keep the pointers; the map itself is replaced whole at InitDone.
	objects map[Ref]entry

	ready  chan struct{} // closed by the first InitDone
	closed chan struct{} // closed by Writer.Close

	// Counters, written by the Writer alone and read without locks.
	len, bytesHeld atomic.Int64

	subMu      sync.Mutex
	subs       map[*Subscription]struct{}
	subsClosed bool         // set by Writer.Close under subMu
	nsubs      atomic.Int32 // len(subs), so the Writer skips subMu when nobody listens
}

// entry is one cached object with its bytes-held estimate, kept so that
// replacing or removing it never reads the old object's labels again.
type entry struct {
	obj   *Object
	bytes int64
}

// Store is a read handle on the cache a Writer fills. Any number of goroutines
// may use one Store, and a Store value may be copied freely: all copies read
// the same cache. Obtain one from New; the zero Store is not usable.
type Store struct {
	c *cache
}

// New returns an empty cache as its read handle and its single writer, in
// that order (like kube-rs's reflector::store()). Give the Writer to exactly one
// reflector; share the Store with everyone else.
//
// The cache is empty until the reflector's first InitDone: see Store.List.
func New() (*Store, *Writer) {
	c := &cache{
		objects: map[Ref]entry{},
		ready:   make(chan struct{}),
		closed:  make(chan struct{}),
		subs:    map[*Subscription]struct{}{},
	}
	return &Store{c: c}, &Writer{c: c}
}

// List returns the objects of the live snapshot, in no particular order. The
// returned slice is the caller's own and never changes afterwards; the objects
// are shared and must not be modified. List copies one pointer per object
// under a read lock, so the Writer waits at most that long.
//
// The cache is empty until the reflector has applied its first InitDone, and
// List cannot tell "nothing listed yet" from "nothing exists". Calling List
// right after New, or right after starting the reflector, returns an empty
// slice: the classic mistake. Wait first:
//
//	if err := st.WaitUntilReady(ctx); err != nil {
//		return err
//	}
//	objs := st.List()
//
// or check Ready, as a UI would, to show "waiting for the first list".
func (s *Store) List() []*Object {
	s.c.mu.RLock()
	defer s.c.mu.RUnlock()
	out := make([]*Object, 0, len(s.c.objects))
	for _, e := range s.c.objects {
		out = append(out, e.obj)
	}
	return out
}

// Get returns the live object under ref, if any. Like List, it reports
// nothing before the first InitDone.
func (s *Store) Get(ref Ref) (*Object, bool) {
	s.c.mu.RLock()
	e, ok := s.c.objects[ref]
	s.c.mu.RUnlock()
	return e.obj, ok
}

// Len returns the number of objects in the live snapshot (0 before the first InitDone).
func (s *Store) Len() int { return int(s.c.len.Load()) }

// Ready reports whether the first InitDone has been applied; from then on the
// cache stays ready, also while later relists are buffered.
func (s *Store) Ready() bool {
	select {
	case <-s.c.ready:
		return true
	default:
		return false
	}
}

// WaitUntilReady returns nil once the first InitDone has been applied, an
// error wrapping ErrClosed if the Writer was closed before that, or one
// wrapping the context's error.
func (s *Store) WaitUntilReady(ctx context.Context) error {
	select {
	case <-s.c.ready:
		return nil
	default:
	}
	select {
	case <-s.c.ready:
		return nil
	case <-s.c.closed:
		select {
		case <-s.c.ready: // closed right after becoming ready
			return nil
		default:
		}
		return fmt.Errorf("store: waiting for the first list: the reflector stopped first: %w", ErrClosed)
	case <-ctx.Done():
		return fmt.Errorf("store: waiting for the first list: %w", ctx.Err())
	}
}

// Counters is a point-in-time reading of the cache's size. What the events
// did (adds, deletes, UID mismatches, lists) is counted by whoever applies
// them: each Apply returns its Result, and a reflector's Ledger counts them
// once for every view.
type Counters struct {
	// Objects is the number of live objects; BytesHeld estimates the heap they use.
	Objects   int
	BytesHeld int64
}

// Counters reads the counters without taking the Writer's lock.
func (s *Store) Counters() Counters {
	return Counters{Objects: int(s.c.len.Load()), BytesHeld: s.c.bytesHeld.Load()}
}
