package cost

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire/request"
)

// Request is one request made of the server, as the command reports it.
type Request struct {
	// URL is the path and query asked for.
	URL string `json:"url"`
	// Asked is what the request asked for: "json" or "protobuf".
	Asked string `json:"asked"`
	// Status is the HTTP status of the answer (0 when none came).
	Status int `json:"status"`
	// Items is how many objects the answer held; Bytes its body's length.
	Items int   `json:"items"`
	Bytes int64 `json:"bytes"`
	// Seconds is the time from sending the request to the end of its body.
	Seconds float64 `json:"seconds"`
}

// String is the request as the text output prints it.
func (r Request) String() string {
	return fmt.Sprintf("GET %s (%s) -> %d, %s, %s in %.3fs", r.URL, r.Asked, r.Status, format.PluralUngrouped(r.Items, "item"), format.Bytes(r.Bytes), r.Seconds)
}

// client makes the command's requests and keeps their log. Measure uses
// it on its own goroutine alone, one request after the other.
type client struct {
	http *http.Client
	base *url.URL
	log  []Request
}

func newClient(cfg *rest.Config) (*client, error) {
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	hc, base, err := live.HTTPClient(cfg, timeout)
	if err != nil {
		return nil, err
	}
	return &client{http: hc, base: base}, nil
}

// page is one LIST answer: its body, split into its items (for their count,
// sizes and the continue token), and how long it took.
type page struct {
	body        []byte
	contentType string
	parts       *listParts
	took        time.Duration
}

// list makes one LIST of t with o, in protobuf (JSON the server's other
// choice) or in JSON, and decodes the answer.
func (c *client) list(ctx context.Context, t reflector.Target, o request.Options, protobuf bool) (*page, error) {
	gvr := t.Resource.GVR
	r := request.Request{Options: o, LabelSelector: t.LabelSelector, FieldSelector: t.FieldSelector, Protobuf: protobuf}
	u := live.CollectionURL(c.base, t)
	shown := u.Path
	if v := r.Query(); len(v) > 0 {
		// The continue token is long and says nothing to a person.
		if o.Continue != "" {
			v.Set("continue", "…")
		}
		shown += "?" + v.Encode()
		shown = strings.ReplaceAll(shown, "%E2%80%A6", "…")
	}
	rec := Request{URL: shown, Asked: "json"}
	if protobuf {
		rec.Asked = "protobuf"
	}
	defer func() { c.log = append(c.log, rec) }()
	req, err := r.Get(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("building the request: %w", err)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	rec.Status, rec.Bytes, rec.Seconds = resp.StatusCode, int64(len(body)), took.Seconds()
	if err != nil {
		return nil, fmt.Errorf("reading the list of %s: %w", gvr.GroupResource(), err)
	}
	if resp.StatusCode != http.StatusOK {
		st := wire.ResponseStatus(resp.StatusCode, body, reflector.VerbList, gvr.GroupResource())
		return nil, apierrors.FromObject(st)
	}
	ct := resp.Header.Get("Content-Type")
	parts, err := splitList(body, ct)
	if err != nil {
		return nil, fmt.Errorf("decoding the list of %s: %w", gvr.GroupResource(), err)
	}
	rec.Items = len(parts.items)
	return &page{body: body, contentType: ct, parts: parts, took: took}, nil
}
