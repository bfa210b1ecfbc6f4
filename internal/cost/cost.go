// Package cost measures what an informer of a resource would cost before one
// is run: it counts the objects cheaply, samples some of them in JSON and
// protobuf, builds the sample in each form an informer can hold (typed,
// dynamic, metadata, typed without managedFields, this tool's own store) in a
// real client-go cache.Indexer, reads the heap after GC before and after, and
// extrapolates to the whole collection. It is "kubectl watchcache cost".
package cost

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// Limits of the sample.
const (
	DefaultSample = 500
	MaxSample     = 5000
	// pageSize is the most objects one request asks for, as kubectl's chunks.
	pageSize = 500
)

// Needs a user can state: what the informer's handlers read.
const (
	// NeedFull: the handlers read the spec or status (a typed or dynamic informer).
	NeedFull = "full"
	// NeedMetadata: the handlers read names, labels, owners only (a metadata informer serves).
	NeedMetadata = "metadata"
)

// Forms an informer can hold objects in, by their JSON names.
const (
	FormTyped                  = "typed"
	FormDynamic                = "dynamic"
	FormMetadata               = "metadata"
	FormTypedNoManagedFields   = "typedNoManagedFields"
	FormDynamicNoManagedFields = "dynamicNoManagedFields"
	FormWatchcache             = "watchcache"
)

// Options say what to measure.
type Options struct {
	Rest      *rest.Config
	Resources []reflector.Resource
	// Namespace limits namespaced resources to one namespace; "" is all.
	Namespace     string
	LabelSelector string
	FieldSelector string
	// Sample is how many objects to sample (1 to MaxSample).
	Sample int
	// Exact counts by listing every object once (metadata only, protobuf).
	Exact bool
	// Need is NeedFull or NeedMetadata.
	Need string
}

// Report is the contract "kubectl watchcache cost -o json" prints.
type Report struct {
	Resources []Resource `json:"resources"`
	// Totals add the resources up (with more than one).
	Totals *Totals `json:"totals,omitempty"`
	// Requests are what was asked of the server, in order.
	Requests []Request `json:"requests"`
}

// Resource is what an informer of one resource would cost. All sizes are in bytes.
type Resource struct {
	// Resource is resource.version[.group], e.g. configmaps.v1, deployments.v1.apps.
	Resource string `json:"resource"`
	// Namespace is the namespace counted ("" for all, or a cluster-scoped resource).
	Namespace string `json:"namespace,omitempty"`
	Objects   int64  `json:"objects"`
	// Counted says how Objects was found: remainingItemCount (a limit=1 LIST),
	// pages (paged through, metadata only: the server gives no count with a
	// selector) or exact (--exact).
	Counted string `json:"counted"`
	Sampled int    `json:"sampled"`
	// BytesPerObject and ListBytes are per wire; protobuf is absent where the
	// server does not speak it for this resource's objects.
	BytesPerObject Wires `json:"bytesPerObject"`
	ListBytes      Wires `json:"listBytes"`
	// ListSeconds is the initial list's time at the rate the sample was listed.
	ListSeconds WireSeconds `json:"listSeconds"`
	Heap        Heaps       `json:"heap"`
	// Cheapest is the cheapest form that serves the stated need.
	Cheapest *Choice `json:"cheapest,omitempty"`
}

// Wires are a size on each wire.
type Wires struct {
	JSON     int64  `json:"json"`
	Protobuf *int64 `json:"protobuf,omitempty"`
}

// WireSeconds are a time on each wire.
type WireSeconds struct {
	JSON     float64  `json:"json"`
	Protobuf *float64 `json:"protobuf,omitempty"`
}

// Heaps are the heap of each form; a form that does not apply (typed for a
// custom resource) is nil.
type Heaps struct {
	Typed                  *Heap `json:"typed,omitempty"`
	Dynamic                *Heap `json:"dynamic,omitempty"`
	Metadata               *Heap `json:"metadata,omitempty"`
	TypedNoManagedFields   *Heap `json:"typedNoManagedFields,omitempty"`
	DynamicNoManagedFields *Heap `json:"dynamicNoManagedFields,omitempty"`
	Watchcache             *Heap `json:"watchcache,omitempty"`
}

// Heap is one form's cost.
type Heap struct {
	// PerObject is the measured heap of one object in the form, in its indexer.
	PerObject int64 `json:"perObject"`
	// Total is the steady cache: PerObject × objects.
	Total int64 `json:"total"`
	// PeakList is the peak during an initial sync by paged LIST: the store and
	// the gathered list of every page (see docs/design.md, "Cost").
	PeakList int64 `json:"peakList"`
	// PeakStream is the peak during a streaming list: the objects once.
	PeakStream int64 `json:"peakStream"`
}

// Choice is the cheapest form that serves a need, against the informer one
// would otherwise write (typed for a built-in kind, dynamic for the rest).
type Choice struct {
	Need          string  `json:"need"`
	Form          string  `json:"form"`
	Total         int64   `json:"total"`
	Against       string  `json:"against"`
	Saving        int64   `json:"saving"`
	SavingPercent float64 `json:"savingPercent"`
}

// Totals add the resources up. A form is there when every resource has it.
type Totals struct {
	Objects   int64 `json:"objects"`
	ListBytes Wires `json:"listBytes"`
	Heap      Heaps `json:"heap"`
}

// forms lists h's forms by name, in the report's order.
func (h *Heaps) forms() []struct {
	name string
	p    **Heap
} {
	return []struct {
		name string
		p    **Heap
	}{
		{FormTyped, &h.Typed}, {FormDynamic, &h.Dynamic}, {FormMetadata, &h.Metadata},
		{FormTypedNoManagedFields, &h.TypedNoManagedFields}, {FormDynamicNoManagedFields, &h.DynamicNoManagedFields},
		{FormWatchcache, &h.Watchcache},
	}
}

// Get returns the form called name, or nil.
func (h *Heaps) Get(name string) *Heap {
	for _, f := range h.forms() {
		if f.name == name {
			return *f.p
		}
	}
	return nil
}

// Name is res as the report names it: resource.version[.group].
func Name(res reflector.Resource) string {
	s := res.GVR.Resource + "." + res.GVR.Version
	if res.GVR.Group != "" {
		s += "." + res.GVR.Group
	}
	return s
}

// Measure measures every resource of o, one after the other.
func Measure(ctx context.Context, o Options) (*Report, error) {
	if o.Sample < 1 || o.Sample > MaxSample {
		return nil, fmt.Errorf("sample %d: want 1 to %d", o.Sample, MaxSample)
	}
	c, err := newClient(o.Rest)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	for _, res := range o.Resources {
		t := reflector.Target{Resource: res, LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector}
		if res.Namespaced {
			t.Namespace = o.Namespace
		}
		r, err := measureResource(ctx, c, t, o)
		rep.Requests = c.requests()
		if err != nil {
			return rep, err
		}
		rep.Resources = append(rep.Resources, r)
	}
	if len(rep.Resources) > 1 {
		rep.Totals = totals(rep.Resources)
	}
	return rep, nil
}

func measureResource(ctx context.Context, c *client, t reflector.Target, o Options) (Resource, error) {
	r := Resource{Resource: Name(t.Resource), Namespace: t.Namespace}
	var err error
	if r.Objects, r.Counted, err = count(ctx, c, t, o.Exact); err != nil {
		return r, err
	}
	s, err := takeSample(ctx, c, t, o.Sample)
	if err != nil {
		return r, err
	}
	r.Sampled = s.items(s.json)
	r.Objects = max(r.Objects, int64(r.Sampled))
	bpo, rate := s.wire(s.json)
	r.BytesPerObject.JSON = round(bpo)
	r.ListBytes.JSON = round(bpo * float64(r.Objects))
	r.ListSeconds.JSON = seconds(r.Objects, rate)
	if s.proto != nil {
		bpo, rate := s.wire(s.proto)
		r.BytesPerObject.Protobuf = ptr(round(bpo))
		r.ListBytes.Protobuf = ptr(round(bpo * float64(r.Objects)))
		r.ListSeconds.Protobuf = ptr(seconds(r.Objects, rate))
	}
	per, err := measureForms(s, wire.BuiltIn(t.Resource))
	if err != nil {
		return r, fmt.Errorf("measuring the sample of %s: %w", r.Resource, err)
	}
	for _, f := range r.Heap.forms() {
		p, ok := per[f.name]
		if !ok {
			continue
		}
		*f.p = extrapolate(p, r.Objects)
	}
	r.Cheapest = cheapest(&r.Heap, o.Need)
	return r, nil
}

// extrapolate is a form's cost for n objects from its measured bytes per object.
func extrapolate(perObject float64, n int64) *Heap {
	total := round(perObject * float64(n))
	return &Heap{PerObject: round(perObject), Total: total, PeakList: 2 * total, PeakStream: total}
}

// cheapest is the cheapest informer form that serves need, against the typed
// informer (the dynamic one for a resource without typed objects).
func cheapest(h *Heaps, need string) *Choice {
	against := FormTyped
	if h.Typed == nil {
		against = FormDynamic
	}
	base := h.Get(against)
	if base == nil {
		return nil
	}
	candidates := []string{FormTyped, FormTypedNoManagedFields, FormDynamic, FormDynamicNoManagedFields}
	if need == NeedMetadata {
		candidates = append(candidates, FormMetadata)
	}
	best := ""
	for _, name := range candidates {
		f := h.Get(name)
		if f == nil {
			continue
		}
		if best == "" || f.Total < h.Get(best).Total || (f.Total == h.Get(best).Total && f.PerObject < h.Get(best).PerObject) {
			best = name
		}
	}
	b := h.Get(best)
	ch := &Choice{Need: need, Form: best, Total: b.Total, Against: against, Saving: base.Total - b.Total}
	if base.Total > 0 {
		ch.SavingPercent = math.Round(1000*float64(ch.Saving)/float64(base.Total)) / 10
	}
	return ch
}

func totals(rs []Resource) *Totals {
	t := &Totals{}
	allProto := true
	var proto int64
	for _, r := range rs {
		t.Objects += r.Objects
		t.ListBytes.JSON += r.ListBytes.JSON
		if r.ListBytes.Protobuf == nil {
			allProto = false
		} else {
			proto += *r.ListBytes.Protobuf
		}
	}
	if allProto {
		t.ListBytes.Protobuf = &proto
	}
	for _, f := range t.Heap.forms() {
		sum := &Heap{}
		for _, r := range rs {
			h := r.Heap.Get(f.name)
			if h == nil {
				sum = nil
				break
			}
			sum.Total += h.Total
			sum.PeakList += h.PeakList
			sum.PeakStream += h.PeakStream
		}
		if sum != nil {
			if t.Objects > 0 {
				sum.PerObject = sum.Total / t.Objects
			}
			*f.p = sum
		}
	}
	return t
}

// count counts t's objects: one limit=1 LIST's remainingItemCount, else (a
// selector, or exact) pages through metadata only, in protobuf.
func count(ctx context.Context, c *client, t reflector.Target, exact bool) (int64, string, error) {
	const asked = "metadata, protobuf"
	cont := ""
	var n int64
	if !exact {
		p, err := c.list(ctx, t, listQuery{limit: 1}, acceptMetadata, asked)
		if err != nil {
			return 0, "", err
		}
		n = int64(len(p.decoded.Items))
		if rem := p.decoded.RemainingItemCount; rem != nil {
			return n + *rem, "remainingItemCount", nil
		}
		if p.decoded.Continue == "" {
			return n, "remainingItemCount", nil
		}
		cont = p.decoded.Continue
	}
	for {
		p, err := c.list(ctx, t, listQuery{limit: pageSize, cont: cont}, acceptMetadata, asked)
		if err != nil {
			return 0, "", err
		}
		n += int64(len(p.decoded.Items))
		if cont = p.decoded.Continue; cont == "" {
			break
		}
	}
	if exact {
		return n, "exact", nil
	}
	return n, "pages", nil
}

// sample is the sampled objects' pages on each wire.
type sample struct {
	json, proto []*page
}

func (s *sample) items(pages []*page) int {
	n := 0
	for _, p := range pages {
		n += len(p.decoded.Items)
	}
	return n
}

// wire is the pages' bytes per object and objects per second.
func (s *sample) wire(pages []*page) (bytesPerObject, rate float64) {
	var bytes, secs float64
	n := s.items(pages)
	for _, p := range pages {
		bytes += float64(len(p.body))
		secs += p.took.Seconds()
	}
	if n == 0 {
		return 0, 0
	}
	if secs > 0 {
		rate = float64(n) / secs
	}
	return bytes / float64(n), rate
}

// takeSample lists up to n objects in JSON and, for a built-in resource, the
// same objects in protobuf (the first page at the JSON list's resourceVersion).
func takeSample(ctx context.Context, c *client, t reflector.Target, n int) (*sample, error) {
	s := &sample{}
	rv := ""
	var err error
	if s.json, rv, err = samplePages(ctx, c, t, n, acceptJSON, "json", ""); err != nil {
		return nil, err
	}
	if !wire.BuiltIn(t.Resource) {
		return s, nil
	}
	if s.proto, _, err = samplePages(ctx, c, t, n, acceptProtobuf, "protobuf", rv); err != nil {
		return nil, err
	}
	return s, nil
}

func samplePages(ctx context.Context, c *client, t reflector.Target, n int, accept, asked, rv string) ([]*page, string, error) {
	var pages []*page
	got, cont := 0, ""
	for got < n {
		q := listQuery{limit: int64(min(pageSize, n-got)), cont: cont}
		if cont == "" && rv != "" {
			q.resourceVersion, q.resourceVersionMatch = rv, "Exact"
		}
		p, err := c.list(ctx, t, q, accept, asked)
		if err != nil {
			return nil, "", err
		}
		if rv == "" {
			rv = p.decoded.ResourceVersion
		}
		pages = append(pages, p)
		got += len(p.decoded.Items)
		if cont = p.decoded.Continue; cont == "" {
			break
		}
	}
	return pages, rv, nil
}

func round(f float64) int64 { return int64(math.Round(f)) }

func ptr[T any](v T) *T { return &v }

func seconds(n int64, rate float64) float64 {
	if rate == 0 {
		return 0
	}
	s, _ := strconv.ParseFloat(strconv.FormatFloat(float64(n)/rate, 'f', 3, 64), 64)
	return s
}

// formatBytes prints a size for people, in binary units.
func formatBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit && exp < 4; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTP"[exp])
}
