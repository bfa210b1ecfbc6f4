package cost

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire/request"
)

// buffers are what an informer's watch keeps besides its objects: the
// buffers its stream decoder grew to hold the largest event it decoded.
// Since client-go 1.35 an informer's first list is a streaming list, whose
// events are every object: the buffers grow to the list's largest object
// and stay while the watch is open (a 900 KiB ConfigMap kept 1.2 MiB in a
// typed informer, 4.4 MiB in a dynamic one). Measured, not modelled: the
// largest object's watch event is decoded by client-go's own stream
// decoder for the wire the informer asks for, and the heap it keeps read.
type buffers struct {
	proto, json float64 // bytes kept by a stream of protobuf, of JSON
	// metadata is the metadata informer's: its events are the object's
	// metadata alone (in protobuf), which a large last-applied
	// annotation makes large too.
	metadata float64
}

// measureBuffers measures them for the list's largest object (none for an
// empty list): protobuf when the list was read in it (a typed informer of
// a built-in resource asks for it), JSON always (a dynamic informer).
func measureBuffers(l *listing) (buffers, error) {
	var b buffers
	if len(l.largest) == 0 {
		return b, nil
	}
	obj := l.largest
	var err error
	if l.proto {
		one := wire.EncodeProtoList(l.apiVersion, l.kind, [][]byte{obj})
		if b.proto, err = streamKeeps(request.ContentTypeProtobuf, one); err != nil {
			return b, fmt.Errorf("a protobuf stream: %w", err)
		}
		// Its JSON, for the dynamic informer's stream: a list of it, whose
		// few more bytes change no buffer's size that matters.
		if obj, err = typedJSON(one); err != nil {
			return b, err
		}
	}
	if b.json, err = streamKeeps("application/json", obj); err != nil {
		return b, fmt.Errorf("a JSON stream: %w", err)
	}
	meta, err := metadataOf(obj)
	if err != nil {
		return b, err
	}
	if b.metadata, err = streamKeeps(request.ContentTypeProtobuf, meta); err != nil {
		return b, fmt.Errorf("a stream of metadata: %w", err)
	}
	return b, nil
}

// streamKeeps is the heap a stream decoder of mediaType keeps once it
// decoded the watch event of obj, encoded in that type.
func streamKeeps(mediaType string, obj []byte) (float64, error) {
	var event []byte
	if mediaType == request.ContentTypeProtobuf {
		var err error
		if event, err = protoEventFrame(obj); err != nil {
			return 0, err
		}
	} else {
		event = append(append([]byte(`{"type":"ADDED","object":`), obj...), "}\n"...)
	}
	return measure(func() (any, int, error) { return decodeOnce(mediaType, event) })
}

// metadataOf is the protobuf of the metadata of obj, the JSON of an object
// or of a list of one: what a metadata informer's event of it carries.
func metadataOf(obj []byte) ([]byte, error) {
	var one struct {
		metav1.PartialObjectMetadata
		Items []metav1.PartialObjectMetadata `json:"items"`
	}
	if err := json.Unmarshal(obj, &one); err != nil {
		return nil, fmt.Errorf("reading the largest object's metadata: %w", err)
	}
	m := one.PartialObjectMetadata
	if len(one.Items) > 0 {
		m = one.Items[0]
	}
	b, err := m.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encoding the largest object's metadata: %w", err)
	}
	return b, nil
}

// protoEventFrame is a watch event of raw (an encoded object) as the server
// frames it in protobuf: its length, then the event.
func protoEventFrame(raw []byte) ([]byte, error) {
	ev := metav1.WatchEvent{Type: "ADDED", Object: kruntime.RawExtension{Raw: raw}}
	b, err := ev.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encoding a watch event: %w", err)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...), nil
}

// decodeOnce decodes the one watch event in body through client-go's stream
// decoder for mediaType (its framer and serializer, as a watch builds them)
// and holds the decoder, whose buffers the event grew.
func decodeOnce(mediaType string, body []byte) (any, int, error) {
	info, ok := kruntime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
	if !ok || info.StreamSerializer == nil {
		return nil, 0, fmt.Errorf("no stream serializer for %s", mediaType)
	}
	d := streaming.NewDecoder(info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(body))), info.StreamSerializer.Serializer)
	var ev metav1.WatchEvent
	if _, _, err := d.Decode(nil, &ev); err != nil {
		return nil, 0, fmt.Errorf("decoding a watch event: %w", err)
	}
	return d, 1, nil
}
