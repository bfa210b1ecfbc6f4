package report

import (
	"bytes"
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

// replayFindings replays the trace at path as `replay --speed 0` does and
// returns each resource's (or observed stream's) findings.
func replayFindings(t testing.TB, path string) [][]findings.Finding {
	t.Helper()
	var out [][]findings.Finding
	sess, err := session.NewReplay(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, sub := range sess.Subjects() {
		out = append(out, sub.Findings().List())
	}
	return out
}

// unescape undoes the percent-encoding html/template gives a URL.
func unescape(t *testing.T, s string) string {
	t.Helper()
	u, err := url.PathUnescape(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// ids are the elements' ids of the page.
func ids(doc *html.Node) map[string]*html.Node {
	out := map[string]*html.Node{}
	for _, n := range elements(doc, func(n *html.Node) bool { return attr(n, "id") != "" }) {
		out[attr(n, "id")] = n
	}
	return out
}

// The Findings section is the first of the page's main part, and has an
// article per finding the replay raised, in the order raised, each with its
// severity, title, evidence, cause and what to do; every request and relist
// of its evidence links to a row of the page.
func TestTheFindingsSectionComesFirstAndLinksItsEvidence(t *testing.T) {
	raisedSome := false
	for _, path := range bundledTraces(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, doc := render(t, path, Options{})
			main := elements(doc, func(n *html.Node) bool { return n.Data == "main" })
			if len(main) != 1 {
				t.Fatalf("%d <main>, want 1", len(main))
			}
			first := main[0].FirstChild
			for first != nil && first.Type != html.ElementNode {
				first = first.NextSibling
			}
			if first == nil || first.Data != "section" || attr(first, "id") != "findings" {
				t.Fatalf("the main part begins with %v, want the Findings section", first)
			}
			articles := elements(first, func(n *html.Node) bool { return n.Data == "article" && hasClass(n, "finding") })
			var want []findings.Finding
			for i, fs := range replayFindings(t, path) {
				for _, f := range fs {
					f.Resource = findingAnchor(i, f.ID) // the anchor it must have
					want = append(want, f)
				}
			}
			if len(articles) != len(want) {
				t.Fatalf("%d findings shown, the replay raised %d", len(articles), len(want))
			}
			raisedSome = raisedSome || len(want) > 0
			all := ids(doc)
			for i, a := range articles {
				f := want[i]
				if attr(a, "id") != f.Resource || !hasClass(a, "sev-"+string(f.Severity)) {
					t.Errorf("finding %d: id %q class %q, want id %q and severity %s", i, attr(a, "id"), attr(a, "class"), f.Resource, f.Severity)
				}
				got := text(a)
				for _, part := range []string{string(f.ID), f.Title, f.Evidence.Text, f.Cause, f.Action, f.Docs} {
					if !strings.Contains(got, part) {
						t.Errorf("finding %s lacks %q:\n%s", f.ID, part, got)
					}
				}
				links := 0
				for _, l := range elements(a, func(n *html.Node) bool { return n.Data == "a" }) {
					href := attr(l, "href")
					if hasClass(l, "docs") {
						if unescape(t, href) != f.Docs {
							t.Errorf("finding %s links its docs to %q, want %q", f.ID, href, f.Docs)
						}
						continue
					}
					target, ok := all[strings.TrimPrefix(href, "#")]
					if !strings.HasPrefix(href, "#") || !ok {
						t.Errorf("finding %s links to %q, which is no element of the page", f.ID, href)
						continue
					}
					if hasClass(l, "req-link") {
						links++
						if target.Data != "tr" || text(target.FirstChild) != text(l) {
							t.Errorf("finding %s: %s links to <%s> %q, want the request's row", f.ID, text(l), target.Data, text(target))
						}
					}
				}
				if links != len(f.Evidence.Requests) {
					t.Errorf("finding %s: %d request links, want one per request of its evidence %v (every request is listed)", f.ID, links, f.Evidence.Requests)
				}
			}
		})
	}
	if !raisedSome {
		t.Error("no bundled trace raised a finding: the test checks nothing")
	}
}

// What a finding says is escaped like any other text of the page, and its
// documentation is a link only when it is an http or https URL.
func TestAFindingIsEscapedAndLinksOnlyWebDocumentation(t *testing.T) {
	rep := analyzeFile(t, "../../testdata/traces/demo.jsonl", Options{Name: "demo.jsonl"})
	res := rep.Resources[0]
	base := findings.Finding{ID: findings.MissedDeletes, Severity: findings.Warning, Title: hostileScript, Cause: hostileImg, Action: hostileAttr,
		Evidence: findings.Evidence{Text: hostileJSON, Requests: []int64{res.Requests[0].ID, 1 << 40},
			Objects: []findings.Object{{Namespace: hostileImg, Name: hostileScript, What: "deleted"}}, ObjectsTotal: 3,
			Facts: map[string]string{hostileAttr: hostileScript}}}
	docs := map[findings.ID]string{
		findings.MissedDeletes: "javascript:window.__pwned=1",
		findings.RelistStorm:   "data:text/html,<script>window.__pwned=1</script>",
		findings.NoBookmarks:   "//example.com/no-scheme",
		findings.Throttled:     "https://kubernetes.io/docs/concepts/cluster-administration/flow-control/?q=\"><b>",
	}
	res.Findings = nil
	for _, id := range []findings.ID{findings.MissedDeletes, findings.RelistStorm, findings.NoBookmarks, findings.Throttled} {
		f := base
		f.ID, f.Docs = id, docs[id]
		res.Findings = append(res.Findings, f)
	}
	res.Findings[3].Ignored = true
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	checkSelfContained(t, buf.Bytes(), doc)
	articles := elements(doc, func(n *html.Node) bool { return n.Data == "article" })
	if len(articles) != 4 {
		t.Fatalf("%d findings shown, want 4", len(articles))
	}
	for i, a := range articles {
		id := res.Findings[i].ID
		got := text(a)
		for _, want := range []string{hostileScript, hostileImg, hostileAttr, hostileJSON, docs[id], "… and 2 more"} {
			if !strings.Contains(got, want) {
				t.Errorf("finding %s does not show %q as text:\n%s", id, want, got)
			}
		}
		var docLinks []string
		for _, l := range elements(a, func(n *html.Node) bool { return n.Data == "a" && hasClass(n, "docs") }) {
			docLinks = append(docLinks, attr(l, "href"))
		}
		if wantLink := id == findings.Throttled; (len(docLinks) == 1) != wantLink || wantLink && unescape(t, docLinks[0]) != docs[id] {
			t.Errorf("finding %s (docs %q): doc links %q, want a link only to an http(s) URL", id, docs[id], docLinks)
		}
		// The request the table lists is a link; the one it does not is text.
		var reqs []string
		for _, l := range elements(a, func(n *html.Node) bool { return n.Data == "a" && hasClass(n, "req-link") }) {
			reqs = append(reqs, attr(l, "href"))
		}
		if len(reqs) != 1 || reqs[0] != "#"+requestAnchor(0, res.Requests[0].ID) || !strings.Contains(got, "#1099511627776") {
			t.Errorf("finding %s: request links %v, want only the listed request's, and the other as text", id, reqs)
		}
		if hasClass(a, "ignored") != res.Findings[i].Ignored {
			t.Errorf("finding %s: class %q, ignored %v", id, attr(a, "class"), res.Findings[i].Ignored)
		}
	}
	if s := text(elements(doc, func(n *html.Node) bool { return attr(n, "id") == "findings" })[0]); !strings.Contains(s, "3 warnings; 1 ignored") {
		t.Errorf("the section's count does not say 3 warnings and 1 ignored:\n%s", s)
	}
}

func TestTheFindingsCountSaysEachSeverityInWords(t *testing.T) {
	for _, c := range []struct {
		s    findingsSummary
		want string
	}{
		{findingsSummary{}, ""},
		{findingsSummary{Errors: 1, Warnings: 2, Infos: 3, Ignored: 1}, "1 error, 2 warnings, 3 info; 1 ignored (--ignore-finding: listed, counted by no rule)"},
		{findingsSummary{Errors: 1200, Warnings: 1, Infos: 1}, "1,200 errors, 1 warning, 1 info"},
	} {
		if got := c.s.Text(); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.s, got, c.want)
		}
	}
}
