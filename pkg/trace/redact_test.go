package trace

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
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
		encodesAsEncodingJSON(t, &l)
	}
	// Every other field of a line, set on an event line: the line is then
	// not written directly, or it would lose the field.
	written, lag := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Duration(time.Millisecond)
	encodesAsEncodingJSON(t, &Line{K: KindEvent, ID: 1, Type: "MODIFIED", Object: obj, Written: &written, Lag: &lag})
	typ := reflect.TypeFor[Line]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		switch f.Name {
		case "K", "R", "At", "ID", "Type", "Object":
			continue
		}
		if !f.IsExported() {
			continue
		}
		l := Line{K: KindEvent, ID: 1, Type: "MODIFIED", Object: obj}
		setSomething(reflect.ValueOf(&l).Elem().Field(i))
		t.Run(f.Name, func(t *testing.T) { encodesAsEncodingJSON(t, &l) })
	}
}

// encodesAsEncodingJSON checks that a segment writes l as encoding/json
// (without HTML escaping) does.
func encodesAsEncodingJSON(t *testing.T, l *Line) {
	t.Helper()
	var want, got bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	wantErr := enc.Encode(l)
	seg := newSegment(&got, nil, nil, nil)
	gotErr := seg.encode(l)
	if err := seg.buf.Flush(); err != nil {
		t.Fatal(err)
	}
	if (gotErr != nil) != (wantErr != nil) || got.String() != want.String() {
		t.Errorf("line %+v:\ngot  %q (%v)\nwant %q (%v)", *l, got.String(), gotErr, want.String(), wantErr)
	}
}

// setSomething sets v to a value other than its zero value, which
// encoding/json writes.
func setSomething(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		setSomething(v.Elem())
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		setSomething(k)
		setSomething(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.Set(reflect.ValueOf(json.RawMessage(`{"a":1}`)))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		setSomething(s.Index(0))
		v.Set(s)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				setSomething(v.Field(i))
			}
		}
	}
}
