package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/jsonscan"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// InitialEventsEndAnnotation marks the bookmark that ends a streaming list.
const InitialEventsEndAnnotation = metav1.InitialEventsAnnotationKey

// DecodeObject decodes the compact store form of one object's JSON. With
// keepBody the JSON itself is kept as the object's Body (not copied: raw must
// not be modified afterwards).
func DecodeObject(raw []byte, keepBody bool) (*store.Object, error) {
	var d objectDecoder
	obj, _, err := d.decode(raw, keepBody)
	return obj, err
}

// decode decodes the compact store form of one whole object's JSON and
// reports whether it is the initial-events-end bookmark.
func (d *objectDecoder) decode(raw []byte, keepBody bool) (*store.Object, bool, error) {
	if d.text == nil { // scratch space sized once: an object keeps a few hundred bytes of strings
		d.text, d.labels = make([]byte, 0, min(len(raw), 512)), make([]labelSpans, 0, 8)
	}
	d.sc.Reset(raw)
	obj, end, err := d.object()
	if err == nil {
		err = d.sc.End()
	}
	if err != nil {
		return nil, false, fmt.Errorf("decoding object: %w", err)
	}
	if keepBody {
		obj.Body = raw
	}
	return obj, end, nil
}

// objectDecoder decodes objects one after the other, reusing its scratch space.
type objectDecoder struct {
	sc jsonscan.Scanner
	objectParts
	// err is a value the scanner read but that did not decode (a timestamp).
	err error
}

// objectParts collects the strings one object keeps, in either wire format.
type objectParts struct {
	// written is the newest managedFields[].time of the object (zero
	// without one); see writeTime. noWritten skips managedFields unread
	// (a streaming list's initial events, whose delivery nothing estimates).
	written   time.Time
	noWritten bool
	// text collects every string an object keeps; they become substrings of
	// one string, so an object's strings cost one allocation, not twenty.
	text   []byte
	fields [4]span // namespace, name, uid, resourceVersion
	labels []labelSpans
	owners []ownerSpans
}

// reset empties the parts for the next object, keeping their space.
func (p *objectParts) reset() {
	p.text, p.labels, p.owners = p.text[:0], p.labels[:0], p.owners[:0]
	p.fields = [4]span{}
	p.written = time.Time{}
}

// writeTime is the latest write time obj's metadata tells (see
// reflector.Delivery): the newest of its managedFields' times (collected
// while decoding; the store keeps none of them), its deletionTimestamp and
// its creationTimestamp; zero when it has none.
func (p *objectParts) writeTime(obj *store.Object) time.Time {
	t := p.written
	if obj.DeletionTimestamp != nil && obj.DeletionTimestamp.After(t) {
		t = *obj.DeletionTimestamp
	}
	if obj.CreationTimestamp.After(t) {
		t = obj.CreationTimestamp
	}
	return t
}

// delivery is the write time of an event's object, for the events that
// carry one: ADDED and MODIFIED, and a DELETED whose object has a
// deletionTimestamp. A delete without one (the usual immediate delete)
// writes nothing to the object: its newest time is its last update, which
// may be days old, so such an event's lag is unknown. So is a MODIFIED
// event's whose newest time is its creation: the write left no time of its
// own (a server-side apply of values the object already had adds a manager
// without one), and the creation may be days old too.
func (p *objectParts) delivery(typ reflector.EventType, obj *store.Object) reflector.Delivery {
	if obj == nil {
		return reflector.Delivery{}
	}
	switch typ {
	case reflector.EventAdded:
		return reflector.Delivery{Written: p.writeTime(obj)}
	case reflector.EventModified:
		if w := p.writeTime(obj); w.After(obj.CreationTimestamp) {
			return reflector.Delivery{Written: w}
		}
	case reflector.EventDeleted:
		if obj.DeletionTimestamp != nil {
			return reflector.Delivery{Written: p.writeTime(obj)}
		}
	}
	return reflector.Delivery{}
}

// span is a string's place in objectDecoder.text.
type span struct{ start, end int }

type labelSpans struct{ key, value span }

type ownerSpans struct {
	apiVersion, kind, name, uid span
	controller                  bool
}

const (
	fieldNamespace = iota
	fieldName
	fieldUID
	fieldResourceVersion
)

// str appends the string value at the scanner to text; null is the empty string.
func (d *objectDecoder) str() span {
	start := len(d.text)
	d.text, _ = d.sc.AppendString(d.text)
	return span{start, len(d.text)}
}

// setStr reads a string into *dst; like encoding/json, null leaves *dst as it was.
func (d *objectDecoder) setStr(dst *span) {
	start := len(d.text)
	var ok bool
	if d.text, ok = d.sc.AppendString(d.text); ok {
		*dst = span{start, len(d.text)}
	}
}

// object decodes the object at the scanner and reports whether it is the
// initial-events-end bookmark.
func (d *objectDecoder) object() (*store.Object, bool, error) {
	d.reset()
	d.err = nil
	obj := &store.Object{}
	end := false
	sc := &d.sc
	if sc.Object() {
		for key, ok := sc.Key(); ok; key, ok = sc.Key() {
			if string(key) != "metadata" {
				sc.Skip()
				continue
			}
			if !sc.Object() {
				continue
			}
			for key, ok := sc.Key(); ok; key, ok = sc.Key() {
				switch string(key) {
				case "namespace":
					d.setStr(&d.fields[fieldNamespace])
				case "name":
					d.setStr(&d.fields[fieldName])
				case "uid":
					d.setStr(&d.fields[fieldUID])
				case "resourceVersion":
					d.setStr(&d.fields[fieldResourceVersion])
				case "generation":
					if n, ok := sc.Int64(); ok {
						obj.Generation = n
					}
				case "creationTimestamp":
					obj.CreationTimestamp, _ = d.timestamp()
				case "deletionTimestamp":
					obj.DeletionTimestamp = nil
					if t, ok := d.timestamp(); ok {
						obj.DeletionTimestamp = &t
					}
				case "labels":
					// Like encoding/json: null clears the map, an object adds to it.
					if !sc.Object() {
						d.labels = d.labels[:0]
						continue
					}
					for key, ok := sc.Key(); ok; key, ok = sc.Key() {
						start := len(d.text)
						d.text = append(d.text, key...)
						d.labels = append(d.labels, labelSpans{span{start, len(d.text)}, d.str()})
					}
				case "annotations":
					// Only the end-of-initial-events marker is kept; null clears the map.
					if !sc.Object() {
						end = false
						continue
					}
					for key, ok := sc.Key(); ok; key, ok = sc.Key() {
						if string(key) != InitialEventsEndAnnotation {
							// Still only strings (or null) are valid annotation values.
							if c := sc.Peek(); c == '"' || c == 'n' {
								sc.Skip()
							} else {
								sc.String() // records the type error
							}
							continue
						}
						v, _ := sc.String()
						end = string(v) == "true"
					}
				case "managedFields":
					if d.noWritten {
						sc.Skip()
						continue
					}
					d.managedFields()
				case "ownerReferences":
					d.owners = d.owners[:0]
					if !sc.Array() {
						continue
					}
					for sc.Next() {
						d.owners = append(d.owners, d.owner())
					}
				default:
					sc.Skip()
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, false, err
	}
	if d.err != nil {
		return nil, false, d.err
	}
	d.build(obj)
	return obj, end, nil
}

// managedFields reads the managedFields at the scanner, keeping only the
// newest entry's time (d.written). Entries are compared in their
// canonical RFC 3339 form ("2026-11-29T13:46:10Z", what the API server
// writes) as text, and parsed once; any other form is parsed as it comes.
// A time that does not parse is left out: it only estimates delivery. So
// is one of the canonical shape that does not parse (month 13): compared as
// text, it may sort above the valid ones and hide them too, leaving the
// object's other times. The API server writes none (a metav1.Time it cannot
// parse is refused), so that is not worth a parse for every entry.
func (d *objectDecoder) managedFields() {
	sc := &d.sc
	var newest [20]byte
	haveNewest := false
	if !sc.Array() {
		return
	}
	for sc.Next() {
		if !sc.Object() {
			continue
		}
		for key, ok := sc.Key(); ok; key, ok = sc.Key() {
			if string(key) != "time" {
				sc.Skip()
				continue
			}
			raw := sc.Raw()
			if len(raw) == 22 && raw[0] == '"' && raw[20] == 'Z' && raw[21] == '"' {
				if v := raw[1:21]; !haveNewest || string(v) > string(newest[:]) {
					copy(newest[:], v)
					haveNewest = true
				}
				continue
			}
			var t time.Time
			if string(raw) != "null" && t.UnmarshalJSON(raw) == nil && t.After(d.written) {
				d.written = t
			}
		}
	}
	if haveNewest {
		if t, err := time.Parse(time.RFC3339, string(newest[:])); err == nil && t.After(d.written) {
			d.written = t
		}
	}
}

// owner decodes one owner reference.
func (d *objectDecoder) owner() ownerSpans {
	var o ownerSpans
	sc := &d.sc
	if !sc.Object() {
		return o
	}
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch string(key) {
		case "apiVersion":
			d.setStr(&o.apiVersion)
		case "kind":
			d.setStr(&o.kind)
		case "name":
			d.setStr(&o.name)
		case "uid":
			d.setStr(&o.uid)
		case "controller":
			o.controller, _ = sc.Bool() // null: a nil *bool, not a controller
		default:
			sc.Skip()
		}
	}
	return o
}

// timestamp decodes a metav1.Time as encoding/json would; null is (zero, false).
func (d *objectDecoder) timestamp() (time.Time, bool) {
	var t time.Time
	raw := d.sc.Raw()
	if d.sc.Err() != nil || string(raw) == "null" {
		return t, false
	}
	if err := t.UnmarshalJSON(raw); err != nil {
		if d.err == nil {
			d.err = fmt.Errorf("decoding a timestamp: %w", err)
		}
		return t, false
	}
	return t, true
}

// build fills obj's strings from text, with one allocation for all of
// them: the strings it keeps, and the labels in store.Labels' encoding
// (sorted by key, the last of a repeated key kept, as encoding/json and a
// map would).
func (d *objectParts) build(obj *store.Object) {
	bytesOf := func(s span) []byte { return d.text[s.start:s.end] }
	n := 0
	for _, s := range d.fields {
		n += s.end - s.start
	}
	for _, o := range d.owners {
		n += o.apiVersion.end - o.apiVersion.start + o.kind.end - o.kind.start + o.name.end - o.name.start + o.uid.end - o.uid.start
	}
	labels := d.labels[:0]
	slices.SortStableFunc(d.labels, func(a, b labelSpans) int { return bytes.Compare(bytesOf(a.key), bytesOf(b.key)) })
	for i, l := range d.labels {
		if i+1 < len(d.labels) && bytes.Equal(bytesOf(l.key), bytesOf(d.labels[i+1].key)) {
			continue
		}
		labels = append(labels, l)
		n += store.LabelLen(l.key.end-l.key.start, l.value.end-l.value.start)
	}
	var b strings.Builder
	b.Grow(n)
	keep := func(s span) span {
		start := b.Len()
		b.Write(bytesOf(s))
		return span{start, b.Len()}
	}
	var fields [len(d.fields)]span
	for i, s := range d.fields {
		fields[i] = keep(s)
	}
	for i, o := range d.owners {
		d.owners[i] = ownerSpans{apiVersion: keep(o.apiVersion), kind: keep(o.kind), name: keep(o.name), uid: keep(o.uid), controller: o.controller}
	}
	all := span{start: b.Len()}
	for _, l := range labels {
		store.WriteLabel(&b, bytesOf(l.key), bytesOf(l.value))
	}
	all.end = b.Len()
	text := b.String()
	at := func(s span) string { return text[s.start:s.end] }
	obj.Namespace = at(fields[fieldNamespace])
	obj.Name = at(fields[fieldName])
	obj.UID = at(fields[fieldUID])
	obj.ResourceVersion = at(fields[fieldResourceVersion])
	obj.Labels, _ = store.LabelsOf(at(all))
	if len(d.owners) > 0 {
		obj.OwnerReferences = make([]store.OwnerRef, len(d.owners))
		for i, o := range d.owners {
			obj.OwnerReferences[i] = store.OwnerRef{APIVersion: at(o.apiVersion), Kind: at(o.kind), Name: at(o.name), UID: at(o.uid), Controller: o.controller}
		}
	}
}

// MaxObjectBytes bounds one object as the live Source reads it: a LIST item
// or a watch event larger than this ends its request with an error naming
// the size, without the rest of it being read, and a reflector retries
// after a backoff as for any failed request. etcd refuses requests over
// about 1.5 MiB by default (--max-request-bytes), so the API server stores
// nothing near this size; 16 MiB leaves ample room for any legitimate object
// (and for clusters that raised etcd's limit) while bounding the memory a
// broken or malicious server can make the client hold (about twice this,
// for the read buffer).
const MaxObjectBytes = 16 << 20

// DecodeList decodes a LIST response body into a [reflector.Page]. Each
// item's Raw is its own copy (and its Body, with keepBody), so nothing holds
// on to the page.
func DecodeList(body []byte, keepBody bool) (*reflector.Page, error) {
	return decodeListFrom(bytes.NewReader(body), keepBody, true)
}

// decodeListFrom decodes a LIST response as it is read: each item is decoded
// as soon as its bytes are in, and the response is never held whole. The
// scanner reads the body as needed, each byte once, and holds only the part
// being decoded (the list's opening, one member, one item), up to
// MaxObjectBytes. Without keepRaw (and keepBody) the items' JSON is not
// copied and their Raw is nil.
func decodeListFrom(r io.Reader, keepBody, keepRaw bool) (*reflector.Page, error) {
	var d objectDecoder
	sc := &d.sc
	sc.ResetReader(r, MaxObjectBytes)
	page := &reflector.Page{}
	// A null list is an empty one, as for encoding/json.
	isNull := sc.Peek() == 'n'
	if isNull {
		sc.Skip()
	} else {
		sc.Expect('{')
	}
	for members := 0; !isNull && sc.Err() == nil; members++ {
		sc.Commit()
		if sc.Byte('}') {
			break
		}
		if members > 0 {
			sc.Expect(',')
		}
		if sc.Peek() != '"' {
			sc.Expect('"') // records the syntax error
			break
		}
		key, _ := sc.String()
		sc.Expect(':')
		if string(key) != "items" {
			d.listMember(key, page)
			continue
		}
		// Like encoding/json: a later "items" replaces an earlier one, null empties it.
		page.Items = nil
		if sc.Array() {
			if err := d.listItems(page, keepBody, keepRaw); err != nil {
				return nil, fmt.Errorf("decoding list: %w", err)
			}
		}
	}
	sc.Commit()
	if err := sc.End(); errors.Is(err, jsonscan.ErrTooLarge) {
		return nil, fmt.Errorf("decoding list: a list member is larger than %d MiB: %w", MaxObjectBytes>>20, err)
	} else if err != nil {
		return nil, fmt.Errorf("decoding list: %w", bodyError(err))
	}
	return page, nil
}

// bodyError is the error to report for a scanner error reading a body: the
// body ending inside a value is io.ErrUnexpectedEOF; a *jsonscan.ReadError
// (the connection failing, not malformed JSON) is returned as it is.
func bodyError(err error) error {
	if errors.Is(err, jsonscan.ErrShort) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// listMember reads one member of a list (its metadata; the rest is skipped).
func (d *objectDecoder) listMember(key []byte, page *reflector.Page) {
	sc := &d.sc
	if string(key) != "metadata" {
		sc.Skip()
		return
	}
	if !sc.Object() {
		return // null (or an error sc holds)
	}
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch string(key) {
		case "resourceVersion":
			d.listString(&page.ResourceVersion)
		case "continue":
			d.listString(&page.Continue)
		case "remainingItemCount":
			page.RemainingItemCount = nil
			if n, ok := sc.Int64(); ok {
				page.RemainingItemCount = &n
			}
		default:
			sc.Skip()
		}
	}
}

// listItems reads the items of a list whose '[' was read, up to its ']'.
// Each item is decoded in place and, when it is kept, its JSON copied once
// (it outlives the read buffer).
func (d *objectDecoder) listItems(page *reflector.Page, keepBody, keepRaw bool) error {
	sc := &d.sc
	for n := 0; ; n++ {
		sc.Commit()
		if sc.Byte(']') {
			return nil
		}
		if n > 0 {
			sc.Expect(',')
		}
		sc.Peek()
		sc.Commit() // at the item's first byte: Part is the item
		obj, _, err := d.object()
		if err != nil {
			if errors.Is(err, jsonscan.ErrTooLarge) {
				return fmt.Errorf("list item %d is larger than %d MiB: %w", n, MaxObjectBytes>>20, err)
			}
			return fmt.Errorf("list item %d: %w", n, bodyError(err))
		}
		var raw []byte
		if keepBody || keepRaw {
			raw = bytes.Clone(sc.Part())
		}
		if keepBody {
			obj.Body = raw
		}
		page.Items = append(page.Items, reflector.Item{Object: obj, Raw: raw})
	}
}

// listString reads a string of the list's metadata; null leaves *dst as it was.
func (d *objectDecoder) listString(dst *string) {
	if v, ok := d.sc.String(); ok {
		*dst = string(v)
	}
}

// DecodeWatchEvent decodes one watch event from its type and object JSON,
// as a trace records it.
func DecodeWatchEvent(typ string, object []byte, keepBody bool) (reflector.WatchEvent, error) {
	var d objectDecoder
	return d.watchEvent(typ, object, keepBody)
}

// watchEvent is DecodeWatchEvent with d's scratch space (a stream reuses it).
func (d *objectDecoder) watchEvent(typ string, object []byte, keepBody bool) (reflector.WatchEvent, error) {
	ev := reflector.WatchEvent{Type: reflector.EventType(typ)}
	switch ev.Type {
	case reflector.EventAdded, reflector.EventModified, reflector.EventDeleted, reflector.EventBookmark:
		obj, end, err := d.decode(object, keepBody && ev.Type != reflector.EventBookmark)
		if err != nil {
			return ev, fmt.Errorf("%s event: %w", typ, err)
		}
		ev.Item = reflector.Item{Object: obj, Raw: object}
		ev.InitialEventsEnd = ev.Type == reflector.EventBookmark && end
		ev.Delivery = d.delivery(ev.Type, obj)
	case reflector.EventError:
		var st metav1.Status
		if err := json.Unmarshal(object, &st); err != nil {
			return ev, fmt.Errorf("ERROR event: decoding status: %w", err)
		}
		ev.Status = &st
	default:
		return ev, fmt.Errorf("watch event of unknown type %q", typ)
	}
	return ev, nil
}
