package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/jsonscan"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire/request"
)

// The API server's protobuf encoding, as far as the compact store needs it.
// Field numbers are those of k8s.io/apimachinery's generated.proto files
// (pkg/runtime and pkg/apis/meta/v1) and of k8s.io/api's: every top-level
// object, built-in or PartialObjectMetadata, has its ObjectMeta as field 1,
// and every list its ListMeta as field 1 and its items as field 2.
//
// A response body (LIST, error Status) is protoMagic followed by a
// runtime.Unknown whose raw field is the object's own message. A watch body
// is a sequence of frames, each a 4-byte big-endian length and a
// metav1.WatchEvent, whose object is a RawExtension holding protoMagic and a
// runtime.Unknown of the object (or of a Status, for ERROR events).
//
// Decoding takes only what the store keeps, reads the wire with protowire
// and builds no typed object (except the Status of an error, rare and small).

// protoMagic starts every protobuf-encoded object the API server writes.
const protoMagic = "k8s\x00"

// Field numbers.
const (
	// runtime.Unknown
	unknownTypeMeta        = 1
	unknownRaw             = 2
	unknownContentEncoding = 3
	unknownContentType     = 4
	// runtime.TypeMeta
	typeMetaAPIVersion = 1
	typeMetaKind       = 2
	// runtime.RawExtension
	rawExtensionRaw = 1
	// metav1.WatchEvent
	watchEventType   = 1
	watchEventObject = 2
	// top-level objects and lists
	objectMetadata = 1
	listMetadata   = 1
	listItems      = 2
	// metav1.ListMeta
	listMetaResourceVersion    = 2
	listMetaContinue           = 3
	listMetaRemainingItemCount = 4
	// metav1.ObjectMeta
	metaName              = 1
	metaNamespace         = 3
	metaUID               = 5
	metaResourceVersion   = 6
	metaGeneration        = 7
	metaCreationTimestamp = 8
	metaDeletionTimestamp = 9
	metaLabels            = 11
	metaAnnotations       = 12
	metaOwnerReferences   = 13
	metaManagedFields     = 17
	// metav1.ManagedFieldsEntry
	managedFieldsTime = 4
	// map entries
	mapKey   = 1
	mapValue = 2
	// metav1.OwnerReference
	ownerKind       = 1
	ownerName       = 3
	ownerUID        = 4
	ownerAPIVersion = 5
	ownerController = 6
	// metav1.Time
	timeSeconds = 1
)

// IsProtobuf reports whether a response's Content-Type is the API server's
// protobuf encoding (a LIST's, or a watch's with ";stream=watch").
func IsProtobuf(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == request.ContentTypeProtobuf
}

// errProto is a protobuf message that does not decode.
func errProto(what string, code int) error {
	if code < 0 {
		return fmt.Errorf("%s: %w", what, protowire.ParseError(code))
	}
	return fmt.Errorf("%s: malformed protobuf", what)
}

// typeMeta is a runtime.Unknown's apiVersion and kind.
type typeMeta struct{ apiVersion, kind []byte }

// unwrapUnknown reads protoMagic and a runtime.Unknown whole, and returns
// its type and raw message.
func unwrapUnknown(b []byte) (typeMeta, []byte, error) {
	var tm typeMeta
	if !bytes.HasPrefix(b, []byte(protoMagic)) {
		return tm, nil, errors.New("not a protobuf object (no k8s\\x00 prefix)")
	}
	b = b[len(protoMagic):]
	var raw []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return tm, nil, errProto("runtime.Unknown", n)
		}
		b = b[n:]
		if typ != protowire.BytesType || num > unknownContentType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return tm, nil, errProto("runtime.Unknown", n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return tm, nil, errProto("runtime.Unknown", n)
		}
		b = b[n:]
		switch num {
		case unknownTypeMeta:
			var err error
			if tm, err = decodeTypeMeta(v); err != nil {
				return tm, nil, err
			}
		case unknownRaw:
			raw = v
		case unknownContentEncoding, unknownContentType:
			if len(v) > 0 && (num == unknownContentEncoding || string(v) != request.ContentTypeProtobuf) {
				return tm, nil, fmt.Errorf("runtime.Unknown with content encoding or type %q is not supported", v)
			}
		}
	}
	return tm, raw, nil
}

func decodeTypeMeta(b []byte) (typeMeta, error) {
	var tm typeMeta
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return tm, errProto("runtime.TypeMeta", n)
		}
		b = b[n:]
		if typ == protowire.BytesType && (num == typeMetaAPIVersion || num == typeMetaKind) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return tm, errProto("runtime.TypeMeta", n)
			}
			if num == typeMetaAPIVersion {
				tm.apiVersion = v
			} else {
				tm.kind = v
			}
			b = b[n:]
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return tm, errProto("runtime.TypeMeta", n)
		}
		b = b[n:]
	}
	return tm, nil
}

// decodeProtoStatus decodes an error body or an ERROR event's object: a
// Status in protobuf (protoMagic and a runtime.Unknown).
func decodeProtoStatus(b []byte) (*metav1.Status, error) {
	tm, raw, err := unwrapUnknown(b)
	if err != nil {
		return nil, err
	}
	if string(tm.kind) != "Status" {
		return nil, fmt.Errorf("expected a Status, got kind %q", tm.kind)
	}
	var st metav1.Status
	if err := st.Unmarshal(raw); err != nil {
		return nil, fmt.Errorf("decoding a protobuf Status: %w", err)
	}
	st.APIVersion, st.Kind = string(tm.apiVersion), string(tm.kind)
	return &st, nil
}

// protoDecoder decodes objects in protobuf one after the other, reusing its
// scratch space.
type protoDecoder struct {
	objectParts
	json []byte // scratch for the JSON a trace records
	// newest is the newest managedFields time of the object being decoded,
	// in Unix seconds (0: none).
	newest int64
}

// object decodes the compact store form of one top-level object's message
// (a ConfigMap, a PartialObjectMetadata…) and reports whether it is the
// initial-events-end bookmark. Like the generated decoders, a metadata
// field that comes twice merges into the first: a later name, timestamp or
// generation replaces the earlier one, and labels, owner references and
// managedFields add up (a label's last value wins).
func (d *protoDecoder) object(b []byte) (*store.Object, bool, error) {
	d.reset()
	d.newest = 0
	obj := &store.Object{}
	end := false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false, errProto("object", n)
		}
		b = b[n:]
		if num != objectMetadata {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return nil, false, errProto("object", n)
			}
			b = b[n:]
			continue
		}
		if typ != protowire.BytesType {
			return nil, false, errors.New("object: metadata is not a message")
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, false, errProto("object metadata", n)
		}
		b = b[n:]
		e, err := d.meta(v, obj)
		if err != nil {
			return nil, false, err
		}
		end = end || e
	}
	d.build(obj)
	if d.newest > 0 {
		d.written = time.Unix(d.newest, 0).UTC()
	}
	return obj, end, nil
}

// str appends a string field's value to text.
func (d *protoDecoder) str(v []byte) span {
	start := len(d.text)
	d.text = append(d.text, v...)
	return span{start, len(d.text)}
}

// meta decodes an ObjectMeta message into obj and d's parts.
func (d *protoDecoder) meta(b []byte, obj *store.Object) (end bool, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false, errProto("metadata", n)
		}
		b = b[n:]
		want := protowire.BytesType
		switch num {
		case metaGeneration:
			want = protowire.VarintType
		case metaName, metaNamespace, metaUID, metaResourceVersion, metaCreationTimestamp, metaDeletionTimestamp,
			metaLabels, metaAnnotations, metaOwnerReferences:
		case metaManagedFields:
			if d.noWritten {
				if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
					return false, errProto("metadata", n)
				}
				b = b[n:]
				continue
			}
		default:
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return false, errProto("metadata", n)
			}
			b = b[n:]
			continue
		}
		if typ != want {
			return false, fmt.Errorf("metadata field %d has wire type %d, want %d", num, typ, want)
		}
		if want == protowire.VarintType {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return false, errProto("metadata.generation", n)
			}
			b = b[n:]
			obj.Generation = int64(v)
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return false, errProto("metadata", n)
		}
		b = b[n:]
		switch num {
		case metaName:
			d.fields[fieldName] = d.str(v)
		case metaNamespace:
			d.fields[fieldNamespace] = d.str(v)
		case metaUID:
			d.fields[fieldUID] = d.str(v)
		case metaResourceVersion:
			d.fields[fieldResourceVersion] = d.str(v)
		case metaCreationTimestamp:
			if obj.CreationTimestamp, err = protoTime(v); err != nil {
				return false, err
			}
		case metaDeletionTimestamp:
			t, err := protoTime(v)
			if err != nil {
				return false, err
			}
			obj.DeletionTimestamp = &t
		case metaLabels:
			k, val, err := mapEntry(v)
			if err != nil {
				return false, fmt.Errorf("metadata.labels: %w", err)
			}
			d.labels = append(d.labels, labelSpans{d.str(k), d.str(val)})
		case metaAnnotations:
			k, val, err := mapEntry(v)
			if err != nil {
				return false, fmt.Errorf("metadata.annotations: %w", err)
			}
			if string(k) == InitialEventsEndAnnotation {
				end = string(val) == "true"
			}
		case metaOwnerReferences:
			o, err := d.owner(v)
			if err != nil {
				return false, err
			}
			d.owners = append(d.owners, o)
		case metaManagedFields:
			d.managedFieldsEntry(v)
		}
	}
	return end, nil
}

// managedFieldsEntry keeps a ManagedFieldsEntry's time, in seconds, in
// d.newest when it is the newest so far (object turns it into d.written).
// An entry that does not decode is left out: it only estimates delivery.
func (d *protoDecoder) managedFieldsEntry(b []byte) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		if num == managedFieldsTime && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return
			}
			// A metav1.Time: its seconds, field 1 (the API server writes no nanoseconds).
			for len(v) > 0 {
				num, typ, n := protowire.ConsumeTag(v)
				if n < 0 {
					return
				}
				v = v[n:]
				if num == timeSeconds && typ == protowire.VarintType {
					secs, n := protowire.ConsumeVarint(v)
					if n < 0 {
						return
					}
					if s := int64(secs); s > d.newest {
						d.newest = s
					}
					return
				}
				if n = protowire.ConsumeFieldValue(num, typ, v); n < 0 {
					return
				}
				v = v[n:]
			}
			return
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return
		}
		b = b[n:]
	}
}

// protoTime decodes a metav1.Time as its generated Unmarshal does: an empty
// message is the zero time, and only seconds count (the API server never
// writes nanoseconds). Times are in UTC, as RFC 3339 "Z" decodes in JSON.
func protoTime(b []byte) (time.Time, error) {
	if len(b) == 0 {
		return time.Time{}, nil
	}
	var secs int64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return time.Time{}, errProto("metav1.Time", n)
		}
		b = b[n:]
		if num == timeSeconds && typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return time.Time{}, errProto("metav1.Time", n)
			}
			secs, b = int64(v), b[n:]
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return time.Time{}, errProto("metav1.Time", n)
		}
		b = b[n:]
	}
	return time.Unix(secs, 0).UTC(), nil
}

// mapEntry decodes one entry of a map<string, string>.
func mapEntry(b []byte) (key, value []byte, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, nil, errProto("map entry", n)
		}
		b = b[n:]
		if typ == protowire.BytesType && (num == mapKey || num == mapValue) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, nil, errProto("map entry", n)
			}
			if num == mapKey {
				key = v
			} else {
				value = v
			}
			b = b[n:]
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return nil, nil, errProto("map entry", n)
		}
		b = b[n:]
	}
	return key, value, nil
}

// owner decodes one OwnerReference.
func (d *protoDecoder) owner(b []byte) (ownerSpans, error) {
	var o ownerSpans
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return o, errProto("owner reference", n)
		}
		b = b[n:]
		switch {
		case num == ownerController && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return o, errProto("owner reference", n)
			}
			o.controller, b = protowire.DecodeBool(v), b[n:]
		case typ == protowire.BytesType && (num == ownerKind || num == ownerName || num == ownerUID || num == ownerAPIVersion):
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return o, errProto("owner reference", n)
			}
			b = b[n:]
			s := d.str(v)
			switch num {
			case ownerKind:
				o.kind = s
			case ownerName:
				o.name = s
			case ownerUID:
				o.uid = s
			case ownerAPIVersion:
				o.apiVersion = s
			}
		default:
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return o, errProto("owner reference", n)
			}
			b = b[n:]
		}
	}
	return o, nil
}

// protoBody reads a protobuf body as it arrives: each byte once, holding
// only the part being decoded (a list's opening, one item, one watch frame).
type protoBody struct {
	r   io.Reader
	buf []byte // buf[pos:] is read and not yet consumed
	pos int
	off int64 // bytes consumed so far
	err error // the reader's error, io.EOF at the end
}

func (b *protoBody) reset(r io.Reader) {
	b.r, b.buf, b.pos, b.off, b.err = r, b.buf[:0], 0, 0, nil
}

// minRead is the least room a read is given.
const minRead = 32 << 10

// maxEmptyReads is how many reads in a row may return neither bytes nor an
// error before the body fails with io.ErrNoProgress, as in jsonscan and
// bufio: a reader that never progresses must not hold the decoder forever.
const maxEmptyReads = 100

// fill makes n bytes available at pos, reading as needed; false when the
// body ends (or fails) first.
func (b *protoBody) fill(n int) bool {
	empty := 0
	for len(b.buf)-b.pos < n {
		if b.err != nil {
			return false
		}
		if b.pos > 0 {
			// Drop what was consumed: only the part being decoded is kept.
			m := copy(b.buf, b.buf[b.pos:])
			b.buf, b.pos = b.buf[:m], 0
		}
		if need := max(n, minRead); cap(b.buf) < need {
			nb := make([]byte, len(b.buf), max(need, 2*cap(b.buf)))
			copy(nb, b.buf)
			b.buf = nb
		}
		k, err := b.r.Read(b.buf[len(b.buf):cap(b.buf)])
		b.buf = b.buf[:len(b.buf)+k]
		switch {
		case err != nil:
			b.err = err
		case k > 0:
			empty = 0
		default:
			if empty++; empty == maxEmptyReads {
				b.err = io.ErrNoProgress
			}
		}
	}
	return true
}

// short is the error for a body that ended (or failed) before n more bytes.
func (b *protoBody) short() error {
	if b.err == nil || errors.Is(b.err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return &jsonscan.ReadError{Err: b.err}
}

// next consumes n bytes, which fill made available.
func (b *protoBody) next(n int) []byte {
	p := b.buf[b.pos : b.pos+n]
	b.pos += n
	b.off += int64(n)
	return p
}

// atEOF reports whether the body ended cleanly with everything consumed.
func (b *protoBody) atEOF() bool { return !b.fill(1) && errors.Is(b.err, io.EOF) }

// varint reads one varint.
func (b *protoBody) varint() (uint64, error) {
	for {
		v, n := protowire.ConsumeVarint(b.buf[b.pos:])
		if n >= 0 {
			b.next(n)
			return v, nil
		}
		avail := len(b.buf) - b.pos
		if avail >= binary.MaxVarintLen64 {
			return 0, errProto("varint", n)
		}
		if !b.fill(avail + 1) {
			return 0, b.short()
		}
	}
}

// tag reads a field's number and wire type.
func (b *protoBody) tag() (protowire.Number, protowire.Type, error) {
	v, err := b.varint()
	if err != nil {
		return 0, 0, err
	}
	num, typ := protowire.DecodeTag(v)
	if num < protowire.MinValidNumber {
		return 0, 0, errors.New("malformed protobuf: invalid field number")
	}
	return num, typ, nil
}

// length reads the length prefix of a value that is held whole, so at most
// MaxObjectBytes.
func (b *protoBody) length(what string) (int, error) {
	v, err := b.varint()
	if err != nil {
		return 0, err
	}
	if v > MaxObjectBytes {
		return 0, fmt.Errorf("%s of %d bytes is larger than %d MiB: %w", what, v, MaxObjectBytes>>20, errTooLarge)
	}
	return int(v), nil
}

// errTooLarge is an object or event larger than MaxObjectBytes.
var errTooLarge = errors.New("too large")

// bytesField reads a length-delimited value whole (at most MaxObjectBytes).
func (b *protoBody) bytesField(what string) ([]byte, error) {
	n, err := b.length(what)
	if err != nil {
		return nil, err
	}
	if !b.fill(n) {
		return nil, b.short()
	}
	return b.next(n), nil
}

// skip discards a field's value of type typ without holding it.
func (b *protoBody) skip(typ protowire.Type) error {
	var n uint64
	switch typ {
	case protowire.VarintType:
		_, err := b.varint()
		return err
	case protowire.Fixed32Type:
		n = 4
	case protowire.Fixed64Type:
		n = 8
	case protowire.BytesType:
		var err error
		if n, err = b.varint(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("malformed protobuf: wire type %d is not supported", typ)
	}
	for n > 0 {
		if !b.fill(1) {
			return b.short()
		}
		k := min(n, uint64(len(b.buf)-b.pos))
		b.next(int(k))
		n -= k
	}
	return nil
}

// decodeProtoList decodes a LIST response in protobuf as it is read: each
// item is decoded as soon as its bytes are in, and the response is never
// held whole. Without keepRaw the items' Raw is nil; with it, Raw is the
// JSON of what was decoded (see protoDecoder.objectJSON).
func decodeProtoList(r io.Reader, keepRaw bool) (*reflector.Page, error) {
	var body protoBody
	body.reset(r)
	var d protoDecoder
	page := &reflector.Page{}
	if err := d.list(&body, page, keepRaw); err != nil {
		return nil, fmt.Errorf("decoding list: %w", err)
	}
	return page, nil
}

func (d *protoDecoder) list(body *protoBody, page *reflector.Page, keepRaw bool) error {
	if !body.fill(len(protoMagic)) {
		return body.short()
	}
	if string(body.next(len(protoMagic))) != protoMagic {
		return errors.New("not a protobuf object (no k8s\\x00 prefix)")
	}
	// The runtime.Unknown, read field by field: its raw field is the list.
	for !body.atEOF() {
		num, typ, err := body.tag()
		if err != nil {
			return err
		}
		switch {
		case num == unknownRaw && typ == protowire.BytesType:
			// The list is decoded as it is read, never held: its length only
			// marks where it ends, and no body is as long as 2^62 bytes.
			n, err := body.varint()
			if err != nil {
				return err
			}
			if n > 1<<62 {
				return fmt.Errorf("malformed protobuf: a list length of %d bytes", n)
			}
			if err := d.listBody(body, body.off+int64(n), page, keepRaw); err != nil {
				return err
			}
		case (num == unknownContentEncoding || num == unknownContentType) && typ == protowire.BytesType:
			v, err := body.bytesField("content type")
			if err != nil {
				return err
			}
			if len(v) > 0 && (num == unknownContentEncoding || string(v) != request.ContentTypeProtobuf) {
				return fmt.Errorf("runtime.Unknown with content encoding or type %q is not supported", v)
			}
		default:
			if err := body.skip(typ); err != nil {
				return err
			}
		}
	}
	return nil
}

// listBody reads a list message up to offset end.
func (d *protoDecoder) listBody(body *protoBody, end int64, page *reflector.Page, keepRaw bool) error {
	// Like the generated decoders: a later items field appends.
	for body.off < end {
		num, typ, err := body.tag()
		if err != nil {
			return err
		}
		switch {
		case num == listItems && typ == protowire.BytesType:
			// The item's number is formatted only for an error: a page has
			// thousands of items.
			item, err := body.bytesField("object")
			var obj *store.Object
			if err == nil {
				obj, _, err = d.object(item)
			}
			if err != nil {
				return fmt.Errorf("list item %d: %w", len(page.Items), err)
			}
			var raw []byte
			if keepRaw {
				raw = d.objectJSON(typeMeta{}, obj, false)
			}
			page.Items = append(page.Items, reflector.Item{Object: obj, Raw: raw})
		case num == listMetadata && typ == protowire.BytesType:
			v, err := body.bytesField("list metadata")
			if err != nil {
				return err
			}
			if err := listMeta(v, page); err != nil {
				return err
			}
		default:
			if err := body.skip(typ); err != nil {
				return err
			}
		}
		if body.off > end {
			return errors.New("malformed protobuf: a list field runs past the list")
		}
	}
	return nil
}

// listMeta decodes a ListMeta into page.
func listMeta(b []byte, page *reflector.Page) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errProto("list metadata", n)
		}
		b = b[n:]
		switch {
		case typ == protowire.BytesType && (num == listMetaResourceVersion || num == listMetaContinue):
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return errProto("list metadata", n)
			}
			if num == listMetaResourceVersion {
				page.ResourceVersion = string(v)
			} else {
				page.Continue = string(v)
			}
			b = b[n:]
		case num == listMetaRemainingItemCount && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return errProto("list metadata", n)
			}
			c := int64(v)
			page.RemainingItemCount, b = &c, b[n:]
		default:
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return errProto("list metadata", n)
			}
			b = b[n:]
		}
	}
	return nil
}

// nextEvent reads the next frame of a protobuf watch body; done reports
// that the body ended between frames. Decoding errors are *eventDecodeError.
func (d *protoDecoder) nextEvent(body *protoBody, keepRaw bool) (ev reflector.WatchEvent, done bool, err error) {
	if body.atEOF() {
		return ev, true, nil
	}
	if !body.fill(4) {
		return ev, false, body.short()
	}
	n := binary.BigEndian.Uint32(body.next(4))
	if n > MaxObjectBytes {
		return ev, false, fmt.Errorf("watch event of %d bytes is larger than the %d MiB limit: %w", n, MaxObjectBytes>>20, errTooLarge)
	}
	if !body.fill(int(n)) {
		return ev, false, body.short()
	}
	ev, err = d.watchEvent(body.next(int(n)), keepRaw)
	if err != nil {
		return ev, false, &eventDecodeError{err}
	}
	return ev, false, nil
}

// watchEvent decodes one frame: a metav1.WatchEvent (also accepted wrapped
// in protoMagic and a runtime.Unknown).
func (d *protoDecoder) watchEvent(frame []byte, keepRaw bool) (reflector.WatchEvent, error) {
	if bytes.HasPrefix(frame, []byte(protoMagic)) {
		_, raw, err := unwrapUnknown(frame)
		if err != nil {
			return reflector.WatchEvent{}, err
		}
		frame = raw
	}
	var typ string
	var object []byte
	b := frame
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return reflector.WatchEvent{}, errProto("watch event", n)
		}
		b = b[n:]
		if wt != protowire.BytesType || (num != watchEventType && num != watchEventObject) {
			if n = protowire.ConsumeFieldValue(num, wt, b); n < 0 {
				return reflector.WatchEvent{}, errProto("watch event", n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return reflector.WatchEvent{}, errProto("watch event", n)
		}
		b = b[n:]
		if num == watchEventType {
			typ = eventTypeName(v)
			continue
		}
		// A RawExtension: its raw field holds the object.
		for len(v) > 0 {
			num, wt, n := protowire.ConsumeTag(v)
			if n < 0 {
				return reflector.WatchEvent{}, errProto("watch event object", n)
			}
			v = v[n:]
			if num == rawExtensionRaw && wt == protowire.BytesType {
				raw, n := protowire.ConsumeBytes(v)
				if n < 0 {
					return reflector.WatchEvent{}, errProto("watch event object", n)
				}
				object, v = raw, v[n:]
				continue
			}
			if n = protowire.ConsumeFieldValue(num, wt, v); n < 0 {
				return reflector.WatchEvent{}, errProto("watch event object", n)
			}
			v = v[n:]
		}
	}
	ev := reflector.WatchEvent{Type: reflector.EventType(typ)}
	switch ev.Type {
	case reflector.EventAdded, reflector.EventModified, reflector.EventDeleted, reflector.EventBookmark:
	case reflector.EventError:
		st, err := decodeProtoStatus(object)
		if err != nil {
			return ev, fmt.Errorf("ERROR event: %w", err)
		}
		ev.Status = st
		return ev, nil
	default:
		return ev, fmt.Errorf("watch event of unknown type %q", typ)
	}
	if len(object) > 0 && object[0] == '{' {
		// A JSON object in the RawExtension: decode it as JSON, skipping
		// managedFields as d does.
		jd := objectDecoder{objectParts: objectParts{noWritten: d.noWritten}}
		ev, err := jd.watchEvent(typ, bytes.Clone(object), false)
		if !keepRaw {
			ev.Item.Raw = nil
		}
		return ev, err
	}
	tm, raw, err := unwrapUnknown(object)
	if err != nil {
		return ev, fmt.Errorf("%s event: %w", typ, err)
	}
	obj, end, err := d.object(raw)
	if err != nil {
		return ev, fmt.Errorf("%s event: %w", typ, err)
	}
	ev.InitialEventsEnd = ev.Type == reflector.EventBookmark && end
	ev.Item.Object = obj
	ev.Delivery = d.delivery(ev.Type, obj)
	if keepRaw {
		ev.Item.Raw = d.objectJSON(tm, obj, end)
	}
	return ev, nil
}

// objectJSON is what a trace records of an object that came in protobuf:
// the JSON of what was decoded — apiVersion and kind when the wire named
// them (watch events; LIST items carry none, as in JSON), and the metadata
// the store keeps (identity, generation, timestamps, labels, owner
// references, and the initial-events-end annotation). Nothing else of the
// object was read, so nothing else is recorded.
func (d *protoDecoder) objectJSON(tm typeMeta, obj *store.Object, end bool) []byte {
	d.json = appendObjectJSON(d.json[:0], tm, obj, end)
	return bytes.Clone(d.json)
}

// ObjectJSON is what a trace records of an object it knows only as the store
// keeps it: the JSON of its kept metadata (identity, generation,
// timestamps, labels, owner references), as objectJSON writes a LIST item
// that came in protobuf. A rotating trace starts each new segment with the
// cache written this way.
func ObjectJSON(obj *store.Object) []byte { return appendObjectJSON(nil, typeMeta{}, obj, false) }

func appendObjectJSON(b []byte, tm typeMeta, obj *store.Object, end bool) []byte {
	b = append(b, '{')
	if len(tm.apiVersion) > 0 {
		b = append(jsonString(append(b, `"apiVersion":`...), string(tm.apiVersion)), ',')
	}
	if len(tm.kind) > 0 {
		b = append(jsonString(append(b, `"kind":`...), string(tm.kind)), ',')
	}
	b = append(b, `"metadata":{`...)
	first := true
	field := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(append(append(b, '"'), name...), `":`...)
	}
	for _, f := range []struct{ name, value string }{
		{"name", obj.Name}, {"namespace", obj.Namespace}, {"uid", obj.UID}, {"resourceVersion", obj.ResourceVersion},
	} {
		if f.value != "" {
			field(f.name)
			b = jsonString(b, f.value)
		}
	}
	if obj.Generation != 0 {
		field("generation")
		b = strconv.AppendInt(b, obj.Generation, 10)
	}
	if !obj.CreationTimestamp.IsZero() {
		field("creationTimestamp")
		b = obj.CreationTimestamp.UTC().AppendFormat(append(b, '"'), time.RFC3339)
		b = append(b, '"')
	}
	if obj.DeletionTimestamp != nil {
		field("deletionTimestamp")
		b = obj.DeletionTimestamp.UTC().AppendFormat(append(b, '"'), time.RFC3339)
		b = append(b, '"')
	}
	if obj.Labels.Len() > 0 {
		field("labels")
		b = append(b, '{')
		first := true
		for k, v := range obj.Labels.All() {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(jsonString(b, k), ':')
			b = jsonString(b, v)
		}
		b = append(b, '}')
	}
	if end {
		field("annotations")
		b = append(jsonString(append(b, '{'), InitialEventsEndAnnotation), `:"true"}`...)
	}
	if len(obj.OwnerReferences) > 0 {
		field("ownerReferences")
		b = append(b, '[')
		for i, o := range obj.OwnerReferences {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonString(append(b, `{"apiVersion":`...), o.APIVersion)
			b = jsonString(append(b, `,"kind":`...), o.Kind)
			b = jsonString(append(b, `,"name":`...), o.Name)
			b = jsonString(append(b, `,"uid":`...), o.UID)
			if o.Controller {
				b = append(b, `,"controller":true`...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, "}}"...)
}

// jsonString appends s as a JSON string, as encoding/json writes it without
// HTML escaping, but for \b and \f, written \u0008 and \u000c (as
// encoding/json did before Go 1.22; both read back the same). Invalid UTF-8
// becomes \ufffd.
func jsonString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if r >= 0x20 && r != '"' && r != '\\' && r != '\u2028' && r != '\u2029' && (r != utf8.RuneError || size > 1) {
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch r {
		case '"', '\\':
			b = append(b, '\\', byte(r))
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default: // a control byte, U+2028, U+2029, or a byte of invalid UTF-8 (U+FFFD)
			b = append(b, '\\', 'u', hexDigit[r>>12&0xf], hexDigit[r>>8&0xf], hexDigit[r>>4&0xf], hexDigit[r&0xf])
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

const hexDigit = "0123456789abcdef"
