package wire_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// writeTimeCases are events' objects and the write time the passive
// estimate takes from each: the newest managedFields time, else
// deletionTimestamp, else creationTimestamp (whichever is newest); none for
// a MODIFIED event whose newest time is its creation (the write left no
// time of its own).
func writeTimeCases() []struct {
	name, typ string
	meta      metav1.ObjectMeta
	want      time.Time
} {
	created := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(created.Add(d)); return &t }
	base := metav1.ObjectMeta{Name: "cm", Namespace: "ns", UID: "u1", ResourceVersion: "7", CreationTimestamp: metav1.NewTime(created)}
	withFields := base
	withFields.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "helm", Operation: metav1.ManagedFieldsOperationApply, Time: at(time.Minute), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{}}`)},
		{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, Time: at(3 * time.Minute)},
		{Manager: "ctrl", Operation: metav1.ManagedFieldsOperationUpdate, Time: at(2 * time.Minute)},
		{Manager: "no-time", Operation: metav1.ManagedFieldsOperationUpdate},
	}
	deleting := withFields
	deleting.DeletionTimestamp = at(5 * time.Minute)
	// kubectl create, then server-side applies of the same values under new
	// managers: their entries have no time.
	reapplied := base
	reapplied.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kubectl-create", Operation: metav1.ManagedFieldsOperationUpdate, Time: at(0)},
		{Manager: "mgr1", Operation: metav1.ManagedFieldsOperationApply},
	}
	return []struct {
		name, typ string
		meta      metav1.ObjectMeta
		want      time.Time
	}{
		{"created only", "ADDED", base, created},
		{"newest managedFields entry", "MODIFIED", withFields, created.Add(3 * time.Minute)},
		{"deletionTimestamp newer than managedFields", "MODIFIED", deleting, created.Add(5 * time.Minute)},
		{"no timestamps at all", "MODIFIED", metav1.ObjectMeta{Name: "x", UID: "u", ResourceVersion: "1"}, time.Time{}},
		{"modified, its newest time its creation", "MODIFIED", base, time.Time{}},
		{"modified by applies that left no time", "MODIFIED", reapplied, time.Time{}},
	}
}

func TestWatchEventsCarryTheirObjectsLatestWriteTimeInJSONAndProtobuf(t *testing.T) {
	for _, c := range writeTimeCases() {
		t.Run(c.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: c.meta, Data: map[string]string{"k": "v"}}
			js, err := json.Marshal(cm)
			if err != nil {
				t.Fatal(err)
			}
			pb, err := cm.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			jsonBody := fmt.Sprintf(`{"type":%q,"object":%s}`, c.typ, js)
			fromJSON, err := wire.ReadWatchEvents(bytes.NewReader([]byte(jsonBody)), false)
			if err != nil || len(fromJSON) != 1 {
				t.Fatalf("JSON: %v, %d events", err, len(fromJSON))
			}
			fromProto, err := wire.ReadProtoWatchEvents(bytes.NewReader(frame(c.typ, unknown("v1", "ConfigMap", pb))), true)
			if err != nil || len(fromProto) != 1 {
				t.Fatalf("protobuf: %v, %d events", err, len(fromProto))
			}
			decoded, err := wire.DecodeWatchEvent(c.typ, js, false)
			if err != nil {
				t.Fatal(err)
			}
			for name, ev := range map[string]reflector.WatchEvent{"JSON": fromJSON[0], "protobuf": fromProto[0], "DecodeWatchEvent": decoded} {
				if got := ev.Delivery.Written; !got.Equal(c.want) {
					t.Errorf("%s: written %v, want %v", name, got, c.want)
				}
				if ev.Delivery.Known() == c.want.IsZero() {
					t.Errorf("%s: known %t for write time %v", name, ev.Delivery.Known(), c.want)
				}
			}
			// The trace's JSON of a protobuf object keeps no managedFields.
			if bytes.Contains(fromProto[0].Item.Raw, []byte("managedFields")) {
				t.Errorf("protobuf event's trace JSON has managedFields: %s", fromProto[0].Item.Raw)
			}
		})
	}
}

func TestBookmarksAndErrorsCarryNoWriteTime(t *testing.T) {
	evs, err := wire.ReadWatchEvents(bytes.NewReader([]byte(
		`{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"9","creationTimestamp":"2026-11-29T13:00:00Z"}}}`+
			`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","code":410}}`)), false)
	if err != nil || len(evs) != 2 {
		t.Fatalf("%v, %d events", err, len(evs))
	}
	for _, ev := range evs {
		if ev.Delivery.Known() {
			t.Errorf("%s event: delivery %+v, want none", ev.Type, ev.Delivery)
		}
	}
}

// TestLiveWatchLagIsCorrectedByTheServersDate serves a watch from a server
// whose clock is an hour ahead (its Date header and its objects' times):
// the lag is the event's delay, not the hour.
func TestLiveWatchLagIsCorrectedByTheServersDate(t *testing.T) {
	const skew = time.Hour
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serverNow := time.Now().Add(skew)
		w.Header().Set("Date", serverNow.UTC().Format(http.TimeFormat))
		w.Header().Set("Content-Type", "application/json")
		written := serverNow.Add(-10 * time.Second).UTC().Format(time.RFC3339)
		fmt.Fprintf(w, `{"type":"MODIFIED","object":{"metadata":{"name":"a","namespace":"ns","uid":"u","resourceVersion":"2","creationTimestamp":"2020-01-01T00:00:00Z","managedFields":[{"manager":"m","time":%q}]}}}`, written)
	}))
	defer srv.Close()
	src, err := live.NewSource(&rest.Config{Host: srv.URL}, reflector.Target{Resource: reflector.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespaced: true}}, live.Options{Wire: reflector.WireJSON})
	if err != nil {
		t.Fatal(err)
	}
	st, err := src.Watch(t.Context(), reflector.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ev, err := st.Next()
	if err != nil {
		t.Fatal(err)
	}
	// 10 s, within the estimate's ±2 s: the hour of skew is gone.
	if lag := ev.Delivery.Lag; lag < 8*time.Second || lag > 12*time.Second {
		t.Errorf("lag %v, want about 10s (the server's clock is %v ahead)", lag, skew)
	}
	if b := reflector.LagBucketOf(ev.Delivery.Lag); reflector.LagBucketName(b) != "5-15s" {
		t.Errorf("bucket %s, want 5-15s", reflector.LagBucketName(b))
	}
	if _, err := st.Next(); err == nil {
		t.Error("the stream did not end")
	}
}

func TestServerClockOfWithoutADateTakesTheClocksAsEqual(t *testing.T) {
	c := wire.ServerClockOf(http.Header{}, time.Now())
	if c.Offset != 0 {
		t.Errorf("no Date: %+v", c)
	}
	sent := time.Date(2026, 1, 1, 0, 0, 0, 400e6, time.UTC)
	h := http.Header{"Date": {"Thu, 01 Jan 2026 00:00:03 GMT"}}
	if c := wire.ServerClockOf(h, sent); c.Offset != 2600*time.Millisecond {
		t.Errorf("Date 3 s after sending (to the second): %+v, want an offset of 2.6s", c)
	}
	if got := (wire.ServerClock{Offset: time.Second}).Lag(sent, sent.Add(-time.Second)); got != 2*time.Second {
		t.Errorf("lag %v, want 2s", got)
	}
}

// TestADeleteWithoutDeletionTimestampHasNoWriteTime: an immediate delete
// writes nothing to the object, whose newest time is its last update (an
// old object's is days old): its DELETED event's lag is unknown, in JSON and
// protobuf. A DELETED whose object has a deletionTimestamp keeps its write
// time.
func TestADeleteWithoutDeletionTimestampHasNoWriteTime(t *testing.T) {
	for _, c := range writeTimeCases() {
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: c.meta}
		js, err := json.Marshal(cm)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := cm.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		fromJSON, err := wire.ReadWatchEvents(bytes.NewReader([]byte(fmt.Sprintf(`{"type":"DELETED","object":%s}`, js))), false)
		if err != nil || len(fromJSON) != 1 {
			t.Fatalf("JSON: %v, %d events", err, len(fromJSON))
		}
		fromProto, err := wire.ReadProtoWatchEvents(bytes.NewReader(frame("DELETED", unknown("v1", "ConfigMap", pb))), true)
		if err != nil || len(fromProto) != 1 {
			t.Fatalf("protobuf: %v, %d events", err, len(fromProto))
		}
		want := time.Time{}
		if c.meta.DeletionTimestamp != nil {
			want = c.want
		}
		for name, ev := range map[string]reflector.WatchEvent{"JSON": fromJSON[0], "protobuf": fromProto[0]} {
			if !ev.Delivery.Written.Equal(want) {
				t.Errorf("%s, %s: a DELETED event's write time %v, want %v", c.name, name, ev.Delivery.Written, want)
			}
		}
	}
}

// A streaming list's initial events are a list, not news: they carry no
// delivery (their managedFields are skipped unread), and the events after
// its initial-events-end bookmark carry theirs, in JSON and protobuf.
func TestAStreamingListsInitialEventsCarryNoDelivery(t *testing.T) {
	written := time.Now().Add(-10 * time.Second).UTC().Truncate(time.Second)
	cm := func(name, rv string) *corev1.ConfigMap {
		at := metav1.NewTime(written)
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("u-" + name), ResourceVersion: rv,
				CreationTimestamp: metav1.NewTime(written.Add(-time.Hour)),
				ManagedFields:     []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, Time: &at}}}}
	}
	end := cm("", "3")
	end.ManagedFields, end.Annotations = nil, map[string]string{"k8s.io/initial-events-end": "true"}
	events := []struct {
		typ string
		obj *corev1.ConfigMap
	}{{"ADDED", cm("a", "1")}, {"ADDED", cm("b", "2")}, {"BOOKMARK", end}, {"MODIFIED", cm("a", "4")}}
	for _, wireName := range []string{"json", "protobuf"} {
		t.Run(wireName, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if wireName == "json" {
					w.Header().Set("Content-Type", "application/json")
					for _, e := range events {
						js, _ := json.Marshal(e.obj)
						fmt.Fprintf(w, `{"type":%q,"object":%s}`, e.typ, js)
					}
					return
				}
				w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")
				for _, e := range events {
					pb, _ := e.obj.Marshal()
					_, _ = w.Write(frame(e.typ, unknown("v1", "ConfigMap", pb)))
				}
			}))
			defer srv.Close()
			wireOpt := reflector.WireJSON
			if wireName == "protobuf" {
				wireOpt = reflector.WireProtobuf
			}
			src, err := live.NewSource(&rest.Config{Host: srv.URL}, reflector.Target{Resource: reflector.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespaced: true}}, live.Options{Wire: wireOpt})
			if err != nil {
				t.Fatal(err)
			}
			st, err := src.Watch(t.Context(), reflector.RequestOptions{SendInitialEvents: true, AllowWatchBookmarks: true, ResourceVersionMatch: "NotOlderThan"})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for i, want := range []bool{false, false, false, true} {
				ev, err := st.Next()
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				if ev.Delivery.Known() != want {
					t.Errorf("event %d (%s %s): delivery %+v, want known %t", i, ev.Type, ev.Item.Object.Name, ev.Delivery, want)
				}
				if want && !ev.Delivery.Written.Equal(written) {
					t.Errorf("event %d: written %v, want %v", i, ev.Delivery.Written, written)
				}
			}
		})
	}
}

// An initial event decoded apart (its object before its type in JSON, or
// JSON in a protobuf frame) skips its managedFields as the others do: its
// write time is its creation's.
func TestAnInitialEventDecodedApartSkipsItsManagedFields(t *testing.T) {
	object := `{"metadata":{"name":"a","uid":"u","resourceVersion":"1","creationTimestamp":"2026-01-01T00:00:00Z",` +
		`"managedFields":[{"manager":"m","time":"2026-01-01T00:01:00Z"}]}}`
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		body     []byte
		protobuf bool
	}{
		"JSON, its object first": {[]byte(`{"object":` + object + `,"type":"ADDED"}`), false},
		"JSON in protobuf":       {frame("ADDED", []byte(object)), true},
	} {
		evs, err := wire.ReadInitialEvents(bytes.NewReader(tc.body), tc.protobuf)
		if err != nil || len(evs) != 1 {
			t.Fatalf("%s: %d events, %v", name, len(evs), err)
		}
		if got := evs[0].Delivery.Written; !got.Equal(created) {
			t.Errorf("%s: written %v, want the creation %v (managedFields skipped)", name, got, created)
		}
	}
}

// A watch with a selector sees an object that changed into it as ADDED:
// when its newest time is its creation (the write that moved it left no
// managedFields time), nothing says when that write was, and the creation
// may be minutes old: no estimate. A newer managedFields time is the
// write's, and a watch without a selector takes ADDED as created.
func TestAnAddedEventOfASelectedWatchWhoseNewestTimeIsItsCreationHasNoEstimate(t *testing.T) {
	created := time.Now().Add(-150 * time.Second).UTC().Format(time.RFC3339)
	labelled := time.Now().UTC().Format(time.RFC3339)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().UTC().Format(http.TimeFormat))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"type":"ADDED","object":{"metadata":{"name":"moved","namespace":"ns","uid":"u1","resourceVersion":"2","creationTimestamp":%q}}}`+"\n", created)
		fmt.Fprintf(w, `{"type":"ADDED","object":{"metadata":{"name":"labelled","namespace":"ns","uid":"u2","resourceVersion":"3","creationTimestamp":%q,"managedFields":[{"manager":"kubectl-label","time":%q}]}}}`+"\n", created, labelled)
	}))
	defer srv.Close()
	for _, selector := range []string{"tier=web", ""} {
		target := reflector.Target{Resource: reflector.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespaced: true}, LabelSelector: selector}
		src, err := live.NewSource(&rest.Config{Host: srv.URL}, target, live.Options{Wire: reflector.WireJSON})
		if err != nil {
			t.Fatal(err)
		}
		st, err := src.Watch(t.Context(), reflector.RequestOptions{})
		if err != nil {
			t.Fatal(err)
		}
		moved, err := st.Next()
		if err != nil {
			t.Fatal(err)
		}
		withTime, err := st.Next()
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		if selector != "" && moved.Delivery.Known() {
			t.Errorf("selector %q: an ADDED event whose newest time is its creation 2m30s ago has a lag of %v", selector, moved.Delivery.Lag)
		}
		if selector == "" && (!moved.Delivery.Known() || moved.Delivery.Lag < 140*time.Second) {
			t.Errorf("no selector: an ADDED event is a creation: delivery %+v, want its creation's lag of about 2m30s", moved.Delivery)
		}
		if !withTime.Delivery.Known() || withTime.Delivery.Lag > 3*time.Second {
			t.Errorf("selector %q: an ADDED event with a managedFields time of now: delivery %+v, want a lag of about 0", selector, withTime.Delivery)
		}
	}
}
