package findings

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// A rule raises one finding of the catalogue from the notes, with its own
// state, thresholds and words, each in a file of its own (rule_ID.go).
type rule interface {
	// entry is the rule's line of the catalogue, its When said with the
	// rule's own thresholds.
	entry() Entry
	// observe reads one note, after the engine's track has.
	observe(e *Engine, n reflector.Note)
}

// settler is a rule that writes out a finding it raised only when the
// finding is read (List, Get), as its last note left it: writing it out on
// every note would cost more than the rule's counting, and what it says
// must not depend on when it is read. It never raises a finding there: a
// finding is raised by the note that makes it, so that it comes at the
// same place in a replay.
type settler interface {
	settle(e *Engine)
}

// newRules makes the catalogue's rules, in the order help lists them: a
// new finding is a file with its rule and a line here.
func newRules() []rule {
	return []rule{
		&missedDeletes{},
		&relistStorm{},
		&noBookmarks{},
		&watchListUnsupported{},
		&largeInitialList{},
		&throttled{},
		&rvBackwards{},
		&cacheDrift{},
		&watchFlapping{},
		&uidMismatch{},
		&gaveUp{},
		&requestRefused{},
		&slowDelivery{},
		&noisyUpdates{},
	}
}

// pass is when a rule reads each note: those with a pass method before
// (-1) or after (1) the others, which read it in the catalogue's order.
// One note that raises two findings raises, and lists, them in this order.
func pass(r rule) int {
	if p, ok := r.(interface{ pass() int }); ok {
		return p.pass()
	}
	return 0
}

// tune gives the rules that take the user's tuning (Options) theirs.
func tune(rules []rule, o Options) {
	for _, r := range rules {
		if t, ok := r.(interface{ tune(Options) }); ok {
			t.tune(o)
		}
	}
}

// Catalogue is every finding the engine raises, in the order help shows
// them, with the default thresholds.
func Catalogue() []Entry {
	rules := newRules()
	tune(rules, Options{})
	out := make([]Entry, len(rules))
	for i, r := range rules {
		out[i] = r.entry()
	}
	return out
}

// Known reports whether id is in the catalogue.
func Known(id ID) bool {
	return slices.ContainsFunc(Catalogue(), func(e Entry) bool { return e.ID == id })
}

// IDList is the catalogue's ids, comma separated, for help and errors.
func IDList() string {
	ids := make([]string, 0, len(Catalogue()))
	for _, e := range Catalogue() {
		ids = append(ids, string(e.ID))
	}
	return strings.Join(ids, ", ")
}

// span says a threshold's time for people: "10 minutes", "75 s".
func span(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return format.PluralUngrouped(d/time.Minute, "minute")
	}
	return fmt.Sprintf("%g s", d.Seconds())
}
