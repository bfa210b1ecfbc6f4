package report

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
)

// findingView is one finding of the page's Findings section: what is
// wrong, its evidence with each request linked to its row, the cause,
// what to do and its documentation.
type findingView struct {
	Anchor                  string
	Severity, ID, Title     string
	Ignored                 bool
	Resource, ResAnchor     string
	Client                  string
	First, Last             string
	Count                   string
	Evidence, Cause, Action string
	Requests                []requestLink
	// Relists are the relists whose requests the evidence names.
	Relists []relistLink
	Window  string
	Facts   []keyValue
	Objects []findingObject
	// More counts the objects beyond those listed.
	More int
	// Docs is the documentation as given; DocsHref is the same when it is
	// an http or https URL (a link), "" otherwise (shown as text).
	Docs, DocsHref string
}

// requestLink is a request the evidence names: Href is its row in the
// resource's request table, "" when the table leaves it out.
type requestLink struct {
	ID   int64
	Href string
}

// relistLink is a relist the evidence rests on, and its row.
type relistLink struct {
	Number int
	Href   string
}

type findingObject struct{ What, Ref, OldUID, NewUID string }

// findingsSummary says how many findings there are, by severity.
type findingsSummary struct {
	Total, Errors, Warnings, Infos, Ignored int
}

// Text says it in words: "1 error, 2 warnings; 1 ignored".
func (s findingsSummary) Text() string {
	var parts []string
	if s.Errors > 0 {
		parts = append(parts, format.Plural(s.Errors, "error"))
	}
	if s.Warnings > 0 {
		parts = append(parts, format.Plural(s.Warnings, "warning"))
	}
	if s.Infos > 0 {
		parts = append(parts, format.Count(s.Infos)+" info") // never "infos"
	}
	out := strings.Join(parts, ", ")
	if s.Ignored > 0 {
		if out != "" {
			out += "; "
		}
		out += format.Count(s.Ignored) + " ignored (--ignore-finding: listed, counted by no rule)"
	}
	return out
}

func findingAnchor(res int, id findings.ID) string { return fmt.Sprintf("f%d-%s", res, id) }

// findingViews lays out every resource's findings, resource by resource,
// each in the order it was raised.
func findingViews(r *Report) ([]findingView, findingsSummary) {
	var out []findingView
	var sum findingsSummary
	for _, res := range r.Resources {
		shown := make(map[int64]bool, len(res.Requests))
		for _, q := range res.Requests {
			shown[q.ID] = true
		}
		for _, f := range res.Findings {
			out = append(out, findingViewOf(r, res, f, shown))
			sum.Total++
			switch {
			case f.Ignored:
				sum.Ignored++
			case f.Severity == findings.Error:
				sum.Errors++
			case f.Severity == findings.Warning:
				sum.Warnings++
			default:
				sum.Infos++
			}
		}
	}
	return out, sum
}

func findingViewOf(r *Report, res *Section, f findings.Finding, shown map[int64]bool) findingView {
	offset := func(t time.Time) string {
		if t.IsZero() || r.Header.StartedAt.IsZero() {
			return ""
		}
		return formatOffset(t.Sub(r.Header.StartedAt))
	}
	v := findingView{Anchor: findingAnchor(res.Index, f.ID), Severity: string(f.Severity), ID: string(f.ID), Title: format.ClipWithLength(f.Title, clipMessage),
		Ignored: f.Ignored, Resource: format.ClipWithLength(res.Name, clipName), ResAnchor: resourceAnchor(res.Index),
		First: offset(f.FirstAt), Count: format.Count(f.Count),
		Evidence: format.ClipWithLength(f.Evidence.Text, 4*clipMessage), Cause: format.ClipWithLength(f.Cause, 4*clipMessage), Action: format.ClipWithLength(f.Action, 4*clipMessage),
		Docs: format.ClipWithLength(f.Docs, clipMessage)}
	if res.Client != nil {
		v.Client = format.ClipWithLength(res.Client.UserAgent, clipMessage)
	} else if f.Client != "" {
		v.Client = format.ClipWithLength(f.Client, clipMessage)
	}
	if !f.LastAt.Equal(f.FirstAt) {
		v.Last = offset(f.LastAt)
	}
	for _, id := range f.Evidence.Requests {
		l := requestLink{ID: id}
		if shown[id] {
			l.Href = "#" + requestAnchor(res.Index, id)
		}
		v.Requests = append(v.Requests, l)
	}
	for _, l := range res.Relists {
		if slices.ContainsFunc(f.Evidence.Requests, func(id int64) bool { return id >= l.FirstRequest && id <= l.LastRequest }) {
			v.Relists = append(v.Relists, relistLink{Number: l.Number, Href: "#" + relistAnchor(res.Index, l.Number)})
		}
	}
	if w := f.Evidence.Window; w != nil {
		v.Window = fmt.Sprintf("%s to %s (%s)", offset(w.From), offset(w.To), w.Length()) // as explain says it
	}
	for _, k := range slices.Sorted(maps.Keys(f.Evidence.Facts)) {
		v.Facts = append(v.Facts, keyValue{Key: format.ClipWithLength(k, 64), Value: format.ClipWithLength(f.Evidence.Facts[k], clipMessage)})
	}
	for _, o := range f.Evidence.Objects {
		v.Objects = append(v.Objects, findingObject{What: format.ClipWithLength(o.What, 32), Ref: format.ClipWithLength(o.String(), 2*clipName), OldUID: format.ClipWithLength(o.OldUID, 64), NewUID: format.ClipWithLength(o.NewUID, 64)})
	}
	v.More = max(f.Evidence.ObjectsTotal-len(f.Evidence.Objects), 0)
	if webURL(f.Docs) {
		v.DocsHref = f.Docs
	}
	return v
}

// webURL says s is an absolute http or https URL: the only links the page
// makes from a trace's text.
func webURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return true
	}
	return false
}
