package wire

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire/request"
)

// A list built of raw items splits into the same items, and the store's
// decoder reads it as a LIST answer.
func TestARawProtoListSplitsAndDecodesAsItWasBuilt(t *testing.T) {
	item := func(name string) []byte {
		var meta []byte
		meta = protowire.AppendTag(meta, metaName, protowire.BytesType)
		meta = protowire.AppendString(meta, name)
		meta = protowire.AppendTag(meta, metaNamespace, protowire.BytesType)
		meta = protowire.AppendString(meta, "ns")
		var obj []byte
		obj = protowire.AppendTag(obj, objectMetadata, protowire.BytesType)
		return protowire.AppendBytes(obj, meta)
	}
	items := [][]byte{item("a"), item("b")}
	body := EncodeProtoList("v1", "ConfigMapList", items)
	l, err := SplitProtoList(body)
	if err != nil {
		t.Fatal(err)
	}
	if l.APIVersion != "v1" || l.Kind != "ConfigMapList" || len(l.Items) != 2 || !bytes.Equal(l.Items[1], items[1]) {
		t.Fatalf("split: %+v", l)
	}
	page, err := DecodeListResponse(bytes.NewReader(body), request.ContentTypeProtobuf, false)
	if err != nil || len(page.Items) != 2 || page.Items[0].Object.Name != "a" || page.Items[1].Object.Namespace != "ns" {
		t.Fatalf("decoded: %+v, %v", page, err)
	}
	if _, err := SplitProtoList([]byte("k8s\x00\x12\x05ab")); err == nil {
		t.Error("a truncated list split")
	}
}
