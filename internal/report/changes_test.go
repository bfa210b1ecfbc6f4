package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// writeChangesTrace writes a hand-written trace of one resource whose
// MODIFIED events recorded their changes (--diff, --trace-objects full):
// c1's .data.k changed twice by writer, c2's annotation by stamper (only a
// time), an event of c1 not diffed, and one of c2 whose path, value and
// manager are the given strings.
func writeChangesTrace(t *testing.T, path, value, manager string) string {
	t.Helper()
	q := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	obj := func(name, rv string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"hand","name":%q,"uid":"uid-%s","resourceVersion":%q}}`, name, name, rv)
	}
	meta := `{"path":".metadata.managedFields","op":"changed","meta":true},{"path":".metadata.resourceVersion","op":"changed","meta":true}`
	lines := []string{
		`{"k":"header","v":2,"startedAt":"2026-01-01T00:00:00Z","resources":[{"resource":{"version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true},"namespace":"hand","objects":"full"}]}`,
		`{"k":"note","r":0,"at":0,"state":"Listing","reason":"initial-list"}`,
		`{"k":"request","r":0,"at":1000000,"id":1,"verb":"list","opts":{}}`,
		`{"k":"item","r":0,"at":2000000,"id":1,"object":` + obj("c1", "5") + `}`,
		`{"k":"item","r":0,"at":2000000,"id":1,"object":` + obj("c2", "6") + `}`,
		`{"k":"page","r":0,"at":2000000,"id":1,"resourceVersion":"10","items":2}`,
		`{"k":"end","r":0,"at":2000000,"id":1,"reason":"closed"}`,
		`{"k":"request","r":0,"at":3000000,"id":2,"verb":"watch","opts":{"resourceVersion":"10","allowWatchBookmarks":true,"timeoutSeconds":300}}`,
		`{"k":"event","r":0,"at":4000000,"id":2,"type":"MODIFIED","object":` + obj("c1", "11") + `,"changes":{"paths":[{"path":".data.k","op":"changed","old":"1","new":"2","manager":"writer","operation":"Update"},` + meta + `]}}`,
		`{"k":"event","r":0,"at":5000000,"id":2,"type":"MODIFIED","object":` + obj("c1", "12") + `,"changes":{"paths":[{"path":".data.k","op":"changed","old":"2","new":"3","manager":"writer","operation":"Update"},` + meta + `]}}`,
		`{"k":"event","r":0,"at":6000000,"id":2,"type":"MODIFIED","object":` + obj("c2", "13") + `,"changes":{"paths":[{"path":".metadata.annotations[\"example.com/at\"]","op":"changed","old":"2026-01-01T00:00:01Z","new":"2026-01-01T00:00:02Z","manager":"stamper","operation":"Update"},` + meta + `],"timestampOnly":true}}`,
		`{"k":"event","r":0,"at":7000000,"id":2,"type":"MODIFIED","object":` + obj("c1", "14") + `,"changes":{"paths":[],"skipped":"over the cap on objects held for diffs"}}`,
		`{"k":"event","r":0,"at":8000000,"id":2,"type":"MODIFIED","object":` + obj("c2", "15") + `,"changes":{"paths":[{"path":` + q(path) + `,"op":"added","new":` + q(value) + `,"manager":` + q(manager) + `,"operation":"Apply","subresource":"status"},` + meta + `]}}`,
	}
	file := filepath.Join(t.TempDir(), "changes.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// changesSection is the "What changed" of resource i: its heading and the
// block after it.
func changesSection(doc *html.Node, i int) (*html.Node, *html.Node) {
	hs := elements(doc, func(n *html.Node) bool { return n.Data == "h3" && attr(n, "id") == fmt.Sprintf("changes-%d", i) })
	if len(hs) != 1 {
		return nil, nil
	}
	for n := hs[0].NextSibling; n != nil; n = n.NextSibling {
		if n.Type == html.ElementNode {
			if n.Data == "div" && hasClass(n, "changes") {
				return hs[0], n
			}
			break
		}
	}
	return hs[0], nil
}

func tableRows(n *html.Node, class string) [][]string {
	var out [][]string
	for _, tb := range elements(n, func(n *html.Node) bool { return n.Data == "table" && hasClass(n, class) }) {
		for _, tr := range elements(tb, func(n *html.Node) bool { return n.Data == "tr" }) {
			var row []string
			for _, td := range elements(tr, func(n *html.Node) bool { return n.Data == "td" }) {
				row = append(row, strings.TrimSpace(text(td)))
			}
			if row != nil {
				out = append(out, row)
			}
		}
	}
	return out
}

// A trace that recorded its MODIFIED events' changes gets a "What changed"
// per resource: the replay's churn (events diffed, timestamp-only, not
// diffed, the top paths with their share and manager, the busiest objects)
// and the last diffs with their values and writers.
func TestWhatChangedShowsTheReplaysChurnAndTheLastDiffs(t *testing.T) {
	path := writeChangesTrace(t, ".data.extra", "v", "kubectl")
	rep := analyzeFile(t, path, Options{})
	res := rep.Resources[0]
	if c := res.Churn; c == nil || c.Events != 4 || c.TimestampOnly != 1 || c.Skipped != 1 {
		t.Fatalf("churn: got %+v, want 4 events diffed, 1 timestamp-only, 1 skipped", c)
	}
	if res.RecentChangesTotal != 5 || len(res.RecentChanges) != 5 {
		t.Errorf("recent changes: %d kept of %d, want all 5", len(res.RecentChanges), res.RecentChangesTotal)
	}
	want := replaySummary(t, path).Churn
	if want == nil || want.Events != res.Churn.Events || len(want.Paths) != len(res.Churn.Paths) {
		t.Errorf("the report's churn %+v is not the replay summary's %+v", res.Churn, want)
	}

	_, doc := render(t, path, Options{})
	h, body := changesSection(doc, 0)
	if h == nil || body == nil {
		t.Fatal("no What changed section for resource 0")
	}
	if got := text(h); !strings.Contains(got, "What changed") || !strings.Contains(got, "4 MODIFIED events diffed") {
		t.Errorf("heading %q", got)
	}
	intro := text(body)
	for _, w := range []string{"4 MODIFIED events diffed, 1 of them (25%) timestamp-only", "1 not diffed"} {
		if !strings.Contains(intro, w) {
			t.Errorf("the section lacks %q:\n%s", w, intro)
		}
	}
	if strings.Contains(intro, "without old and new values") {
		t.Error("the section says the values were not kept, but the trace keeps full objects")
	}
	paths := tableRows(body, "churn-paths")
	wantPaths := [][]string{
		{".data.k", "2", "50%", "writer"},
		{".data.extra", "1", "25%", "kubectl/status"},
		{`.metadata.annotations["example.com/at"]`, "1", "25%", "stamper"},
	}
	if fmt.Sprint(paths) != fmt.Sprint(wantPaths) {
		t.Errorf("paths table:\n got %q\nwant %q", paths, wantPaths)
	}
	objects := tableRows(body, "churn-objects")
	// Its MODIFIED events, the one not diffed too, of all 5 (a reviewer's
	// HOT lines left those not diffed out).
	if wantObjects := [][]string{{"hand/c1", "3", "60%"}, {"hand/c2", "2", "40%"}}; fmt.Sprint(objects) != fmt.Sprint(wantObjects) {
		t.Errorf("objects table:\n got %q\nwant %q", objects, wantObjects)
	}
	recent := tableRows(body, "recent-changes")
	if len(recent) != 5 {
		t.Fatalf("got %d recent diffs, want 5: %q", len(recent), recent)
	}
	// Newest first.
	for i, w := range [][]string{
		{"+8ms", "hand/c2", "15", `.data.extra added "v" by kubectl/status`},
		{"+7ms", "hand/c1", "14", "not diffed: over the cap on objects held for diffs"},
		{"+6ms", "hand/c2", "13", `"2026-01-01T00:00:01Z" → "2026-01-01T00:00:02Z" by stamper`},
		{"+5ms", "hand/c1", "12", `.data.k "2" → "3" by writer`},
	} {
		row := recent[i]
		if len(row) != 4 || row[0] != w[0] || row[1] != w[1] || row[2] != w[2] || !strings.Contains(row[3], w[3]) {
			t.Errorf("recent diff %d: got %q, want %q", i, row, w)
		}
	}
	if !strings.Contains(recent[2][3], "timestamp-only") {
		t.Errorf("the timestamp-only diff does not say so: %q", recent[2][3])
	}
	if strings.Contains(text(body), "managedFields changed") || strings.Contains(text(body), ".metadata.resourceVersion") {
		t.Error("the section lists metadata.resourceVersion or managedFields")
	}

	// A cap keeps the last ones.
	rep = analyzeFile(t, path, Options{MaxRecentChanges: 2})
	if r := rep.Resources[0].RecentChanges; len(r) != 2 || r[0].ResourceVersion != "14" || r[1].ResourceVersion != "15" {
		t.Errorf("with MaxRecentChanges 2: got %+v, want the events at 14 and 15", r)
	}
}

// A trace without recorded changes has no "What changed".
func TestWhatChangedIsAbsentWithoutRecordedChanges(t *testing.T) {
	page, doc := render(t, "../../testdata/traces/demo.jsonl", Options{})
	if h, _ := changesSection(doc, 0); h != nil || strings.Contains(string(page), "What changed") {
		t.Error("the report of a trace without changes has a What changed section")
	}
	if rep := analyzeFile(t, "../../testdata/traces/demo.jsonl", Options{}); rep.Resources[0].Churn != nil || len(rep.Resources[0].RecentChanges) != 0 {
		t.Errorf("churn %+v, %d recent changes; want none", rep.Resources[0].Churn, len(rep.Resources[0].RecentChanges))
	}
}

// Paths, values and managers come from the cluster: they are text, never markup.
func TestWhatChangedEscapesPathsValuesAndManagers(t *testing.T) {
	path := writeChangesTrace(t, `.data["`+hostileScript+`"]`, hostileImg, hostileJSON)
	page, doc := render(t, path, Options{})
	checkSelfContained(t, page, doc)
	_, body := changesSection(doc, 0)
	if body == nil {
		t.Fatal("no What changed section")
	}
	got := text(body)
	// The value is shown as JSON, clipped.
	value, err := json.Marshal(hostileImg)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`.data["` + hostileScript + `"]`, hostileJSON + "/status", string(value[:60])} {
		if !strings.Contains(got, w) {
			t.Errorf("the section does not show %q as text", w)
		}
	}
	if n := len(elements(doc, func(n *html.Node) bool { return n.Data == "img" })); n != 0 {
		t.Errorf("got %d <img> elements, want none", n)
	}
	if n := len(elements(doc, func(n *html.Node) bool { return n.Data == "script" })); n != 2 {
		t.Errorf("got %d <script> elements, want the page's 2", n)
	}
	if strings.Contains(string(page), hostileScript) || strings.Contains(string(page), "<img src=x") {
		t.Error("the page holds a hostile string unescaped")
	}
}
