package common

import (
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// Bookmark age thresholds: the apiserver sends about one bookmark a minute.
const (
	// BookmarkLate is when a bookmark's age turns yellow.
	BookmarkLate = 90 * time.Second
	// BookmarkStale is when it turns red.
	BookmarkStale = 3 * time.Minute
)

// BookmarkSeverity grades the time since the last bookmark (or, with none
// yet, since the start), as the dashboard's gauge and the overview's
// column show it.
func BookmarkSeverity(d time.Duration) Severity {
	switch {
	case d < BookmarkLate:
		return SevGood
	case d < BookmarkStale:
		return SevWarn
	}
	return SevBad
}

// ClientLeftText says that an observed stream's client left, since when,
// and the state its stream was in then; and that the proxy forgot what it
// held, once it did.
func ClientLeftText(s *reflector.Stats, now time.Time) string {
	t := "client left " + format.Age(now.Sub(s.ClientLeft)) + " ago, was " + s.ClientLeftWas
	if s.Forgotten {
		t += ", its " + format.PluralUngrouped(s.ForgottenObjects, "object") + " forgotten"
	}
	return t
}
