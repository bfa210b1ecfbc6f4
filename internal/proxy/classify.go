package proxy

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// call is a request the proxy observes: a LIST or WATCH of a collection.
type call struct {
	verb      reflector.Verb
	gvr       schema.GroupVersionResource
	namespace string // "" for all namespaces or a cluster-scoped resource
	inNS      bool   // the path named a namespace
	opts      reflector.RequestOptions
	label     string
	field     string
}

// classify says whether req is a LIST or a WATCH of a collection, and of
// what: GET /api/V[/namespaces/NS]/RES, GET /apis/G/V[/namespaces/NS]/RES
// (WATCH with watch=true or 1), and the old /watch/ paths. Anything else
// (one object, a subresource, a write, discovery) is not observed.
func classify(req *http.Request) (call, bool) {
	var c call
	if req.Method != http.MethodGet {
		return c, false
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		c.gvr.Version = parts[1]
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		c.gvr.Group, c.gvr.Version = parts[1], parts[2]
		parts = parts[3:]
	default:
		return c, false
	}
	c.verb = reflector.VerbList
	if len(parts) > 0 && parts[0] == "watch" {
		c.verb = reflector.VerbWatch
		parts = parts[1:]
	}
	switch {
	case len(parts) == 1:
		c.gvr.Resource = parts[0]
	case len(parts) == 3 && parts[0] == "namespaces":
		c.namespace, c.inNS = parts[1], true
		c.gvr.Resource = parts[2]
	default:
		return c, false
	}
	for _, p := range []string{c.gvr.Group, c.gvr.Version, c.gvr.Resource, c.namespace} {
		if strings.ContainsAny(p, ":") {
			return c, false
		}
	}
	if c.gvr.Resource == "" || c.gvr.Version == "" || (c.inNS && c.namespace == "") {
		return c, false
	}
	q := req.URL.Query()
	if isTrue(q.Get("watch")) {
		c.verb = reflector.VerbWatch
	}
	c.label, c.field = q.Get("labelSelector"), q.Get("fieldSelector")
	c.opts = optionsOf(q)
	return c, true
}

func isTrue(v string) bool {
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// optionsOf reads a request's list and watch options as sent.
func optionsOf(q url.Values) reflector.RequestOptions {
	o := reflector.RequestOptions{
		ResourceVersion:      q.Get("resourceVersion"),
		ResourceVersionMatch: q.Get("resourceVersionMatch"),
		Continue:             q.Get("continue"),
		SendInitialEvents:    isTrue(q.Get("sendInitialEvents")),
		AllowWatchBookmarks:  isTrue(q.Get("allowWatchBookmarks")),
	}
	o.Limit, _ = strconv.ParseInt(q.Get("limit"), 10, 64)
	o.TimeoutSeconds, _ = strconv.ParseInt(q.Get("timeoutSeconds"), 10, 64)
	return o
}
