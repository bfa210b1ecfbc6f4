package session

import (
	"context"
	"sync"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// DefaultDiffMaxObjects is how many objects' last versions --diff holds by
// default: an object past it is not diffed, and its events are counted as
// skipped (diff.SkipCap).
const DefaultDiffMaxObjects = 20000

// DiffOptions are --diff's: how many objects' last versions are held, and
// whether the changes keep their old and new values (not for Secrets unless
// the user asked for their values).
type DiffOptions struct {
	MaxObjects int
	KeepValues bool
}

// differ is a Source that gives each MODIFIED event its Changes: it holds
// the JSON of each object's last version, as listed or watched, up to
// MaxObjects objects, and compares the next version with it. An event that
// already carries Changes (a replay of a trace that recorded them) passes
// as it came. It sits under the recorder, so a trace records the changes.
type differ struct {
	src reflector.Source
	o   DiffOptions

	mu   sync.Mutex
	held map[store.Ref]heldVersion
}

type heldVersion struct {
	uid string
	raw []byte
}

func newDiffer(src reflector.Source, o DiffOptions) *differ {
	if o.MaxObjects <= 0 {
		o.MaxObjects = DefaultDiffMaxObjects
	}
	return &differ{src: src, o: o, held: map[store.Ref]heldVersion{}}
}

// List implements reflector.Source: a list's first page starts the held
// versions afresh (a relist replaces the cache), and each item is held.
func (d *differ) List(ctx context.Context, opts reflector.RequestOptions) (*reflector.Page, error) {
	page, err := d.src.List(ctx, opts)
	if err != nil {
		return page, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if opts.Continue == "" {
		clear(d.held)
	}
	for _, it := range page.Items {
		d.hold(it)
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
		d.mu.Lock()
		clear(d.held)
		d.mu.Unlock()
	}
	return &diffStream{Stream: st, d: d}, nil
}

// hold keeps it as its object's last version (d.mu held).
func (d *differ) hold(it reflector.Item) {
	if it.Object == nil || len(it.Raw) == 0 {
		return
	}
	ref := it.Object.Ref()
	if _, ok := d.held[ref]; !ok && len(d.held) >= d.o.MaxObjects {
		return
	}
	d.held[ref] = heldVersion{uid: it.Object.UID, raw: it.Raw}
}

// changes compares a MODIFIED event's object with its held version, then
// holds it in its place (d.mu held).
func (d *differ) changes(it reflector.Item) *diff.Changes {
	ref := it.Object.Ref()
	prev, ok := d.held[ref]
	full := len(d.held) >= d.o.MaxObjects
	d.hold(it)
	switch {
	case !ok && full:
		return diff.Skip(diff.SkipCap)
	case !ok:
		return diff.Skip(diff.SkipNoPrevious)
	case prev.uid != it.Object.UID:
		return diff.Skip(diff.SkipOtherUID)
	}
	ch, err := diff.Compare(prev.raw, it.Raw, d.o.KeepValues)
	if err != nil {
		return diff.Skip(diff.SkipNotJSON)
	}
	return ch
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
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	switch ev.Type {
	case reflector.EventAdded:
		d.hold(ev.Item)
	case reflector.EventModified:
		if ev.Changes == nil {
			ev.Changes = d.changes(ev.Item)
		} else {
			d.hold(ev.Item)
		}
	case reflector.EventDeleted:
		delete(d.held, ev.Item.Object.Ref())
	}
	return ev, nil
}
