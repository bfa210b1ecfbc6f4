// Package request builds the requests made of a collection of the API
// server: a LIST or a WATCH, its query and its Accept header. The live
// Source (package live), the cost command (internal/cost) and the
// benchmarks' floor (hack/bench/rawget) build theirs here, so they ask the
// same. It imports the standard library alone: the floor links nothing else.
package request

import (
	"context"
	"net/http"
	"net/url"
	"path"
	"strconv"
)

// ContentTypeProtobuf is the API server's protobuf media type.
const ContentTypeProtobuf = "application/vnd.kubernetes.protobuf"

// Options are a LIST's or a WATCH's parameters, field for field those of
// reflector.RequestOptions (which converts to Options).
type Options struct {
	ResourceVersion      string
	ResourceVersionMatch string
	Limit                int64
	Continue             string
	SendInitialEvents    bool
	AllowWatchBookmarks  bool
	TimeoutSeconds       int64
}

// Request is one LIST or WATCH of a collection.
type Request struct {
	Watch bool
	Options
	LabelSelector, FieldSelector string
	// Protobuf asks for protobuf, JSON the server's other choice; otherwise
	// JSON alone.
	Protobuf bool
	// MetadataOnly asks for PartialObjectMetadata (a list of them for a
	// LIST), so only metadata crosses the wire.
	MetadataOnly bool
}

// Query is r's URL query: the parameters that are set, and no others.
func (r Request) Query() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	setInt := func(k string, v int64) {
		if v > 0 {
			q.Set(k, strconv.FormatInt(v, 10))
		}
	}
	setBool := func(k string, v bool) {
		if v {
			q.Set(k, "true")
		}
	}
	setBool("watch", r.Watch)
	set("resourceVersion", r.ResourceVersion)
	set("resourceVersionMatch", r.ResourceVersionMatch)
	set("continue", r.Continue)
	set("labelSelector", r.LabelSelector)
	set("fieldSelector", r.FieldSelector)
	setInt("limit", r.Limit)
	setBool("sendInitialEvents", r.SendInitialEvents)
	setBool("allowWatchBookmarks", r.AllowWatchBookmarks)
	setInt("timeoutSeconds", r.TimeoutSeconds)
	return q
}

// Accept is r's Accept header: the one client-go's typed (protobuf) or
// dynamic (JSON) and metadata clients send.
func (r Request) Accept() string {
	if !r.MetadataOnly {
		if r.Protobuf {
			return ContentTypeProtobuf + ", application/json"
		}
		return "application/json"
	}
	as := ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	if r.Watch {
		as = ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	}
	if r.Protobuf {
		return ContentTypeProtobuf + as + ",application/json" + as + ",application/json"
	}
	return "application/json" + as + ",application/json"
}

// Get is the GET of r at collection, the collection's URL (see
// CollectionURL): collection with r's query and Accept header. Its error is
// http.NewRequestWithContext's.
func (r Request) Get(ctx context.Context, collection *url.URL) (*http.Request, error) {
	u := *collection
	u.RawQuery = r.Query().Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", r.Accept())
	return req, nil
}

// CollectionURL is the URL of a collection on the server at base:
// /api/v1[/namespaces/NS]/RESOURCE for the core group ("" group),
// /apis/G/V[/namespaces/NS]/RESOURCE for the others, under base's path.
// A namespace of "" is all namespaces (or a cluster-scoped resource).
func CollectionURL(base *url.URL, group, version, namespace, resource string) *url.URL {
	p := path.Join("/apis", group, version)
	if group == "" {
		p = path.Join("/api", version)
	}
	if namespace != "" {
		p = path.Join(p, "namespaces", namespace)
	}
	u := *base
	u.Path = path.Join(base.Path, p, resource)
	return &u
}
