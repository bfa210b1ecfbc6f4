package diff

import (
	"cmp"
	"slices"
	"strings"
)

// maxTracked caps the distinct paths and objects a Churn counts one by one;
// past it, new ones are counted together as other (a stream of generated
// names must not grow it without bound).
const maxTracked = 10000

// Other names what a Churn counted past its cap.
const Other = "(other)"

// Churn adds up the changes of one resource's MODIFIED events. It is not safe
// for concurrent use; the zero value is ready.
type Churn struct {
	events, timestampOnly, skipped int64
	paths                          map[string]*pathCount
	objects                        map[string]int64
}

type pathCount struct {
	// count is the changes counted; events the events that made them, each
	// once (more than one of Other's paths may change in one event), and
	// last the number of the last of them (Churn.events).
	count, events, last int64
	managers            map[string]int64
}

// Add counts one MODIFIED event of object (namespace/name) and what it changed.
func (c *Churn) Add(object string, ch *Changes) {
	if ch == nil {
		return
	}
	if c.paths == nil {
		c.paths, c.objects = map[string]*pathCount{}, map[string]int64{}
	}
	// The object took the event, diffed or not (a HOT line says how many
	// MODIFIED events came).
	if _, ok := c.objects[object]; !ok && len(c.objects) >= maxTracked {
		object = Other
	}
	c.objects[object]++
	if ch.Skipped != "" {
		c.skipped++
		return
	}
	c.events++
	if ch.TimestampOnly {
		c.timestampOnly++
	}
	for _, p := range ch.Paths {
		if p.Meta {
			continue
		}
		pc, ok := c.paths[p.Path]
		if !ok {
			key := p.Path
			if len(c.paths) >= maxTracked {
				key = Other
			}
			if pc = c.paths[key]; pc == nil {
				pc = &pathCount{managers: map[string]int64{}}
				c.paths[key] = pc
			}
		}
		pc.count++
		if pc.last != c.events {
			pc.events, pc.last = pc.events+1, c.events
		}
		if w := p.Author(); w != "" {
			pc.managers[w]++
		}
	}
}

// Summary is a Churn's totals and its top paths and objects.
type Summary struct {
	// Events counts the MODIFIED events diffed; TimestampOnly those that
	// changed only times (see Changes.TimestampOnly).
	Events        int64 `json:"events"`
	TimestampOnly int64 `json:"timestampOnly"`
	// Skipped counts MODIFIED events not diffed (Changes.Skipped).
	Skipped int64 `json:"skipped,omitempty"`
	// Paths are the most changed paths, most first.
	Paths []PathChurn `json:"paths"`
	// Objects are the objects that took most events, most first.
	Objects []ObjectChurn `json:"objects"`
}

// PathChurn is one path's count of changes, the share of the events that
// changed it and the manager that wrote it most (those tied for it, "alice
// and bob"; a removal is no one's write). For Other, Count adds up the
// changes of all the paths past the cap, and Share counts an event that
// changed several of them once.
type PathChurn struct {
	Path    string  `json:"path"`
	Count   int64   `json:"count"`
	Share   float64 `json:"share"`
	Manager string  `json:"manager,omitempty"`
}

// ObjectChurn is one object's count of MODIFIED events, diffed or not.
type ObjectChurn struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

// Summary returns the totals with the top n paths and objects.
func (c *Churn) Summary(n int) Summary {
	s := Summary{Events: c.events, TimestampOnly: c.timestampOnly, Skipped: c.skipped, Paths: []PathChurn{}, Objects: []ObjectChurn{}}
	for path, pc := range c.paths {
		// A path was counted by an event: c.events > 0.
		s.Paths = append(s.Paths, PathChurn{Path: path, Count: pc.count, Share: float64(pc.events) / float64(c.events), Manager: top(pc.managers)})
	}
	slices.SortFunc(s.Paths, func(a, b PathChurn) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Path, b.Path))
	})
	for name, n := range c.objects {
		s.Objects = append(s.Objects, ObjectChurn{Name: name, Count: n})
	}
	slices.SortFunc(s.Objects, func(a, b ObjectChurn) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name))
	})
	s.Paths, s.Objects = s.Paths[:min(n, len(s.Paths))], s.Objects[:min(n, len(s.Objects))]
	return s
}

// top is the key with the highest count ("" for none); keys tied for it
// are all named, in name order ("alice and bob").
func top(m map[string]int64) string {
	var best []string
	bestN := int64(0)
	for k, n := range m {
		switch {
		case n > bestN:
			best, bestN = []string{k}, n
		case n == bestN:
			best = append(best, k)
		}
	}
	slices.Sort(best)
	return strings.Join(best, " and ")
}
