package reflector

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// Reason names a decision. The words are stable: traces, scripts and tests use them.
type Reason string

// The reflector's decisions.
const (
	// ReasonInitialList: the first complete list starts.
	ReasonInitialList Reason = "initial-list"
	// ReasonListComplete: a complete list was installed; watching follows from its resourceVersion.
	ReasonListComplete Reason = "list-complete"
	// ReasonRelistDiff: what a relist found that the watch had missed.
	ReasonRelistDiff Reason = "relist-diff"
	// ReasonGone: 410 Gone on a watch or a LIST: the history is gone, relist from a consistent read.
	ReasonGone Reason = "gone"
	// ReasonContinueGone: 410 Gone on a LIST continue token: the whole list starts again.
	ReasonContinueGone Reason = "continue-gone"
	// ReasonTooLargeRV: the server has not reached the requested resourceVersion: relist.
	ReasonTooLargeRV Reason = "too-large-resource-version"
	// ReasonForcedRelist: the user asked for a relist.
	ReasonForcedRelist Reason = "forced-relist"
	// ReasonWatchClosed: the server ended a watch normally; watch again from the cursor.
	ReasonWatchClosed Reason = "watch-closed"
	// ReasonIdleTimeout: a watch received nothing for the idle timeout; watch again from the cursor.
	ReasonIdleTimeout Reason = "idle-timeout"
	// ReasonWatchError: a watch (or a streaming list) failed; retry after a backoff.
	ReasonWatchError Reason = "watch-error"
	// ReasonRequestError: a LIST failed; retry it after a backoff.
	ReasonRequestError Reason = "request-error"
	// ReasonBackoff: waiting before the next request.
	ReasonBackoff Reason = "backoff"
	// ReasonRVBackwards: an event or bookmark carried a resourceVersion older than the cursor.
	ReasonRVBackwards Reason = "resource-version-backwards"
	// ReasonStreamRefused: the server refused a streaming list: fall back to LIST.
	ReasonStreamRefused Reason = "stream-refused"
	// ReasonInitialEventsEnd: a streaming list stalled before its initial-events-end bookmark: fall back to LIST.
	ReasonInitialEventsEnd Reason = "initial-events-end-missing"
	// ReasonBadRequest: the server refused the request's own options (400,
	// 422: a mistyped selector, say): the reflector failed at once.
	ReasonBadRequest Reason = "bad-request"
	// ReasonPermanentError: a permanent error (401, 403, 404, 405) outlasted its retries: the reflector failed.
	ReasonPermanentError Reason = "permanent-error"
	// ReasonGaveUp: nothing made progress for Config.GiveUpAfter: the reflector failed.
	ReasonGaveUp Reason = "gave-up"
	// ReasonStopped: the run stopped (see StateStopped).
	ReasonStopped Reason = "stopped"
	// ReasonClientLeft: an observed stream's client left (every connection
	// it used closed, no request open); the stream keeps the state it was in.
	ReasonClientLeft Reason = "client-left"
	// ReasonClientBack: an observed stream's client that had left sent its
	// next request (it resumed, on a new connection): the stream goes on.
	ReasonClientBack Reason = "client-back"
	// ReasonClientGone: an observed stream's client left and stayed away
	// (kubectl watchcache proxy --forget-after): the proxy forgot the
	// Objects it held, and a client that comes back after that is a new
	// stream. The state is kept.
	ReasonClientGone Reason = "client-gone"
	// ReasonFault: the observing proxy injected a fault into an observed
	// stream's traffic (kubectl watchcache proxy --fault); the state is kept.
	ReasonFault Reason = "fault"
	// ReasonAlert: a --fail-on rule tripped on the run (Cause says which,
	// where and with what value); the state is kept. The rules note it, not
	// the reflector: a replay does not decide it again, and compares it
	// with nothing.
	ReasonAlert Reason = "alert"
	// ReasonTraceWriteError: recording the trace stopped on a write error
	// (Cause says which); the run goes on. The session notes it, not the
	// reflector, and the trace cannot hold it.
	ReasonTraceWriteError Reason = "trace-write-error"
)

// ListMethod is how a complete list is made.
type ListMethod struct {
	// Stream is a streaming list (a watch with sendInitialEvents=true).
	Stream bool
	// PageSize is the LIST limit (0: one response); unused when streaming.
	PageSize int64
}

// String is "streaming list", "LIST, pages of 500" or "LIST, unpaginated".
func (m ListMethod) String() string {
	switch {
	case m.Stream:
		return "streaming list"
	case m.PageSize > 0:
		return fmt.Sprintf("LIST, pages of %d", m.PageSize)
	}
	return "LIST, unpaginated"
}

// Decision is one thing the reflector decided, as structured fields. String
// renders it as a sentence; it is the only place decision prose is built, so
// the dashboard, the line output, JSON lines and traces all say the same.
// Which fields are set depends on Reason (each field says when).
type Decision struct {
	// State is the reflector's state after the decision.
	State  State
	Reason Reason
	// ResourceVersion is the resourceVersion the decision is about: the
	// installed list's (list-complete), the cursor a watch resumes from
	// (watch-closed, idle-timeout, watch-error), the one that was refused
	// (gone, too-large-resource-version), or the one an event carried
	// (resource-version-backwards).
	ResourceVersion string
	// Cursor is the cursor kept when an event's resourceVersion went backwards.
	Cursor string
	// List is how the next complete list is made (initial-list,
	// forced-relist, gone, continue-gone, too-large-resource-version,
	// stream-refused, initial-events-end-missing).
	List *ListMethod
	// Objects is the number of objects installed (list-complete), or
	// forgotten (client-gone).
	Objects int
	// Bytes is the size of the complete list's bodies as received
	// (list-complete): its LIST pages, or its streaming list's events up to
	// the end bookmark; 0 when the Source does not say.
	Bytes int64
	// Code is the HTTP status code of the answer that caused the decision, when there was one.
	Code int32
	// Cause is what ended the request that caused the decision (its Status or
	// error, as RequestEnd.Cause says it), or why a backoff waits.
	Cause string
	// Said is the message of the server's Status that caused a
	// permanent-error or bad-request decision ("secrets is forbidden: …"):
	// what the server said beyond the status code Cause begins with.
	Said string
	// Wait is the backoff's duration (backoff), the time without progress
	// (gave-up), the stall that ended a streaming list
	// (initial-events-end-missing), how long before the decision the client
	// left (client-left) or how long it was away (client-back, client-gone).
	Wait time.Duration
	// Next is the request a backoff waits to send.
	Next Verb
	// GoneInARow counts 410s without progress in between (backoff after repeated 410s).
	GoneInARow int
	// Attempts counts the tries of a permanent error (permanent-error).
	Attempts int
	// AtOnce is a watch that the server closed at once with no events (watch-closed).
	AtOnce bool
	// Streaming is a streaming list that broke before it completed (watch-error).
	Streaming bool
	// Observed says the watch that ended (watch-closed, watch-error) was
	// another program's, seen through the proxy: whether it watches again
	// is its own choice, so the decision says where it would resume, not
	// that it does.
	Observed bool
	// Diff is the relist's diff (relist-diff).
	Diff *store.RelistDiff
	// Relist is a complete list that was not the first (list-complete).
	Relist bool
	// Decided says, for list-complete, that a decision to make the list
	// came first (not so for an observed client that listed again on its
	// own); Took is the time from that decision (or from Began, when that
	// is earlier: an observed client's list is decided as its answer comes)
	// to the completion, retries included.
	Decided bool
	Took    time.Duration
	// Began is, for list-complete, when the request that began the list
	// was sent: its last attempt from its start, after any waits, retries
	// and fallbacks before it (traces do not record it: a replay's
	// reflector makes it again).
	Began time.Time
	// Fault is the --fault spec as given (fault); Cause says what it did
	// and Count how many times it acted (deletes dropped, 410s answered,
	// watches cut; 0 for what prepares an act, such as ending the watch
	// whose resume a 410 answers).
	Fault string
	Count int
}

// resumes is what follows a watch's end: ours watches again from the
// cursor (then, when), an observed client would resume from it if it
// watches again (kubectl get -w does not).
func (d Decision) resumes(when string) string {
	rv := cmp.Or(d.ResourceVersion, `""`) // none: a client that watched without one
	if d.Observed {
		return fmt.Sprintf("its client resumes from resourceVersion %s if it watches again", rv)
	}
	return fmt.Sprintf("watching again from resourceVersion %s%s", rv, when)
}

// Refusal is what a permanent-error or bad-request decision adds to the
// server's answer: how often it was asked, or that asking again is no use.
func (d Decision) Refusal() string {
	if d.Reason == ReasonBadRequest {
		return "(the request's options are wrong: the same request would be refused again)"
	}
	return fmt.Sprintf("(gave up after %d attempts)", d.Attempts)
}

// String renders the decision as one sentence.
func (d Decision) String() string {
	switch d.Reason {
	case ReasonInitialList:
		if d.List == nil {
			return "initial list"
		}
		return fmt.Sprintf("initial list (%s)", d.List)
	case ReasonForcedRelist:
		return fmt.Sprintf("forced relist (%s); the old snapshot is served until it completes", d.List)
	case ReasonListComplete:
		return fmt.Sprintf("list complete: %s at resourceVersion %s", format.PluralUngrouped(d.Objects, "object"), d.ResourceVersion)
	case ReasonRelistDiff:
		if d.Diff == nil {
			return "relist diff: none"
		}
		return fmt.Sprintf("relist diff: %s, %s, %s, %s, %d unchanged",
			format.PluralUngrouped(len(d.Diff.Deleted), "missed delete"), format.PluralUngrouped(len(d.Diff.Recreated), "missed recreate"),
			format.PluralUngrouped(len(d.Diff.Updated), "missed update"), format.PluralUngrouped(len(d.Diff.Added), "missed add"), d.Diff.Unchanged)
	case ReasonGone:
		return fmt.Sprintf("410 Gone at resourceVersion %q: history is gone; %s", d.ResourceVersion, d.listAgain())
	case ReasonContinueGone:
		return "410 Gone on a continue token: restarting the whole list from a consistent read"
	case ReasonTooLargeRV:
		return fmt.Sprintf("resourceVersion %q is too large for the server: %s", d.ResourceVersion, d.listAgain())
	case ReasonStreamRefused:
		return fmt.Sprintf("the server refused the streaming list (%s): falling back to LIST", d.Cause)
	case ReasonInitialEventsEnd:
		return fmt.Sprintf("the streaming list delivered no initial event for %s before its initial-events-end bookmark: falling back to LIST", d.Wait)
	case ReasonWatchClosed:
		if d.Fault != "" {
			return fmt.Sprintf("watch ended by --fault %s (the observing proxy, as a server ends one): %s", d.Fault, d.resumes(""))
		}
		if d.AtOnce {
			return "watch closed at once with no events: " + d.resumes(" after a backoff")
		}
		return "watch closed by the server: " + d.resumes("")
	case ReasonIdleTimeout:
		return fmt.Sprintf("no event for the idle timeout: watching again from resourceVersion %s", d.ResourceVersion)
	case ReasonWatchError:
		if d.Streaming {
			return "streaming list ended before its initial-events-end bookmark: " + d.Cause
		}
		return fmt.Sprintf("watch failed (%s): %s", d.Cause, d.resumes(""))
	case ReasonRequestError:
		return "LIST failed: " + d.Cause
	case ReasonBackoff:
		why := d.Cause
		if d.GoneInARow > 1 {
			why = fmt.Sprintf("%d 410s in a row, no watch event or bookmark between them (a list alone does not count)", d.GoneInARow)
		}
		return fmt.Sprintf("backing off before the next %s: %s", strings.ToUpper(string(d.Next)), why)
	case ReasonRVBackwards:
		return fmt.Sprintf("resourceVersion went backwards from %s to %s; keeping %s as the cursor", d.Cursor, d.ResourceVersion, d.Cursor)
	case ReasonBadRequest, ReasonPermanentError:
		return d.Cause + " " + d.Refusal()
	case ReasonGaveUp:
		return fmt.Sprintf("%s (no progress for %s)", d.Cause, roundDuration(d.Wait))
	case ReasonStopped:
		return "stopped"
	case ReasonClientLeft:
		was := d.Cause
		if was == "" {
			was = d.State.String()
		}
		return fmt.Sprintf("client left %s ago (every connection it used closed, no request open); it was %s", roundDuration(d.Wait), was)
	case ReasonClientBack:
		return fmt.Sprintf("client came back after %s away: its stream goes on", roundDuration(d.Wait))
	case ReasonClientGone:
		return fmt.Sprintf("client away for %s: the proxy forgot the %s it held (if it comes back, it is a new stream)", roundDuration(d.Wait), format.PluralUngrouped(d.Objects, "object"))
	case ReasonFault:
		return "--fault " + d.Fault + ": " + d.Cause
	case ReasonAlert:
		return "--fail-on " + d.Cause
	case ReasonTraceWriteError:
		return d.Cause
	}
	if d.Cause != "" {
		return string(d.Reason) + ": " + d.Cause
	}
	return string(d.Reason)
}

// listAgain says what follows a 410 or a too-large resourceVersion: a
// relist once a list has completed (State Relisting), the first list again
// before that. An observed reflector's (no List) way of listing is not known
// yet.
func (d Decision) listAgain() string {
	switch {
	case d.List == nil && d.State == StateRelisting:
		return "a relist follows"
	case d.List == nil:
		return "no list has completed yet; the first list starts again"
	case d.State == StateRelisting:
		return fmt.Sprintf("relisting from a consistent read (%s)", d.List)
	}
	return fmt.Sprintf("no list has completed yet; listing again from a consistent read (%s)", d.List)
}

// roundDuration rounds to seconds, or to milliseconds below a second.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}
