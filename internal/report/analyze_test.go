package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// bundledTraces are the recorded traces and the hand-written ones.
func bundledTraces(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, glob := range []string{"../../testdata/traces/*.jsonl", "../../pkg/trace/testdata/handwritten/*.jsonl"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) < 10 {
		t.Fatalf("found %d bundled traces, want at least 10", len(paths))
	}
	return paths
}

func analyzeFile(t testing.TB, path string, opts Options) *Report {
	t.Helper()
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rep, err := Analyze(t.Context(), rd, opts)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rep
}

// replaySummaries replays the trace at path as `replay --speed 0` does and
// returns each resource's summary, in the trace's order.
func replaySummaries(t testing.TB, path string) []summary.Summary {
	t.Helper()
	sess, err := session.NewReplay(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Run(context.Background()); err != nil {
		t.Fatalf("replay of %s: %v", path, err)
	}
	return sess.Summaries()
}

// replaySummary is the summary of a trace of one resource.
func replaySummary(t testing.TB, path string) summary.Summary {
	t.Helper()
	s := replaySummaries(t, path)
	if len(s) != 1 {
		t.Fatalf("%s: %d resources, want 1", path, len(s))
	}
	return s[0]
}

// sameAsReplay checks each resource's counters and end state against the replay's.
func sameAsReplay(t *testing.T, rep *Report, want []summary.Summary) {
	t.Helper()
	if len(rep.Resources) != len(want) {
		t.Fatalf("resources: the report has %d, the replay %d", len(rep.Resources), len(want))
	}
	for i, res := range rep.Resources {
		w := want[i]
		if res.Name != w.Resource {
			t.Errorf("resource %d: the report names it %q, the replay %q", i, res.Name, w.Resource)
		}
		got := res.Counters
		if !res.BackoffsKnown {
			got.Backoffs = w.Counters.Backoffs // a trace without decisions does not say
		}
		if got != w.Counters {
			t.Errorf("%s counters:\n got %+v\nwant %+v", res.Name, got, w.Counters)
		}
		if res.Objects != w.Objects || res.ResourceVersion != w.ResourceVersion || res.BookmarkRV != w.Bookmark.ResourceVersion {
			t.Errorf("%s end: got %d objects at %q, bookmark %q; want %d at %q, bookmark %q",
				res.Name, res.Objects, res.ResourceVersion, res.BookmarkRV, w.Objects, w.ResourceVersion, w.Bookmark.ResourceVersion)
		}
	}
}

func TestTheCountersAreTheReplaysSummaryCounters(t *testing.T) {
	several := map[string]int{}
	for _, path := range bundledTraces(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rep := analyzeFile(t, path, Options{})
			if len(rep.Resources) > 1 {
				several[filepath.Base(path)] = len(rep.Resources)
			}
			sameAsReplay(t, rep, replaySummaries(t, path))
		})
	}
	// The version 2 traces of several resources are among them: the
	// recorded one and the hand-written one.
	if several["several.jsonl"] != 3 || several["two-resources.jsonl"] != 2 {
		t.Errorf("traces of several resources compared: %v, want several.jsonl (3) and two-resources.jsonl (2)", several)
	}
}

// edgeTrace is a hand-written trace of the cases the bundled ones lack: a
// refused streaming list, a 410 on a continue token that restarts the list,
// a bookmark older than the cursor, a "too large resource version" that
// relists with a missed update, and a watch the trace ends inside.
const edgeTrace = `{"k":"header","v":1,"startedAt":"2026-01-01T00:00:00Z","tool":"hand","resource":{"version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true},"namespace":"edge","objects":"metadata","options":{"strategy":"auto","pageSize":2,"watchTimeout":"5m0s","idleTimeout":"11m0s","initialEventsTimeout":"1m0s","maxPermanentRetries":5}}
{"k":"request","at":1000000,"id":1,"verb":"watch","opts":{"resourceVersionMatch":"NotOlderThan","sendInitialEvents":true,"allowWatchBookmarks":true,"timeoutSeconds":300}}
{"k":"end","at":2000000,"id":1,"reason":"error","status":{"code":400,"reason":"BadRequest","message":"sendInitialEvents is forbidden"}}
{"k":"request","at":3000000,"id":2,"verb":"list","opts":{"limit":2}}
{"k":"item","at":4000000,"id":2,"object":{"metadata":{"namespace":"edge","name":"a","uid":"uid-a","resourceVersion":"5","labels":{"app":"a"}}}}
{"k":"item","at":4000000,"id":2,"object":{"metadata":{"namespace":"edge","name":"b","uid":"uid-b","resourceVersion":"6"}}}
{"k":"page","at":4000000,"id":2,"resourceVersion":"10","continue":"c1","remainingItemCount":1,"items":2}
{"k":"end","at":4000000,"id":2,"reason":"closed"}
{"k":"request","at":5000000,"id":3,"verb":"list","opts":{"limit":2,"continue":"c1"}}
{"k":"end","at":6000000,"id":3,"reason":"error","status":{"code":410,"reason":"Expired","message":"The provided continue parameter is too old"}}
{"k":"request","at":7000000,"id":4,"verb":"list","opts":{"limit":2}}
{"k":"item","at":8000000,"id":4,"object":{"metadata":{"namespace":"edge","name":"a","uid":"uid-a","resourceVersion":"5","labels":{"app":"a"}}}}
{"k":"item","at":8000000,"id":4,"object":{"metadata":{"namespace":"edge","name":"b","uid":"uid-b","resourceVersion":"6"}}}
{"k":"page","at":8000000,"id":4,"resourceVersion":"12","continue":"c2","remainingItemCount":1,"items":2}
{"k":"end","at":8000000,"id":4,"reason":"closed"}
{"k":"request","at":9000000,"id":5,"verb":"list","opts":{"limit":2,"continue":"c2"}}
{"k":"item","at":10000000,"id":5,"object":{"metadata":{"namespace":"edge","name":"c","uid":"uid-c","resourceVersion":"11"}}}
{"k":"page","at":10000000,"id":5,"resourceVersion":"12","items":1}
{"k":"end","at":10000000,"id":5,"reason":"closed"}
{"k":"request","at":11000000,"id":6,"verb":"watch","opts":{"resourceVersion":"12","allowWatchBookmarks":true,"timeoutSeconds":300}}
{"k":"event","at":12000000,"id":6,"type":"MODIFIED","object":{"metadata":{"namespace":"edge","name":"a","uid":"uid-a","resourceVersion":"13","labels":{"app":"a"}}}}
{"k":"event","at":13000000,"id":6,"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"11"}}}
{"k":"event","at":14000000,"id":6,"type":"DELETED","object":{"metadata":{"namespace":"edge","name":"c","uid":"uid-c","resourceVersion":"14"}}}
{"k":"end","at":15000000,"id":6,"reason":"error","status":{"code":504,"reason":"Timeout","message":"Too large resource version: 20, current: 14","causes":["ResourceVersionTooLarge"]}}
{"k":"request","at":16000000,"id":7,"verb":"list","opts":{"limit":2}}
{"k":"item","at":17000000,"id":7,"object":{"metadata":{"namespace":"edge","name":"a","uid":"uid-a","resourceVersion":"13","labels":{"app":"a"}}}}
{"k":"item","at":17000000,"id":7,"object":{"metadata":{"namespace":"edge","name":"b","uid":"uid-b","resourceVersion":"15","labels":{"app":"b"}}}}
{"k":"page","at":17000000,"id":7,"resourceVersion":"15","continue":"c3","remainingItemCount":0,"items":2}
{"k":"end","at":17000000,"id":7,"reason":"closed"}
{"k":"request","at":18000000,"id":8,"verb":"list","opts":{"limit":2,"continue":"c3"}}
{"k":"page","at":19000000,"id":8,"resourceVersion":"15","items":0}
{"k":"end","at":19000000,"id":8,"reason":"closed"}
{"k":"request","at":20000000,"id":9,"verb":"watch","opts":{"resourceVersion":"15","allowWatchBookmarks":true,"timeoutSeconds":300}}
{"k":"event","at":21000000,"id":9,"type":"MODIFIED","object":{"metadata":{"namespace":"edge","name":"b","uid":"uid-b","resourceVersion":"16"}}}
`

// stalledStreamTrace is a streaming list that stalls before its
// initial-events-end bookmark, a LIST fallback, and a forced relist.
const stalledStreamTrace = `{"k":"header","v":1,"startedAt":"2026-01-01T00:00:00Z","tool":"hand","resource":{"version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true},"namespace":"edge","objects":"metadata","options":{"strategy":"auto","pageSize":0,"watchTimeout":"5m0s","idleTimeout":"11m0s","initialEventsTimeout":"1m0s","maxPermanentRetries":5}}
{"k":"request","at":1000000,"id":1,"verb":"watch","opts":{"resourceVersionMatch":"NotOlderThan","sendInitialEvents":true,"allowWatchBookmarks":true,"timeoutSeconds":300}}
{"k":"event","at":2000000,"id":1,"type":"ADDED","object":{"metadata":{"namespace":"edge","name":"a","uid":"uid-a","resourceVersion":"5"}}}
{"k":"end","at":62000000000,"id":1,"reason":"canceled","error":"initial-events-end bookmark did not arrive in time"}
{"k":"request","at":62001000000,"id":2,"verb":"list","opts":{}}
{"k":"item","at":62002000000,"id":2,"object":{"metadata":{"namespace":"edge","name":"a","uid":"uid-a","resourceVersion":"5"}}}
{"k":"page","at":62002000000,"id":2,"resourceVersion":"10","items":1}
{"k":"end","at":62002000000,"id":2,"reason":"closed"}
{"k":"request","at":62003000000,"id":3,"verb":"watch","opts":{"resourceVersion":"10","allowWatchBookmarks":true,"timeoutSeconds":300}}
{"k":"event","at":62004000000,"id":3,"type":"ADDED","object":{"metadata":{"namespace":"edge","name":"b","uid":"uid-b","resourceVersion":"11"}}}
{"k":"end","at":62005000000,"id":3,"reason":"canceled","error":"forced relist"}
{"k":"request","at":62006000000,"id":4,"verb":"list","opts":{}}
{"k":"item","at":62007000000,"id":4,"object":{"metadata":{"namespace":"edge","name":"b","uid":"uid-b2","resourceVersion":"12"}}}
{"k":"page","at":62007000000,"id":4,"resourceVersion":"12","items":1}
{"k":"end","at":62007000000,"id":4,"reason":"closed"}
{"k":"request","at":62008000000,"id":5,"verb":"watch","opts":{"resourceVersion":"12","allowWatchBookmarks":true,"timeoutSeconds":300}}
{"k":"end","at":62009000000,"id":5,"reason":"canceled","error":"context canceled"}
`

func TestAStalledStreamingListAndAForcedRelistCountAsTheReplayCountsThem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stalled.jsonl")
	if err := os.WriteFile(path, []byte(stalledStreamTrace), 0o600); err != nil {
		t.Fatal(err)
	}
	res := analyzeFile(t, path, Options{}).Resources[0]
	want := replaySummary(t, path).Counters
	got := res.Counters
	got.Backoffs = want.Backoffs
	if got != want || want.Lists != 3 || want.Relists != 2 {
		t.Errorf("counters:\n got %+v\nwant %+v (3 lists: the stalled stream, the LIST fallback, the forced relist)", got, want)
	}
	stream := res.Requests[0]
	if stream.Kind != KindStreamingList || stream.Class != EndCanceled || stream.InitialEventsEnd != 0 {
		t.Errorf("the streaming list: got %+v, want a canceled streaming list without its initial-events-end", stream)
	}
	if len(res.Relists) != 2 {
		t.Fatalf("relists: got %d, want 2", len(res.Relists))
	}
	if r := res.Relists[0]; r.Outcome != RelistFirstComplete || !strings.Contains(r.After, "streaming list #1: canceled: initial-events-end bookmark did not arrive in time") {
		t.Errorf("the fallback: got %+v, want the first complete list, after the stalled stream", r)
	}
	if r := res.Relists[1]; r.Outcome != RelistCompleted || r.Diff == nil || r.Diff.NRecreated != 1 || r.Diff.NDeleted != 1 || !strings.Contains(r.After, "watch #3: canceled: forced relist") {
		t.Errorf("the forced relist: got %+v, diff %+v; want completed after the forced relist, a deleted and b recreated", r, r.Diff)
	}
}

// A later segment of a rotating trace keeps the live run's request
// numbers, where its replay numbers them from 1: a relist still names the
// request it came after, by the trace's number.
func TestARelistInALaterSegmentNamesTheRequestItCameAfter(t *testing.T) {
	shifted := regexp.MustCompile(`"id":(\d+)`).ReplaceAllStringFunc(stalledStreamTrace, func(s string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(s, `"id":`))
		return fmt.Sprintf(`"id":%d`, n+100)
	})
	path := filepath.Join(t.TempDir(), "segment.jsonl")
	if err := os.WriteFile(path, []byte(shifted), 0o600); err != nil {
		t.Fatal(err)
	}
	res := analyzeFile(t, path, Options{}).Resources[0]
	if len(res.Relists) != 2 || !strings.Contains(res.Relists[0].After, "streaming list #101: canceled") || !strings.Contains(res.Relists[1].After, "watch #103: canceled: forced relist") {
		t.Errorf("relists %+v: want each after its request, by the trace's number", res.Relists)
	}
}

func TestTheEdgesOfTheProtocolCountAsTheReplayCountsThem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "edge.jsonl")
	if err := os.WriteFile(path, []byte(edgeTrace), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := analyzeFile(t, path, Options{})
	res := rep.Resources[0]
	want := replaySummary(t, path).Counters
	got := res.Counters
	if res.BackoffsKnown {
		t.Error("backoffs known, want unknown: the trace has no decisions")
	}
	got.Backoffs = want.Backoffs
	if got != want {
		t.Errorf("counters:\n got %+v\nwant %+v", got, want)
	}
	if want.Lists != 3 || want.Relists != 2 || want.Gone != 1 || want.TooLargeResourceVersion != 1 || want.ResourceVersionBackwards != 1 {
		t.Errorf("the replay counted %+v; the trace was written for 3 lists, 2 relists, one 410, one too-large and one RV backwards", want)
	}
	classes := map[int64]EndClass{}
	for _, r := range res.Requests {
		classes[r.ID] = r.Class
	}
	for id, c := range map[int64]EndClass{1: EndError, 2: EndClosed, 3: EndGone, 6: EndError, 9: EndOpen} {
		if classes[id] != c {
			t.Errorf("request %d: got class %q, want %q", id, classes[id], c)
		}
	}
	if r := res.Requests[8]; r.End != 21*time.Millisecond || r.Events != 1 {
		t.Errorf("the open watch: got end %v and %d events, want the trace's end (21ms) and 1 event", r.End, r.Events)
	}
	if len(res.Relists) != 2 {
		t.Fatalf("relists: got %d, want 2", len(res.Relists))
	}
	first, second := res.Relists[0], res.Relists[1]
	if first.Outcome != RelistFirstComplete || first.FirstRequest != 4 || first.LastRequest != 5 || !strings.Contains(first.After, "list #3: error 410 Expired: The provided continue parameter is too old") {
		t.Errorf("list #2: got %+v, want the first complete list, requests 4-5, after the 410 of list #3", first)
	}
	d := second.Diff
	if second.Outcome != RelistCompleted || d == nil || d.NUpdated != 1 || d.NDeleted != 0 || d.Unchanged != 1 || d.Updated[0].Ref.Name != "b" || d.Updated[0].Labels["app"] != "b" {
		t.Errorf("list #3: got %+v with diff %+v, want completed with b updated", second, d)
	}
	if !strings.Contains(second.After, "watch #6: error 504 Timeout: Too large resource version") {
		t.Errorf("list #3 came after %q, want the too-large answer to watch #6", second.After)
	}
	kinds := map[MarkerKind]int{}
	for _, m := range res.Markers {
		kinds[m.Kind]++
	}
	if kinds[MarkGone] != 1 || kinds[MarkRelist] != 1 || kinds[MarkRVBackwards] != 1 || kinds[MarkBackoff] != 0 {
		t.Errorf("markers: got %v, want one 410, one relist, one RV backwards", kinds)
	}
}

// The replay's clock stands at the last line taken (a request's start
// precedes its line) and the resources share it: the report lays the notes
// out at the recorded times all the same. Each request starts at its
// request line and ends at its end line (the trace's end without one), and
// each progress bookmark is in the bucket of its line.
func TestRequestsAndBookmarksAreWhereTheTraceRecordedThem(t *testing.T) {
	for _, path := range bundledTraces(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rep := analyzeFile(t, path, Options{})
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			type span struct{ start, end time.Duration }
			spans := map[[2]int64]*span{}   // resource, request id
			bookmarks := map[[2]int64]int{} // resource, bucket
			for _, line := range strings.Split(string(b), "\n") {
				var l trace.Line
				if json.Unmarshal([]byte(line), &l) != nil {
					continue
				}
				at, key := time.Duration(l.At), [2]int64{int64(l.R), l.ID}
				switch {
				case l.K == trace.KindRequest:
					spans[key] = &span{start: at, end: -1}
				case l.K == trace.KindEnd && spans[key] != nil:
					spans[key].end = at
				case l.K == trace.KindEvent && l.Type == string(reflector.EventBookmark) && !strings.Contains(string(l.Object), "k8s.io/initial-events-end"):
					// A progress bookmark: a streaming list's end is its list's end.
					bookmarks[[2]int64{int64(l.R), int64(at / rep.Resources[l.R].BucketWidth)}]++
				}
			}
			n := 0
			for _, res := range rep.Resources {
				for _, r := range res.Requests {
					n++
					s := spans[[2]int64{int64(res.Index), r.ID}]
					if s == nil {
						t.Errorf("%s request #%d: not in the trace", res.Name, r.ID)
						continue
					}
					if s.end < 0 {
						s.end = rep.Duration
					}
					if r.Start != s.start || r.End != s.end {
						t.Errorf("%s request #%d: %v to %v, the trace has %v to %v", res.Name, r.ID, r.Start, r.End, s.start, s.end)
					}
				}
				for i, bk := range res.Buckets {
					if want := bookmarks[[2]int64{int64(res.Index), int64(i)}]; bk.Bookmarks != want {
						t.Errorf("%s bucket %d: %d bookmarks, the trace has %d", res.Name, i, bk.Bookmarks, want)
					}
				}
			}
			if n != len(spans) {
				t.Errorf("the report has %d requests, the trace %d", n, len(spans))
			}
		})
	}
}

// cutTrace is an observed stream whose client canceled a watch without a
// cause (an end the stream makes too when the trace ends inside a request),
// then a watch the trace ends inside.
const cutTrace = `{"k":"header","v":2,"startedAt":"2026-01-01T00:00:00Z","tool":"hand","resources":null,"observed":true}
{"k":"resource","r":0,"at":0,"resource":{"resource":{"group":"","version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true},"namespace":"","objects":"metadata","options":{"strategy":""}},"client":{"userAgent":"hand/1","remoteAddr":"127.0.0.1:1"}}
{"k":"request","r":0,"at":1000000,"id":1,"verb":"list","opts":{"limit":500}}
{"k":"page","r":0,"at":2000000,"id":1,"resourceVersion":"10","items":0}
{"k":"end","r":0,"at":2000000,"id":1,"reason":"closed"}
{"k":"request","r":0,"at":3000000,"id":2,"verb":"watch","opts":{"resourceVersion":"10","allowWatchBookmarks":true}}
{"k":"end","r":0,"at":3500000,"id":2,"reason":"canceled"}
{"k":"request","r":0,"at":4000000,"id":3,"verb":"list","opts":{"limit":500}}
{"k":"page","r":0,"at":5000000,"id":3,"resourceVersion":"12","items":0}
{"k":"end","r":0,"at":5000000,"id":3,"reason":"closed"}
{"k":"request","r":0,"at":6000000,"id":4,"verb":"watch","opts":{"resourceVersion":"12","allowWatchBookmarks":true}}
{"k":"event","r":0,"at":7000000,"id":4,"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"13"}}}
`

func TestAnObservedRequestCanceledWithoutCauseEndsAndTheLastHasNoEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(path, []byte(cutTrace), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := analyzeFile(t, path, Options{})
	sameAsReplay(t, rep, replaySummaries(t, path))
	reqs := rep.Resources[0].Requests
	if len(reqs) != 4 {
		t.Fatalf("requests: got %d, want 4", len(reqs))
	}
	if w := reqs[1]; w.Class != EndCanceled || w.End != 3500*time.Microsecond {
		t.Errorf("the canceled watch: got class %q ending at %v, want canceled at its end line (3.5ms)", w.Class, w.End)
	}
	if w := reqs[3]; w.Class != EndOpen || w.End != 7*time.Millisecond || w.Bookmarks != 1 {
		t.Errorf("the last watch: got class %q ending at %v with %d bookmarks, want no end (the trace's, 7ms) and 1 bookmark", w.Class, w.End, w.Bookmarks)
	}
}

// Alerts of several resources come from their replays' goroutines: the
// report gathers them in time order.
func TestAlertsOfSeveralResourcesAreGatheredInTimeOrder(t *testing.T) {
	b, err := os.ReadFile("../../pkg/trace/testdata/handwritten/two-resources.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "alerts.jsonl")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	appendLines(t, path,
		`{"k":"note","r":1,"at":999999998,"state":"rule-b","reason":"alert","detail":"b tripped"}`,
		`{"k":"note","r":0,"at":999999999,"state":"rule-a","reason":"alert","detail":"a tripped"}`)
	al := analyzeFile(t, path, Options{}).Alerts
	if !al.Evaluated || al.Total != 2 || len(al.Tripped) != 2 || al.Tripped[0].Rule != "rule-b" || al.Tripped[1].Rule != "rule-a" {
		t.Errorf("alerts: got %+v, want rule-b then rule-a", al)
	}
}

// relistedTrace is an observed stream that relists after a 410 and misses
// the delete of b.
const relistedTrace = `{"k":"header","v":2,"startedAt":"2026-01-01T00:00:00Z","tool":"hand","resources":null,"observed":true}
{"k":"resource","r":0,"at":0,"resource":{"resource":{"group":"","version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true},"namespace":"","objects":"metadata","options":{"strategy":""}},"client":{"userAgent":"hand/1","remoteAddr":"127.0.0.1:1"}}
{"k":"request","r":0,"at":1000000,"id":1,"verb":"list","opts":{"limit":500}}
{"k":"item","r":0,"at":2000000,"id":1,"object":{"metadata":{"namespace":"n","name":"a","uid":"uid-a","resourceVersion":"5","labels":{"app":"a"}}}}
{"k":"item","r":0,"at":2000000,"id":1,"object":{"metadata":{"namespace":"n","name":"b","uid":"uid-b","resourceVersion":"6","labels":{"app":"b"}}}}
{"k":"page","r":0,"at":2000000,"id":1,"resourceVersion":"10","items":2}
{"k":"end","r":0,"at":2000000,"id":1,"reason":"closed"}
{"k":"request","r":0,"at":3000000,"id":2,"verb":"watch","opts":{"resourceVersion":"10","allowWatchBookmarks":true}}
{"k":"end","r":0,"at":4000000,"id":2,"reason":"error","status":{"code":410,"reason":"Expired","message":"too old resource version: 10 (15)"}}
{"k":"request","r":0,"at":5000000,"id":3,"verb":"list","opts":{"limit":500}}
{"k":"item","r":0,"at":6000000,"id":3,"object":{"metadata":{"namespace":"n","name":"a","uid":"uid-a","resourceVersion":"5","labels":{"app":"a"}}}}
{"k":"page","r":0,"at":6000000,"id":3,"resourceVersion":"16","items":1}
{"k":"end","r":0,"at":6000000,"id":3,"reason":"closed"}
`

func TestAnObservedRelistNamesTheMissedDeleteWithItsLabels(t *testing.T) {
	path := filepath.Join(t.TempDir(), "relisted.jsonl")
	if err := os.WriteFile(path, []byte(relistedTrace), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := analyzeFile(t, path, Options{})
	sameAsReplay(t, rep, replaySummaries(t, path))
	res := rep.Resources[0]
	if len(res.Relists) != 1 {
		t.Fatalf("relists: got %d, want 1", len(res.Relists))
	}
	rl := res.Relists[0]
	d := rl.Diff
	if rl.Outcome != RelistCompleted || d == nil || d.NDeleted != 1 || d.Deleted[0].Ref.Name != "b" || d.Deleted[0].Labels["app"] != "b" || !strings.Contains(rl.After, "watch #2: error 410") {
		t.Errorf("the relist: got %+v with diff %+v, want completed after watch #2's 410, b deleted with its labels", rl, d)
	}
}

// A flowcontrol line is about the run, not a stream (its r is 0): in an
// observed trace it may come before any stream's resource line, as when
// the proxy named a 429's FlowSchema before it recorded the stream.
func TestAnObservedTracesFlowControlLineBeforeItsFirstStreamIsTheRunsNotAStreams(t *testing.T) {
	body, err := os.ReadFile("../../testdata/traces/proxy.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := strings.Cut(string(body), "\n")
	path := filepath.Join(t.TempDir(), "flowcontrol-first.jsonl")
	early := `{"k":"flowcontrol","r":0,"at":1000,"flowSchemas":{"0b1c":"global-default"}}`
	if err := os.WriteFile(path, []byte(header+"\n"+early+"\n"+rest), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := analyzeFile(t, path, Options{})
	want := analyzeFile(t, "../../testdata/traces/proxy.jsonl", Options{})
	if len(rep.Resources) != len(want.Resources) || rep.Duration != want.Duration {
		t.Errorf("got %d streams over %v, want %d over %v as without the line", len(rep.Resources), rep.Duration, len(want.Resources), want.Duration)
	}
}

// A trace of its header alone has no decisions to compare, as replay and
// explain say: the report said the replay differed in 2 places.
func TestAReportOfAHeaderAloneSaysNoDifference(t *testing.T) {
	b, err := os.ReadFile("../../testdata/traces/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "header.jsonl")
	if err := os.WriteFile(path, []byte(strings.SplitAfter(string(b), "\n")[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, w := range analyzeFile(t, path, Options{}).Warnings {
		if strings.Contains(w, "differently") {
			t.Errorf("warning %q", w)
		}
	}
}

// A report whose context ends before the trace does fails: it would show
// part of the run as all of it.
func TestAnInterruptedReportFails(t *testing.T) {
	rd, err := trace.Open("../../testdata/traces/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Analyze(ctx, rd, Options{}); err == nil || !strings.Contains(err.Error(), "before its end") {
		t.Errorf("a canceled report: got %v, want it stopped before the trace's end", err)
	}
}

// An observed trace with a line its streams cannot decode fails the report,
// as replay and explain fail, and as a reflector's trace does: the page
// would show the run up to there as all of it.
func TestAnObservedTraceWithAnUndecodableItemFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad-item.jsonl")
	bad := strings.Replace(relistedTrace, `"name":"b"`, `"name":7`, 1)
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var lineErr *trace.LineError
	if _, err := Analyze(t.Context(), rd, Options{}); !errors.As(err, &lineErr) || lineErr.Line != 5 || !strings.Contains(err.Error(), "bad-item.jsonl:5: decoding object: ") {
		t.Errorf("got %v, want an error at line 5 (bad-item.jsonl:5: decoding object: …)", err)
	}
}

// A watch that ended at its 410 ERROR event in a trace cut before its end
// line ended there, gone: it is not a watch with no end.
func TestAWatchEndedAtItsErrorEventInACutTraceKeepsItsEnd(t *testing.T) {
	b, err := os.ReadFile("../../testdata/traces/gone-relist.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	cut := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `"type":"ERROR"`) })
	if cut < 0 {
		t.Fatal("gone-relist.jsonl has no ERROR event")
	}
	var ev trace.Line
	if err := json.Unmarshal([]byte(lines[cut]), &ev); err != nil {
		t.Fatal(err)
	}
	// A line of no request's, later, so that the trace's end is past the
	// ERROR event's: the watch ends at its event, not at the trace's end.
	later := fmt.Sprintf(`{"k":"flowcontrol","at":%d,"flowSchemas":{"u":"n"}}`+"\n", int64(ev.At)+5e9)
	path := filepath.Join(t.TempDir(), "error-cut.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines[:cut+1], "")+later), 0o600); err != nil {
		t.Fatal(err)
	}
	res := analyzeFile(t, path, Options{})
	reqs := res.Resources[0].Requests
	w := reqs[len(reqs)-1]
	if w.ID != ev.ID || w.Class != EndGone || w.End != time.Duration(ev.At) || describeEnd(w) == "no end (the trace stops first)" {
		t.Errorf("the watch cut after its ERROR event: got #%d %q ending at %v (%s), want #%d gone at %v", w.ID, w.Class, w.End, describeEnd(w), ev.ID, time.Duration(ev.At))
	}
}

// forgottenTrace is relistedTrace's stream, whose client then left and
// stayed away until the proxy forgot it.
const forgottenTrace = relistedTrace + `{"k":"note","r":0,"at":7000000,"reason":"client-left","state":"Listed","detail":"client left","wait":"0s"}
{"k":"note","r":0,"at":9000000,"reason":"client-gone","state":"Listed","detail":"forgot","wait":"2s","objectCount":1}
`

// When the proxy forgets a stream whose client stayed away, its store
// empties: the object chart falls to 0 there, as the count at the end says.
func TestAForgottenStreamsObjectChartFallsToZero(t *testing.T) {
	path := filepath.Join(t.TempDir(), "forgotten.jsonl")
	if err := os.WriteFile(path, []byte(forgottenTrace), 0o600); err != nil {
		t.Fatal(err)
	}
	res := analyzeFile(t, path, Options{}).Resources[0]
	last := -1
	for _, b := range res.Buckets {
		if b.HasObjects {
			last = b.ObjectsLast
		}
	}
	if res.Objects != 0 || last != 0 {
		t.Errorf("the chart's last object count %d, %d objects at the end; want 0 and 0 once the proxy forgot the stream", last, res.Objects)
	}
}

// The report's warnings are its own: the reader's slice, which has room to
// grow, is not where the replay's warnings go.
func TestTheReportsWarningsDoNotShareTheReadersSlice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warned.jsonl")
	// Three lines of a kind from the future (three reader warnings, room
	// for a fourth), and no stopped note (the replay's warning).
	future := strings.Repeat(`{"k":"future","r":0,"at":6000000}`+"\n", 3)
	if err := os.WriteFile(path, []byte(relistedTrace+future), 0o600); err != nil {
		t.Fatal(err)
	}
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rep, err := Analyze(t.Context(), rd, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(rep.Warnings)
	_ = append(rd.Warnings(), "another reader of the warnings")
	if len(want) != 4 || !slices.Equal(rep.Warnings, want) {
		t.Errorf("warnings %q, want %q (the reader's three and the replay's)", rep.Warnings, want)
	}
}

// capped walks its values back from the last added, across its ring's
// wrap and into its head: a relist looks up the request before it so,
// which the report keeps no other index of (its memory stays bounded by
// the caps however many requests come between two lists).
func TestCappedWalksBackFromTheLastAdded(t *testing.T) {
	for _, max := range []int{2, 3, 6} {
		for n := range 12 {
			c := newCapped[int](max)
			for v := range n {
				c.add(v)
			}
			kept, _ := c.all()
			back := slices.Collect(c.backward())
			slices.Reverse(back)
			last, ok := c.last()
			if !slices.Equal(back, kept) || ok != (n > 0) || (ok && last != n-1) {
				t.Errorf("max %d, %d added: backward %v, last %d (%t); want the kept %v reversed, and %d", max, n, back, last, ok, kept, n-1)
			}
		}
	}
}

// The page's "N lines after the header" counts the whole lines, with or
// without a newline at the end, and not a truncated last line.
func TestTheLinesAfterTheHeaderAreTheWholeOnes(t *testing.T) {
	b, err := os.ReadFile("../../testdata/traces/steady.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	whole := strings.Count(string(b), "\n") - 1
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		want       int
	}{
		{"whole.jsonl", string(b), whole},
		{"no-newline.jsonl", strings.TrimSuffix(string(b), "\n"), whole},
		{"truncated.jsonl", string(b) + `{"k":"event","at":1,"id":1,"type":"ADD`, whole},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := analyzeFile(t, path, Options{}).Lines; got != c.want {
			t.Errorf("%s: %d lines after the header, want %d", c.name, got, c.want)
		}
	}
}
