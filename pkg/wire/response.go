package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire/request"
)

// SupportedResponse reports whether DecodeListResponse and
// DecodeWatchResponse read a body of this Content-Type: JSON or protobuf
// (CBOR, YAML and the rest are not decoded).
func SupportedResponse(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == request.ContentTypeProtobuf || mt == "application/json")
}

// DecodeListResponse decodes a LIST response body (JSON or protobuf, by its
// Content-Type) as it is read, as the live Source does. With keepRaw each
// item's Raw holds its JSON (for protobuf, the JSON of what was decoded);
// without it Raw is nil and nothing of the page is held but the compact
// objects. The page's Bytes is the size of the body read from r.
func DecodeListResponse(r io.Reader, contentType string, keepRaw bool) (*reflector.Page, error) {
	if !SupportedResponse(contentType) {
		return nil, fmt.Errorf("decoding list: unsupported Content-Type %q", contentType)
	}
	return DecodeListBody(r, contentType, false, keepRaw)
}

// DecodeListBody is DecodeListResponse for the live Source: it reads a
// body of any Content-Type but protobuf as JSON, and with keepBody keeps
// each object's JSON as its Body (full-object mode, in JSON only).
func DecodeListBody(r io.Reader, contentType string, keepBody, keepRaw bool) (*reflector.Page, error) {
	body := &CountingReader{R: r}
	var page *reflector.Page
	var err error
	if IsProtobuf(contentType) {
		page, err = decodeProtoList(body, keepRaw)
	} else {
		page, err = decodeListFrom(body, keepBody, keepRaw)
	}
	if err != nil {
		return nil, err
	}
	page.Bytes = body.N
	return page, nil
}

// WatchOptions are what a watch body's decoder keeps of each event, and
// how it dates them.
type WatchOptions struct {
	// KeepBody keeps each object's JSON as its Body (full-object mode, in
	// JSON only); KeepRaw keeps it as the event's Item.Raw (for protobuf,
	// the JSON of what was decoded).
	KeepBody, KeepRaw bool
	// Clock is the server's clock (see ServerClockOf) and Now the time of
	// an event's arrival: each event's Delivery.Lag is the time at Now
	// minus its object's write time, on the server's clock. A nil Now
	// leaves Lag unset.
	Clock ServerClock
	Now   func() time.Time
	// InitialEvents says the watch asked for sendInitialEvents: its events
	// up to the initial-events-end bookmark are a list, whose objects'
	// delivery nothing estimates: they carry no Delivery, and their
	// managedFields are skipped unread (the passive estimate costs nothing
	// on the initial list).
	InitialEvents bool
	// Selected says the watch has a label or field selector: an ADDED
	// event may be an object that changed into it, not one just created,
	// so one whose newest time is its creation has no estimate (the write
	// that moved it left no time of its own, and the creation may be days old).
	Selected bool
}

// DecodeWatchResponse reads a watch response body (JSON or protobuf framing,
// by its Content-Type) as the live Source does: Next returns each event as
// soon as its bytes are in, and a *[reflector.RequestEnd] when the body ends
// ([reflector.EndClosed] between events, [reflector.EndError] for a read or
// decoding error). Close closes body.
func DecodeWatchResponse(body io.ReadCloser, contentType string, o WatchOptions) (reflector.Stream, error) {
	if !SupportedResponse(contentType) {
		_ = body.Close()
		return nil, fmt.Errorf("decoding watch: unsupported Content-Type %q", contentType)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return DecodeWatchBody(ctx, cancel, body, contentType, o), nil
}

// DecodeWatchBody is DecodeWatchResponse for the live Source: it reads a
// body of any Content-Type but protobuf as JSON, and ends as canceled
// ([reflector.EndOf] ctx's error) once ctx, its request's context, ends.
// Close calls cancel, then closes body.
func DecodeWatchBody(ctx context.Context, cancel context.CancelFunc, body io.ReadCloser, contentType string, o WatchOptions) reflector.Stream {
	st := &watchStream{ctx: ctx, cancel: cancel, body: body, o: o}
	if IsProtobuf(contentType) {
		st.proto = &protoStream{}
		st.proto.body.reset(body)
	} else {
		st.dec.sc.ResetReader(body, MaxObjectBytes)
	}
	st.setInitial(o.InitialEvents)
	return st
}

// ServerClock is the server's clock as a response's Date header tells it:
// Offset is the server's time minus ours. The zero ServerClock (no Date)
// takes the two clocks as equal.
type ServerClock struct{ Offset time.Duration }

// ServerClockOf reads h's Date header (to the second) for a request sent
// at sent. The Date is compared with the request's sending, not the
// response's arrival: the server stamps it on receiving the request, so a
// slow path from the server to the client, the delay this measures, does
// not hide itself in the offset. The Date is truncated to the second and so
// are the write times it is compared with: the two truncations cancel out
// on average, and leave the estimate within about ±2 s.
func ServerClockOf(h http.Header, sent time.Time) ServerClock {
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil || sent.IsZero() {
		return ServerClock{}
	}
	return ServerClock{Offset: date.Sub(sent)}
}

// Lag is how late something that arrived at arrived (our clock) was, when
// it was written at written (the server's clock), to the millisecond (as a
// trace records it, so a replay counts it in the same bucket).
func (c ServerClock) Lag(arrived, written time.Time) time.Duration {
	return arrived.Add(c.Offset).Sub(written).Round(time.Millisecond)
}

// ResponseStatus is the API Status of an error response (code is its HTTP
// status): its body when the body is a Status in JSON or protobuf, otherwise
// the Status client-go makes for the code.
func ResponseStatus(code int, body []byte, verb reflector.Verb, gr schema.GroupResource) *metav1.Status {
	st, err := decodeProtoStatus(body)
	if err != nil {
		st = &metav1.Status{}
		if json.Unmarshal(body, st) != nil || st.Kind != "Status" {
			se := apierrors.NewGenericServerResponse(code, string(verb), gr, "", string(body), 0, false)
			return &se.ErrStatus
		}
	}
	if st.Code == 0 {
		st.Code = int32(code)
	}
	return st
}
