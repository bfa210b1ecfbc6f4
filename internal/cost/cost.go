// Package cost measures what an informer of a resource would cost before one
// is run: it reads the list once, counting every object's bytes and keeping
// a uniform random sample, builds the sample in each form an informer can
// hold (typed, dynamic, metadata, typed without managedFields, this tool's
// own store) in a real client-go cache.Indexer, reads the heap after GC
// before and after, and scales it to the whole list by its bytes. It is
// "kubectl watchcache cost".
package cost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire/request"
)

// Limits of the sample.
const (
	DefaultSample = 500
	MaxSample     = 5000
	// readPageSize is the page the whole list is read in: ten times an
	// informer's, because the read is timed against one GET of the whole
	// list (measured at 50,000 ConfigMaps: 500 a page took 1.45× the time
	// of 5,000 a page, which held 24 MiB more at its peak).
	readPageSize = 5000
	// rateBytes is about how many bytes (protobuf) of the list's first
	// objects the JSON page that times JSON holds.
	rateBytes = 8 << 20
	// largeObject is the size on the wire from which an object is sampled
	// apart (see listing): a heap per byte on the wire measured on small
	// objects, whose keys and maps weigh more than their bytes, scaled to
	// a list whose bytes are mostly a few large objects (Helm releases,
	// dashboards) told 2 to 5 times their heap.
	largeObject = 64 << 10
	// largeSample is how many large objects are sampled at most (all of
	// them with --exact).
	largeSample = 50
	// modelWithin is what the estimate's model leaves out, whatever the
	// sample: an informer's bookkeeping that its placeholders stand for
	// (containers.go), the GC's timing. Measured: with little sampling
	// spread, the end-to-end test's estimates were within ±1.2 % of real
	// informers (metadata +0.9 % without -race, +1.2 % under it: past the
	// readings' ±1 % alone).
	modelWithin = 0.02
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
	// Exact measures every object: the sample is the whole list.
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
	// ClusterScoped says the resource has no namespaces.
	ClusterScoped bool  `json:"clusterScoped,omitempty"`
	Objects       int64 `json:"objects"`
	// Read is the whole list as it was read once, to count the objects and
	// their sizes and to sample them.
	Read Read `json:"read"`
	// Sampled is how many objects were decoded and measured: a uniform
	// random sample of the list's objects under 64 KiB, and up to 50 of
	// those over besides (every object with --exact).
	Sampled int `json:"sampled"`
	// MeasureSeconds is the time the sample's measuring took, after the read.
	MeasureSeconds float64 `json:"measureSeconds"`
	// BytesPerObject and ListBytes are per wire; protobuf is absent where the
	// server does not speak it for this resource's objects.
	BytesPerObject Wires `json:"bytesPerObject"`
	ListBytes      Wires `json:"listBytes"`
	// ListSeconds is the initial list's time: as measured on the wire the
	// list was read in, and at the rate of one page on the other.
	ListSeconds WireSeconds `json:"listSeconds"`
	Heap        Heaps       `json:"heap"`
	// Cheapest is the cheapest form that serves the stated need.
	Cheapest *Choice `json:"cheapest,omitempty"`
}

// Read is how the list was read: every page of it, once, in protobuf for a
// built-in resource (JSON for the rest), 5,000 objects a page.
type Read struct {
	Objects int64 `json:"objects"`
	// Bytes are the responses' bodies.
	Bytes int64 `json:"bytes"`
	// Wire is "protobuf" or "json".
	Wire    string  `json:"wire"`
	Pages   int     `json:"pages"`
	Seconds float64 `json:"seconds"`
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
	// PerObject is Total over the list's objects: an object's share of the
	// whole cache (an informer's containers and its watch's buffers in it),
	// not one object measured alone.
	PerObject int64 `json:"perObject"`
	// Total is the steady cache: the sample's heap per byte on the wire
	// times the list's bytes (a ratio estimate).
	Total int64 `json:"total"`
	// Range is Total's 95 % range from the sample: the spread of five random
	// parts of each stratum, each measured alone, with the readings' and
	// the model's tolerance (docs/design.md, "Cost"). It is absent when a
	// stratum not sampled whole has a sample under 25 objects (one part, no
	// spread), for an empty list, and in the totals when a resource's is.
	Range *[2]int64 `json:"range,omitempty"`
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

// heapForm is one of a Heaps' forms: its name, and the field that holds it.
type heapForm struct {
	name string
	p    **Heap
}

// forms lists h's forms by name, in the report's order.
func (h *Heaps) forms() []heapForm {
	return []heapForm{
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
		rep.Requests = c.log // only ever appended to
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

func measureResource(ctx context.Context, c *client, t reflector.Target, o Options) (r Resource, err error) {
	r = Resource{Resource: t.Resource.String(), Namespace: t.Namespace, ClusterScoped: !t.Resource.Namespaced}
	builtIn := live.BuiltIn(t.Resource)
	n := o.Sample
	if o.Exact {
		n = math.MaxInt
	}
	l, err := readList(ctx, c, t, builtIn, n)
	if err != nil {
		return r, err
	}
	r.Objects, r.Sampled = l.objects, len(l.sample)+len(l.large)
	r.Read = Read{Objects: l.objects, Bytes: l.bodyBytes, Wire: "json", Pages: l.pages, Seconds: seconds(l.took)}
	if l.proto {
		r.Read.Wire = "protobuf"
	}
	measureStart := time.Now()
	defer func() { r.MeasureSeconds = seconds(time.Since(measureStart)) }()
	strata, groups, err := l.strata()
	if err != nil {
		return r, fmt.Errorf("building the sample of %s: %w", r.Resource, err)
	}
	// Bytes on the wire, per object: the list's own wire as read; JSON from
	// each stratum's sample's JSON when the list was read in protobuf.
	jsonBytes := l.bytes
	if l.proto {
		var est float64
		for _, s := range strata {
			var sampleJSON, sampleWire int64
			for _, g := range s.groups {
				sampleJSON += int64(len(g.json))
				sampleWire += g.wireBytes
			}
			est += ratio(sampleJSON, sampleWire) * float64(s.bytes)
		}
		jsonBytes = round(est)
		r.BytesPerObject.Protobuf = ptr(round(ratio(l.bodyBytes, l.objects)))
		r.ListBytes.Protobuf = ptr(l.bodyBytes)
		r.ListSeconds.Protobuf = ptr(seconds(l.took))
		// JSON's time at the rate of one JSON page of the list's first
		// objects, as many as make a page long enough that its time is
		// the bytes', not the request's (it was at most the sample's count:
		// one object's page timed the round trip, 30 to 100 times too slow).
		rate, page, err := jsonRate(ctx, c, t, max(l.leading, 1), l.resourceVersion)
		if err != nil {
			return r, err
		}
		if l.objects == 0 {
			jsonBytes = page // the JSON page of an empty list is the whole list: its own few bytes
		}
		r.ListSeconds.JSON = seconds(time.Duration(float64(jsonBytes) / rate * float64(time.Second)))
	} else {
		r.ListSeconds.JSON = seconds(l.took)
	}
	r.BytesPerObject.JSON = round(ratio(jsonBytes, l.objects))
	r.ListBytes.JSON = jsonBytes
	if !l.proto {
		r.ListBytes.JSON = l.bodyBytes
	}
	per := make([]map[string]float64, len(groups))
	for i, g := range groups {
		if per[i], err = measureForms(g, builtIn && l.proto); err != nil {
			return r, fmt.Errorf("measuring the sample of %s: %w", r.Resource, err)
		}
	}
	holders, err := measureContainers(groups, l)
	if err != nil {
		return r, fmt.Errorf("measuring an informer of %s's size: %w", r.Resource, err)
	}
	bufs, err := measureBuffers(l)
	if err != nil {
		return r, fmt.Errorf("measuring the watch buffers of %s's largest object: %w", r.Resource, err)
	}
	kept := map[string]float64{FormTyped: bufs.proto, FormTypedNoManagedFields: bufs.proto, FormDynamic: bufs.json, FormDynamicNoManagedFields: bufs.json,
		FormMetadata: bufs.metadata}
	for _, f := range r.Heap.forms() {
		if _, ok := per[0][f.name]; !ok {
			continue
		}
		c := holders
		if f.name == FormWatchcache {
			c = nil // no informer (and nothing kept): the store as measured
		}
		*f.p = estimate(strata, per, f.name, l, c, kept[f.name])
	}
	r.Cheapest = cheapest(&r.Heap, o.Need)
	return r, nil
}

// containers are the heap per object of what holds the objects, apart from
// them (see containers.go): in each group's plain indexer, and in a real
// informer of the whole list.
type containers struct {
	group []float64
	list  float64
}

// measureContainers measures them with placeholders shaped as the sample's keys.
func measureContainers(groups []*group, l *listing) (*containers, error) {
	c := &containers{group: make([]float64, len(groups))}
	if l.objects == 0 {
		return c, nil
	}
	shape := l.keys
	bySize := map[int]float64{}
	for i, g := range groups {
		v, ok := bySize[g.objects]
		if !ok {
			var err error
			if v, err = containerBytes(g.objects, shape, false); err != nil {
				return nil, err
			}
			bySize[g.objects] = v
		}
		c.group[i] = v
	}
	v, err := containerBytes(int(min(l.objects, maxPlaceholders)), shape, true)
	if err != nil {
		return nil, err
	}
	c.list = v
	return c, nil
}

// estimate is one form's heap for the whole list: in each stratum, the
// ratio of its sample's heap (its containers' taken out) to its bytes on
// the wire, times the stratum's bytes; summed, and an informer's
// containers for the list's count put back. Its range is ±t·s/√k per
// stratum, s the spread of the k parts' own ratios (each a random part of
// the stratum's sample, measured alone) and t Student's for k-1 degrees of
// freedom at 95 % (none for a stratum sampled whole), the strata's, the
// heap readings' own tolerance (±1 %) and the model's (modelWithin) added
// in quadrature. A stratum
// sampled in one part, not whole, leaves the estimate without a range.
// kept is what the informer's watch keeps besides (see buffers).
func estimate(strata []*stratum, per []map[string]float64, form string, l *listing, c *containers, kept float64) *Heap {
	if l.bytes == 0 || l.objects == 0 {
		return extrapolate(0, 0)
	}
	var total, variance float64
	ranged := true
	i := 0 // the group's index in per and c.group
	for _, s := range strata {
		var heap, bytes float64
		ratios := make([]float64, len(s.groups))
		sampled := 0
		for j, g := range s.groups {
			p := per[i][form]
			if c != nil {
				p = max(p-c.group[i], 0)
			}
			i++
			h := p * float64(g.objects)
			heap += h
			bytes += float64(g.wireBytes)
			ratios[j] = h / max(float64(g.wireBytes), 1)
			sampled += g.objects
		}
		r := heap / max(bytes, 1)
		total += r * float64(s.bytes)
		switch k := len(ratios); {
		case int64(sampled) >= s.objects:
			// Sampled whole: no sampling error, the readings' alone.
		case k >= 2:
			var ss float64
			for _, x := range ratios {
				ss += (x - r) * (x - r)
			}
			sd := studentT95[k-1] * math.Sqrt(ss/float64(k-1)) / math.Sqrt(float64(k)) * float64(s.bytes)
			variance += sd * sd
		default:
			ranged = false
		}
	}
	if c != nil {
		total += c.list * float64(l.objects)
	}
	total += kept
	h := extrapolate(total/float64(l.objects), l.objects)
	if ranged {
		// A heap reading is taken once its last readings agree within
		// stableWithin: good to about half that, whatever the sample.
		reading := stableWithin / 2 * float64(h.Total)
		model := modelWithin * float64(h.Total)
		half := math.Sqrt(variance + reading*reading + model*model)
		h.Range = &[2]int64{max(round(float64(h.Total)-half), 0), round(float64(h.Total) + half)}
	}
	return h
}

// studentT95 is Student's t at 95 %, two-sided, by degrees of freedom.
var studentT95 = [...]float64{1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776}

// jsonRate lists one page of n objects in JSON at rv and returns its bytes
// per second and its size.
func jsonRate(ctx context.Context, c *client, t reflector.Target, n int, rv string) (rate float64, page int64, err error) {
	q := request.Options{Limit: int64(n)}
	if rv != "" {
		q.ResourceVersion, q.ResourceVersionMatch = rv, "Exact"
	}
	p, err := c.list(ctx, t, q, false)
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		// Compacted since the read: any resourceVersion times the rate as well.
		p, err = c.list(ctx, t, request.Options{Limit: int64(n)}, false)
	}
	if err != nil {
		return 0, 0, err
	}
	if len(p.body) == 0 {
		return 0, 0, errors.New("the JSON page of the list was empty")
	}
	return float64(len(p.body)) / max(p.took.Seconds(), 1e-6), int64(len(p.body)), nil
}

// ratio is a/b, 0 when b is.
func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
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
	ch := &Choice{Need: need, Form: against, Total: base.Total, Against: against}
	for _, name := range candidates {
		if f := h.Get(name); f != nil && (f.Total < ch.Total || (f.Total == ch.Total && f.PerObject < h.Get(ch.Form).PerObject)) {
			ch.Form, ch.Total = name, f.Total
		}
	}
	ch.Saving = base.Total - ch.Total
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
		sum := &Heap{Range: &[2]int64{}}
		for _, r := range rs {
			h := r.Heap.Get(f.name)
			if h == nil {
				sum = nil
				break
			}
			sum.Total += h.Total
			sum.PeakList += h.PeakList
			sum.PeakStream += h.PeakStream
			// The ranges add up, as if the resources' errors were one (the widest).
			if h.Range == nil || sum.Range == nil {
				sum.Range = nil
			} else {
				sum.Range[0] += h.Range[0]
				sum.Range[1] += h.Range[1]
			}
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

// listing is a list read whole, once: its size and a sample of its items,
// kept as they came on the wire, in two strata sampled apart: the objects
// under largeObject (a uniform random sample of them, sample) and those
// over (large: up to largeSample of them, uniform too), each with its
// exact count and bytes, so that each stratum's heap per byte is scaled to
// that stratum's bytes alone.
type listing struct {
	objects int64
	// bytes are the items' own bytes on the wire; bodyBytes the responses'.
	bytes, bodyBytes int64
	pages            int
	took             time.Duration
	resourceVersion  string
	proto            bool
	// leading is how many of the first objects make up to rateBytes on
	// the wire (at most readPageSize): the JSON page that times JSON.
	leading int
	// To build lists of the sample again: the list's apiVersion and kind.
	apiVersion, kind string
	sample           [][]byte
	// large are the sampled objects of largeObject bytes or more, of
	// largeObjects objects of largeBytes in the list.
	large                    [][]byte
	largeObjects, largeBytes int64
	// largest is the list's largest object (see buffers).
	largest []byte
	// keys is the shape of the sample's keys (set by strata).
	keys keyShape
}

// readList reads t's whole list, page by page (protobuf for a built-in
// resource), counting every object's bytes and keeping a uniform random
// sample of n of its small objects and of up to largeSample (all with
// --exact) of its large ones (reservoir sampling, seeded so that the same
// list gives the same sample). The samples are shuffled.
func readList(ctx context.Context, c *client, t reflector.Target, builtIn bool, n int) (*listing, error) {
	rng := rand.New(rand.NewPCG(0x5a4d91e, 0xc057))
	l := &listing{}
	nLarge := min(n, largeSample)
	if n == math.MaxInt { // --exact
		nLarge = n
	}
	cont := ""
	for {
		p, err := c.list(ctx, t, request.Options{Limit: readPageSize, Continue: cont}, builtIn)
		if err != nil {
			return nil, err
		}
		l.pages++
		l.took += p.took
		l.bodyBytes += int64(len(p.body))
		if l.pages == 1 {
			l.resourceVersion = p.parts.resourceVersion
			l.proto = wire.IsProtobuf(p.contentType)
			l.apiVersion, l.kind = p.parts.apiVersion, p.parts.kind
		}
		for _, it := range p.parts.items {
			l.bytes += int64(len(it))
			if l.bytes <= rateBytes && l.objects < readPageSize {
				l.leading++
			}
			if len(it) > len(l.largest) {
				l.largest = bytes.Clone(it)
			}
			if len(it) >= largeObject {
				reservoir(rng, &l.large, it, l.largeObjects, nLarge)
				l.largeObjects++
				l.largeBytes += int64(len(it))
			} else {
				reservoir(rng, &l.sample, it, l.objects-l.largeObjects, n)
			}
			l.objects++
		}
		if cont = p.parts.continueToken; cont == "" {
			break
		}
	}
	rng.Shuffle(len(l.sample), func(i, j int) { l.sample[i], l.sample[j] = l.sample[j], l.sample[i] })
	rng.Shuffle(len(l.large), func(i, j int) { l.large[i], l.large[j] = l.large[j], l.large[i] })
	return l, nil
}

// reservoir offers it, the seen-th item (from 0) of its stratum, to a
// uniform random sample of n of them.
func reservoir(rng *rand.Rand, sample *[][]byte, it []byte, seen int64, n int) {
	switch {
	case len(*sample) < n:
		*sample = append(*sample, bytes.Clone(it))
	default:
		if j := rng.Int64N(seen + 1); j < int64(n) {
			(*sample)[j] = bytes.Clone(it)
		}
	}
}

// group is one part of the sample, built as the lists an informer would get.
type group struct {
	objects   int
	wireBytes int64
	// proto is a protobuf list of the group's objects (nil for a resource
	// read in JSON); json the same list in JSON.
	proto, json []byte
}

// groupsOf is how many parts the sample is measured in: five, each of five
// objects at least, for the estimate's range.
func groupsOf(n int) int {
	if n < 25 {
		return 1
	}
	return 5
}

// stratum is one stratum of the list (see listing): its exact count and
// bytes, and its sample's parts.
type stratum struct {
	objects, bytes int64
	groups         []*group
}

// strata splits each stratum's sample into its parts and builds each
// part's lists; the large stratum is left out when it has no object (the
// small one is kept, in one empty part for an empty list: it says which
// forms apply). It returns the strata and all their parts, in order.
func (l *listing) strata() ([]*stratum, []*group, error) {
	var out []*stratum
	for _, s := range []struct {
		objects, bytes int64
		sample         [][]byte
	}{
		{l.objects - l.largeObjects, l.bytes - l.largeBytes, l.sample},
		{l.largeObjects, l.largeBytes, l.large},
	} {
		if len(s.sample) == 0 && len(out) > 0 {
			continue
		}
		groups, err := l.groups(s.sample)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, &stratum{objects: s.objects, bytes: s.bytes, groups: groups})
	}
	var all []*group
	for _, s := range out {
		all = append(all, s.groups...)
	}
	return out, all, l.readKeys(all)
}

// groups splits a sample into its parts and builds each part's lists.
// JSON of protobuf objects is their typed objects' JSON, as the server writes it.
func (l *listing) groups(sample [][]byte) ([]*group, error) {
	k := groupsOf(len(sample))
	out := make([]*group, 0, k)
	for i := range k {
		lo, hi := i*len(sample)/k, (i+1)*len(sample)/k
		items := sample[lo:hi]
		g := &group{objects: len(items)}
		for _, it := range items {
			g.wireBytes += int64(len(it))
		}
		if !l.proto {
			g.json = jsonList(l.apiVersion, l.kind, items)
			out = append(out, g)
			continue
		}
		g.proto = wire.EncodeProtoList(l.apiVersion, l.kind, items)
		j, err := typedJSON(g.proto)
		if err != nil {
			return nil, err
		}
		g.json = j
		out = append(out, g)
	}
	return out, nil
}

// readKeys reads the sample's keys' shape from its groups' JSON.
func (l *listing) readKeys(groups []*group) error {
	namespaces := map[string]bool{}
	var nsLen, nameLen, n int
	for _, g := range groups {
		var meta metav1.PartialObjectMetadataList
		if err := json.Unmarshal(g.json, &meta); err != nil {
			return fmt.Errorf("reading the sample's names: %w", err)
		}
		for _, it := range meta.Items {
			namespaces[it.Namespace] = true
			nsLen += len(it.Namespace)
			nameLen += len(it.Name)
			n++
		}
	}
	if n > 0 {
		l.keys = keyShape{namespaceLen: nsLen / n, nameLen: nameLen / n, namespaces: len(namespaces)}
	}
	return nil
}

func round(f float64) int64 { return int64(math.Round(f)) }

func ptr[T any](v T) *T { return &v }

// seconds is d in seconds, to the millisecond.
func seconds(d time.Duration) float64 {
	return math.Round(d.Seconds()*1000) / 1000
}
