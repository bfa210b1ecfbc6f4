package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/fault"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// watchEvent is one event of a test watch.
type watchEvent struct {
	typ, name, rv string
	listEnd       bool
}

func (e watchEvent) pod() *corev1.Pod {
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: e.name, UID: types.UID("uid-" + e.name), ResourceVersion: e.rv}}
	if e.listEnd {
		p.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return p
}

// jsonWatch is a watch body as the server writes it in JSON: one event a line.
func jsonWatch(t *testing.T, evs []watchEvent) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, e := range evs {
		obj, err := json.Marshal(e.pod())
		if err != nil {
			t.Fatal(err)
		}
		line, _ := json.Marshal(metav1.WatchEvent{Type: e.typ, Object: runtime.RawExtension{Raw: obj}})
		b.Write(append(line, '\n'))
	}
	return b.Bytes()
}

// protoWatch is a watch body as the server writes it in protobuf: length-prefixed frames.
func protoWatch(t *testing.T, evs []watchEvent) []byte {
	t.Helper()
	ps := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	var out bytes.Buffer
	for _, e := range evs {
		var obj, ev bytes.Buffer
		if err := ps.Encode(e.pod(), &obj); err != nil {
			t.Fatal(err)
		}
		we := &metav1.WatchEvent{Type: e.typ, Object: runtime.RawExtension{Raw: obj.Bytes()}}
		if err := ps.Encode(we, &ev); err != nil {
			t.Fatal(err)
		}
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(ev.Len()))
		out.Write(n[:])
		out.Write(ev.Bytes())
	}
	return out.Bytes()
}

// decodeWatch is what a client decodes from body: "TYPE name".
func decodeWatch(t *testing.T, body []byte, contentType string) []string {
	t.Helper()
	st, err := wire.DecodeWatchResponse(io.NopCloser(bytes.NewReader(body)), contentType, wire.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var got []string
	for {
		ev, err := st.Next()
		if err != nil {
			var end *reflector.RequestEnd
			if !errors.As(err, &end) || end.Reason != reflector.EndClosed {
				t.Fatalf("the body the client got does not decode: %v", err)
			}
			return got
		}
		got = append(got, string(ev.Type)+" "+ev.Item.Object.Name)
	}
}

func mustSpecs(t *testing.T, raws ...string) []fault.Spec {
	t.Helper()
	var out []fault.Spec
	for _, r := range raws {
		s, err := fault.Parse(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// upstream is a RoundTripper that answers every request with body, or fails the test.
type upstream struct {
	t           *testing.T
	contentType string
	body        []byte
	gzip        bool // the body is sent gzipped
	calls       int
}

func (u *upstream) RoundTrip(req *http.Request) (*http.Response, error) {
	u.calls++
	if u.body == nil {
		u.t.Errorf("%s was forwarded", req.URL)
		return nil, errors.New("not forwarded in this test")
	}
	h := http.Header{}
	h.Set("Content-Type", u.contentType)
	body := u.body
	if u.gzip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(u.body)
		_ = zw.Close()
		body = b.Bytes()
		h.Set("Content-Encoding", "gzip")
	}
	return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: -1, Request: req}, nil
}

var faultWatch = call{verb: reflector.VerbWatch, gvr: configMapsGVR, namespace: "ns", opts: reflector.RequestOptions{ResourceVersion: "10", AllowWatchBookmarks: true}}

// The faults that filter a watch leave out whole frames, JSON or protobuf,
// and pass every other frame as the server sent it; each frame left out is
// noted after the frames passed before it.
func TestDropDeletesAndNoBookmarksLeaveOutWholeFramesInJSONAndProtobuf(t *testing.T) {
	evs := []watchEvent{{typ: "ADDED", name: "a", rv: "11"}, {typ: "DELETED", name: "a", rv: "12"}, {typ: "BOOKMARK", rv: "13"},
		{typ: "MODIFIED", name: "b", rv: "14"}, {typ: "DELETED", name: "b", rv: "15"}}
	for _, enc := range []struct {
		name, contentType string
		body              func(*testing.T, []watchEvent) []byte
		gzip              bool
	}{
		{"json", "application/json;stream=watch", jsonWatch, false},
		{"protobuf", "application/vnd.kubernetes.protobuf;stream=watch", protoWatch, false},
		// A gzipped watch is passed on uncompressed: the same frames.
		{"protobuf-gzip", "application/vnd.kubernetes.protobuf;stream=watch", protoWatch, true},
	} {
		t.Run(enc.name, func(t *testing.T) {
			inj := newInjector(mustSpecs(t, "drop-deletes", "no-bookmarks"), fault.Target{}, 1, time.Now())
			defer inj.close()
			up := &upstream{t: t, contentType: enc.contentType, body: enc.body(t, evs), gzip: enc.gzip}
			log := &faultLog{}
			resp, err := inj.roundTrip(up, httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps?watch=1", nil), faultWatch, &slot{}, log)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if ce := resp.Header.Get("Content-Encoding"); ce != "" {
				t.Errorf("the client's body says Content-Encoding %q, but it is passed on uncompressed", ce)
			}
			want := enc.body(t, []watchEvent{evs[0], evs[3]})
			if !bytes.Equal(got, want) {
				t.Errorf("the client got %q, want the ADDED and MODIFIED frames as sent: %q", decodeWatch(t, got, enc.contentType), decodeWatch(t, want, enc.contentType))
			}
			if n := log.upTo(0); len(n) != 0 {
				t.Errorf("notes before the first frame: %+v", n)
			}
			var notes []string
			for _, n := range log.upTo(1) {
				notes = append(notes, fmt.Sprintf("%s ×%d: %s", n.Spec, n.Count, n.What))
			}
			wantNotes := []string{"drop-deletes ×1: dropped DELETED ns/a (uid uid-a, resourceVersion 12)", "no-bookmarks ×1: dropped BOOKMARK at resourceVersion 13"}
			if strings.Join(notes, "\n") != strings.Join(wantNotes, "\n") {
				t.Errorf("after the first frame, notes\n%s\nwant\n%s", strings.Join(notes, "\n"), strings.Join(wantNotes, "\n"))
			}
			if last := log.upTo(-1); len(last) != 1 || last[0].What != "dropped DELETED ns/b (uid uid-b, resourceVersion 15)" {
				t.Errorf("the last notes: %+v", last)
			}
		})
	}
}

// kubectl get -w asks for Tables: each event's object is a Table of one
// row. A fault's note names the row's object, as it does on any other
// stream (it said "dropped DELETED  (uid , resourceVersion 12)").
func TestAFaultNoteOnATableStreamNamesTheRowsObject(t *testing.T) {
	row := func(typ, name, rv string) string {
		return `{"type":"` + typ + `","object":{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"` + rv + `"},"rows":[{"cells":["` + name +
			`"],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"` + name + `","namespace":"ns","uid":"uid-` + name + `","resourceVersion":"` + rv + `"}}}]}}` + "\n"
	}
	body := row("ADDED", "a", "11") + row("DELETED", "a", "12")
	inj := newInjector(mustSpecs(t, "drop-deletes"), fault.Target{}, 1, time.Now())
	defer inj.close()
	up := &upstream{t: t, contentType: "application/json;stream=watch", body: []byte(body)}
	log := &faultLog{}
	sl := &slot{asked: observed.Asked{Wire: reflector.WireJSON, Table: true}}
	resp, err := inj.roundTrip(up, httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps?watch=1", nil), faultWatch, sl, log)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if string(got) != row("ADDED", "a", "11") {
		t.Errorf("the client got %q, want the ADDED row alone", got)
	}
	if notes := log.upTo(-1); len(notes) != 1 || notes[0].What != "dropped DELETED ns/a (uid uid-a, resourceVersion 12)" {
		t.Errorf("notes: %+v", notes)
	}
}

// On a streaming list and on a plain watch: stall-initial-list withholds
// only the bookmark that ends a streaming list, and only on one; cut
// without a schedule cuts a watch after its first event, and a streaming
// list after the first event after the one that ends its list (cut in its
// initial events, a client never synced, and every retry listed again;
// cut right at their end, client-go took the watch for a very short one
// and listed again).
func TestStallInitialListAndAnUnscheduledCutLetAStreamingListBe(t *testing.T) {
	stream := faultWatch
	stream.opts = reflector.RequestOptions{SendInitialEvents: true, AllowWatchBookmarks: true}
	for _, tc := range []struct {
		spec         string
		evs          []watchEvent
		end          error // how the client's body ends
		stream, plan []string
	}{
		{"stall-initial-list", []watchEvent{{typ: "ADDED", name: "a", rv: "11"}, {typ: "BOOKMARK", rv: "12", listEnd: true}, {typ: "BOOKMARK", rv: "13"}},
			nil, []string{"ADDED a", "BOOKMARK "}, []string{"ADDED a", "BOOKMARK ", "BOOKMARK "}},
		{"cut", []watchEvent{{typ: "ADDED", name: "a", rv: "11"}, {typ: "ADDED", name: "b", rv: "12"}, {typ: "BOOKMARK", rv: "12", listEnd: true},
			{typ: "MODIFIED", name: "a", rv: "13"}, {typ: "MODIFIED", name: "b", rv: "14"}},
			errFaultCut, []string{"ADDED a", "ADDED b", "BOOKMARK ", "MODIFIED a"}, []string{"ADDED a"}},
	} {
		inj := newInjector(mustSpecs(t, tc.spec), fault.Target{}, 1, time.Now())
		ct := "application/json;stream=watch"
		for c, want := range map[*call][]string{&stream: tc.stream, &faultWatch: tc.plan} {
			resp, err := inj.roundTrip(&upstream{t: t, contentType: ct, body: jsonWatch(t, tc.evs)}, httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps?watch=1", nil), *c, &slot{}, &faultLog{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			if !errors.Is(err, tc.end) {
				t.Errorf("%s, sendInitialEvents=%v: the body ended with %v, want %v", tc.spec, c.opts.SendInitialEvents, err, tc.end)
			}
			if d := decodeWatch(t, got, ct); strings.Join(d, ",") != strings.Join(want, ",") {
				t.Errorf("%s, sendInitialEvents=%v: the client got %q, want %q", tc.spec, c.opts.SendInitialEvents, d, want)
			}
		}
		inj.close()
	}
}

// delay notes the first event it holds at once, before that event, so
// that the note's time is when it first acted and a slow-delivery finding
// names it; the rest are counted when the watch ends.
func TestDelayNotesItsFirstHoldBeforeTheEventItHolds(t *testing.T) {
	evs := []watchEvent{{typ: "ADDED", name: "a", rv: "11"}, {typ: "MODIFIED", name: "a", rv: "12"}, {typ: "MODIFIED", name: "a", rv: "13"}}
	log := passJSONWatch(t, evs, 3, "delay=1ms")
	first := log.upTo(0)
	if len(first) != 1 || first[0].Count != 1 || !strings.HasPrefix(first[0].What, "held a watch event 1ms") {
		t.Errorf("before the first event: %+v, want the first hold's note", first)
	}
	rest := log.upTo(-1)
	if len(rest) != 1 || rest[0].Count != 2 || rest[0].What != "held 2 more events 1ms each before passing them on" {
		t.Errorf("at the end: %+v, want the 2 more held", rest)
	}
}

// gone ends the open watch as a server ends one, and its resume (the
// stream's next watch) is answered 410 Gone by the proxy, without
// forwarding it; the watch after that is forwarded.
func TestGoneEndsTheWatchAndAnswersItsResume410(t *testing.T) {
	inj := newInjector(mustSpecs(t, "gone@every=1h"), fault.Target{}, 1, time.Now())
	defer inj.close()
	ct := "application/json;stream=watch"
	pr, pw := io.Pipe()
	defer pw.Close()
	sl := &slot{}
	log := &faultLog{}
	up := &upstream{t: t, contentType: ct, body: []byte{}}
	req := httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps?watch=1", nil)
	resp, err := inj.roundTrip(rtFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		h.Set("Content-Type", ct)
		return &http.Response{StatusCode: 200, Header: h, Body: pr, ContentLength: -1, Request: r}, nil
	}), req, faultWatch, sl, log)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = pw.Write(jsonWatch(t, []watchEvent{{typ: "ADDED", name: "a", rv: "11"}})) }()
	buf := make([]byte, 1<<16)
	if n, err := resp.Body.Read(buf); err != nil || !strings.Contains(string(buf[:n]), `"ADDED"`) {
		t.Fatalf("the first frame: %q, %v", buf[:n], err)
	}
	inj.act(inj.faults[0]) // the firing
	if n, err := resp.Body.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("after gone fired, the watch read %q, %v; want its end (EOF)", buf[:n], err)
	}
	_ = resp.Body.Close()
	if notes := log.upTo(-1); len(notes) != 1 || notes[0].Count != 0 || notes[0].What != "ended the watch; its resume will be answered 410 Gone" {
		t.Errorf("notes of the ended watch: %+v", notes)
	}

	resume := faultWatch
	resume.opts.ResourceVersion = "11"
	log = &faultLog{}
	resp, err = inj.roundTrip(&upstream{t: t}, req, resume, sl, log)
	if err != nil || resp.StatusCode != http.StatusGone {
		t.Fatalf("the resume: %v, %v; want 410", resp, err)
	}
	b, _ := io.ReadAll(resp.Body)
	st := wire.ResponseStatus(resp.StatusCode, b, reflector.VerbWatch, configMapsGVR.GroupResource())
	if st.Code != 410 || st.Reason != metav1.StatusReasonExpired || !strings.Contains(st.Message, "too old resource version: 11") {
		t.Errorf("the 410's Status: %+v", st)
	}
	if notes := log.upTo(-1); len(notes) != 1 || notes[0].Count != 1 || notes[0].Spec != "gone@every=1h" {
		t.Errorf("notes of the resume: %+v", notes)
	}
	// Once: the relist's watch is forwarded.
	if _, err := inj.roundTrip(up, req, resume, sl, &faultLog{}); err != nil || up.calls != 1 {
		t.Errorf("the watch after the 410: %v, forwarded %d times", err, up.calls)
	}
}

// gone without a schedule answers every resumed watch 410, and forwards
// the watch that follows a LIST (it starts from the list), and a streaming
// list: kubectl get -w failed at once, its first watch answered 410.
func TestAnUnscheduledGoneAnswersOnlyResumedWatches(t *testing.T) {
	inj := newInjector(mustSpecs(t, "gone"), fault.Target{}, 1, time.Now())
	defer inj.close()
	list := call{verb: reflector.VerbList, gvr: configMapsGVR}
	watchFrom := func(rv string) call {
		c := faultWatch
		c.opts.ResourceVersion = rv
		return c
	}
	streaming := faultWatch
	streaming.opts.SendInitialEvents = true
	sl := &slot{}
	for i, step := range []struct {
		c    call
		gone bool
	}{
		{list, false},
		{watchFrom("10"), false}, // the list's watch
		{watchFrom("15"), true},  // its resume
		{watchFrom("15"), true},  // and again
		{list, false},            // the relist
		{watchFrom("20"), false},
		{streaming, false},
		{watchFrom("30"), true},
	} {
		up := &upstream{t: t, contentType: "application/json;stream=watch", body: []byte{}}
		resp, err := inj.roundTrip(up, httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps?watch=1", nil), step.c, sl, &faultLog{})
		if err != nil {
			t.Fatal(err)
		}
		gone, forwarded := resp.StatusCode == http.StatusGone, up.calls > 0
		if gone != step.gone || forwarded == gone {
			t.Errorf("request %d (%s rv=%q sendInitialEvents=%v): 410 %v, forwarded %d; want 410 %v", i+1, step.c.verb, step.c.opts.ResourceVersion, step.c.opts.SendInitialEvents, gone, up.calls, step.gone)
		}
		_ = resp.Body.Close()
	}
}

// throttle answers 429 with Retry-After, rounded up to a second, without forwarding.
func TestThrottleAnswers429WithRetryAfter(t *testing.T) {
	inj := newInjector(mustSpecs(t, "throttle=1500ms"), fault.Target{}, 1, time.Now())
	defer inj.close()
	log := &faultLog{}
	list := call{verb: reflector.VerbList, gvr: configMapsGVR}
	resp, err := inj.roundTrip(&upstream{t: t}, httptest.NewRequest("GET", "/api/v1/configmaps", nil), list, &slot{}, log)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "2" {
		t.Fatalf("throttled: %+v, %v", resp, err)
	}
	if notes := log.upTo(-1); len(notes) != 1 || notes[0].What != "answered the LIST 429 Too Many Requests, Retry-After 2s, without forwarding it" {
		t.Errorf("notes: %+v", notes)
	}
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// stale sends an ADDED or MODIFIED event it passed on once more, whole,
// fault.StaleAfter events later (its resourceVersion going backwards), one
// at a time, noted just before it goes; a streaming list's initial events
// are not sent again, nor is anything before its end bookmark.
func TestStaleSendsAnEventAgainTwoEventsLaterInJSONAndProtobuf(t *testing.T) {
	evs := []watchEvent{{typ: "ADDED", name: "a", rv: "11"}, {typ: "MODIFIED", name: "a", rv: "12"}, {typ: "BOOKMARK", rv: "13"},
		{typ: "DELETED", name: "b", rv: "14"}, {typ: "MODIFIED", name: "c", rv: "15"}, {typ: "ADDED", name: "d", rv: "16"}}
	for _, enc := range []struct {
		name, contentType string
		body              func(*testing.T, []watchEvent) []byte
	}{
		{"json", "application/json;stream=watch", jsonWatch},
		{"protobuf", "application/vnd.kubernetes.protobuf;stream=watch", protoWatch},
	} {
		t.Run(enc.name, func(t *testing.T) {
			inj := newInjector(mustSpecs(t, "stale"), fault.Target{}, 1, time.Now())
			defer inj.close()
			log := &faultLog{}
			resp, err := inj.roundTrip(&upstream{t: t, contentType: enc.contentType, body: enc.body(t, evs)}, httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps?watch=1", nil), faultWatch, &slot{}, log)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			// ADDED a is held; MODIFIED a and DELETED b pass (the bookmark is
			// no event), then ADDED a again; MODIFIED c is held next, ADDED d
			// passes, and the watch ends before a second event.
			want := enc.body(t, []watchEvent{evs[0], evs[1], evs[2], evs[3], evs[0], evs[4], evs[5]})
			if !bytes.Equal(got, want) {
				t.Errorf("the client got %q, want %q, each frame as sent", decodeWatch(t, got, enc.contentType), decodeWatch(t, want, enc.contentType))
			}
			if n := log.upTo(3); len(n) != 0 {
				t.Errorf("notes before the fourth frame passed: %+v", n)
			}
			n := log.upTo(-1)
			if len(n) != 1 || n[0].Spec != "stale" || n[0].Count != 1 ||
				n[0].What != "sent ADDED ns/a (uid uid-a, resourceVersion 11) again, 2 events after it was passed on: its resourceVersion goes backwards" {
				t.Errorf("the notes: %+v", n)
			}
		})
	}
	// A streaming list: nothing before its end bookmark is held.
	inj := newInjector(mustSpecs(t, "stale"), fault.Target{}, 1, time.Now())
	defer inj.close()
	stream := faultWatch
	stream.opts = reflector.RequestOptions{SendInitialEvents: true, AllowWatchBookmarks: true}
	list := []watchEvent{{typ: "ADDED", name: "a", rv: "11"}, {typ: "ADDED", name: "b", rv: "9"}, {typ: "ADDED", name: "c", rv: "10"},
		{typ: "BOOKMARK", rv: "12", listEnd: true}, {typ: "MODIFIED", name: "a", rv: "13"}, {typ: "MODIFIED", name: "b", rv: "14"}, {typ: "MODIFIED", name: "c", rv: "15"}}
	ct := "application/json;stream=watch"
	resp, err := inj.roundTrip(&upstream{t: t, contentType: ct, body: jsonWatch(t, list)}, httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps?watch=1", nil), stream, &slot{}, &faultLog{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	if d := strings.Join(decodeWatch(t, got, ct), ","); d != "ADDED a,ADDED b,ADDED c,BOOKMARK ,MODIFIED a,MODIFIED b,MODIFIED c,MODIFIED a" {
		t.Errorf("the streaming list's client got %s", d)
	}
}

// pagedList is a slot, a server of empty ConfigMap lists, and the calls of
// a paged LIST's first page and a page after it.
func pagedList(t *testing.T) (*slot, *upstream, *http.Request, call, call) {
	up := &upstream{t: t, contentType: "application/json", body: []byte(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}`)}
	first := call{verb: reflector.VerbList, gvr: configMapsGVR, opts: reflector.RequestOptions{Limit: 500}}
	next := first
	next.opts.Continue = "token"
	return &slot{}, up, httptest.NewRequest("GET", "/api/v1/configmaps?limit=500", nil), first, next
}

// gone expires the continue token of a paged LIST begun before it fired,
// once, as the API server answers a token older than its history; a list
// begun after the firing pages on.
func TestGoneExpiresTheContinueTokenOfAListBegunBeforeIt(t *testing.T) {
	inj := newInjector(mustSpecs(t, "gone@every=1h"), fault.Target{}, 1, time.Now())
	defer inj.close()
	sl, up, req, first, next := pagedList(t)
	if _, err := inj.roundTrip(up, req, first, sl, &faultLog{}); err != nil || up.calls != 1 {
		t.Fatalf("the first page: %v, forwarded %d", err, up.calls)
	}
	time.Sleep(time.Millisecond)
	inj.act(inj.faults[0]) // the firing, between two pages
	log := &faultLog{}
	resp, err := inj.roundTrip(up, req, next, sl, log)
	if err != nil || resp.StatusCode != http.StatusGone || up.calls != 1 {
		t.Fatalf("the continue after the firing: %v, %v, forwarded %d; want 410, not forwarded", resp, err, up.calls)
	}
	b, _ := io.ReadAll(resp.Body)
	st := wire.ResponseStatus(resp.StatusCode, b, reflector.VerbList, configMapsGVR.GroupResource())
	if st.Reason != metav1.StatusReasonExpired || !strings.Contains(st.Message, "continue parameter is too old") {
		t.Errorf("the 410's Status: %+v", st)
	}
	if notes := log.upTo(-1); len(notes) != 1 || notes[0].Count != 1 || notes[0].Spec != "gone@every=1h" {
		t.Errorf("notes: %+v", notes)
	}
	// Once per firing: the client's next list, and its pages, are forwarded.
	for _, c := range []call{first, next, next} {
		if _, err := inj.roundTrip(up, req, c, sl, &faultLog{}); err != nil {
			t.Fatal(err)
		}
	}
	if up.calls != 4 {
		t.Errorf("after the 410, %d requests forwarded, want 4", up.calls)
	}
}

// stale never sends an object's event again once the object was deleted:
// that would bring it back into the client's cache for good (a ghost, the
// work of drop-deletes), not send it a version it already had.
func TestStaleSendsNothingOfAnObjectDeletedMeanwhile(t *testing.T) {
	evs := []watchEvent{{typ: "ADDED", name: "a", rv: "11"}, {typ: "DELETED", name: "a", rv: "12"},
		{typ: "MODIFIED", name: "c", rv: "13"}, {typ: "MODIFIED", name: "d", rv: "14"}, {typ: "ADDED", name: "e", rv: "15"}}
	got, log := watchThrough(t, evs, "stale")
	// ADDED a is held, then let go at its DELETED; MODIFIED c is held next,
	// and sent again after d and e.
	if d := strings.Join(got, ","); d != "ADDED a,DELETED a,MODIFIED c,MODIFIED d,ADDED e,MODIFIED c" {
		t.Errorf("the client got %s", d)
	}
	if n := log.upTo(-1); len(n) != 1 || !strings.Contains(n[0].What, "sent MODIFIED ns/c") {
		t.Errorf("the notes: %+v, want one, of c", n)
	}
}

// An unscheduled gone answers resumed watches 410, never a continue token:
// it has no firing for a list to begin before, and a client whose every
// token expired would never end a paged list.
func TestAnUnscheduledGoneLetsAPagedListPageOn(t *testing.T) {
	inj := newInjector(mustSpecs(t, "gone"), fault.Target{}, 1, time.Now())
	defer inj.close()
	sl, up, req, first, next := pagedList(t)
	for _, c := range []call{first, next, next} {
		resp, err := inj.roundTrip(up, req, c, sl, &faultLog{})
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("a page of the list: %v, %v", resp, err)
		}
	}
	if up.calls != 3 {
		t.Errorf("%d pages forwarded, want 3", up.calls)
	}
}

// A delay holds only what it passes on: with drop-deletes, the DELETED
// events left out are neither held nor counted as held (they were).
func TestADelayCountsNoEventAnotherFaultLeftOut(t *testing.T) {
	evs := []watchEvent{{typ: "ADDED", name: "a", rv: "11"}, {typ: "DELETED", name: "a", rv: "12"},
		{typ: "MODIFIED", name: "b", rv: "13"}, {typ: "DELETED", name: "b", rv: "14"}, {typ: "MODIFIED", name: "c", rv: "15"}}
	log := passJSONWatch(t, evs, 3, "delay=1ms", "drop-deletes")
	var notes []string
	for _, n := range log.upTo(-1) {
		notes = append(notes, fmt.Sprintf("%s ×%d: %s", n.Spec, n.Count, n.What))
	}
	want := []string{
		"delay=1ms ×1: held a watch event 1ms before passing it on; the events held after it are counted when the watch ends",
		"drop-deletes ×1: dropped DELETED ns/a (uid uid-a, resourceVersion 12)",
		"drop-deletes ×1: dropped DELETED ns/b (uid uid-b, resourceVersion 14)",
		"delay=1ms ×2: held 2 more events 1ms each before passing them on",
	}
	if strings.Join(notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes\n%s\nwant\n%s", strings.Join(notes, "\n"), strings.Join(want, "\n"))
	}
}

// passJSONWatch passes a JSON watch of evs through faults, checks that the
// client got want events, and returns the faults' log.
func passJSONWatch(t *testing.T, evs []watchEvent, want int, faults ...string) *faultLog {
	t.Helper()
	d, log := watchThrough(t, evs, faults...)
	if len(d) != want {
		t.Fatalf("the client got %q, want %d events", d, want)
	}
	return log
}

// watchThrough passes a JSON watch of evs through faults, and returns the
// events the client got ("TYPE name") and the faults' log.
func watchThrough(t *testing.T, evs []watchEvent, faults ...string) ([]string, *faultLog) {
	t.Helper()
	inj := newInjector(mustSpecs(t, faults...), fault.Target{}, 1, time.Now())
	defer inj.close()
	ct := "application/json;stream=watch"
	log := &faultLog{}
	resp, err := inj.roundTrip(&upstream{t: t, contentType: ct, body: jsonWatch(t, evs)}, httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps?watch=1", nil), faultWatch, &slot{}, log)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	return decodeWatch(t, got, ct), log
}

// A client that leaves while a delay holds an event: the event is not
// passed on (an observer would count it delivered), nor counted as held,
// and the body ends at once as the client's, not when the delay is over.
func TestADelayedEventIsNotPassedOnToAClientThatLeft(t *testing.T) {
	evs := []watchEvent{{typ: "ADDED", name: "a", rv: "11"}}
	inj := newInjector(mustSpecs(t, "delay=1h"), fault.Target{}, 1, time.Now())
	defer inj.close()
	ctx, cancel := context.WithCancel(context.Background())
	log := &faultLog{}
	req := httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps?watch=1", nil).WithContext(ctx)
	resp, err := inj.roundTrip(&upstream{t: t, contentType: "application/json;stream=watch", body: jsonWatch(t, evs)}, req, faultWatch, &slot{}, log)
	if err != nil {
		t.Fatal(err)
	}
	type read struct {
		b   []byte
		err error
	}
	got := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(resp.Body)
		got <- read{b, err}
	}()
	cancel()
	select {
	case r := <-got:
		if len(r.b) != 0 || !errors.Is(r.err, errClientGone) {
			t.Errorf("read %q, %v; want nothing and %v", r.b, r.err, errClientGone)
		}
	case <-time.After(time.Minute):
		t.Fatal("the body was still held a minute after its client left")
	}
	if notes := log.upTo(-1); len(notes) != 0 {
		t.Errorf("notes %+v, want none: nothing was held to the end", notes)
	}
}

// A scheduled gone fires next at its next firing after now: the firings
// it missed (a stalled process, a long act) are not made up back to back,
// as Schedule.Take makes up none.
func TestAScheduledGoneMakesUpNoFiringItMissed(t *testing.T) {
	// Three firings missed already: the next is half an hour away.
	inj := newInjector(mustSpecs(t, "gone@every=1h"), fault.Target{}, 1, time.Now().Add(-3*time.Hour-30*time.Minute))
	defer inj.close()
	time.Sleep(500 * time.Millisecond)
	inj.mu.Lock()
	at, fired := inj.fired[inj.faults[0]]
	inj.mu.Unlock()
	if fired {
		t.Errorf("gone@every=1h fired at %s, half an hour before its next firing: it made up one it missed", at.Format(time.RFC3339Nano))
	}
}

// Two delays' last notes (what each held after its first hold) come in the
// order of their first holds, every time: a trace and its replay, and two
// runs, say them alike.
func TestTwoDelaysLastNotesComeInTheOrderOfTheirFirstHolds(t *testing.T) {
	evs := []watchEvent{{typ: "ADDED", name: "a", rv: "11"}, {typ: "MODIFIED", name: "a", rv: "12"}, {typ: "MODIFIED", name: "a", rv: "13"}}
	want := "delay=1ms ×1, delay=2ms ×1, delay=1ms ×2, delay=2ms ×2"
	for range 10 { // the order of a map's keys changes from one range to the next
		var notes []string
		for _, n := range passJSONWatch(t, evs, 3, "delay=1ms", "delay=2ms").upTo(-1) {
			notes = append(notes, fmt.Sprintf("%s ×%d", n.Spec, n.Count))
		}
		if got := strings.Join(notes, ", "); got != want {
			t.Fatalf("notes %s, want %s", got, want)
		}
	}
}
