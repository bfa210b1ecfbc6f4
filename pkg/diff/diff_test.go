package diff_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
)

// deployment is two versions of a Deployment as the API server writes them:
// the scaler ("scaler", Update) owns .spec.replicas, the deployment
// controller (Update, status) owns .status, keyed conditions included.
const deployOld = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","uid":"u1","resourceVersion":"10","generation":1,
"managedFields":[
 {"manager":"scaler","operation":"Update","apiVersion":"apps/v1","time":"2026-12-02T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}},
 {"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1","time":"2026-12-02T10:00:01Z","fieldsType":"FieldsV1","subresource":"status","fieldsV1":{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"Available\"}":{".":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Progressing\"}":{".":{},"f:lastUpdateTime":{},"f:status":{},"f:type":{}}},"f:replicas":{}}}}]},
"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"app","image":"nginx:1"}]}}},
"status":{"replicas":1,"conditions":[{"type":"Available","status":"True","lastTransitionTime":"2026-12-02T10:00:00Z"},{"type":"Progressing","status":"True","lastUpdateTime":"2026-12-02T10:00:00Z"}]}}`

const deployNew = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","uid":"u1","resourceVersion":"12","generation":2,
"managedFields":[
 {"manager":"scaler","operation":"Update","apiVersion":"apps/v1","time":"2026-12-02T10:00:05Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}},
 {"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1","time":"2026-12-02T10:00:06Z","fieldsType":"FieldsV1","subresource":"status","fieldsV1":{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"Available\"}":{".":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Progressing\"}":{".":{},"f:lastUpdateTime":{},"f:status":{},"f:type":{}}},"f:replicas":{}}}}]},
"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"nginx:1"}]}}},
"status":{"replicas":3,"conditions":[{"type":"Progressing","status":"True","lastUpdateTime":"2026-12-02T10:00:06Z"},{"type":"Available","status":"False","lastTransitionTime":"2026-12-02T10:00:06Z"}]}}`

func byPath(t *testing.T, ch *diff.Changes) map[string]diff.Change {
	t.Helper()
	m := map[string]diff.Change{}
	for _, c := range ch.Paths {
		m[c.Path] = c
	}
	return m
}

func TestCompareKeysListItemsAndNamesTheirManagers(t *testing.T) {
	ch, err := diff.Compare([]byte(deployOld), []byte(deployNew), true)
	if err != nil {
		t.Fatal(err)
	}
	got := byPath(t, ch)
	want := map[string]struct{ manager, old, new string }{
		".spec.replicas":                                        {"scaler", "1", "3"},
		".status.replicas":                                      {"kube-controller-manager", "1", "3"},
		".metadata.generation":                                  {"", "1", "2"},
		".status.conditions[type=Available].status":             {"kube-controller-manager", `"True"`, `"False"`},
		".status.conditions[type=Available].lastTransitionTime": {"kube-controller-manager", `"2026-12-02T10:00:00Z"`, `"2026-12-02T10:00:06Z"`},
		".status.conditions[type=Progressing].lastUpdateTime":   {"kube-controller-manager", `"2026-12-02T10:00:00Z"`, `"2026-12-02T10:00:06Z"`},
	}
	for path, w := range want {
		c, ok := got[path]
		if !ok {
			t.Errorf("no change at %s; got %v", path, ch.Paths)
			continue
		}
		if c.Manager != w.manager || string(c.Old) != w.old || string(c.New) != w.new || c.Op != diff.Changed {
			t.Errorf("%s: got %+v, want manager %q, %s → %s", path, c, w.manager, w.old, w.new)
		}
	}
	if c := got[".status.replicas"]; c.Subresource != "status" || c.Operation != "Update" || c.Time != "2026-12-02T10:00:06Z" {
		t.Errorf(".status.replicas: operation %q subresource %q time %q", c.Operation, c.Subresource, c.Time)
	}
	// The reordered conditions are matched by type, not by index.
	for path := range got {
		if strings.Contains(path, "conditions[0]") || strings.Contains(path, "conditions[1]") {
			t.Errorf("conditions diffed by index: %s", path)
		}
	}
	if c := got[".metadata.resourceVersion"]; !c.Meta {
		t.Errorf("resourceVersion not marked meta: %+v", c)
	}
	if c := got[".metadata.managedFields"]; !c.Meta || c.Old != nil {
		t.Errorf("managedFields: %+v", c)
	}
	if len(ch.Visible()) != len(want) {
		t.Errorf("visible: %d, want %d: %v", len(ch.Visible()), len(want), ch.Visible())
	}
	if ch.TimestampOnly {
		t.Error("a scale is not timestamp-only")
	}
}

func cm(rv, annotation, data string) string {
	return `{"kind":"ConfigMap","metadata":{"name":"c","uid":"u","resourceVersion":"` + rv + `","annotations":{"example.com/heartbeat":"` + annotation + `"},
"managedFields":[{"manager":"stamper","operation":"Update","time":"` + annotation + `","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k":{}},"f:metadata":{"f:annotations":{".":{},"f:example.com/heartbeat":{}}}}}]},
"data":{"k":"` + data + `"}}`
}

func TestCompareSaysTimestampOnlyOnlyWhenNothingButTimesChanged(t *testing.T) {
	for _, keep := range []bool{true, false} {
		ch, err := diff.Compare([]byte(cm("1", "2026-12-02T10:00:00Z", "a")), []byte(cm("2", "2026-12-02T10:00:01.5Z", "a")), keep)
		if err != nil {
			t.Fatal(err)
		}
		v := ch.Visible()
		if !ch.TimestampOnly || len(v) != 1 || v[0].Path != `.metadata.annotations["example.com/heartbeat"]` || v[0].Manager != "stamper" {
			t.Errorf("keep=%v: heartbeat: %+v", keep, ch)
		}
		if !keep && (v[0].Old != nil || v[0].New != nil) {
			t.Errorf("values kept: %+v", v[0])
		}
		ch, err = diff.Compare([]byte(cm("1", "2026-12-02T10:00:00Z", "a")), []byte(cm("2", "2026-12-02T10:00:01Z", "b")), keep)
		if err != nil {
			t.Fatal(err)
		}
		if ch.TimestampOnly {
			t.Errorf("keep=%v: a data change called timestamp-only: %+v", keep, ch)
		}
		// A time in the data is content a consumer reads, not a stamp.
		ch, err = diff.Compare([]byte(cm("1", "2026-12-02T10:00:00Z", "2026-01-01T00:00:00Z")), []byte(cm("2", "2026-12-02T10:00:00Z", "2026-02-01T00:00:00Z")), keep)
		if err != nil {
			t.Fatal(err)
		}
		if ch.TimestampOnly || len(ch.Visible()) != 1 {
			t.Errorf("keep=%v: a time in .data called timestamp-only: %+v", keep, ch)
		}
	}
}

func TestCompareAddsAndRemovesSubtreesAsOneChange(t *testing.T) {
	old := `{"metadata":{"name":"p","labels":{"a":"1"}},"spec":{"containers":[{"name":"a","image":"x"}]}}`
	new := `{"metadata":{"name":"p","labels":{"b":"2"}},"spec":{"containers":[{"name":"a","image":"y"},{"name":"b","image":"z","ports":[{"containerPort":80,"protocol":"TCP"}]}]}}`
	ch, err := diff.Compare([]byte(old), []byte(new), true)
	if err != nil {
		t.Fatal(err)
	}
	got := byPath(t, ch)
	for path, op := range map[string]diff.Op{
		".metadata.labels.a":             diff.Removed,
		".metadata.labels.b":             diff.Added,
		".spec.containers[name=a].image": diff.Changed,
		".spec.containers[name=b]":       diff.Added,
	} {
		if got[path].Op != op {
			t.Errorf("%s: %+v, want %s (all: %v)", path, got[path], op, ch.Paths)
		}
	}
	var added map[string]any
	if err := json.Unmarshal(got[".spec.containers[name=b]"].New, &added); err != nil || added["image"] != "z" {
		t.Errorf("added item's value: %s (%v)", got[".spec.containers[name=b]"].New, err)
	}
	if len(ch.Paths) != 4 {
		t.Errorf("%d changes, want 4: %v", len(ch.Paths), ch.Paths)
	}
}

func TestCompareFallsBackToIndexesAndRefusesWhatIsNotJSON(t *testing.T) {
	// A listed item has no apiVersion and kind, a watch event's object has: no change.
	ch, err := diff.Compare([]byte(`{"spec":{"args":["a","b"]}}`), []byte(`{"apiVersion":"v1","kind":"Pod","spec":{"args":["a","c","d"]}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	got := byPath(t, ch)
	if got[".spec.args[1]"].Op != diff.Changed || got[".spec.args[2]"].Op != diff.Added || len(got) != 2 {
		t.Errorf("%v", ch.Paths)
	}
	if _, err := diff.Compare([]byte(`{`), []byte(`{}`), false); err == nil || !strings.Contains(err.Error(), "earlier version") {
		t.Errorf("bad JSON: %v", err)
	}
	if _, err := diff.Compare([]byte(`{}`), []byte(`[1]`), false); err == nil {
		t.Error("an array accepted as an object")
	}
}

func TestChurnCountsPathsObjectsAndTopManagers(t *testing.T) {
	var c diff.Churn
	hb := &diff.Changes{TimestampOnly: true, Paths: []diff.Change{{Path: ".a", Manager: "m1"}, {Path: ".metadata.resourceVersion", Meta: true}}}
	data := &diff.Changes{Paths: []diff.Change{{Path: ".a", Manager: "m2"}, {Path: ".b", Manager: "m2"}}}
	for range 3 {
		c.Add("ns/x", hb)
	}
	c.Add("ns/y", data)
	c.Add("ns/y", diff.Skip(diff.SkipNoPrevious))
	s := c.Summary(10)
	if s.Events != 4 || s.TimestampOnly != 3 || s.Skipped != 1 {
		t.Fatalf("%+v", s)
	}
	if len(s.Paths) != 2 || s.Paths[0] != (diff.PathChurn{Path: ".a", Count: 4, Share: 1, Manager: "m1"}) || s.Paths[1].Share != 0.25 {
		t.Errorf("paths %+v", s.Paths)
	}
	if len(s.Objects) != 2 || s.Objects[0] != (diff.ObjectChurn{Name: "ns/x", Count: 3}) {
		t.Errorf("objects %+v", s.Objects)
	}
	if got := c.Summary(1); len(got.Paths) != 1 || len(got.Objects) != 1 {
		t.Errorf("top 1: %+v", got)
	}

	// A reviewer's --diff run: an object's MODIFIED events not diffed are
	// its events too (HOT said fewer than came), a removal is not written
	// by the manager that had set the path, and a tie names both.
	var r diff.Churn
	r.Add("ns/z", &diff.Changes{Paths: []diff.Change{{Path: ".data.k", Op: diff.Changed, Manager: "bob"}, {Path: ".data.gone", Op: diff.Removed, Manager: "alice"}}})
	r.Add("ns/z", &diff.Changes{Paths: []diff.Change{{Path: ".data.k", Op: diff.Changed, Manager: "alice"}}})
	r.Add("ns/z", diff.Skip(diff.SkipCap))
	s = r.Summary(10)
	if len(s.Objects) != 1 || s.Objects[0].Count != 3 {
		t.Errorf("objects %+v, want ns/z's 3 MODIFIED events", s.Objects)
	}
	managers := map[string]string{}
	for _, p := range s.Paths {
		managers[p.Path] = p.Manager
	}
	if managers[".data.k"] != "alice and bob" || managers[".data.gone"] != "" {
		t.Errorf("top managers %q, want alice and bob tied on .data.k, no one for the removal", managers)
	}
}

// A list keyed by numbers (a Service's ports) names its items by them as
// JSON writes them.
func TestListItemsKeyedByNumbersAreNamedByThem(t *testing.T) {
	svc := func(target int) string {
		return `{"metadata":{"name":"s","managedFields":[{"manager":"m","operation":"Apply","fieldsType":"FieldsV1",` +
			`"fieldsV1":{"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:targetPort":{}}},"f:weights":{"k:{\"weight\":0.5}":{".":{},"f:x":{}}}}}}]},` +
			`"spec":{"ports":[{"port":80,"protocol":"TCP","targetPort":` + fmt.Sprint(target) + `}],"weights":[{"weight":0.5,"x":` + fmt.Sprint(target) + `}]}}`
	}
	ch, err := diff.Compare([]byte(svc(8080)), []byte(svc(9090)), false)
	if err != nil {
		t.Fatal(err)
	}
	got := byPath(t, ch)
	for _, path := range []string{".spec.ports[port=80,protocol=TCP].targetPort", ".spec.weights[weight=0.5].x"} {
		if _, ok := got[path]; !ok {
			t.Errorf("no change at %s; got %v", path, ch.Paths)
		}
	}
}

// Past the cap, the paths are counted together as (other): its count adds
// up their changes, but its share is of the events that changed any of
// them, each once, so it is never over 100%.
func TestOtherPathsShareCountsAnEventOnce(t *testing.T) {
	var c diff.Churn
	first := &diff.Changes{}
	for i := range 10000 {
		first.Paths = append(first.Paths, diff.Change{Path: fmt.Sprintf(".data.k%d", i)})
	}
	c.Add("ns/a", first)
	for i := range 10 {
		c.Add("ns/a", &diff.Changes{Paths: []diff.Change{{Path: fmt.Sprintf(".data.x%d", 3*i)}, {Path: fmt.Sprintf(".data.x%d", 3*i+1)}, {Path: fmt.Sprintf(".data.x%d", 3*i+2)}}})
	}
	for _, p := range c.Summary(20000).Paths {
		if p.Path != diff.Other {
			continue
		}
		if p.Count != 30 || p.Share > 1 || p.Share != 10.0/11 {
			t.Errorf("(other): %+v, want 30 changes in 10 of the 11 events", p)
		}
		return
	}
	t.Error("no (other) row")
}

// A value is shown as JSON a person reads: <, > and & as they are, not as
// the \u003c that json.Marshal writes for HTML (the report escapes what it
// shows itself).
func TestAValueKeepsItsAngleBracketsAndAmpersands(t *testing.T) {
	old := `{"metadata":{"name":"c"},"data":{"x":{"y":"a"}}}`
	new := `{"metadata":{"name":"c"},"data":{"x":{"y":"<b>hi</b> & co"}}}`
	ch, err := diff.Compare([]byte(old), []byte(new), true)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(byPath(t, ch)[".data.x.y"].New); got != `"<b>hi</b> & co"` {
		t.Errorf("new value %s, want \"<b>hi</b> & co\"", got)
	}
}

// The first annotation (or label) of an object that had none, and the last
// one removed, are changes of their keys, as every other is: the churn
// counted the map and the key apart (119 + 1 for one path).
func TestTheFirstAndLastAnnotationAreChangesOfTheirKeys(t *testing.T) {
	bare := `{"metadata":{"name":"c","resourceVersion":"1"},"data":{"k":"v"}}`
	stamped := `{"metadata":{"name":"c","resourceVersion":"2","annotations":{"example.com/at":"2026-12-02T10:00:00Z"},"labels":{"app":"web"}},"data":{"k":"v"}}`
	for _, tc := range []struct {
		old, new string
		op       diff.Op
	}{{bare, stamped, diff.Added}, {stamped, bare, diff.Removed}} {
		ch, err := diff.Compare([]byte(tc.old), []byte(tc.new), true)
		if err != nil {
			t.Fatal(err)
		}
		got := byPath(t, ch)
		if len(got) != 3 || got[`.metadata.annotations["example.com/at"]`].Op != tc.op || got[".metadata.labels.app"].Op != tc.op {
			t.Errorf("%s: %v, want each key %s", tc.op, got, tc.op)
		}
	}
}

// A trace without values records an event's skipped changes as "paths":[],
// as it always has, not null.
func TestChangesWithoutValuesKeepAnEmptyListOfPaths(t *testing.T) {
	b, err := json.Marshal(diff.Skip(diff.SkipCap).WithoutValues())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"paths":[]`) {
		t.Errorf("got %s, want \"paths\":[]", b)
	}
}
