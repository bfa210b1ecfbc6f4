package findings

import (
	"fmt"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// GaveUp is a run stopped for want of progress (--give-up-after).
const GaveUp ID = "gave-up"

type gaveUp struct{}

func (gaveUp) entry() Entry {
	return Entry{GaveUp, Error, "the run stopped because nothing made progress for `--give-up-after`"}
}

func (gaveUp) observe(e *Engine, n reflector.Note) {
	d := decided(n, reflector.ReasonGaveUp)
	if d == nil {
		return
	}
	e.raise(GaveUp, Error, n.At, func(f *Finding) {
		f.Count++
		f.Title = fmt.Sprintf("gave up after %s without progress", roundDur(d.Wait))
		f.Evidence = Evidence{Text: fmt.Sprintf("nothing arrived from the server for %s (--give-up-after); the last error: %s", roundDur(d.Wait), d.Cause),
			Requests: []int64{n.RequestID}}
		f.Cause = "the API server could not be reached or answered nothing useful for the whole time: it is down, the network or a proxy drops the requests, or credentials expired"
		f.Action = "check the API server's health (kubectl get --raw /readyz) and the connection to it; raise --give-up-after to wait longer"
	})
}
