package causal

import (
	"strings"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// A LIST, a watch with two events that ends in 410, the relist and its diff.
func goodRun() []Line {
	return []Line{
		{Seq: 1, Kind: Decision, Reason: reflector.ReasonInitialList},
		{Seq: 2, Kind: Started, Request: 1, Verb: "list"},
		{Seq: 3, Kind: Ended, Request: 1},
		{Seq: 4, Kind: Decision, Request: 1, Reason: reflector.ReasonListComplete},
		{Seq: 5, Kind: Started, Request: 2, Verb: "watch"},
		{Seq: 6, Kind: Event, Request: 2},
		{Seq: 7, Kind: Event, Request: 2},
		{Seq: 8, Kind: Ended, Request: 2},
		{Seq: 9, Kind: Decision, Request: 2, Reason: reflector.ReasonGone},
		{Seq: 10, Kind: Started, Request: 3, Verb: "list"},
		{Seq: 11, Kind: Ended, Request: 3},
		{Seq: 12, Kind: Decision, Request: 3, Reason: reflector.ReasonListComplete},
		{Seq: 13, Kind: Decision, Request: 3, Reason: reflector.ReasonRelistDiff},
	}
}

func TestACausalRunPasses(t *testing.T) {
	if err := Check(goodRun()); err != nil {
		t.Fatal(err)
	}
}

func TestEachOutOfOrderLineIsCaught(t *testing.T) {
	swap := func(i, j int) []Line {
		l := goodRun()
		l[i], l[j] = l[j], l[i]
		l[i].Seq, l[j].Seq = l[j].Seq, l[i].Seq
		return l
	}
	drop := func(i int) []Line {
		l := goodRun()
		return append(l[:i], l[i+1:]...)
	}
	marked := func() []Line {
		l := goodRun()
		return append(append(l[:5:5], Line{Seq: 6, Kind: Dropped, Count: 2}), l[7:]...)
	}
	for _, tc := range []struct {
		name  string
		lines []Line
		want  string
	}{
		{"the relist's result before the 410 that caused it", swap(8, 11), "request 3, which has not started"},
		{"an event after its request's end", swap(6, 7), "after its end"},
		{"a decision before the end that caused it", swap(7, 8), "before the end of request 2"},
		{"a request before the previous ended", func() []Line {
			l := goodRun()
			l[2], l[3], l[4] = Line{Seq: 3, Kind: Started, Request: 2, Verb: "watch"}, Line{Seq: 4, Kind: Ended, Request: 1}, Line{Seq: 5, Kind: Decision, Request: 1, Reason: reflector.ReasonListComplete}
			return l
		}(), "still open"},
		{"a relist diff apart from its list", swap(11, 12), "not right after"},
		{"a line missing without a mark", drop(6), "nothing says they were dropped"},
		{"sequence numbers out of order", func() []Line { l := goodRun(); l[3].Seq, l[4].Seq = l[4].Seq, l[3].Seq; return l }(), "missing"},
		{"a sequence number twice", func() []Line { l := goodRun(); l[4].Seq = 4; return l }(), "sequence number 4 after 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.lines)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
	if err := Check(marked()); err != nil {
		t.Errorf("two lines dropped and marked: %v", err)
	}
}

func TestTextAndJSONLinesRead(t *testing.T) {
	text := `12:00:00.000 configmaps.v1      1 Listing       initial-list: initial list (LIST, pages of 50)
12:00:00.001 configmaps.v1      2 request #1 LIST resourceVersion="" limit=50: started
12:00:00.002 configmaps.v1      3 request #1 LIST resourceVersion="" limit=50: closed after 1ms, 2 items
12:00:00.003 configmaps.v1      4 Watching      list-complete: list complete: 2 objects at resourceVersion 10 [#1]
12:00:00.004 configmaps.v1      5 request #2 WATCH resourceVersion=10 allowWatchBookmarks=true: started
12:00:00.005 configmaps.v1      6 MODIFIED ns/a uid=u rv=11 (modified) [#2]
12:00:00.005 configmaps.v1      6 DIFF     ns/a rv=11: .data.k "1"→"2" by kubectl-patch
12:00:00.006 configmaps.v1      7 2 lines dropped here: the output could not keep up
12:00:00.007 configmaps.v1      9 request #2 WATCH resourceVersion=10 allowWatchBookmarks=true: error 410 Expired: too old after 3ms, 3 events
12:00:00.008 configmaps.v1     10 Relisting     gone: 410 Gone at resourceVersion "11": history is gone [#2]
`
	lines, err := FromText([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 9 || lines[5].Kind != Event || lines[5].Request != 2 || lines[6].Kind != Dropped || lines[6].Count != 2 || lines[8].Reason != reflector.ReasonGone {
		t.Fatalf("read %v", lines)
	}
	if err := Check(lines); err != nil {
		t.Errorf("text: %v", err)
	}
	js := `{"seq":1,"resource":"configmaps.v1","type":"decision","reason":"initial-list"}
{"seq":2,"resource":"configmaps.v1","type":"request-started","id":1,"verb":"list","request":1}
{"seq":3,"resource":"configmaps.v1","type":"request","id":1,"verb":"list","request":1}
{"seq":4,"resource":"configmaps.v1","type":"decision","reason":"list-complete","request":1}
{"seq":5,"resource":"configmaps.v1","type":"request-started","id":2,"verb":"watch","request":2}
{"seq":6,"resource":"configmaps.v1","type":"event","event":"MODIFIED","request":2}
{"seq":6,"resource":"configmaps.v1","type":"diff","request":2,"changes":[]}
{
  "resource": "configmaps.v1"
}
`
	if lines, err = FromJSON([]byte(js)); err != nil || len(lines) != 6 {
		t.Fatalf("read %v, %v", lines, err)
	}
	if err := Check(lines); err != nil {
		t.Errorf("JSON: %v", err)
	}
}
