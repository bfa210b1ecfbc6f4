package reflector

import "io"

// DecodeListFrom exposes the streaming LIST decoder to the external tests.
var DecodeListFrom = decodeListFrom

// ReadWatchEvents reads a watch stream body as a live watch does (each
// event's object decoded in place as r is read) until it ends or fails.
func ReadWatchEvents(r io.Reader, keepBody bool) ([]WatchEvent, error) {
	var d objectDecoder
	d.sc.ResetReader(r, MaxObjectBytes)
	var evs []WatchEvent
	for {
		ev, done, err := d.nextEvent(keepBody, true)
		if done || err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}
