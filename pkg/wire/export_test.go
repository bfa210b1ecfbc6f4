package wire

import (
	"io"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// DecodeListFrom exposes the streaming LIST decoder to the external tests.
func DecodeListFrom(r io.Reader, keepBody bool) (*reflector.Page, error) {
	return decodeListFrom(r, keepBody, true)
}

// ReadWatchEvents reads a watch stream body as a live watch does (each
// event's object decoded in place as r is read) until it ends or fails.
func ReadWatchEvents(r io.Reader, keepBody bool) ([]reflector.WatchEvent, error) {
	var d objectDecoder
	d.sc.ResetReader(r, MaxObjectBytes)
	var evs []reflector.WatchEvent
	for {
		ev, done, err := d.nextEvent(keepBody, true)
		if done || err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// DecodeProtoList exposes the streaming protobuf LIST decoder.
var DecodeProtoList = decodeProtoList

// ReadProtoWatchEvents reads a protobuf watch body as a live watch does
// until it ends or fails.
func ReadProtoWatchEvents(r io.Reader, keepRaw bool) ([]reflector.WatchEvent, error) {
	var s protoStream
	s.body.reset(r)
	var evs []reflector.WatchEvent
	for {
		ev, done, err := s.dec.nextEvent(&s.body, keepRaw)
		if done || err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// DecodeProtoObject decodes one top-level object's protobuf message, and
// returns the JSON a trace would record of it.
func DecodeProtoObject(b []byte) (*store.Object, bool, []byte, error) {
	var d protoDecoder
	obj, end, err := d.object(b)
	if err != nil {
		return nil, false, nil, err
	}
	return obj, end, d.objectJSON(typeMeta{apiVersion: []byte("v1"), kind: []byte("ConfigMap")}, obj, end), nil
}

// DecodeObjectEnd decodes one object's JSON and reports whether it is the
// initial-events-end bookmark.
func DecodeObjectEnd(raw []byte) (*store.Object, bool, error) {
	var d objectDecoder
	return d.decode(raw, false)
}

// ReadWatchEventsWriteTime is ReadWatchEvents without keeping Raw, taking
// each object's write time or (off) skipping managedFields unread: the
// passive estimate's cost.
func ReadWatchEventsWriteTime(r io.Reader, on bool) (int, error) {
	var d objectDecoder
	d.noWritten = !on
	d.sc.ResetReader(r, MaxObjectBytes)
	for n := 0; ; n++ {
		_, done, err := d.nextEvent(false, false)
		if done || err != nil {
			return n, err
		}
	}
}

// ReadProtoWatchEventsWriteTime is ReadWatchEventsWriteTime in protobuf.
func ReadProtoWatchEventsWriteTime(r io.Reader, on bool) (int, error) {
	var s protoStream
	s.dec.noWritten = !on
	s.body.reset(r)
	for n := 0; ; n++ {
		_, done, err := s.dec.nextEvent(&s.body, false)
		if done || err != nil {
			return n, err
		}
	}
}

// ReadInitialEvents reads a watch body, in JSON or protobuf, as a streaming
// list's initial events are read: managedFields skipped unread.
func ReadInitialEvents(r io.Reader, protobuf bool) ([]reflector.WatchEvent, error) {
	var evs []reflector.WatchEvent
	var s protoStream
	var d objectDecoder
	s.body.reset(r)
	s.dec.noWritten, d.noWritten = true, true
	d.sc.ResetReader(r, MaxObjectBytes)
	for {
		var ev reflector.WatchEvent
		var done bool
		var err error
		if protobuf {
			ev, done, err = s.dec.nextEvent(&s.body, false)
		} else {
			ev, done, err = d.nextEvent(false, false)
		}
		if done || err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}
