package tracegen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// Modified shapes WriteModified's trace.
type Modified struct {
	// Tool names the writer in the header; Namespace is the resource's in
	// the header ("": all namespaces). The objects are in "bench" either way.
	Tool, Namespace string
	// Objects are listed in one page; Events MODIFIED events then cycle over them.
	Objects, Events int
	// Start is the first line's time, Step the time between lines (offsets
	// from the header's start, in nanoseconds).
	Start, Step int64
}

// WriteModified writes a valid trace of one ConfigMap resource with no
// decisions: a list of the objects, then one watch whose MODIFIED events
// cycle over them, ended by a cancel. It is the steady-churn workload of the
// dashboard's and the metrics' benchmarks, whose figures compare with runs
// of this exact shape.
func WriteModified(out io.Writer, m Modified) error {
	w := bufio.NewWriterSize(out, 1<<20)
	enc := json.NewEncoder(w)
	h := trace.Header{K: trace.KindHeader, V: trace.Version, StartedAt: time.Unix(1_700_000_000, 0).UTC(), Tool: m.Tool,
		Resources: []trace.ResourceHeader{{Resource: reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}, Namespace: m.Namespace, Objects: trace.ObjectsMetadata,
			Options: trace.Options{Strategy: reflector.StrategyList, WatchTimeout: trace.Duration(5 * time.Minute), IdleTimeout: trace.Duration(11 * time.Minute), InitialEventsTimeout: trace.Duration(time.Minute), MaxPermanentRetries: 5}}}}
	if err := enc.Encode(h); err != nil {
		return err
	}
	obj := func(i, rv int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"bench","name":"cm-%05d","uid":"00000000-0000-0000-0000-%012d","resourceVersion":"%d","labels":{"app":"bench","tier":"t%d"},"annotations":{"example.com/owner":"team-%d"},"creationTimestamp":"2026-01-01T00:00:00Z"}}`, i, i, rv, i%3, i%5))
	}
	at := m.Start - m.Step
	line := func(l trace.Line) error { at += m.Step; l.At = at; return enc.Encode(l) }
	if err := line(trace.Line{K: trace.KindRequest, ID: 1, Verb: "list", Opts: &reflector.RequestOptions{}}); err != nil {
		return err
	}
	for i := 0; i < m.Objects; i++ {
		if err := line(trace.Line{K: trace.KindItem, ID: 1, Object: obj(i, 100+i)}); err != nil {
			return err
		}
	}
	listRV := 100 + m.Objects
	n := m.Objects
	if err := line(trace.Line{K: trace.KindPage, ID: 1, ResourceVersion: fmt.Sprint(listRV), Items: &n}); err != nil {
		return err
	}
	if err := line(trace.Line{K: trace.KindEnd, ID: 1, Reason: "closed"}); err != nil {
		return err
	}
	if err := line(trace.Line{K: trace.KindRequest, ID: 2, Verb: "watch", Opts: &reflector.RequestOptions{ResourceVersion: fmt.Sprint(listRV), AllowWatchBookmarks: true, TimeoutSeconds: 450}}); err != nil {
		return err
	}
	for e := 0; e < m.Events; e++ {
		if err := line(trace.Line{K: trace.KindEvent, ID: 2, Type: "MODIFIED", Object: obj(e%m.Objects, listRV+1+e)}); err != nil {
			return err
		}
	}
	if err := line(trace.Line{K: trace.KindEnd, ID: 2, Reason: "canceled", Error: "context canceled"}); err != nil {
		return err
	}
	return w.Flush()
}
