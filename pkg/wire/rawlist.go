package wire

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// ProtoList is a protobuf LIST answer split at the wire, its items unread.
type ProtoList struct {
	// APIVersion and Kind are the runtime.Unknown's type (v1, ConfigMapList).
	APIVersion, Kind string
	// ResourceVersion and Continue are the list's metadata.
	ResourceVersion, Continue string
	// Items are each item's message, slices of the body.
	Items [][]byte
}

// SplitProtoList splits a protobuf LIST answer into its items without
// decoding them (for counting their bytes, or building a list of some of
// them again with EncodeProtoList).
func SplitProtoList(body []byte) (*ProtoList, error) {
	tm, raw, err := unwrapUnknown(body)
	if err != nil {
		return nil, err
	}
	l := &ProtoList{APIVersion: string(tm.apiVersion), Kind: string(tm.kind)}
	var page reflector.Page
	for b := raw; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errProto("list", n)
		}
		b = b[n:]
		if typ != protowire.BytesType || (num != listItems && num != listMetadata) {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return nil, errProto("list", n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, errProto("list", n)
		}
		b = b[n:]
		if num == listItems {
			l.Items = append(l.Items, v)
		} else if err := listMeta(v, &page); err != nil {
			return nil, err
		}
	}
	l.ResourceVersion, l.Continue = page.ResourceVersion, page.Continue
	return l, nil
}

// EncodeProtoList is a protobuf LIST answer of apiVersion and kind holding
// items, as the API server writes one: client-go's protobuf decoder reads it.
func EncodeProtoList(apiVersion, kind string, items [][]byte) []byte {
	var tm, list []byte
	tm = protowire.AppendTag(tm, typeMetaAPIVersion, protowire.BytesType)
	tm = protowire.AppendString(tm, apiVersion)
	tm = protowire.AppendTag(tm, typeMetaKind, protowire.BytesType)
	tm = protowire.AppendString(tm, kind)
	for _, it := range items {
		list = protowire.AppendTag(list, listItems, protowire.BytesType)
		list = protowire.AppendBytes(list, it)
	}
	b := []byte(protoMagic)
	b = protowire.AppendTag(b, unknownTypeMeta, protowire.BytesType)
	b = protowire.AppendBytes(b, tm)
	b = protowire.AppendTag(b, unknownRaw, protowire.BytesType)
	return protowire.AppendBytes(b, list)
}
