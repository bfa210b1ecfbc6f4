package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// kubectl get asks for Tables (Accept: application/json;as=Table;…): a LIST
// answered as a Table holds its objects in rows (as PartialObjectMetadata
// unless asked otherwise), and each watch event's object is a Table of one
// row. The decoders below take the objects out of them, so the stream of a
// kubectl get -w holds the same cache as any other client's. Tables are
// small (kubectl's), so they are decoded with encoding/json.

// table is the part of a metav1.Table the stream needs.
type table struct {
	Kind     string          `json:"kind"`
	Metadata metav1.ListMeta `json:"metadata"`
	Rows     []struct {
		Object json.RawMessage `json:"object"`
	} `json:"rows"`
}

// decodeTableList decodes a LIST answered as a Table (or, when the server
// answered a plain list, as that list).
func decodeTableList(r io.Reader, keepRaw bool) (*reflector.Page, error) {
	body, err := io.ReadAll(io.LimitReader(r, wire.MaxObjectBytes*4))
	if err != nil {
		return nil, fmt.Errorf("reading table: %w", err)
	}
	var t table
	if err := json.Unmarshal(body, &t); err != nil {
		return nil, fmt.Errorf("decoding table: %w", err)
	}
	if t.Kind != "Table" {
		return wire.DecodeList(body, false)
	}
	page := &reflector.Page{ResourceVersion: t.Metadata.ResourceVersion, Continue: t.Metadata.Continue, RemainingItemCount: t.Metadata.RemainingItemCount}
	for _, row := range t.Rows {
		obj, err := wire.DecodeObject(row.Object, false)
		if err != nil {
			return nil, fmt.Errorf("decoding a table row: %w", err)
		}
		it := reflector.Item{Object: obj}
		if keepRaw {
			it.Raw = row.Object
		}
		page.Items = append(page.Items, it)
	}
	return page, nil
}

// tableWatch reads a watch whose events carry Tables.
type tableWatch struct {
	dec     *json.Decoder
	keepRaw bool
	pending []reflector.WatchEvent
}

func newTableWatch(r io.Reader, keepRaw bool) *tableWatch {
	return &tableWatch{dec: json.NewDecoder(r), keepRaw: keepRaw}
}

// next returns the next event; a *reflector.RequestEnd of EndClosed when
// the body ended between events, as wire's watch decoder says it.
func (w *tableWatch) next() (reflector.WatchEvent, error) {
	for len(w.pending) == 0 {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := w.dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return reflector.WatchEvent{}, &reflector.RequestEnd{Reason: reflector.EndClosed}
			}
			return reflector.WatchEvent{}, fmt.Errorf("reading watch stream: %w", err)
		}
		var t table
		if json.Unmarshal(ev.Object, &t) != nil || t.Kind != "Table" {
			e, err := wire.DecodeWatchEvent(ev.Type, ev.Object, false)
			if err != nil {
				return e, err
			}
			if !w.keepRaw {
				e.Item.Raw = nil
			}
			return e, nil
		}
		if len(t.Rows) == 0 {
			// A bookmark (or an empty event): only its resourceVersion.
			w.pending = append(w.pending, reflector.WatchEvent{Type: reflector.EventType(ev.Type),
				Item: reflector.Item{Object: &store.Object{ResourceVersion: t.Metadata.ResourceVersion}}})
		}
		for _, row := range t.Rows {
			e, err := wire.DecodeWatchEvent(ev.Type, row.Object, false)
			if err != nil {
				return e, err
			}
			if !w.keepRaw {
				e.Item.Raw = nil
			}
			w.pending = append(w.pending, e)
		}
	}
	e := w.pending[0]
	w.pending = w.pending[1:]
	return e, nil
}
