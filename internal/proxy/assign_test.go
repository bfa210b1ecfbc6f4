package proxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/fault"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

func newAssignProxy() *Proxy {
	return &Proxy{slots: map[streamKey][]*slot{}, released: make(chan struct{}), conns: map[net.Conn]*conn{},
		opts: Options{Now: time.Now, ClientLeftAfter: time.Hour, ForgetAfter: time.Hour}}
}

// A reflector's relist can reach the proxy before the watch it left (on a
// 410 ERROR event) is seen ending: the relist waits for that release and
// stays on the reflector's stream instead of opening another.
func TestARequestRightAfterItsClientsLastOneStaysOnItsStream(t *testing.T) {
	p := newAssignProxy()
	watch := call{verb: reflector.VerbWatch, gvr: configMapsGVR, namespace: "ns"}
	list := call{verb: reflector.VerbList, gvr: configMapsGVR, namespace: "ns"}
	req := httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps", nil)
	first, _, _ := p.assign(watch, req)
	got := make(chan *slot, 1)
	go func() {
		sl, _, _ := p.assign(list, req)
		got <- sl
	}()
	p.release(first)
	if sl := <-got; sl != first {
		t.Errorf("the relist was given another stream than its watch's")
	}
}

// Another reflector of the same thing in the same program (its first
// request while the first one's watch is open) gets a stream of its own
// once the grace has passed.
func TestASecondReflectorOfTheSameThingGetsItsOwnStream(t *testing.T) {
	p := newAssignProxy()
	watch := call{verb: reflector.VerbWatch, gvr: configMapsGVR, namespace: "ns"}
	req := httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps", nil)
	first, _, _ := p.assign(watch, req)
	start := time.Now()
	second, _, _ := p.assign(watch, req)
	if second == first {
		t.Fatal("two requests in flight at once were given one stream")
	}
	if waited := time.Since(start); waited < sameClientGrace {
		t.Errorf("the second reflector's request waited %s, less than the grace %s", waited, sameClientGrace)
	}
}

// A typed informer (protobuf) and a metadata informer of one resource in
// one program (controller-runtime runs both) are two reflectors: each
// request goes to the stream of what it asks for, even when the other's is
// free (a relist of one is never taken into the other's stream).
func TestATypedAndAMetadataInformerOfOneResourceAreTwoStreams(t *testing.T) {
	p := newAssignProxy()
	list := call{verb: reflector.VerbList, gvr: configMapsGVR}
	watch := call{verb: reflector.VerbWatch, gvr: configMapsGVR}
	req := func(accept string) *http.Request {
		r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
		r.Header.Set("User-Agent", "manager/v0.0.0 (linux/amd64) kubernetes/$Format")
		r.Header.Set("Accept", accept)
		return r
	}
	typed := req("application/vnd.kubernetes.protobuf, */*")
	metaList := req("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")
	metaWatch := req("application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json")

	a, _, _ := p.assign(list, typed)
	p.release(a)
	start := time.Now()
	b, _, _ := p.assign(list, metaList)
	if b == a {
		t.Fatal("the metadata informer's list was taken into the typed informer's stream")
	}
	if waited := time.Since(start); waited >= sameClientGrace {
		t.Errorf("the metadata informer's first list waited %s for the typed informer's stream", waited)
	}
	p.release(b)
	if w, _, _ := p.assign(watch, metaWatch); w != b {
		t.Error("the metadata informer's watch (as=PartialObjectMetadata) left its list's stream (as=PartialObjectMetadataList)")
	} else {
		p.release(w)
	}
	if w, _, _ := p.assign(watch, typed); w != a {
		t.Error("the typed informer's watch left its stream")
	}
	if !b.asked.MetadataOnly || b.asked.Wire != reflector.WireProtobuf || a.asked.MetadataOnly || a.asked.Accept != typed.Header.Get("Accept") {
		t.Errorf("asked %+v and %+v", a.asked, b.asked)
	}
}

// resettable is a RESTMapper that forgets nothing.
type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

// Streams are numbered in the order they are announced: a stream's number
// is its place among the OnStream calls (and so among a trace's resource
// lines) and in Streams, however many are created at once.
func TestStreamsAreNumberedInTheOrderTheyAreAnnounced(t *testing.T) {
	var announced []int
	p := newAssignProxy()
	p.mapper = resettable{meta.NewDefaultRESTMapper(nil)}
	p.opts.Now = time.Now
	p.opts.OnStream = func(s *observed.Stream) {
		announced = append(announced, s.ID) // serialized by the proxy
		time.Sleep(time.Millisecond)
	}
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := call{verb: reflector.VerbList, gvr: configMapsGVR, namespace: fmt.Sprint("ns", i)}
			p.stream(&slot{}, c)
		}()
	}
	wg.Wait()
	streams := p.Streams()
	if len(announced) != n || len(streams) != n {
		t.Fatalf("%d announced, %d streams, want %d", len(announced), len(streams), n)
	}
	for i := range n {
		if announced[i] != i+1 || streams[i].ID != i+1 {
			t.Errorf("announcement %d is stream #%d, Streams()[%d] is #%d, want #%d", i, announced[i], i, streams[i].ID, i+1)
		}
	}
}

// Two informers of one resource in one program that ask in two encodings
// at once (a typed one over protobuf, a dynamic one in JSON) are two
// streams; one client that asks in another encoding for its next request
// (one request at a time) stays on its stream.
func TestAnotherEncodingIsAnotherStreamOnlyWhenBothAreInUse(t *testing.T) {
	list := call{verb: reflector.VerbList, gvr: configMapsGVR}
	req := func(accept string) *http.Request {
		r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
		r.Header.Set("Accept", accept)
		return r
	}
	p := newAssignProxy()
	a, _, _ := p.assign(list, req("application/vnd.kubernetes.protobuf, */*"))
	b, _, _ := p.assign(list, req("application/json, */*"))
	if a == b {
		t.Fatal("a JSON request while the protobuf one is in flight was taken into its stream")
	}
	p.release(a)
	p.release(b)
	if c, _, _ := p.assign(list, req("application/json")); c != b {
		t.Error("the JSON reflector's next request left its stream for the protobuf one's")
	}

	p = newAssignProxy()
	a, _, _ = p.assign(list, req("application/json"))
	p.release(a)
	if b, _, _ := p.assign(list, req("application/vnd.kubernetes.protobuf")); b != a {
		t.Error("one client's next request, in protobuf, opened a stream of its own")
	}
}

// onConn is a request of kubectl (one User-Agent for every kubectl process)
// for configmaps in every namespace, arriving on the connection c.
func onConn(p *Proxy, c net.Conn) *http.Request {
	r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
	r.Header.Set("User-Agent", "kubectl/v1.37.2 (linux/amd64) kubernetes/0123abc")
	return r.WithContext(p.connContext(r.Context(), c))
}

// served has the proxy forward and process the request sl was given (its
// job closing mine), as RoundTrip and its job do: its stream is Listed.
func served(p *Proxy, sl *slot, mine chan struct{}) {
	p.release(sl)
	close(mine)
	p.processed(sl, reflector.StateListed, "")
}

func newConn(t *testing.T) net.Conn {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return a
}

// Two kubectl get runs one after the other are two processes: the second's
// first LIST, on a connection of its own once the first's have closed, is a
// new client's, not a relist of the first's stream.
func TestASecondProcessFirstListIsANewClient(t *testing.T) {
	p := newAssignProxy()
	list := call{verb: reflector.VerbList, gvr: configMapsGVR, opts: reflector.RequestOptions{Limit: 500}}
	c1 := newConn(t)
	first, _, mine := p.assign(list, onConn(p, c1))
	served(p, first, mine)
	p.connState(c1, http.StateClosed) // the first kubectl exited

	c2 := newConn(t)
	start := time.Now()
	second, _, mine := p.assign(list, onConn(p, c2))
	if second == first {
		t.Fatal("the second kubectl's LIST was taken into the first one's stream (a relist)")
	}
	if waited := time.Since(start); waited >= sameClientGrace {
		t.Errorf("the second kubectl's LIST waited %s", waited)
	}
	served(p, second, mine)
	// Its watch from the list's resourceVersion, on the same connection, is its own.
	watch := call{verb: reflector.VerbWatch, gvr: configMapsGVR, opts: reflector.RequestOptions{ResourceVersion: "120"}}
	if w, _, _ := p.assign(watch, onConn(p, c2)); w != second {
		t.Error("the second kubectl's watch left its list's stream for the first kubectl's")
	}
}

// Two kubectl get runs one after the other: the second's first LIST can
// come before the proxy has seen the first one's connection close, or has
// processed its list. A client whose list is complete never lists afresh
// again (it resumes from its resourceVersion): the second is a new client.
func TestASecondProcessFirstListBeforeTheFirstIsSeenGoneIsANewClient(t *testing.T) {
	list := call{verb: reflector.VerbList, gvr: configMapsGVR, opts: reflector.RequestOptions{Limit: 500}}
	for _, processedLate := range []bool{false, true} {
		p := newAssignProxy()
		first, _, mine := p.assign(list, onConn(p, newConn(t)))
		p.release(first)
		close(mine)
		if !processedLate {
			p.processed(first, reflector.StateListed, "")
		} else {
			go func() {
				time.Sleep(sameClientGrace / 5)
				p.processed(first, reflector.StateListed, "")
			}()
		}
		second, _, _ := p.assign(list, onConn(p, newConn(t)))
		if second == first {
			t.Errorf("processed late %v: the second kubectl's LIST was taken into the first one's stream", processedLate)
		}
	}
	// Until its list is complete (its first LIST failed), a client's LIST
	// from "" on another connection may be its retry: it stays.
	p := newAssignProxy()
	first, _, mine := p.assign(list, onConn(p, newConn(t)))
	p.release(first)
	close(mine)
	p.processed(first, reflector.StateBackoff, "")
	if again, _, _ := p.assign(list, onConn(p, newConn(t))); again != first {
		t.Error("a retry of a LIST that failed opened another stream")
	}
}

// A client that was cut off (every connection it used closed) and comes
// back on a new connection resuming where it was (a watch from its cursor,
// a relist from its resourceVersion) is the same client: its stream goes on.
func TestAClientThatResumesOnANewConnectionKeepsItsStream(t *testing.T) {
	for _, next := range []call{
		{verb: reflector.VerbWatch, gvr: configMapsGVR, opts: reflector.RequestOptions{ResourceVersion: "120"}},
		{verb: reflector.VerbList, gvr: configMapsGVR, opts: reflector.RequestOptions{ResourceVersion: "120"}},
	} {
		p := newAssignProxy()
		c1 := newConn(t)
		sl, _, mine := p.assign(call{verb: reflector.VerbList, gvr: configMapsGVR, opts: reflector.RequestOptions{ResourceVersion: "0"}}, onConn(p, c1))
		served(p, sl, mine)
		p.connState(c1, http.StateClosed)
		if again, _, _ := p.assign(next, onConn(p, newConn(t))); again != sl {
			t.Errorf("a %s from resourceVersion 120 on a new connection opened another stream", next.verb)
		}
	}
	// A LIST from "" while the client is still connected, after its
	// resourceVersion expired (its relist from "0" was answered 410), is
	// its own, on whatever connection.
	p := newAssignProxy()
	c1 := newConn(t)
	sl, _, mine := p.assign(call{verb: reflector.VerbList, gvr: configMapsGVR, opts: reflector.RequestOptions{ResourceVersion: "0"}}, onConn(p, c1))
	p.release(sl)
	close(mine)
	p.processed(sl, reflector.StateRelisting, "")
	if again, _, _ := p.assign(call{verb: reflector.VerbList, gvr: configMapsGVR}, onConn(p, newConn(t))); again != sl {
		t.Error("a relist from \"\" of a client still connected opened another stream")
	}
}

// A new process's stream never takes the requests of a process that is
// still there, and the other way round: each request goes to the stream of
// its own connection first.
func TestAStreamOfTheRequestsOwnConnectionComesFirst(t *testing.T) {
	p := newAssignProxy()
	list := call{verb: reflector.VerbList, gvr: configMapsGVR}
	old := newConn(t)
	a, _, mine := p.assign(list, onConn(p, old))
	served(p, a, mine)
	p.connState(old, http.StateClosed)
	c := newConn(t)
	b, _, mine := p.assign(list, onConn(p, c))
	served(p, b, mine)
	watch := call{verb: reflector.VerbWatch, gvr: configMapsGVR, opts: reflector.RequestOptions{ResourceVersion: "7"}}
	if w, _, _ := p.assign(watch, onConn(p, c)); w != b {
		t.Error("the second process's watch went to the first process's stream")
	}
}

// listedOnAConn is a proxy whose one stream's client listed objects at
// resourceVersion 5 on connection c, still open, and was served.
func listedOnAConn(t *testing.T, objects ...*store.Object) (*Proxy, *slot, *observed.Stream, net.Conn) {
	t.Helper()
	p := newAssignProxy()
	p.mapper = resettable{meta.NewDefaultRESTMapper(nil)}
	list := call{verb: reflector.VerbList, gvr: configMapsGVR}
	c := newConn(t)
	sl, _, mine := p.assign(list, onConn(p, c))
	s := p.stream(sl, list)
	r := s.BeginAnswered(reflector.VerbList, reflector.RequestOptions{}, time.Time{}, "")
	page := &reflector.Page{ResourceVersion: "5"}
	for _, o := range objects {
		page.Items = append(page.Items, reflector.Item{Object: o})
	}
	r.Page(page)
	r.End(&reflector.RequestEnd{Reason: reflector.EndClosed})
	served(p, sl, mine)
	return p, sl, s, c
}

// A stream whose connections have all closed, with nothing pending, tells
// its stream that the client left, since the last connection closed; a
// request that comes first cancels that.
func TestAStreamWhoseClientLeftIsTold(t *testing.T) {
	p, sl, s, c := listedOnAConn(t)
	if sl.leftGen != 1 || sl.left {
		t.Fatalf("a check began before the connection closed (gen %d, left %v)", sl.leftGen, sl.left)
	}
	closedAt := time.Now()
	p.opts.Now = func() time.Time { return closedAt }
	p.connState(c, http.StateClosed)
	gen := sl.leftGen
	if gen != 2 {
		t.Fatalf("no check began when the client's last connection closed (gen %d)", gen)
	}
	p.clientLeft(sl, gen, closedAt) // what the check's timer does
	p.Wait()
	st := s.Stats()
	// Its LIST was complete and it asked for no watch: Listed.
	if !st.ClientLeft.Equal(closedAt) || st.ClientLeftState != reflector.StateListed || st.State != reflector.StateListed {
		t.Errorf("client left at %v in %s (state %s), want at %v in Listed", st.ClientLeft, st.ClientLeftState, st.State, closedAt)
	}

	// The client back before a check ends: that check does nothing.
	c2 := newConn(t)
	back, _, mine := p.assign(call{verb: reflector.VerbWatch, gvr: configMapsGVR, opts: reflector.RequestOptions{ResourceVersion: "5"}}, onConn(p, c2))
	if back != sl {
		t.Fatal("the client that resumed got another stream")
	}
	served(p, sl, mine)
	p.connState(c2, http.StateClosed)
	stale := sl.leftGen
	if _, _, _ = p.assign(call{verb: reflector.VerbWatch, gvr: configMapsGVR, opts: reflector.RequestOptions{ResourceVersion: "5"}}, onConn(p, newConn(t))); sl.leftGen == stale {
		t.Fatal("a request did not cancel the check")
	}
	sl.busy = false
	sl.pending--
	p.clientLeft(sl, stale, closedAt)
	if sl.left {
		t.Error("a check canceled by a request still said the client left")
	}
}

// A stream whose client left and stayed away is forgotten: its stream
// drops what the client held, and a request of that client afterwards
// (it resumes) is a new stream's. A request before then cancels it.
func TestAStreamWhoseClientStayedAwayIsForgotten(t *testing.T) {
	p, sl, s, c := listedOnAConn(t, &store.Object{Name: "a", UID: "ua", ResourceVersion: "5"})
	p.connState(c, http.StateClosed)
	resume := call{verb: reflector.VerbWatch, gvr: configMapsGVR, opts: reflector.RequestOptions{ResourceVersion: "5"}}

	// Back before it is forgotten: the forgetting its leaving began does nothing.
	gen := sl.leftGen
	p.clientLeft(sl, gen, time.Now())
	c2 := newConn(t)
	if back, _, mine := p.assign(resume, onConn(p, c2)); back != sl {
		t.Fatal("the client that resumed got another stream")
	} else {
		served(p, back, mine)
	}
	p.forget(sl, gen)
	p.Wait()
	if st := s.Stats(); st.Forgotten || s.Store().Len() != 1 {
		t.Fatalf("a client that came back was forgotten (%v, %d objects held)", st.Forgotten, s.Store().Len())
	}

	p.connState(c2, http.StateClosed)
	gen = sl.leftGen
	p.clientLeft(sl, gen, time.Now())
	p.inj = newInjector(mustSpecs(t, "gone"), fault.Target{}, 1, time.Now()) // with --fault, the injector keeps the slot's last request
	defer p.inj.close()
	p.inj.resumes(sl, resume)
	p.forget(sl, gen) // what the timer does, ForgetAfter on
	p.Wait()
	if n := len(p.inj.watched); n != 0 {
		t.Errorf("the fault injector still keeps %d forgotten slots", n)
	}
	if st := s.Stats(); !st.Forgotten || st.ForgottenObjects != 1 || s.Store().Len() != 0 {
		t.Errorf("forgotten %v, %d objects forgotten, %d held; want 1 forgotten, none held", st.Forgotten, st.ForgottenObjects, s.Store().Len())
	}
	if again, _, _ := p.assign(resume, onConn(p, newConn(t))); again == sl {
		t.Error("a client that came back after it was forgotten joined its old stream")
	}
}

// A reflector answered 410 relists, from "" (ours, or client-go's once its
// resourceVersion is refused again), and may drop its connection on the
// way (it closes the watch's body): its relist on a new connection is its
// own, not a new client's.
func TestARelistFromNothingAfterA410StaysOnItsStream(t *testing.T) {
	p := newAssignProxy()
	c1 := newConn(t)
	sl, _, mine := p.assign(call{verb: reflector.VerbWatch, gvr: configMapsGVR, opts: reflector.RequestOptions{ResourceVersion: "120"}}, onConn(p, c1))
	p.release(sl)
	close(mine)
	p.processed(sl, reflector.StateRelisting, "") // answered 410
	p.connState(c1, http.StateClosed)
	if again, _, _ := p.assign(call{verb: reflector.VerbList, gvr: configMapsGVR}, onConn(p, newConn(t))); again != sl {
		t.Error("the relist from \"\" after a 410, on a new connection, opened another stream")
	}
}

// On a loaded machine the watch a 410 ended may be processed (its stream
// left Relisting) well after the relist from "" came, past sameClientGrace:
// the relist waits for it, and stays on its stream.
func TestARelistThatComesBeforeIts410IsProcessedWaitsForIt(t *testing.T) {
	p := newAssignProxy()
	c1 := newConn(t)
	list, _, mine := p.assign(call{verb: reflector.VerbList, gvr: configMapsGVR, opts: reflector.RequestOptions{ResourceVersion: "0"}}, onConn(p, c1))
	served(p, list, mine) // a complete list: its client is synced
	sl, _, mine := p.assign(call{verb: reflector.VerbWatch, gvr: configMapsGVR, opts: reflector.RequestOptions{ResourceVersion: "120"}}, onConn(p, c1))
	if sl != list {
		t.Fatal("the watch from the list's resourceVersion opened another stream")
	}
	p.release(sl) // the watch's body is read whole; its processing lags
	close(mine)
	go func() {
		time.Sleep(3 * sameClientGrace)
		p.processed(sl, reflector.StateRelisting, "") // answered 410
	}()
	if again, _, _ := p.assign(call{verb: reflector.VerbList, gvr: configMapsGVR}, onConn(p, newConn(t))); again != sl {
		t.Error("the relist from \"\" that came before its 410 was processed opened another stream")
	}
}

// replayStreams replays an observed trace as a session does (a trace.Replay
// feeding an observed.Feed) and returns its streams.
func replayStreams(t *testing.T, ctx context.Context, rd *trace.Reader) []*observed.Stream {
	t.Helper()
	rp := trace.NewReplay(rd, 0)
	feed, err := observed.NewFeed(rd, rp.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	rp.Feed(feed.Line)
	defer feed.Close()
	if err := rp.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return feed.Streams()
}

// kubectl get runs in parallel over more than a page: each first page is a
// process's own stream, and each next page goes to the stream whose last
// page gave its continue token, on whatever connection (they were merged:
// a second process's first page counted as a relist of the first's list,
// its pages put on a stream whose client had left).
func TestParallelPagedListsGoToTheStreamWhoseTokenTheySendBack(t *testing.T) {
	first := call{verb: reflector.VerbList, gvr: configMapsGVR, opts: reflector.RequestOptions{Limit: 500}}
	next := func(token string) call {
		return call{verb: reflector.VerbList, gvr: configMapsGVR, opts: reflector.RequestOptions{Limit: 500, Continue: token}}
	}
	p := newAssignProxy()
	ca, cb := newConn(t), newConn(t)
	a, _, mine := p.assign(first, onConn(p, ca))
	p.release(a)
	close(mine)
	p.paged(a, "token-a")
	p.processed(a, reflector.StateListing, "")
	b, _, mineB := p.assign(first, onConn(p, cb))
	if b == a {
		t.Fatal("the second process's first page joined the first process's list")
	}
	p.release(b)
	close(mineB)
	p.paged(b, "token-b")
	p.processed(b, reflector.StateListing, "")
	// Each next page on a connection of its own (neither the other's, nor
	// one its stream used): the token says whose it is.
	if got, _, _ := p.assign(next("token-b"), onConn(p, newConn(t))); got != b {
		t.Error("the second process's next page went to another stream")
	}
	if got, _, _ := p.assign(next("token-a"), onConn(p, newConn(t))); got != a {
		t.Error("the first process's next page went to another stream")
	}

	// A next page that comes before the page that gave its token is
	// processed waits for it.
	p = newAssignProxy()
	a, _, mine = p.assign(first, onConn(p, newConn(t)))
	p.release(a)
	close(mine)
	go func() {
		time.Sleep(3 * sameClientGrace)
		p.paged(a, "token-a")
		p.processed(a, reflector.StateListing, "")
	}()
	if got, _, _ := p.assign(next("token-a"), onConn(p, newConn(t))); got != a {
		t.Error("a next page that came before its token was known went to another stream")
	}
}

// Two informers of one resource in one program share its connections:
// after a 410 that ended both watches, each informer's next request may go
// out on a connection the other's used. The request resumes from its own
// informer's resourceVersion: it goes to the stream at it (the two
// informers swapped streams, and one said its client had left).
func TestAResumeGoesToTheStreamAtItsResourceVersionWhateverItsConnection(t *testing.T) {
	p := newAssignProxy()
	ca, cb := newConn(t), newConn(t)
	watch := func(rv string) call {
		return call{verb: reflector.VerbWatch, gvr: configMapsGVR, opts: reflector.RequestOptions{ResourceVersion: rv}}
	}
	a, _, mine := p.assign(watch("900"), onConn(p, ca))
	b, _, mineB := p.assign(watch("900"), onConn(p, cb)) // the second informer, while the first's watch is open
	if a == b {
		t.Fatal("two informers' watches open at once were given one stream")
	}
	p.release(a)
	close(mine)
	p.processed(a, reflector.StateRelisting, "917")
	p.release(b)
	close(mineB)
	p.processed(b, reflector.StateRelisting, "926")
	// Each relists from its own resourceVersion on the other's connection.
	relist := func(rv string) call {
		return call{verb: reflector.VerbWatch, gvr: configMapsGVR, opts: reflector.RequestOptions{ResourceVersion: rv, SendInitialEvents: true}}
	}
	if got, _, _ := p.assign(relist("926"), onConn(p, ca)); got != b {
		t.Error("the second informer's relist from 926, on the first's connection, went to the first's stream (at 917)")
	}
	if got, _, _ := p.assign(relist("917"), onConn(p, cb)); got != a {
		t.Error("the first informer's relist from 917, on the second's connection, went to the second's stream")
	}
}

// A request that comes once the run is ending (Stopping; Close waits for
// the requests' jobs, then closes the streams) is forwarded unobserved: it
// adds no job while Close may be waiting, and makes no stream Close would
// leave open.
func TestARequestThatComesOnceTheRunIsEndingIsForwardedUnobserved(t *testing.T) {
	p := newAssignProxy()
	p.mapper = resettable{meta.NewDefaultRESTMapper(nil)}
	p.Stopping()
	forwarded := 0
	tr := &observingTransport{p: p, rt: rtFunc(func(r *http.Request) (*http.Response, error) {
		forwarded++
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}`)),
			ContentLength: -1, Request: r}, nil
	})}
	resp, err := tr.RoundTrip(httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps", nil))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	p.Wait()
	if forwarded != 1 || len(p.slots) != 0 || len(p.Streams()) != 0 {
		t.Errorf("forwarded %d times, %d slots, %d streams; want it forwarded once, and nothing observed", forwarded, len(p.slots), len(p.Streams()))
	}
}
