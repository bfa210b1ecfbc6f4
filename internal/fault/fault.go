// Package fault is what "kubectl watchcache proxy --fault" injects: the
// faults a controller meets in production (a 410 and a relist, lost
// deletes, cut watches, late events, missing bookmarks, throttling), their
// specs as given on the command line (NAME[=VALUE][@every=D|@after=D][@p=F]),
// when each acts (Schedule) and on which streams (Target). It only parses
// and decides; internal/proxy injects.
package fault

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Name names a fault.
type Name string

// The faults.
const (
	// Gone ends a client's open watch; its resume is answered 410 Gone (the
	// expired-history case): the client relists.
	Gone Name = "gone"
	// Cut closes a client's open watch mid-stream, with no 410: the client
	// resumes from its last resourceVersion.
	Cut Name = "cut"
	// DropDeletes removes DELETED events from watch streams: the client
	// keeps ghosts until its next relist.
	DropDeletes Name = "drop-deletes"
	// Delay holds every watch event VALUE before it is passed on.
	Delay Name = "delay"
	// NoBookmarks removes BOOKMARK events (except the one that ends a
	// streaming list).
	NoBookmarks Name = "no-bookmarks"
	// StallInitialList withholds a streaming list's initial-events-end
	// bookmark: the list never completes.
	StallInitialList Name = "stall-initial-list"
	// Throttle answers requests 429 Too Many Requests with Retry-After
	// (VALUE, default 1s), as API Priority and Fairness does.
	Throttle Name = "throttle"
	// Stale sends a true event again later: an ADDED or MODIFIED event of
	// a watch, already passed on, is sent once more after StaleAfter later
	// events, its resourceVersion going backwards.
	Stale Name = "stale"
)

// StaleAfter is how many later events (ADDED, MODIFIED or DELETED) of
// the watch stale lets pass before it sends an event again.
const StaleAfter = 2

// about says what each fault does, in the order usage lists them.
var about = []described{
	{Gone, "", "its open watch ends, and its resume is answered 410 Gone: it relists"},
	{Cut, "", "its open watch is closed mid-stream, no 410: it resumes from its last resourceVersion"},
	{DropDeletes, "", "DELETED events are removed: its cache keeps ghosts until its next relist"},
	{Delay, "=D", "every watch event is held D before it is passed on"},
	{NoBookmarks, "", "BOOKMARK events are removed (except the one that ends a streaming list)"},
	{StallInitialList, "", "a streaming list never gets its initial-events-end bookmark"},
	{Throttle, "[=D]", "requests are answered 429 with Retry-After D (1s), as API Priority and Fairness does"},
	{Stale, "", "an ADDED or MODIFIED event already delivered is sent again " + strconv.Itoa(StaleAfter) + " events later: its resourceVersion goes backwards"},
}

// described is a fault and what it does.
type described struct {
	name  Name
	value string // as usage writes it: "" takes no value; "=D" a duration it needs; "[=D]" an optional one
	does  string
}

// Names are the faults, in the order Usage lists them.
func Names() []Name {
	out := make([]Name, len(about))
	for i, a := range about {
		out[i] = a.name
	}
	return out
}

// Usage lists the faults and the spec's syntax, for a flag's help and a
// usage error.
func Usage() string {
	var b strings.Builder
	b.WriteString("--fault NAME[=VALUE][@every=D|@after=D][@p=F], where NAME is one of:\n")
	for _, a := range about {
		fmt.Fprintf(&b, "  %-20s %s\n", string(a.name)+a.value, a.does)
	}
	b.WriteString("  @every=D acts once every D (gone, cut: on every open watch; the others: on the first thing met after each D);\n" +
		"  @after=D acts once after D (gone, cut), or on everything from then on (the others); neither: on everything it matches;\n" +
		"  @p=F acts on that fraction (0 < F <= 1) of what it would act on.")
	return b.String()
}

// Spec is one --fault as given.
type Spec struct {
	// Raw is the spec as given ("gone@every=20s"): how notes and the
	// summary name the fault.
	Raw  string
	Name Name
	// Value is the fault's VALUE: delay's hold, throttle's Retry-After.
	Value time.Duration
	// Every and After are the schedule (at most one is set).
	Every, After time.Duration
	// P is the fraction acted on, in (0, 1]; 1 when not given.
	P float64
}

// Scheduled says the spec has @every or @after.
func (s Spec) Scheduled() bool { return s.Every > 0 || s.After > 0 }

// Parse reads one spec: NAME[=VALUE][@every=D|@after=D][@p=F].
func Parse(raw string) (Spec, error) {
	s := Spec{Raw: raw, P: 1}
	parts := strings.Split(raw, "@")
	name, value, hasValue := strings.Cut(parts[0], "=")
	i := slices.IndexFunc(about, func(a described) bool { return string(a.name) == name })
	if i < 0 {
		return s, fmt.Errorf("unknown fault %q", name)
	}
	s.Name = about[i].name
	switch kind := about[i].value; {
	case kind == "" && hasValue:
		return s, fmt.Errorf("%s takes no value", name)
	case kind == "=D" && !hasValue:
		return s, fmt.Errorf("%s needs a duration: %s=300ms", name, name)
	case kind == "[=D]" && !hasValue:
		s.Value = time.Second
	}
	if hasValue {
		d, err := positiveDuration(value)
		if err != nil {
			return s, fmt.Errorf("%s=%s: %w", name, value, err)
		}
		s.Value = d
	}
	seen := map[string]bool{}
	for _, p := range parts[1:] {
		key, v, ok := strings.Cut(p, "=")
		if !ok {
			return s, fmt.Errorf("@%s: want @every=D, @after=D or @p=F", p)
		}
		if seen[key] {
			return s, fmt.Errorf("@%s given twice", key)
		}
		seen[key] = true
		switch key {
		case "every", "after":
			d, err := positiveDuration(v)
			if err != nil {
				return s, fmt.Errorf("@%s=%s: %w", key, v, err)
			}
			if key == "every" {
				s.Every = d
			} else {
				s.After = d
			}
		case "p":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f > 0 && f <= 1) {
				return s, fmt.Errorf("@p=%s: want a fraction above 0 and at most 1", v)
			}
			s.P = f
		default:
			return s, fmt.Errorf("@%s: want @every=D, @after=D or @p=F", p)
		}
	}
	if s.Every > 0 && s.After > 0 {
		return s, errors.New("@every and @after: give one of them")
	}
	return s, nil
}

func positiveDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("not a duration: %w", err)
	}
	if d <= 0 {
		return 0, errors.New("want a duration above 0")
	}
	return d, nil
}

// Schedule decides when a fault acts: it is a Spec's @every, @after and @p
// from a start, drawing @p from an RNG of its own, seeded, so that a seed
// gives the same draws. It is safe for concurrent use.
type Schedule struct {
	spec  Spec
	start time.Time

	mu    sync.Mutex
	rng   *rand.Rand
	taken int64 // @every: the firings consumed by Take
}

// NewSchedule is spec's schedule from start, drawing @p from seed.
func NewSchedule(spec Spec, start time.Time, seed int64) *Schedule {
	return &Schedule{spec: spec, start: start, rng: rand.New(rand.NewSource(seed))}
}

// Take says whether a fault that acts on what it meets (all but gone and
// cut with a schedule) acts on what it met at now: without @every or
// @after, on everything; with @after, on everything from start+After on;
// with @every, on the first thing met after each firing (start+k·Every;
// firings nothing met are not made up). Then @p draws.
func (s *Schedule) Take(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	elapsed := now.Sub(s.start)
	switch {
	case s.spec.Every > 0:
		n := int64(elapsed / s.spec.Every)
		if n <= s.taken {
			return false
		}
		s.taken = n
	case s.spec.After > 0 && elapsed < s.spec.After:
		return false
	}
	return s.chance()
}

// Next is the first firing of a scheduled fault after last (the zero time:
// the first firing): start+After once, or start+k·Every for k = 1, 2…;
// false when there is none (After fired, or no schedule).
func (s *Schedule) Next(last time.Time) (time.Time, bool) {
	switch {
	case s.spec.Every > 0:
		if last.Before(s.start) {
			return s.start.Add(s.spec.Every), true
		}
		k := int64(last.Sub(s.start)/s.spec.Every) + 1
		return s.start.Add(time.Duration(k) * s.spec.Every), true
	case s.spec.After > 0 && last.Before(s.start.Add(s.spec.After)):
		return s.start.Add(s.spec.After), true
	}
	return time.Time{}, false
}

// Chance draws @p: true with probability P (always when P is 1).
func (s *Schedule) Chance() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chance()
}

func (s *Schedule) chance() bool {
	if s.spec.P >= 1 {
		return true
	}
	return s.rng.Float64() < s.spec.P
}

// Target limits faults to resources and clients (--fault-target): a
// stream is targeted when its resource is one of Resources (or none is
// given) and its client's User-Agent contains one of Clients (or none is
// given).
type Target struct {
	// Resources are "pods", "deployments.apps": a resource and its group.
	Resources []GroupResource
	// Clients are User-Agent substrings.
	Clients []string
}

// GroupResource is a resource of a group ("" for the core group), as the
// API machinery has it: its String is "deployments.apps", or "pods" in the
// core group.
type GroupResource = schema.GroupResource

// ParseTarget reads --fault-target values: each a comma-separated list of
// resources (RESOURCE or RESOURCE.GROUP) and clients (client=SUBSTRING, a
// User-Agent substring). The resource is lowercased and the group kept as
// given, as kubectl's RESTMapper matches them.
func ParseTarget(values []string) (Target, error) {
	var t Target
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			item = strings.TrimSpace(item)
			if ua, ok := strings.CutPrefix(item, "client="); ok {
				if ua == "" {
					return t, errors.New("client= needs a User-Agent substring")
				}
				t.Clients = append(t.Clients, ua)
				continue
			}
			res, group, _ := strings.Cut(item, ".")
			if res == "" || strings.ContainsAny(item, "/= ") || strings.HasSuffix(item, ".") {
				return t, fmt.Errorf("%q: want RESOURCE, RESOURCE.GROUP or client=USER-AGENT-SUBSTRING", item)
			}
			t.Resources = append(t.Resources, GroupResource{Group: group, Resource: strings.ToLower(res)})
		}
	}
	return t, nil
}

// Matches says whether a stream of resource gr whose client sent userAgent is targeted.
func (t Target) Matches(gr GroupResource, userAgent string) bool {
	return (len(t.Resources) == 0 || slices.Contains(t.Resources, gr)) &&
		(len(t.Clients) == 0 || slices.ContainsFunc(t.Clients, func(c string) bool { return strings.Contains(userAgent, c) }))
}
