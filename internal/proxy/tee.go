package proxy

import (
	"context"
	"errors"
	"io"
	"sync"
)

// maxQueued bounds the bytes waiting for the observer of one response. The
// forwarding never waits for the observer below it; above it (a decoder far
// behind), the forwarding waits, so nothing observed is dropped and memory
// stays bounded.
const maxQueued = 64 << 20

// errClientGone ends a response the proxy stopped forwarding before its end:
// the client went away (or the proxy could not write to it).
var errClientGone = errors.New("the client closed the request")

// queue hands the bytes of one response from the forwarding goroutine to its
// observer: each chunk is copied as it is forwarded, and read by the decoder
// at its own pace.
type queue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	chunks [][]byte
	size   int
	err    error // why the writer stopped: io.EOF for a complete body
	done   bool  // the reader stopped: later writes are dropped
}

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// write queues a copy of p; it waits only while maxQueued bytes are waiting.
func (q *queue) write(p []byte) {
	if len(p) == 0 {
		return
	}
	c := make([]byte, len(p))
	copy(c, p)
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.size >= maxQueued && !q.done {
		q.cond.Wait()
	}
	if q.done || q.err != nil {
		return
	}
	q.chunks = append(q.chunks, c)
	q.size += len(c)
	q.cond.Broadcast()
}

// finish says the body ended, with io.EOF or the error that ended it. The
// first call wins.
func (q *queue) finish(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err == nil {
		q.err = err
	}
	q.cond.Broadcast()
}

// result is how the body ended (nil before it did).
func (q *queue) result() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// Read implements io.Reader for the observer.
func (q *queue) Read(p []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.chunks) == 0 && q.err == nil && !q.done {
		q.cond.Wait()
	}
	if len(q.chunks) == 0 {
		if q.done {
			return 0, io.ErrClosedPipe
		}
		return 0, q.err
	}
	n := copy(p, q.chunks[0])
	if n == len(q.chunks[0]) {
		q.chunks[0] = nil
		q.chunks = q.chunks[1:]
	} else {
		q.chunks[0] = q.chunks[0][n:]
	}
	q.size -= n
	q.cond.Broadcast()
	return n, nil
}

// Close stops the reader: what is queued and what comes later is dropped.
func (q *queue) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.done = true
	q.chunks, q.size = nil, 0
	q.cond.Broadcast()
	return nil
}

// teeBody is a response body on its way to the client: every chunk read
// from the server is queued for the observer before the proxy writes it to
// the client, unchanged, and the end is reported as soon as it is known:
// when the last byte of a body of known length is read (before the client
// can have it), at EOF or an error, or at Close when the proxy stops early.
type teeBody struct {
	ctx       context.Context
	body      io.ReadCloser
	q         *queue
	remaining int64 // -1: unknown length
	ended     func()
	once      sync.Once
}

// Read implements io.Reader: the server's bytes, unchanged, queued for the observer on the way.
func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.body.Read(p)
	if n > 0 {
		t.q.write(p[:n])
		if t.remaining >= 0 {
			t.remaining -= int64(n)
			if t.remaining <= 0 {
				t.end(io.EOF)
			}
		}
	}
	switch {
	case err == nil:
	case !errors.Is(err, io.EOF) && t.ctx.Err() != nil:
		t.end(errClientGone) // the read failed because the client's request ended
	default:
		t.end(err)
	}
	if err != nil && err != io.EOF {
		// The forwarding aborts the client's connection on any error but
		// EOF (a server's cut, a --fault cut). httputil.ReverseProxy logs
		// each one to the process's stderr, over the dashboard, except
		// context.Canceled: the stream's end has the error already.
		return n, context.Canceled
	}
	return n, err
}

// end reports the body's end once.
func (t *teeBody) end(err error) {
	t.once.Do(func() {
		t.q.finish(err)
		if t.ended != nil {
			t.ended()
		}
	})
}

// Close implements io.Closer; a body closed before its end was left by the client.
func (t *teeBody) Close() error {
	t.end(errClientGone)
	return t.body.Close()
}
