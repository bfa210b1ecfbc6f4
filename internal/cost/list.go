package cost

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// listParts are one LIST answer split at the wire, without decoding its
// items: each item's bytes (slices of the body), what the list says of
// itself, and what a list of some of the items needs to be built again.
type listParts struct {
	items           [][]byte
	resourceVersion string
	continueToken   string
	// protobuf: the runtime.Unknown's TypeMeta field, as it came.
	typeMeta []byte
	// JSON: the list's apiVersion and kind.
	apiVersion, kind string
}

// protoMagic starts every protobuf object the API server writes.
const protoMagic = "k8s\x00"

// Field numbers of k8s.io/apimachinery's runtime.Unknown, lists and ListMeta.
const (
	unknownTypeMeta         = 1
	unknownRaw              = 2
	listMetadata            = 1
	listItems               = 2
	listMetaResourceVersion = 2
	listMetaContinue        = 3
)

// splitList splits a LIST answer in either encoding.
func splitList(body []byte, contentType string) (*listParts, error) {
	if wire.IsProtobuf(contentType) {
		return splitProtoList(body)
	}
	return splitJSONList(body)
}

// protoFields calls f for each field of the message b.
func protoFields(b []byte, what string, f func(num protowire.Number, typ protowire.Type, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("malformed protobuf %s: %w", what, protowire.ParseError(n))
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return fmt.Errorf("malformed protobuf %s: %w", what, protowire.ParseError(m))
		}
		v := b[:m]
		if typ == protowire.BytesType {
			v, _ = protowire.ConsumeBytes(v)
		}
		if err := f(num, typ, v); err != nil {
			return err
		}
		b = b[m:]
	}
	return nil
}

func splitProtoList(body []byte) (*listParts, error) {
	if !bytes.HasPrefix(body, []byte(protoMagic)) {
		return nil, errors.New("not a protobuf object (no k8s\\x00 prefix)")
	}
	p := &listParts{}
	var list []byte
	err := protoFields(body[len(protoMagic):], "runtime.Unknown", func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case unknownTypeMeta:
			p.typeMeta = v
		case unknownRaw:
			list = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = protoFields(list, "list", func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case listItems:
			p.items = append(p.items, v)
		case listMetadata:
			return protoFields(v, "list metadata", func(num protowire.Number, typ protowire.Type, v []byte) error {
				switch {
				case typ != protowire.BytesType:
				case num == listMetaResourceVersion:
					p.resourceVersion = string(v)
				case num == listMetaContinue:
					p.continueToken = string(v)
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

func splitJSONList(body []byte) (*listParts, error) {
	p := &listParts{}
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	fail := func(err error) (*listParts, error) {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("malformed JSON list: %w", err)
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return fail(errors.Join(err, errors.New("not an object")))
	}
	for dec.PeekKind() != '}' { // an error peeks as 0: the read below returns it
		tok, err := dec.ReadToken()
		if err != nil {
			return fail(err)
		}
		name := tok.String() // a token is valid until the next read
		switch name {
		case "items":
			if dec.PeekKind() == 'n' {
				if _, err := dec.ReadToken(); err != nil {
					return fail(err)
				}
				continue
			}
			if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
				return fail(errors.Join(err, errors.New("items is not an array")))
			}
			for dec.PeekKind() != ']' {
				v, err := dec.ReadValue()
				if err != nil {
					return fail(err)
				}
				// v is valid until the next read; the body holds it for good.
				end := dec.InputOffset()
				p.items = append(p.items, body[end-int64(len(v)):end])
			}
			if _, err := dec.ReadToken(); err != nil {
				return fail(err)
			}
		case "metadata":
			var m struct {
				ResourceVersion string `json:"resourceVersion"`
				Continue        string `json:"continue"`
			}
			if err := json.UnmarshalDecode(dec, &m); err != nil {
				return fail(err)
			}
			p.resourceVersion, p.continueToken = m.ResourceVersion, m.Continue
		case "apiVersion":
			if err := json.UnmarshalDecode(dec, &p.apiVersion); err != nil {
				return fail(err)
			}
		case "kind":
			if err := json.UnmarshalDecode(dec, &p.kind); err != nil {
				return fail(err)
			}
		default:
			if err := dec.SkipValue(); err != nil {
				return fail(err)
			}
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return fail(err)
	}
	return p, nil
}

// protoList is a protobuf LIST answer holding items, as the server would
// write it (its TypeMeta as typeMeta).
func protoList(typeMeta []byte, items [][]byte) []byte {
	var list []byte
	for _, it := range items {
		list = protowire.AppendTag(list, listItems, protowire.BytesType)
		list = protowire.AppendBytes(list, it)
	}
	b := []byte(protoMagic)
	if typeMeta != nil {
		b = protowire.AppendTag(b, unknownTypeMeta, protowire.BytesType)
		b = protowire.AppendBytes(b, typeMeta)
	}
	b = protowire.AppendTag(b, unknownRaw, protowire.BytesType)
	return protowire.AppendBytes(b, list)
}

// jsonList is a JSON LIST answer holding items.
func jsonList(apiVersion, kind string, items [][]byte) []byte {
	var b bytes.Buffer
	head, _ := json.Marshal(struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}{apiVersion, kind})
	b.Write(head[:len(head)-1])
	b.WriteString(`,"metadata":{},"items":[`)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteString("]}")
	return b.Bytes()
}
