package cost

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// Encodings a request asks for.
const (
	acceptJSON     = "application/json"
	acceptProtobuf = wire.ContentTypeProtobuf + ", application/json"
)

// Request is one request made of the server, as the command reports it.
type Request struct {
	// URL is the path and query asked for.
	URL string `json:"url"`
	// Asked is what the request asked for: "json", "protobuf" or "metadata (protobuf)".
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
	return fmt.Sprintf("GET %s (%s) -> %d, %d items, %s in %.3fs", r.URL, r.Asked, r.Status, r.Items, formatBytes(r.Bytes), r.Seconds)
}

// client makes the command's requests and keeps their log.
type client struct {
	http *http.Client
	base *url.URL
	mu   sync.Mutex
	log  []Request
}

func newClient(cfg *rest.Config) (*client, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Minute
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the HTTP client: %w", err)
	}
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("parsing the server URL: %w", err)
	}
	return &client{http: hc, base: base}, nil
}

func (c *client) requests() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Request(nil), c.log...)
}

// listQuery is one LIST's options.
type listQuery struct {
	limit                int64
	cont                 string
	resourceVersion      string
	resourceVersionMatch string
}

// page is one LIST answer: its body, split into its items (for their count,
// sizes and the continue token), and how long it took.
type page struct {
	body        []byte
	contentType string
	parts       *listParts
	took        time.Duration
}

// list makes one LIST of t with q, asking accept, and decodes the answer.
func (c *client) list(ctx context.Context, t reflector.Target, q listQuery, accept, asked string) (*page, error) {
	gvr := t.Resource.GVR
	p := path.Join("/apis", gvr.Group, gvr.Version)
	if gvr.Group == "" {
		p = path.Join("/api", gvr.Version)
	}
	if t.Resource.Namespaced && t.Namespace != "" {
		p = path.Join(p, "namespaces", t.Namespace)
	}
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	if q.limit > 0 {
		v.Set("limit", strconv.FormatInt(q.limit, 10))
	}
	set("continue", q.cont)
	set("resourceVersion", q.resourceVersion)
	set("resourceVersionMatch", q.resourceVersionMatch)
	set("labelSelector", t.LabelSelector)
	set("fieldSelector", t.FieldSelector)
	u := *c.base
	u.Path = path.Join(c.base.Path, p, gvr.Resource)
	u.RawQuery = v.Encode()
	shown := u.Path
	if len(v) > 0 {
		// The continue token is long and says nothing to a person.
		if q.cont != "" {
			v.Set("continue", "…")
		}
		shown += "?" + v.Encode()
		shown = strings.ReplaceAll(shown, "%E2%80%A6", "…")
	}
	rec := Request{URL: shown, Asked: asked}
	defer func() {
		c.mu.Lock()
		c.log = append(c.log, rec)
		c.mu.Unlock()
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("building the request: %w", err)
	}
	req.Header.Set("Accept", accept)
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
