package observed

import (
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// Begin is BeginAnswered for a request sent now, not answered with success:
// the tests' short way to feed a stream.
func (s *Stream) Begin(verb reflector.Verb, opts reflector.RequestOptions) *Request {
	return s.BeginAnswered(verb, opts, time.Time{}, "")
}

// BeginAt is Begin for a request sent at started.
func (s *Stream) BeginAt(verb reflector.Verb, opts reflector.RequestOptions, started time.Time) *Request {
	return s.BeginAnswered(verb, opts, started, "")
}
