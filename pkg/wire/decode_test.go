package wire_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	kjson "sigs.k8s.io/json"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// configMaps is the resource the tests' sources list and watch.
var configMaps = reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}

// oracleMeta is what the decoder keeps, decoded the way the API server decodes
// JSON (sigs.k8s.io/json: encoding/json with case-sensitive keys). The fast
// decoder must agree with it on every input.
type oracleMeta struct {
	Metadata struct {
		Namespace         string            `json:"namespace"`
		Name              string            `json:"name"`
		UID               string            `json:"uid"`
		ResourceVersion   string            `json:"resourceVersion"`
		Generation        int64             `json:"generation"`
		CreationTimestamp *time.Time        `json:"creationTimestamp"`
		DeletionTimestamp *time.Time        `json:"deletionTimestamp"`
		Labels            map[string]string `json:"labels"`
		Annotations       map[string]string `json:"annotations"`
		OwnerReferences   []struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Name       string `json:"name"`
			UID        string `json:"uid"`
			Controller *bool  `json:"controller"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
}

func oracleDecode(raw []byte) (*store.Object, bool, error) {
	var w oracleMeta
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &w); err != nil {
		return nil, false, err
	}
	m := &w.Metadata
	obj := &store.Object{Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, Labels: store.MakeLabels(m.Labels), DeletionTimestamp: m.DeletionTimestamp}
	if m.CreationTimestamp != nil {
		obj.CreationTimestamp = *m.CreationTimestamp
	}
	for _, o := range m.OwnerReferences {
		obj.OwnerReferences = append(obj.OwnerReferences, store.OwnerRef{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: o.UID, Controller: o.Controller != nil && *o.Controller})
	}
	return obj, m.Annotations[wire.InitialEventsEndAnnotation] == "true", nil
}

// objectCases are objects the decoder must read as the API server would.
var objectCases = map[string]string{
	"a ConfigMap with managedFields":       "", // the fixture, filled in by decodeCases
	"a bookmark ending the initial events": `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}`,
	"a bookmark not ending them":           `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"false"}}}`,
	"owners, generation and a deletion": `{"metadata":{"name":"web-7f9c","namespace":"prod","uid":"u-1","resourceVersion":"99","generation":7,` +
		`"creationTimestamp":"2026-03-04T05:06:07Z","deletionTimestamp":"2026-03-05T00:00:00Z",` +
		`"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":"u-0","controller":true,"blockOwnerDeletion":true},{"apiVersion":"v1","kind":"Node","name":"n1","uid":"u-n","controller":null},null]},"spec":{"x":[1,2.5e3,true,null]}}`,
	"escapes and unicode":   `{"metadata":{"name":"caf\u00e9","namespace":"\ud83d\ude00 ns","labels":{"a\"b":"c\\d","e\/f":"\u0000","emoji":"😀","bad":"\ud800"}}}`,
	"nulls everywhere":      `{"metadata":{"name":null,"namespace":"ns","labels":null,"annotations":null,"ownerReferences":null,"creationTimestamp":null,"generation":null}}`,
	"empty labels":          `{"metadata":{"name":"x","labels":{}}}`,
	"labels out of order":   `{"metadata":{"name":"x","labels":{"z":"1","a":"2","m":"3","a":"4","":"5"}}}`,
	"duplicate keys":        `{"metadata":{"name":"a","name":null,"labels":{"x":"1"},"labels":{"y":"2"},"generation":3,"generation":null,"annotations":{"k8s.io/initial-events-end":"true"},"annotations":{"z":"w"}},"metadata":null}`,
	"labels cleared":        `{"metadata":{"labels":{"x":"1"},"labels":null,"name":"n"}}`,
	"keys differ in case":   `{"Metadata":{"name":"ignored"},"metadata":{"Name":"ignored","name":"kept"}}`,
	"whitespace":            " {\n \"metadata\" : { \"name\" : \"spaced\" , \"labels\" : { \"a\" : \"b\" } } }\n",
	"null":                  `null`,
	"not an object":         `[1]`,
	"labels not strings":    `{"metadata":{"labels":{"a":1}}}`,
	"bad timestamp":         `{"metadata":{"creationTimestamp":"yesterday"}}`,
	"fractional generation": `{"metadata":{"generation":1.5}}`,
	"truncated":             `{"metadata":{"name":"x"`,
	"trailing garbage":      `{"metadata":{}} x`,
	"invalid escape":        `{"metadata":{"name":"\q"}}`,
}

func decodeCases(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for name, c := range objectCases {
		out[name] = []byte(c)
	}
	out["a ConfigMap with managedFields"] = benchConfigMap(t)
	return out
}

// sameObject compares decoded objects (times by instant, maps nil vs empty kept distinct).
func sameObject(got, want *store.Object) bool {
	g, w := *got, *want
	if !g.CreationTimestamp.Equal(w.CreationTimestamp) {
		return false
	}
	if (g.DeletionTimestamp == nil) != (w.DeletionTimestamp == nil) || (g.DeletionTimestamp != nil && !g.DeletionTimestamp.Equal(*w.DeletionTimestamp)) {
		return false
	}
	g.CreationTimestamp, w.CreationTimestamp, g.DeletionTimestamp, w.DeletionTimestamp = time.Time{}, time.Time{}, nil, nil
	return reflect.DeepEqual(g, w)
}

func TestDecodeObjectReadsWhatTheAPIServersDecoderReads(t *testing.T) {
	for name, raw := range decodeCases(t) {
		t.Run(name, func(t *testing.T) {
			checkAgainstOracle(t, raw)
		})
	}
}

func checkAgainstOracle(t *testing.T, raw []byte) {
	t.Helper()
	want, wantEnd, wantErr := oracleDecode(raw)
	ev, err := wire.DecodeWatchEvent("BOOKMARK", raw, false)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: error: got %v, want %v", raw, err, wantErr)
	}
	if err != nil {
		return
	}
	if got := ev.Item.Object; !sameObject(got, want) {
		t.Errorf("%q:\ngot  %+v\nwant %+v", raw, got, want)
	}
	if ev.InitialEventsEnd != wantEnd {
		t.Errorf("%q: initial-events-end: got %t, want %t", raw, ev.InitialEventsEnd, wantEnd)
	}
	obj, err := wire.DecodeObject(raw, true)
	if err != nil || !bytes.Equal(obj.Body, raw) {
		t.Errorf("%q: keepBody: got body %q, %v", raw, obj.Body, err)
	}
	// A live watch decodes the object in place, in the event, as the body is read.
	stream := append(append([]byte(`{"type":"BOOKMARK","object":`), raw...), "}\n"...)
	evs, err := wire.ReadWatchEvents(iotest.OneByteReader(bytes.NewReader(stream)), true)
	if err != nil || len(evs) != 1 {
		t.Fatalf("%q in a watch stream: got %d events, %v", raw, len(evs), err)
	}
	if got := evs[0].Item.Object; !sameObject(got, want) || evs[0].InitialEventsEnd != wantEnd || !bytes.Equal(evs[0].Item.Raw, bytes.TrimSpace(raw)) {
		t.Errorf("%q in a watch stream:\ngot  %+v (end %t, raw %q)\nwant %+v (end %t)", raw, got, evs[0].InitialEventsEnd, evs[0].Item.Raw, want, wantEnd)
	}
}

func FuzzDecodeObjectReadsWhatTheAPIServersDecoderReads(f *testing.F) {
	for _, raw := range decodeCases(f) {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkAgainstOracle(t, raw)
	})
}

func TestDecodeListReadsItemsAndTheCollectionMetadata(t *testing.T) {
	body := benchList(t, 3)
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keepBody=%t", keep), func(t *testing.T) {
			page, err := wire.DecodeList(body, keep)
			if err != nil {
				t.Fatal(err)
			}
			if page.ResourceVersion != "215" || !strings.HasPrefix(page.Continue, "eyJ2I") || page.RemainingItemCount == nil || *page.RemainingItemCount != 49500 {
				t.Errorf("got rv %q continue %q remaining %v", page.ResourceVersion, page.Continue, page.RemainingItemCount)
			}
			if len(page.Items) != 3 {
				t.Fatalf("got %d items, want 3", len(page.Items))
			}
			for i, it := range page.Items {
				want := benchItem(t, i)
				if !bytes.Equal(it.Raw, want) {
					t.Errorf("item %d raw:\ngot  %s\nwant %s", i, it.Raw, want)
				}
				wantObj, _, _ := oracleDecode(want)
				if keep {
					wantObj.Body = want
				}
				if !sameObject(it.Object, wantObj) {
					t.Errorf("item %d: got %+v, want %+v", i, it.Object, wantObj)
				}
			}
		})
	}
}

func TestDecodeListKeptBodiesDoNotHoldOnToThePage(t *testing.T) {
	body := benchList(t, 2)
	page, err := wire.DecodeList(body, true)
	if err != nil {
		t.Fatal(err)
	}
	clear(body) // the response buffer is reused or freed
	for i, it := range page.Items {
		if !bytes.Equal(it.Object.Body, benchItem(t, i)) {
			t.Errorf("item %d: the kept body changed with the page buffer", i)
		}
	}
}

func TestDecodeListErrorsNameTheItem(t *testing.T) {
	for body, want := range map[string]string{
		`{"items":[{"metadata":{}},{"metadata":{"name":1}}]}`: "list item 1",
		`{"metadata":{"resourceVersion":"1"},"items":[`:       "unexpected EOF",
		`{"items":[]`:        "unexpected EOF",
		`{"items":[]} {}`:    "after top-level value",
		`{"items":[{},]}`:    "list item 1",
		`{"items":[] "x":1}`: "want ','",
		`{"items":{}}`:       "want an array",
		`{"metadata":{"remainingItemCount":"x"}}`: "want a number",
	} {
		if _, err := wire.DecodeList([]byte(body), false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", body, err, want)
		}
	}
}

func TestDecodeListReadsTheSameWhateverTheReadsAre(t *testing.T) {
	body := benchList(t, 40)
	want, err := wire.DecodeList(body, true)
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]io.Reader{
		"one byte at a time": iotest.OneByteReader(bytes.NewReader(body)),
		"half reads":         iotest.HalfReader(bytes.NewReader(body)),
		"data with EOF":      iotest.DataErrReader(bytes.NewReader(body)),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := wire.DecodeListFrom(r, true)
			if err != nil {
				t.Fatal(err)
			}
			if got.ResourceVersion != want.ResourceVersion || got.Continue != want.Continue || len(got.Items) != len(want.Items) {
				t.Fatalf("got rv %q continue %q %d items, want %q %q %d", got.ResourceVersion, got.Continue, len(got.Items), want.ResourceVersion, want.Continue, len(want.Items))
			}
			for i := range want.Items {
				if !bytes.Equal(got.Items[i].Raw, want.Items[i].Raw) || !sameObject(got.Items[i].Object, want.Items[i].Object) {
					t.Errorf("item %d differs", i)
				}
			}
		})
	}
}

func TestDecodeListSpecialShapes(t *testing.T) {
	for body, want := range map[string]string{
		`null`:                             "0 items, rv \"\"",
		` {"metadata":null,"items":null} `: "0 items, rv \"\"",
		`{"items":[{"metadata":{"name":"a"}}],"metadata":{"resourceVersion":"7"}}`: "1 items, rv \"7\"",
		`{"items":[{"metadata":{"name":"a"}}],"items":[]}`:                         "0 items, rv \"\"",
	} {
		page, err := wire.DecodeListFrom(iotest.OneByteReader(strings.NewReader(body)), false)
		if err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if got := fmt.Sprintf("%d items, rv %q", len(page.Items), page.ResourceVersion); got != want {
			t.Errorf("%s: got %s, want %s", body, got, want)
		}
	}
}

func TestAReadErrorIsNotReportedAsMalformedJSON(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`{"items":[{"metadata":{}}`), iotest.ErrReader(errors.New("connection reset")))
	_, err := wire.DecodeListFrom(r, false)
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("got %v, want the read error", err)
	}
}

// chunkedServer serves every request with body, written a few bytes at a time.
func chunkedServer(t *testing.T, body []byte, chunk int) *live.Source {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for i := 0; i < len(body); i += chunk {
			_, _ = w.Write(body[i:min(i+chunk, len(body))])
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	src, err := live.NewSource(&rest.Config{Host: srv.URL}, reflector.Target{Resource: configMaps}, live.Options{KeepBody: true})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestWatchEventsSplitAcrossReadsArriveWhole(t *testing.T) {
	stream := benchWatch(t, 20)
	for _, tc := range []struct {
		name   string
		body   []byte
		events int
		end    reflector.EndReason
		err    string
	}{
		{"a stream that ends between events", stream, 20, reflector.EndClosed, ""},
		{"a stream cut inside an event", stream[:len(stream)-100], 19, reflector.EndError, "unexpected EOF"},
		{"garbage after an event", append(bytes.Clone(stream[:len(stream)/20]), "]\n"...), 1, reflector.EndError, "invalid character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := chunkedServer(t, tc.body, 7).Watch(context.Background(), reflector.RequestOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				ev, err := st.Next()
				if err != nil {
					var end *reflector.RequestEnd
					if !errors.As(err, &end) || end.Reason != tc.end || !strings.Contains(err.Error(), tc.err) {
						t.Errorf("end: got %v, want reason %s containing %q", err, tc.end, tc.err)
					}
					break
				}
				if want := fmt.Sprint(1000 + n); ev.Item.Object.ResourceVersion != want || !bytes.HasPrefix(ev.Item.Object.Body, []byte(`{"kind":"ConfigMap"`)) {
					t.Errorf("event %d: rv %q body %.30q, want rv %s and the object", n, ev.Item.Object.ResourceVersion, ev.Item.Object.Body, want)
				}
				n++
			}
			if n != tc.events {
				t.Errorf("got %d events, want %d", n, tc.events)
			}
		})
	}
}

func TestDropRawCopiesNoJSONUnlessBodiesAreKept(t *testing.T) {
	list, stream := benchList(t, 3), benchWatch(t, 3)
	for _, keepBody := range []bool{false, true} {
		t.Run(fmt.Sprintf("keepBody=%t", keepBody), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("watch") == "true" {
					_, _ = w.Write(stream)
					return
				}
				_, _ = w.Write(list)
			}))
			t.Cleanup(srv.Close)
			src, err := live.NewSource(&rest.Config{Host: srv.URL}, reflector.Target{Resource: configMaps}, live.Options{KeepBody: keepBody, DropRaw: true})
			if err != nil {
				t.Fatal(err)
			}
			page, err := src.List(context.Background(), reflector.RequestOptions{})
			if err != nil || len(page.Items) != 3 {
				t.Fatalf("got %v, %v", page, err)
			}
			items := page.Items
			st, err := src.Watch(context.Background(), reflector.RequestOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for {
				ev, err := st.Next()
				if err != nil {
					break
				}
				items = append(items, ev.Item)
			}
			if len(items) != 6 {
				t.Fatalf("got %d items and events, want 6", len(items))
			}
			for i, it := range items {
				if it.Object.Name == "" || (it.Raw == nil) == keepBody || !bytes.Equal(it.Raw, it.Object.Body) {
					t.Errorf("item %d: name %q, raw %d bytes, body %d bytes", i, it.Object.Name, len(it.Raw), len(it.Object.Body))
				}
			}
		})
	}
}
