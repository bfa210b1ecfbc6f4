package trace

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// trimCases are objects whose in-place trimming must mean what trimming through maps means.
var trimCases = []string{
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"n","uid":"u","resourceVersion":"1","labels":{"x":"y"},` +
		`"annotations":{"k":"<v&>"},"managedFields":[{"manager":"m","fieldsV1":{"f:data":{}}}]},"data":{"k":"v"}}`,
	`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true","other":"x"}}}`,
	`{"kind":"ConfigMap","metadata":{"annotations":{"k8s.io/initial-events-end":"true","n":1}}}`,
	`{"kind":"ConfigMap","metadata":{"annotations":"not a map","name":"x"}}`,
	`{"kind":"ConfigMap","metadata":{"annotations":{"k8s.io/initial-events-end":""}}}`,
	`{"kind":"ConfigMap","metadata":null}`,
	`{"kind":"ConfigMap"}`,
	`{"apiVersion":null,"metadata":{"name":"x","managedFields":null}}`,
	"{ \"metadata\" : { \"name\" : \"spaced\", \"k\\u00e9y\\n\" : [ 1 , 2 ] } }",
	`{"metadata":{"name":"dup","name":"dup2"},"metadata":{"name":"last"}}`,
	`{"kind":"Secret","metadata":{"name":"s"},"data":{"a":"b"}}`,
	`{}`,
	`null`,
}

func trimSame(t *testing.T, raw []byte) {
	t.Helper()
	for _, mode := range []ObjectMode{ObjectsNone, ObjectsMetadata, ObjectsFull} {
		for _, redact := range []bool{true, false} {
			got, gotErr := trimObject(raw, mode, redact, false)
			want, wantErr := trimMaps(raw, mode, redact, false)
			if (gotErr != nil) != (wantErr != nil) {
				t.Fatalf("%s redact=%t %q: error: got %v, want %v", mode, redact, raw, gotErr, wantErr)
			}
			if gotErr != nil {
				continue
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("%s redact=%t %q: the trimmed object is not JSON: %v\n%s", mode, redact, raw, err, got)
			}
			_ = json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s redact=%t %q:\ngot  %s\nwant %s", mode, redact, raw, got, want)
			}
		}
	}
}

func TestTrimmingInPlaceMeansWhatTrimmingThroughMapsMeans(t *testing.T) {
	for _, c := range trimCases {
		trimSame(t, []byte(c))
	}
}

func FuzzTrimmingInPlaceMeansWhatTrimmingThroughMapsMeans(f *testing.F) {
	for _, c := range trimCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var dup map[string]any
		if json.Unmarshal(raw, &dup) != nil {
			trimSame(t, raw) // errors must agree
			return
		}
		trimSame(t, raw)
	})
}

func TestObjectLinesAreWrittenByteForByteAsEncodingJSONWritesThem(t *testing.T) {
	obj := json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a<b>&c","uid":"u","annotations":{"x":"\u2028 é \"q\""}}}`)
	one := 1
	for _, l := range []Line{
		{K: KindItem, At: 12, ID: 3, Object: obj},
		{K: KindEvent, At: 1 << 40, ID: 7, Type: "MODIFIED", Object: obj},
		{K: KindEvent, At: 0, Type: "BOOKMARK", Object: json.RawMessage(`{"kind":"ConfigMap","metadata":{"resourceVersion":"9"}}`)},
		{K: KindEvent, ID: 1, Type: "ERROR", Object: json.RawMessage(`{"kind":"Status","code":410}`)},
		// Not written directly: whitespace, an odd type, other fields, invalid JSON.
		{K: KindEvent, ID: 1, Type: "MODIFIED", Object: json.RawMessage("{\"a\": [1, 2]}\n")},
		{K: KindEvent, ID: 1, Type: "STRANGE\"", Object: obj},
		{K: KindItem, ID: 1, Object: obj, Items: &one},
		{K: KindItem, ID: 1, Object: json.RawMessage(`{"a":`)},
		{K: KindPage, ID: 1, ResourceVersion: "5", Items: &one},
	} {
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		wantErr := enc.Encode(&l)
		seg := newSegment(&got, nil, nil, nil)
		gotErr := seg.encode(&l)
		if err := seg.buf.Flush(); err != nil {
			t.Fatal(err)
		}
		if (gotErr != nil) != (wantErr != nil) || got.String() != want.String() {
			t.Errorf("line %+v:\ngot  %q (%v)\nwant %q (%v)", l, got.String(), gotErr, want.String(), wantErr)
		}
	}
}
