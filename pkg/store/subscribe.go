package store

import "sync/atomic"

// Subscription receives the changes the Writer applies to the live snapshot,
// in order: one Result per Added, Modified, Replaced or Deleted outcome and one
// Relisted (with its Diff) per InitDone. Buffered relist objects, duplicates,
// stale and absent deletes and bookmarks change nothing and are not sent.
//
// Slow-subscriber policy: the Writer never waits for a subscriber. When a
// subscription's buffer is full the change is dropped for that subscriber
// alone and counted in Missed. A subscriber that sees Missed grow has lost
// track and should resynchronise from Store.List (changes are idempotent to
// re-apply). So a reader that goes away without Close costs the Writer only
// a failed non-blocking send per change; Close it anyway to free it.
type Subscription struct {
	ch     chan Result
	missed atomic.Int64
	c      *cache
}

// Subscribe registers a subscriber with room for buffer pending changes
// (values below 1 mean 1). Subscribe before reading List, so no change can
// fall between the two; a change seen in both is harmless. After Writer.Close
// the subscription's channel is already closed.
func (s *Store) Subscribe(buffer int) *Subscription {
	sub := &Subscription{ch: make(chan Result, max(buffer, 1)), c: s.c}
	c := s.c
	c.subMu.Lock()
	defer c.subMu.Unlock()
	if c.subsClosed {
		close(sub.ch)
		return sub
	}
	c.subs[sub] = struct{}{}
	c.nsubs.Store(int32(len(c.subs)))
	return sub
}

// Changes returns the channel of applied changes. It is closed by Close or
// Writer.Close, so a range over it ends.
func (s *Subscription) Changes() <-chan Result { return s.ch }

// Missed returns how many changes were dropped because the buffer was full.
func (s *Subscription) Missed() int64 { return s.missed.Load() }

// Close unsubscribes and closes the channel; changes still buffered can be
// drained. Close is idempotent and safe to call from any goroutine.
func (s *Subscription) Close() {
	c := s.c
	c.subMu.Lock()
	defer c.subMu.Unlock()
	if _, ok := c.subs[s]; !ok {
		return // already closed, or closed by Writer.Close
	}
	delete(c.subs, s)
	c.nsubs.Store(int32(len(c.subs)))
	close(s.ch)
}
