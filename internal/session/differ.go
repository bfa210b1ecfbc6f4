package session

import (
	"context"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// DefaultDiffMaxObjects is how many objects' last versions --diff holds by
// default: an object past it is not diffed, and its events are counted as
// skipped (diff.SkipCap).
const DefaultDiffMaxObjects = diff.DefaultMaxObjects

// DiffOptions are --diff's: how many objects' last versions are held.
// The changes keep their old and new values, except a Secret's: its DIFF
// lines, dashboard and report name the keys that changed and who changed
// them, never their values (--trace-unsafe-secrets asks for the values in
// the trace's whole objects, not there).
type DiffOptions struct {
	MaxObjects int
}

// differ is a Source that gives each MODIFIED event its Changes: it holds
// the JSON of each object's last version, as listed or watched, up to
// MaxObjects objects (diff.Versions), and compares the next version with
// it. An event that already carries Changes (a replay of a trace that
// recorded them) passes as it came. It sits under the recorder, so a trace
// records the changes. Only the reflector's goroutine uses it (an audit
// lists through the live source itself, and a replay offers none), so it
// takes no lock.
type differ struct {
	src reflector.Source
	v   *diff.Versions
}

func newDiffer(src reflector.Source, o DiffOptions, res reflector.Resource) *differ {
	return &differ{src: src, v: diff.NewVersions(o.MaxObjects, !res.Secrets())}
}

// List implements reflector.Source: a list's first page starts the held
// versions afresh (a relist replaces the cache), and each item is held.
func (d *differ) List(ctx context.Context, opts reflector.RequestOptions) (*reflector.Page, error) {
	page, err := d.src.List(ctx, opts)
	if err != nil {
		return page, err
	}
	if opts.Continue == "" {
		d.v.Reset()
	}
	for _, it := range page.Items {
		if it.Object != nil {
			d.v.Hold(it.Object.Ref().String(), it.Object.UID, it.Raw)
		}
	}
	return page, nil
}

// Watch implements reflector.Source: a streaming list starts the held
// versions afresh, as a list does.
func (d *differ) Watch(ctx context.Context, opts reflector.RequestOptions) (reflector.Stream, error) {
	st, err := d.src.Watch(ctx, opts)
	if err != nil {
		return st, err
	}
	if opts.SendInitialEvents {
		d.v.Reset()
	}
	return &diffStream{Stream: st, d: d}, nil
}

type diffStream struct {
	reflector.Stream
	d *differ
}

func (s *diffStream) Next() (reflector.WatchEvent, error) {
	ev, err := s.Stream.Next()
	if err != nil || ev.Item.Object == nil {
		return ev, err
	}
	o := ev.Item.Object
	ev.Changes = s.d.v.Event(string(ev.Type), o.Ref().String(), o.UID, ev.Item.Raw, ev.Changes)
	return ev, nil
}

// StopsHere implements reflector.Stopper by asking the Source it wraps (a
// replay's): without it, a replay with --diff would make a request after
// the recorded run stopped, one the recording never made.
func (d *differ) StopsHere(ctx context.Context) bool {
	s, ok := d.src.(reflector.Stopper)
	return ok && s.StopsHere(ctx)
}
