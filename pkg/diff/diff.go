// Package diff says what a MODIFIED watch event changed: the paths that
// differ between two versions of one object's JSON, each with its old and new
// value and the field manager that owns it, as metadata.managedFields records
// ownership. Its Churn adds changes up per resource: the paths that change most,
// the objects that take most events, and how many events changed only times.
//
// List items are addressed by their key where the object's managedFields name
// one (`.status.conditions[type=Ready].lastTransitionTime`), by a name-like
// field that tells the items apart otherwise, and by index when nothing does.
// The managedFields are read with sigs.k8s.io/structured-merge-diff, the
// library the API server tracks ownership with.
package diff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Op is what happened at a path.
type Op string

// The operations of a Change.
const (
	Added   Op = "added"
	Removed Op = "removed"
	Changed Op = "changed"
)

// Change is one path that differs between two versions of an object.
type Change struct {
	// Path is the changed field, readable: `.spec.replicas`,
	// `.metadata.annotations["example.com/at"]`, `.status.conditions[type=Ready].status`.
	Path string `json:"path"`
	Op   Op     `json:"op"`
	// Old and New are the values (JSON) before and after; Old is empty for
	// Added, New for Removed, and both when values are not kept.
	Old json.RawMessage `json:"old,omitempty"`
	New json.RawMessage `json:"new,omitempty"`
	// Manager, Operation, Subresource and Time name the managedFields entry
	// that owns the path (for a removed path, the one that owned it): "" when
	// the object has no managedFields that cover it.
	Manager     string `json:"manager,omitempty"`
	Operation   string `json:"operation,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Time        string `json:"time,omitempty"`
	// Meta marks metadata.resourceVersion and metadata.managedFields, which
	// change on every write and are hidden unless asked for.
	Meta bool `json:"meta,omitempty"`
}

// Writer names the change's manager as people name it: the manager, with
// the subresource it wrote through ("kube-controller-manager/status",
// "kubectl/scale"); "" when no manager owns the path.
func (c Change) Writer() string {
	if c.Subresource != "" && c.Manager != "" {
		return c.Manager + "/" + c.Subresource
	}
	return c.Manager
}

// Author is who made the change, as Writer names it: "" for a removal,
// whose manager is the one that had set the path, not the one that
// removed it (the object no longer says).
func (c Change) Author() string {
	if c.Op == Removed {
		return ""
	}
	return c.Writer()
}

// Changes is what one MODIFIED event changed.
type Changes struct {
	// Paths are the changes, sorted by Path as bytes compare (meta ones
	// included).
	Paths []Change `json:"paths"`
	// TimestampOnly: nothing changed but resourceVersion, managedFields and
	// values under metadata or status that are RFC 3339 times.
	TimestampOnly bool `json:"timestampOnly,omitempty"`
	// Skipped says why the event was not diffed ("" when it was): no earlier
	// version was held, the object has another UID (a recreate), the cap on
	// objects held was reached, or a body was not JSON.
	Skipped string `json:"skipped,omitempty"`
}

// Visible returns the changes a view shows by default: all but Meta ones.
func (c *Changes) Visible() []Change {
	if c == nil {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(c.Paths), func(ch Change) bool { return ch.Meta })
}

// WithoutValues returns a copy of c without Old and New, as a trace records
// changes when it does not keep whole objects.
func (c *Changes) WithoutValues() *Changes {
	if c == nil {
		return nil
	}
	out := *c
	out.Paths = make([]Change, len(c.Paths))
	for i, ch := range c.Paths {
		ch.Old, ch.New = nil, nil
		out.Paths[i] = ch
	}
	return &out
}

// Skip returns Changes that say the event was not diffed, and why.
func Skip(why string) *Changes { return &Changes{Skipped: why} }

// The reasons of Changes.Skipped.
const (
	SkipNoPrevious = "no earlier version held"
	SkipOtherUID   = "another UID under the name (deleted and recreated)"
	SkipCap        = "over the cap on objects held for diffs"
	SkipNotJSON    = "the object's body is not JSON"
	SkipProtobuf   = "the stream is protobuf: only JSON streams are diffed"
	SkipMetadata   = "the stream asks for metadata only: only whole objects are diffed"
	SkipTable      = "the stream asks for tables (kubectl get), which carry metadata only: only whole objects are diffed"
)

// Compare returns what changed from old to new, two versions of one object's
// JSON. Values are kept (Old, New) when keepValues is set.
func Compare(old, new []byte, keepValues bool) (*Changes, error) {
	o, err := decode(old)
	if err != nil {
		return nil, fmt.Errorf("the earlier version: %w", err)
	}
	n, err := decode(new)
	if err != nil {
		return nil, fmt.Errorf("the new version: %w", err)
	}
	// A LIST's items carry no apiVersion and kind, a watch event's do: not a change.
	for _, k := range []string{"apiVersion", "kind"} {
		delete(o, k)
		delete(n, k)
	}
	d := differ{keep: keepValues, oldRaw: old}
	d.newOwners = ownersOf(new)
	d.keys = keyNames(d.newOwners)
	d.object(nil, o, n)
	slices.SortFunc(d.out, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return &Changes{Paths: d.out, TimestampOnly: !d.substantive}, nil
}

// decode reads JSON with integral numbers as int64, as structured-merge-diff
// reads the keys of managedFields, so that a list key compares equal.
func decode(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("decoding JSON: %w", err)
	}
	m, ok := numbers(raw).(map[string]any)
	if !ok {
		return nil, errors.New("decoding JSON: not an object")
	}
	return m, nil
}

func numbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = numbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = numbers(e)
		}
	}
	return v
}

// owner is one managedFields entry.
type owner struct {
	manager, operation, subresource, time string
	set                                   *fieldpath.Set
}

// ownersOf parses an object's managedFields (entries that do not parse are
// left out: they own nothing this package can tell). Each fieldsV1 is read
// as it is, not decoded and encoded again.
func ownersOf(b []byte) []owner {
	var obj struct {
		Metadata struct {
			ManagedFields []struct {
				Manager, Operation, Subresource, Time string
				FieldsV1                              json.RawMessage
			}
		}
	}
	if json.Unmarshal(b, &obj) != nil {
		return nil
	}
	var out []owner
	for _, e := range obj.Metadata.ManagedFields {
		if len(e.FieldsV1) == 0 {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(e.FieldsV1)); err != nil {
			continue
		}
		out = append(out, owner{manager: e.Manager, operation: e.Operation, subresource: e.Subresource, time: e.Time, set: set})
	}
	return out
}

// keyNames finds, for every keyed list the owners know, its key's field
// names, by the list's path written without keys (".status.conditions").
func keyNames(owners []owner) map[string][]string {
	keys := map[string][]string{}
	note := func(prefix string, pe fieldpath.PathElement) {
		if _, ok := keys[prefix]; pe.Key != nil && !ok {
			keys[prefix] = make([]string, len(*pe.Key))
			for i, f := range *pe.Key {
				keys[prefix][i] = f.Name
			}
		}
	}
	var walk func(prefix string, s *fieldpath.Set)
	walk = func(prefix string, s *fieldpath.Set) {
		s.Children.Iterate(func(pe fieldpath.PathElement) {
			note(prefix, pe)
			child, _ := s.Children.Get(pe)
			if pe.FieldName != nil {
				walk(prefix+"."+*pe.FieldName, child)
			} else {
				walk(prefix, child)
			}
		})
		s.Members.Iterate(func(pe fieldpath.PathElement) { note(prefix, pe) })
	}
	for _, o := range owners {
		walk("", o.set)
	}
	return keys
}

// differ walks two versions side by side.
type differ struct {
	keep                 bool
	oldOwners, newOwners []owner
	// oldRaw is the earlier version, whose owners are read only for a
	// removed path (oldRead says they were).
	oldRaw  []byte
	oldRead bool
	keys    map[string][]string
	out     []Change
	// substantive: a change that is neither meta nor one time for another.
	substantive bool
}

// step is one element of a path: a field, a list item by key or by index.
type step struct {
	field string
	key   []value.Field
	index int
	kind  byte // 'f', 'k', 'i'
	// shape is the path without keys (".status.conditions"), to look keys up.
	shape string
}

func (d *differ) object(path []step, o, n map[string]any) {
	shape := shapeOf(path)
	names := make([]string, 0, len(o)+len(n))
	for k := range o {
		names = append(names, k)
	}
	for k := range n {
		if _, ok := o[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		p := append(slices.Clip(path), step{kind: 'f', field: k, shape: shape + "." + k})
		ov, inOld := o[k]
		nv, inNew := n[k]
		meta := len(path) == 1 && path[0].field == "metadata" && (k == "resourceVersion" || k == "managedFields")
		// The first annotation or label (or the last) is a change of its
		// key, as every later one is, not of the whole map.
		keyed := len(path) == 1 && path[0].field == "metadata" && (k == "annotations" || k == "labels")
		om, _ := ov.(map[string]any)
		nm, _ := nv.(map[string]any)
		switch {
		case !inOld && keyed && nm != nil:
			d.object(p, nil, nm)
		case !inNew && keyed && om != nil:
			d.object(p, om, nil)
		case !inOld:
			d.add(p, Added, nil, nv, meta)
		case !inNew:
			d.add(p, Removed, ov, nil, meta)
		case meta:
			if !equal(ov, nv) {
				d.add(p, Changed, nil, nil, true)
			}
		default:
			d.value(p, ov, nv)
		}
	}
}

func (d *differ) value(path []step, o, n any) {
	switch ot := o.(type) {
	case map[string]any:
		if nt, ok := n.(map[string]any); ok {
			d.object(path, ot, nt)
			return
		}
	case []any:
		if nt, ok := n.([]any); ok {
			d.list(path, ot, nt)
			return
		}
	}
	if !equal(o, n) {
		d.add(path, Changed, o, n, false)
	}
}

// list matches items by key (from managedFields, else a name-like field that
// tells every item apart), else by index.
func (d *differ) list(path []step, o, n []any) {
	shape := shapeOf(path)
	names := d.keys[shape]
	if names == nil || !keyed(names, o) || !keyed(names, n) {
		names = guessKey(o, n)
	}
	if names == nil {
		for i := 0; i < max(len(o), len(n)); i++ {
			p := append(slices.Clip(path), step{kind: 'i', index: i, shape: shape})
			switch {
			case i >= len(o):
				d.add(p, Added, nil, n[i], false)
			case i >= len(n):
				d.add(p, Removed, o[i], nil, false)
			default:
				d.value(p, o[i], n[i])
			}
		}
		return
	}
	type item struct {
		key []value.Field
		v   any
	}
	index := func(items []any) (map[string]item, []string) {
		m := make(map[string]item, len(items))
		order := make([]string, 0, len(items))
		for _, it := range items {
			k := keyOf(names, it)
			s := keyString(k)
			m[s] = item{k, it}
			order = append(order, s)
		}
		return m, order
	}
	om, oorder := index(o)
	nm, norder := index(n)
	for _, s := range oorder {
		p := append(slices.Clip(path), step{kind: 'k', key: om[s].key, shape: shape})
		if ni, ok := nm[s]; ok {
			d.value(p, om[s].v, ni.v)
		} else {
			d.add(p, Removed, om[s].v, nil, false)
		}
	}
	for _, s := range norder {
		if _, ok := om[s]; !ok {
			p := append(slices.Clip(path), step{kind: 'k', key: nm[s].key, shape: shape})
			d.add(p, Added, nil, nm[s].v, false)
		}
	}
}

// guessKey is the first of the fields that key list items in the
// Kubernetes API (the common patch merge keys) that tells o's and n's items
// apart, for a list the object's managedFields do not key.
func guessKey(o, n []any) []string {
	for _, names := range [][]string{{"type"}, {"name"}, {"uid"}, {"containerPort", "protocol"}, {"mountPath"}, {"devicePath"}, {"ip"}, {"key"}} {
		if keyed(names, o) && keyed(names, n) && (len(o) > 0 || len(n) > 0) {
			return names
		}
	}
	return nil
}

// keyed says every item is an object with scalar values at names that are
// unique among the items.
func keyed(names []string, items []any) bool {
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return false
		}
		for _, name := range names {
			switch m[name].(type) {
			case string, int64, float64, bool:
			default:
				return false
			}
		}
		s := keyString(keyOf(names, it))
		if seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}

func keyOf(names []string, it any) []value.Field {
	m, _ := it.(map[string]any)
	out := make([]value.Field, 0, len(names))
	for _, name := range names {
		out = append(out, value.Field{Name: name, Value: value.NewValueInterface(m[name])})
	}
	return out
}

func keyString(k []value.Field) string {
	var b strings.Builder
	for i, f := range k {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(f.Name)
		b.WriteByte('=')
		b.WriteString(scalar(f.Value.Unstructured()))
	}
	return b.String()
}

// scalar is a key's value as text; fmt writes an int64, a float64 ('g',
// shortest) and a bool as strconv does.
func scalar(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

func shapeOf(path []step) string {
	if len(path) == 0 {
		return ""
	}
	return path[len(path)-1].shape
}

func (d *differ) add(path []step, op Op, o, n any, meta bool) {
	c := Change{Path: render(path), Op: op, Meta: meta}
	if !meta && !(op == Changed && stamped(path) && isTime(o) && isTime(n)) {
		d.substantive = true
	}
	if d.keep && !meta {
		if op != Added {
			c.Old = marshal(o)
		}
		if op != Removed {
			c.New = marshal(n)
		}
	}
	if !meta {
		owners := d.newOwners
		if op == Removed {
			if !d.oldRead {
				d.oldOwners, d.oldRead = ownersOf(d.oldRaw), true
			}
			owners = d.oldOwners
		}
		if w := ownerOf(owners, path); w != nil {
			c.Manager, c.Operation, c.Subresource, c.Time = w.manager, w.operation, w.subresource, w.time
		}
	}
	d.out = append(d.out, c)
}

// ownerOf returns the entry that owns the deepest part of path: the path
// itself, a prefix owned whole (an atomic list or map), or, for an added or
// removed subtree, the fields under it.
func ownerOf(owners []owner, path []step) *owner {
	fp := make(fieldpath.Path, len(path))
	for i, s := range path {
		switch s.kind {
		case 'f':
			name := s.field
			fp[i] = fieldpath.PathElement{FieldName: &name}
		case 'k':
			kl := value.FieldList(s.key)
			fp[i] = fieldpath.PathElement{Key: &kl}
		default:
			idx := s.index
			fp[i] = fieldpath.PathElement{Index: &idx}
		}
	}
	var best *owner
	bestDepth := -1
	for i := range owners {
		if depth := owns(owners[i].set, fp); depth > bestDepth || (depth == bestDepth && depth >= 0 && owners[i].time > best.time) {
			best, bestDepth = &owners[i], depth
		}
	}
	return best // nil when no owner covers path (bestDepth stayed -1)
}

// owns returns how deep set covers p: len(p) when it holds p or fields
// under it, a smaller depth when it holds a prefix as a leaf, -1 when none.
func owns(set *fieldpath.Set, p fieldpath.Path) int {
	depth := -1
	s := set
	for i, pe := range p {
		if s.Members.Has(pe) {
			depth = i + 1
		}
		child, ok := s.Children.Get(pe)
		if !ok {
			return depth
		}
		s = child
	}
	return len(p)
}

// render writes a path as people read it.
func render(path []step) string {
	var b strings.Builder
	for _, s := range path {
		switch s.kind {
		case 'f':
			if plain(s.field) {
				b.WriteByte('.')
				b.WriteString(s.field)
			} else {
				b.WriteString("[")
				b.WriteString(strconv.Quote(s.field))
				b.WriteString("]")
			}
		case 'k':
			b.WriteByte('[')
			b.WriteString(keyString(s.key))
			b.WriteByte(']')
		default:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		}
	}
	return b.String()
}

func plain(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// marshal is v's JSON as a person reads it: <, > and & as they are, not
// \u003c (json.Marshal's escaping for HTML; a page that shows a value
// escapes it itself).
func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// equal is reflect.DeepEqual for decoded JSON values (maps, slices,
// scalars): kept by hand, it measured 3 to 12% faster on BenchmarkCompare*.
func equal(a, b any) bool {
	switch at := a.(type) {
	case map[string]any:
		bt, ok := b.(map[string]any)
		if !ok || len(at) != len(bt) {
			return false
		}
		for k, v := range at {
			w, ok := bt[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		bt, ok := b.([]any)
		if !ok || len(at) != len(bt) {
			return false
		}
		for i := range at {
			if !equal(at[i], bt[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// stamped says a time at path is bookkeeping a writer stamps (metadata,
// status: a heartbeat, a lastUpdateTime), not the object's content: a
// ConfigMap's data or a spec that holds a time is what a consumer reads.
func stamped(path []step) bool {
	return len(path) > 0 && path[0].kind == 'f' && (path[0].field == "metadata" || path[0].field == "status")
}

// isTime says v is a string that is an RFC 3339 time.
func isTime(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}
