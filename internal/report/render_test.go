package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/tracegen"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// render writes the report of the trace at path and parses it.
func render(t testing.TB, path string, opts Options) ([]byte, *html.Node) {
	t.Helper()
	if opts.Name == "" {
		opts.Name = filepath.Base(path)
	}
	rep := analyzeFile(t, path, opts)
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("parsing the report: %v", err)
	}
	return buf.Bytes(), doc
}

// elements returns the elements under n that match.
func elements(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// inSVG reports whether n is inside an <svg> element.
func inSVG(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.Data == "svg" {
			return true
		}
	}
	return false
}

// lineKinds counts a trace's lines by kind, read with the same reader.
func lineKinds(t testing.TB, path string) map[string]int {
	t.Helper()
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	n := map[string]int{}
	for {
		l, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		n[l.K]++
	}
}

func requestBars(doc *html.Node) []*html.Node {
	return elements(doc, func(n *html.Node) bool { return hasClass(n, "req") && inSVG(n) })
}

func relistRows(doc *html.Node) []*html.Node {
	return elements(doc, func(n *html.Node) bool { return n.Data == "tr" && hasClass(n, "relist") })
}

// requestRows are the rows whose id is a request's: "r" the resource's index, "-" the request's.
func requestRows(doc *html.Node) []*html.Node {
	id := regexp.MustCompile(`^r[0-9]+-[0-9]+$`)
	return elements(doc, func(n *html.Node) bool {
		return n.Data == "tr" && id.MatchString(attr(n, "id"))
	})
}

func TestEveryBundledTraceHasOneBarAndOneRowPerRequestAndOneRowPerRelist(t *testing.T) {
	for _, path := range bundledTraces(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, doc := render(t, path, Options{})
			requests := lineKinds(t, path)[trace.KindRequest]
			if requests == 0 {
				t.Fatal("the trace has no request lines")
			}
			if got := len(requestBars(doc)); got != requests {
				t.Errorf("request bars in the SVG: got %d, want %d (the request lines)", got, requests)
			}
			if got := len(requestRows(doc)); got != requests {
				t.Errorf("request table rows: got %d, want %d", got, requests)
			}
			// Every bar links to its row, in its resource's section.
			summaries := replaySummaries(t, path)
			sections := elements(doc, func(n *html.Node) bool { return n.Data == "section" && hasClass(n, "resource") })
			if len(sections) != len(summaries) {
				t.Fatalf("resource sections: got %d, want %d", len(sections), len(summaries))
			}
			for i, sec := range sections {
				rows := map[string]bool{}
				for _, r := range requestRows(sec) {
					rows["#"+attr(r, "id")] = true
				}
				for _, b := range requestBars(sec) {
					if href := attr(b, "href"); !rows[href] || !strings.HasPrefix(href, fmt.Sprintf("#r%d-", i)) {
						t.Errorf("a bar of resource %d links to %q, which is no request row of its section", i, href)
					}
				}
				if got, want := len(relistRows(sec)), summaries[i].Counters.Relists; int64(got) != want {
					t.Errorf("relist rows of %s: got %d, want %d (the replay's relists)", summaries[i].Resource, got, want)
				}
			}
		})
	}
}

func TestTheDemoReportShowsTheRelistDiffWithOldAndNewUIDs(t *testing.T) {
	path := "../../testdata/traces/demo.jsonl"
	rep := analyzeFile(t, path, Options{})
	rel := rep.Resources[0].Relists
	if len(rel) != 1 || rel[0].Diff == nil {
		t.Fatalf("relists: got %+v, want one with a diff", rel)
	}
	d := rel[0].Diff
	if d.NDeleted != 3 || d.NRecreated != 1 || d.NUpdated != 2 || d.NAdded != 0 || d.Unchanged != 119 || d.Before != 125 || d.After != 122 {
		t.Errorf("diff: got %+v, want 3 deleted, 1 recreated, 2 updated, 119 unchanged, 125 → 122", d)
	}
	if !strings.HasPrefix(rel[0].After, "watch #") || !strings.Contains(rel[0].After, ": error 410 Expired: too old resource version") {
		t.Errorf("after: got %q, want the 410 of a watch", rel[0].After)
	}
	_, doc := render(t, path, Options{})
	// The objects are in the detail row under the relist's row.
	row := relistRows(doc)[0]
	detail := row.NextSibling
	for detail != nil && detail.Type != html.ElementNode {
		detail = detail.NextSibling
	}
	if detail == nil || !hasClass(detail, "detail") {
		t.Fatal("the relist row has no detail row after it")
	}
	got := text(row) + text(detail)
	r, ns := d.Recreated[0], rep.Header.Resources[0].Namespace
	for _, want := range []string{ns + "/api-2", r.OldUID, r.NewUID, "missed delete", ns + "/web-42", "app=demo"} {
		if !strings.Contains(got, want) {
			t.Errorf("the relist row lacks %q:\n%s", want, got)
		}
	}
	if r.OldUID == r.NewUID || r.OldUID == "" {
		t.Errorf("recreated: got old UID %q and new %q, want two UIDs", r.OldUID, r.NewUID)
	}
}

// networkAttributes are the attributes through which a page loads or links something.
func networkAttributes() map[string]bool {
	return map[string]bool{"src": true, "href": true, "xlink:href": true, "action": true, "formaction": true,
		"poster": true, "data": true, "srcset": true, "background": true, "ping": true, "manifest": true, "codebase": true}
}

func TestAReportLoadsNothingFromTheNetworkAndRunsOnlyItsOwnScript(t *testing.T) {
	for _, path := range bundledTraces(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			page, doc := render(t, path, Options{})
			checkSelfContained(t, page, doc)
		})
	}
}

// checkSelfContained checks that nothing in the page refers to the network,
// and that the Content-Security-Policy lets only the page's script run.
func checkSelfContained(t *testing.T, page []byte, doc *html.Node) {
	t.Helper()
	network := networkAttributes()
	for _, n := range elements(doc, func(*html.Node) bool { return true }) {
		for _, a := range n.Attr {
			key := a.Key
			if a.Namespace != "" {
				key = a.Namespace + ":" + a.Key
			}
			if strings.HasPrefix(key, "on") {
				t.Errorf("<%s %s=%q>: an event handler attribute", n.Data, key, a.Val)
			}
			if !network[key] && !network[a.Key] {
				continue
			}
			v := strings.TrimSpace(a.Val)
			if n.Data == "a" && key == "href" && hasClass(n, "docs") && webURL(v) {
				continue // a finding's documentation: a link to follow, never loaded
			}
			if !strings.HasPrefix(v, "#") && v != "data:," {
				t.Errorf("<%s %s=%q>: want only in-page links (#...), and http(s) documentation links", n.Data, key, a.Val)
			}
		}
		if n.Data == "link" && attr(n, "rel") != "icon" {
			t.Errorf("<link rel=%q>: a page that loads nothing has no links but its empty icon", attr(n, "rel"))
		}
		if n.Data == "img" || n.Data == "iframe" || n.Data == "object" || n.Data == "embed" || n.Data == "image" || n.Data == "use" {
			t.Errorf("a <%s> element", n.Data)
		}
	}
	if bytes.Contains(bytes.ToLower(page), []byte("url(")) || bytes.Contains(bytes.ToLower(page), []byte("@import")) {
		t.Error("the page's CSS refers to a url() or @import")
	}
	scripts := elements(doc, func(n *html.Node) bool { return n.Data == "script" })
	var code []*html.Node
	for _, s := range scripts {
		if attr(s, "type") != "application/json" {
			code = append(code, s)
		}
		if attr(s, "src") != "" {
			t.Errorf("a script with src=%q", attr(s, "src"))
		}
	}
	if len(scripts) != 2 || len(code) != 1 {
		t.Fatalf("scripts: got %d (%d executable), want the JSON data and the page's script", len(scripts), len(code))
	}
	metas := elements(doc, func(n *html.Node) bool {
		return n.Data == "meta" && strings.EqualFold(attr(n, "http-equiv"), "Content-Security-Policy")
	})
	if len(metas) != 1 {
		t.Fatalf("Content-Security-Policy metas: got %d, want 1", len(metas))
	}
	csp := attr(metas[0], "content")
	sum := sha256.Sum256([]byte(text(code[0])))
	for _, want := range []string{"default-src 'none'", "script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "';"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
}

// Hostile strings a trace may carry: object names, labels and annotations
// are user data, and a hand-made trace can put anything anywhere.
const (
	hostileScript = `<script>document.title="pwned";window.__pwned=1</script>`
	hostileImg    = `"><img src=x onerror="document.title='pwned';window.__pwned=1">`
	hostileAttr   = `' onmouseover='window.__pwned=1' x='`
	hostileJSON   = `</script><script>window.__pwned=1</script>`
)

// hostileName is a 10 KB name-like string.
func hostileName() string { return strings.Repeat("a-very-long-name-", 10240/17) + "end" }

// writeHostileTrace writes a trace of two resources whose every piece of user data is hostile.
func writeHostileTrace(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "hostile.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{hostileScript, hostileImg, hostileName(), hostileAttr, hostileJSON}
	_, err = tracegen.Write(f, tracegen.Config{
		Resources: 2, Namespace: hostileImg, Objects: len(names), Events: 60, EventsPerWatch: 20, BookmarkEvery: 7, GoneEvery: 2, Missed: len(names),
		ListErrors: hostileScript + hostileJSON,
		Name:       func(i int) string { return names[i%len(names)] },
		Labels: func(i int) map[string]string {
			return map[string]string{"app": hostileScript, "tier": hostileImg, "x" + hostileAttr: hostileJSON}
		},
		Annotations: func(i int) map[string]string { return map[string]string{"note": hostileScript + hostileImg} },
		Header: func(h *trace.Header) {
			h.Server, h.ServerVersion, h.Tool = "https://"+hostileImg, hostileScript, hostileJSON
			for i := range h.Resources {
				h.Resources[i].LabelSelector, h.Resources[i].FieldSelector = hostileScript, hostileImg
			}
		},
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	// An alert note and a decision whose words are hostile too.
	appendLines(t, path,
		fmt.Sprintf(`{"k":"note","at":999999999,"state":%q,"reason":"alert","detail":%q}`, hostileScript, hostileImg),
		fmt.Sprintf(`{"k":"note","at":999999999,"state":"Backoff","reason":"backoff","detail":%q}`, hostileJSON))
	return path
}

func appendLines(t testing.TB, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestHostileStringsInATraceAreInertText(t *testing.T) {
	path := writeHostileTrace(t, t.TempDir())
	page, doc := render(t, path, Options{})
	checkSelfContained(t, page, doc)
	if imgs := elements(doc, func(n *html.Node) bool { return n.Data == "img" }); len(imgs) != 0 {
		t.Errorf("got %d <img> elements, want none", len(imgs))
	}
	if n := len(elements(doc, func(n *html.Node) bool { return n.Data == "section" && hasClass(n, "resource") })); n != 2 {
		t.Errorf("got %d resource sections, want one for each of the trace's 2 resources", n)
	}
	index := elements(doc, func(n *html.Node) bool { return n.Data == "table" && hasClass(n, "resources-index") })
	if len(index) != 1 || !strings.Contains(text(index[0]), hostileImg+"-1") || !strings.Contains(text(index[0]), "labels "+hostileScript) {
		t.Error("the header's list of resources does not show the second resource's hostile namespace and labels as text")
	}
	body := text(doc)
	for _, want := range []string{hostileScript, hostileImg, hostileJSON, "labels " + hostileScript, "app=" + hostileScript} {
		if !strings.Contains(body, want) {
			t.Errorf("the page's text lacks %q", want)
		}
	}
	if strings.Contains(body, hostileName()) {
		t.Error("the 10 KB name is shown whole, want it clipped")
	}
	// The name is shown as namespace/name, clipped.
	ref := hostileImg + "/" + hostileName()
	if len(ref) != 10301 {
		t.Fatalf("the hostile ref is %d bytes, want 10301", len(ref))
	}
	if want := ref[:clipName] + "… (10,301 bytes)"; !strings.Contains(body, want) {
		t.Errorf("the page lacks the clipped name %q", want[len(want)-40:])
	}
	// The JSON data holds numbers only, no user data: nothing in it can end its script.
	for _, s := range elements(doc, func(n *html.Node) bool { return n.Data == "script" && attr(n, "type") == "application/json" }) {
		if js := text(s); strings.Contains(js, "<") || strings.Contains(js, `\u003cimg src=x`) {
			t.Errorf("the JSON data holds the namespace: %.200s", js)
		}
	}
	rep := analyzeFile(t, path, Options{})
	if !rep.Alerts.Evaluated || len(rep.Alerts.Tripped) != 1 || rep.Alerts.Tripped[0].Rule != hostileScript {
		t.Errorf("alerts: got %+v, want the one tripped rule", rep.Alerts)
	}
}

// A trace recorded by kubectl watchcache proxy is observed traffic: the page
// says so, and names each stream's client instead of options of ours.
func TestAnObservedTraceNamesItsClients(t *testing.T) {
	path := "../../testdata/traces/proxy.jsonl"
	rep := analyzeFile(t, path, Options{})
	if !rep.Header.Observed || len(rep.Resources) != 1 || len(rep.Header.Resources) != 1 {
		t.Fatalf("observed %v, %d resources (%d in the header), want an observed trace of one stream", rep.Header.Observed, len(rep.Resources), len(rep.Header.Resources))
	}
	res := rep.Resources[0]
	if res.Client == nil || !strings.HasPrefix(res.Client.UserAgent, "kubectl/") {
		t.Fatalf("client: got %+v, want kubectl's User-Agent", res.Client)
	}
	if c := res.Counters; c.Lists != 1 || c.Added != 9 || c.Deleted != 1 {
		t.Errorf("counters: got %+v, want kubectl's list, then 9 added and 1 deleted", c)
	}
	_, doc := render(t, path, Options{})
	page := text(doc)
	for _, want := range []string{"other programs' reflectors", "User-Agent", res.Client.UserAgent, "another program's reflector, observed"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "idle timeout") {
		t.Error("the page shows our reflector's options for another program's stream")
	}
}

// The demo asked for full objects and its trace keeps their metadata: the
// report says what the server was asked for in the dashboard's words
// (metadata-only, full objects), and what the trace keeps of each object
// apart: never "objects kept" beside a dashboard's "full objects".
func TestTheReportNamesWhatWasAskedForAsTheDashboardDoes(t *testing.T) {
	_, doc := render(t, "../../testdata/traces/demo.jsonl", Options{})
	got := text(doc)
	for _, want := range []string{"asks for", "full objects", "trace keeps"} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	for _, bad := range []string{"objects kept", "metadata only"} {
		if strings.Contains(got, bad) {
			t.Errorf("the report says %q", bad)
		}
	}
}

// A request's row counts what it received in words that agree with the
// number: "1 event", "1 item", "(1 bookmark)".
func TestARequestRowCountsInTheSingularAndThePlural(t *testing.T) {
	for _, tc := range []struct {
		q    Request
		want string
	}{
		{Request{Verb: "list", Items: 1}, "1 item"},
		{Request{Verb: "list", Items: 500}, "500 items"},
		{Request{Verb: "watch", Events: 1}, "1 event"},
		{Request{Verb: "watch", Events: 362, Bookmarks: 1}, "362 events (1 bookmark)"},
		{Request{Verb: "watch", Events: 2, Bookmarks: 2}, "2 events (2 bookmarks)"},
	} {
		if got := requestRow(0, &tc.q).Count; got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.q, got, tc.want)
		}
	}
}

// A stream whose client left says so in its state, as the summary's
// stream.clientLeft does: how long before the end, in what state, and the
// objects the proxy forgot.
func TestAStreamWhoseClientLeftSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "forgotten.jsonl")
	if err := os.WriteFile(path, []byte(forgottenTrace), 0o600); err != nil {
		t.Fatal(err)
	}
	_, doc := render(t, path, Options{})
	want := "client left2ms before the end; it was Listed; the proxy forgot the 1 object it held"
	if page := text(doc); !strings.Contains(page, want) {
		t.Errorf("the page lacks %q", want)
	}
}
