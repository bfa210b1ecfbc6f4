package wire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/jsonscan"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// CountingReader counts the bytes read through it.
type CountingReader struct {
	R io.Reader
	N int64
}

// Read implements io.Reader.
func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}

// watchStream reads a watch stream (see DecodeWatchBody). In JSON: one
// {"type":…,"object":…} value after another, each read in one pass as it
// arrives, its object decoded in place (see decodeListFrom). In protobuf:
// one length-prefixed frame after another, each read whole (up to
// MaxObjectBytes) and decoded in place.
type watchStream struct {
	ctx    context.Context
	cancel context.CancelFunc
	body   io.ReadCloser
	dec    objectDecoder // its scanner reads the body; its scratch space serves every event
	proto  *protoStream  // set for a protobuf stream
	o      WatchOptions
	once   sync.Once
	// initial is set until the initial-events-end bookmark of a watch that
	// asked for initial events (WatchOptions.InitialEvents).
	initial bool
}

// protoStream is a protobuf watch body and its decoder.
type protoStream struct {
	body protoBody
	dec  protoDecoder
}

func (s *watchStream) Next() (reflector.WatchEvent, error) {
	var ev reflector.WatchEvent
	var done bool
	var err error
	if s.proto != nil {
		ev, done, err = s.proto.dec.nextEvent(&s.proto.body, s.o.KeepRaw)
	} else {
		ev, done, err = s.dec.nextEvent(s.o.KeepBody, s.o.KeepRaw)
	}
	if done || err != nil {
		return s.end(err)
	}
	switch {
	case s.initial:
		ev.Delivery = reflector.Delivery{} // a listed object, not news
	case s.o.Selected && ev.Type == reflector.EventAdded && ev.Item.Object != nil && !ev.Delivery.Written.After(ev.Item.Object.CreationTimestamp):
		ev.Delivery = reflector.Delivery{} // perhaps one that changed into the selector: when, nothing says
	case ev.Delivery.Known() && s.o.Now != nil:
		ev.Delivery.Lag = s.o.Clock.Lag(s.o.Now(), ev.Delivery.Written)
	}
	if ev.InitialEventsEnd {
		ev.Bytes = s.consumed()
		s.setInitial(false) // the list is over: every event now is news
	}
	return ev, nil
}

// setInitial says whether the stream is in its initial events, whose
// objects' write times are not read (their managedFields skipped unread).
func (s *watchStream) setInitial(on bool) {
	s.initial = on
	if s.proto != nil {
		s.proto.dec.noWritten = on
		return
	}
	s.dec.noWritten = on
}

// consumed is how much of the body the events read so far took, as
// decoded (after any Content-Encoding), up to the end of the last event.
func (s *watchStream) consumed() int64 {
	if s.proto != nil {
		return s.proto.body.off
	}
	return s.dec.sc.InputOffset()
}

// nextEvent reads the next event of a watch body at d's scanner; done
// reports that the body ended between events.
func (d *objectDecoder) nextEvent(keepBody, keepRaw bool) (ev reflector.WatchEvent, done bool, err error) {
	sc := &d.sc
	sc.Commit() // the previous event is done with
	if sc.AtEOF() {
		return ev, true, nil
	}
	if err := sc.Err(); err != nil {
		return ev, false, err
	}
	sc.Commit() // at the event's first byte: the size bound counts from here
	ev, err = d.wireEvent(keepBody, keepRaw)
	return ev, false, err
}

// end closes the stream and says how it ended; err is nil when the body
// ended between events.
func (s *watchStream) end(err error) (reflector.WatchEvent, error) {
	// Read our context before Close cancels it: only our own cancellation is "canceled".
	ctxErr := s.ctx.Err()
	s.Close()
	var de *eventDecodeError
	switch {
	case ctxErr != nil:
		return reflector.WatchEvent{}, reflector.EndOf(ctxErr)
	case err == nil:
		return reflector.WatchEvent{}, &reflector.RequestEnd{Reason: reflector.EndClosed}
	case errors.As(err, &de):
		return reflector.WatchEvent{}, &reflector.RequestEnd{Reason: reflector.EndError, Err: de.err}
	case errors.Is(err, jsonscan.ErrTooLarge):
		return reflector.WatchEvent{}, &reflector.RequestEnd{Reason: reflector.EndError, Err: fmt.Errorf("watch event larger than the %d MiB limit: %w", MaxObjectBytes>>20, err)}
	case errors.Is(err, errTooLarge):
		return reflector.WatchEvent{}, &reflector.RequestEnd{Reason: reflector.EndError, Err: err}
	}
	return reflector.WatchEvent{}, &reflector.RequestEnd{Reason: reflector.EndError, Err: fmt.Errorf("reading watch stream: %w", bodyError(err))}
}

// eventDecodeError is an event that was read whole but did not decode.
type eventDecodeError struct{ err error }

func (e *eventDecodeError) Error() string { return e.err.Error() }
func (e *eventDecodeError) Unwrap() error { return e.err }

// wireEvent reads one watch event at the scanner. When its type comes before
// its object, as the API server writes it, the object is decoded in place
// while it is read; otherwise (and for ERROR events) its JSON is decoded once
// the type is known. Reading errors stay in the scanner; an object that does
// not decode is an *eventDecodeError. Without keepBody and keepRaw, the
// object's JSON is not copied (Item.Raw is nil).
func (d *objectDecoder) wireEvent(keepBody, keepRaw bool) (reflector.WatchEvent, error) {
	sc := &d.sc
	var typ, decodedAs string
	var raw []byte
	var obj *store.Object
	var end bool
	if sc.Object() {
		for key, ok := sc.Key(); ok; key, ok = sc.Key() {
			switch string(key) {
			case "type":
				if t, ok := sc.String(); ok {
					typ = eventTypeName(t)
				}
			case "object":
				sc.Peek()
				start := sc.InputOffset()
				decodedAs = ""
				switch reflector.EventType(typ) {
				case reflector.EventAdded, reflector.EventModified, reflector.EventDeleted, reflector.EventBookmark:
					var err error
					if obj, end, err = d.object(); err != nil {
						if _, malformed := errors.AsType[*jsonscan.SyntaxError](sc.Err()); sc.Err() == nil || malformed {
							return reflector.WatchEvent{}, &eventDecodeError{fmt.Errorf("%s event: decoding object: %w", typ, err)}
						}
						return reflector.WatchEvent{}, err // reading failed
					}
					decodedAs = typ
				default:
					sc.Skip()
				}
				raw = sc.Since(start)
			default:
				sc.Skip()
			}
		}
	}
	if err := sc.Err(); err != nil {
		return reflector.WatchEvent{}, err
	}
	if decodedAs == "" || decodedAs != typ {
		// The type came after the object (or changed): decode it now, as
		// DecodeWatchEvent does, skipping managedFields as d does.
		fresh := objectDecoder{objectParts: objectParts{noWritten: d.noWritten}}
		ev, err := fresh.watchEvent(typ, bytes.Clone(raw), keepBody)
		if err != nil {
			return ev, &eventDecodeError{err}
		}
		if !keepBody && !keepRaw {
			ev.Item.Raw = nil
		}
		return ev, nil
	}
	// The object outlives the read buffer (the store and traces keep it).
	var object []byte
	if keepBody || keepRaw {
		object = bytes.Clone(raw)
	}
	if keepBody && reflector.EventType(typ) != reflector.EventBookmark {
		obj.Body = object
	}
	return reflector.WatchEvent{Type: reflector.EventType(typ), Item: reflector.Item{Object: obj, Raw: object}, InitialEventsEnd: reflector.EventType(typ) == reflector.EventBookmark && end,
		Delivery: d.delivery(reflector.EventType(typ), obj)}, nil
}

// eventTypeName returns the event type as a string without allocating for the known ones.
func eventTypeName(t []byte) string {
	for _, known := range []reflector.EventType{reflector.EventAdded, reflector.EventModified, reflector.EventDeleted, reflector.EventBookmark, reflector.EventError} {
		if string(t) == string(known) {
			return string(known)
		}
	}
	return string(t)
}

func (s *watchStream) Close() {
	s.once.Do(func() {
		s.cancel()
		_ = s.body.Close()
	})
}
