package cost

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// listParts are one LIST answer split at the wire, without decoding its
// items: each item's bytes (slices of the body), what the list says of
// itself, and its type, for a list of some of the items to be built again.
type listParts struct {
	items            [][]byte
	resourceVersion  string
	continueToken    string
	apiVersion, kind string
}

// splitList splits a LIST answer in either encoding.
func splitList(body []byte, contentType string) (*listParts, error) {
	if !wire.IsProtobuf(contentType) {
		return splitJSONList(body)
	}
	l, err := wire.SplitProtoList(body)
	if err != nil {
		return nil, err
	}
	return &listParts{items: l.Items, resourceVersion: l.ResourceVersion, continueToken: l.Continue, apiVersion: l.APIVersion, kind: l.Kind}, nil
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
