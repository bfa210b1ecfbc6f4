package findings

import (
	"fmt"
	"slices"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// WatchListUnsupported is a streaming list refused (or stalled) and replaced by a LIST.
const WatchListUnsupported ID = "watch-list-unsupported"

type watchListUnsupported struct {
	refused *refusal
}

type refusal struct {
	id      int64
	cause   string
	stalled bool
	// waiting: the stall of an observed client (behind the observing
	// proxy), which does not fall back to LIST: it waits on.
	waiting bool
}

func (r *watchListUnsupported) entry() Entry {
	return Entry{WatchListUnsupported, Info, "the streaming list was refused (or stalled) and the list fell back to LIST: the server's answer and what the LIST cost (a warning with `--initial-list=stream`, and for an observed client that waits on instead of falling back)"}
}

// observe raises it on the first refusal, and completes its evidence with
// what the first list cost. A later refusal (a relist that streams again,
// with --initial-list=stream or an observed client) is the same answer:
// taken as new evidence it would drop that cost, which only the first
// list's note brings.
func (r *watchListUnsupported) observe(e *Engine, n reflector.Note) {
	if d := decided(n, reflector.ReasonStreamRefused, reflector.ReasonInitialEventsEnd); d != nil && r.refused == nil {
		r.refused = &refusal{id: n.RequestID, cause: d.Cause, stalled: d.Reason == reflector.ReasonInitialEventsEnd}
		if r.refused.stalled {
			r.refused.cause = fmt.Sprintf("no initial event for %s before the initial-events-end bookmark", roundDur(d.Wait))
		}
		r.raise(e, n.At, 0, 0, 0)
	}
	r.observeWaiting(e, n)
	if e.track.firstList && r.refused != nil && !r.refused.waiting {
		r.raise(e, n.At, n.Decision.Objects, n.Decision.Bytes, listTook(n))
	}
}

// observeWaiting raises it for a client whose streaming list will not
// complete and that does not fall back (a client behind the observing
// proxy: client-go's informer waits for its watch's timeout, 5 to 10
// minutes, then streams again): when the proxy withheld the open
// streaming list's initial-events-end bookmark (--fault
// stall-initial-list), or when a streaming list ran to its timeout
// without it.
func (r *watchListUnsupported) observeWaiting(e *Engine, n reflector.Note) {
	if r.refused != nil {
		return
	}
	if d := decided(n, reflector.ReasonFault); d != nil && faultName(d.Fault) == "stall-initial-list" {
		if w := e.track.watch; w != nil && w.streaming && !w.listEnded {
			r.refused = &refusal{id: w.id, stalled: true, waiting: true,
				cause: fmt.Sprintf("its initial-events-end bookmark was held back %s after it started, and never came", roundDur(n.At.Sub(w.started)))}
			r.raise(e, n.At, 0, 0, 0)
		}
		return
	}
	if w := e.track.ended; w != nil && w.streaming && !w.listEnded && w.ranOut {
		r.refused = &refusal{id: w.id, stalled: true, waiting: true,
			cause: fmt.Sprintf("its initial-events-end bookmark never came: it ran to its timeout (%s) without it", roundDur(w.timeout))}
		r.raise(e, n.At, 0, 0, 0)
	}
}

func (r *watchListUnsupported) raise(e *Engine, at time.Time, objects int, bytes int64, took time.Duration) {
	rf := r.refused
	sev := Info
	if e.opts.StreamAsked || rf.waiting {
		sev = Warning // a client that waits on does not sync
	}
	e.raise(WatchListUnsupported, sev, at, func(f *Finding) {
		f.Count = 1
		f.Title = "the streaming list was refused: the list fell back to LIST"
		text := fmt.Sprintf("request #%d asked for a streaming list (sendInitialEvents=true) and the server answered: %s", rf.id, rf.cause)
		if rf.stalled {
			text = fmt.Sprintf("request #%d, a streaming list, stalled: %s", rf.id, rf.cause)
		}
		facts := map[string]string{"answer": rf.cause}
		if objects > 0 || bytes > 0 || took > 0 {
			text += "; the LIST that replaced it brought " + format.PluralUngrouped(objects, "object")
			if bytes > 0 {
				text += ", " + mib(bytes)
				facts["listBytes"] = fmt.Sprint(bytes)
			}
			if took > 0 {
				text += " in " + roundDur(took)
				facts["listSeconds"] = fmt.Sprintf("%.1f", took.Seconds())
			} else {
				text += ", " + tookText(took)
			}
			facts["listObjects"] = fmt.Sprint(objects)
		}
		f.Evidence = Evidence{Text: text, Requests: slices.Clone(e.track.listReqs), Facts: facts}
		f.Cause = "the API server does not serve the streaming list here: its WatchList feature is off, the server is older than 1.32, or its watch cache is off for this resource. client-go's WatchListClient falls back to LIST the same way, silently (one V(4) log line), so every (re)list costs a full LIST from etcd"
		f.Action = "enable the WatchList feature on the API server (on by default since 1.34 with the watch cache), or list with --initial-list=list and accept the LIST's memory peak"
		if rf.stalled {
			f.Title = "the streaming list stalled: the list fell back to LIST"
			f.Cause = "the streaming list's initial-events-end bookmark did not come in time: a proxy or load balancer in between may hold the streamed response back (it must flush a watch as it comes), or the API server's watch cache was slow to serve it. client-go's WatchListClient falls back to LIST after such a wait too, silently, so every (re)list costs the wait and a full LIST from etcd"
			f.Action = "check what sits between the client and the API server (a buffering proxy), and the API server's watch cache for this resource; or list with --initial-list=list"
		}
		if rf.waiting {
			f.Title = "the streaming list stalled: its initial-events-end bookmark never came"
			f.Evidence.Text = fmt.Sprintf("request #%d, a streaming list, stalled: %s; its client's list does not complete until then (a client-go informer does not sync: it waits for the watch's timeout, 5 to 10 minutes, and streams again)", rf.id, rf.cause)
			f.Cause = "the streaming list's initial-events-end bookmark did not reach the client: a proxy or load balancer in between may hold the streamed response back (it must flush a watch as it comes), or the API server's watch cache was slow to serve it. client-go's WatchListClient waits for it as long as the watch lasts, without falling back to LIST"
			f.Action = "check what sits between the client and the API server (a buffering proxy), and the API server's watch cache for this resource; or turn the client's streaming lists off (client-go: KUBE_FEATURE_WatchListClient=false), so that it lists with LIST"
		}
		f.Docs = "https://kubernetes.io/docs/reference/using-api/api-concepts/#streaming-lists"
	})
}
