package reflector

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// AuditReport compares the cache with a fresh consistent LIST.
type AuditReport struct {
	// ResourceVersion is the audit list's collection resourceVersion.
	ResourceVersion string
	Listed, Cached  int
	// Missing are listed but not cached; Extra are cached but not listed;
	// Different are cached with another UID or resourceVersion than listed.
	Missing, Extra, Different []store.DiffEntry
	// Omitted counts the objects left out of Missing, Extra and Different,
	// in that order: a trace keeps the first few of a large drift.
	Omitted [3]int
}

// Counts are how many objects are missing, extra and different, those
// left out of the lists included.
func (a *AuditReport) Counts() (missing, extra, different int) {
	return len(a.Missing) + a.Omitted[0], len(a.Extra) + a.Omitted[1], len(a.Different) + a.Omitted[2]
}

// Drift reports whether the cache and the list disagree.
func (a *AuditReport) Drift() bool {
	m, e, d := a.Counts()
	return m+e+d > 0
}

// String is a one-line summary.
func (a *AuditReport) String() string {
	if !a.Drift() {
		return fmt.Sprintf("audit at resourceVersion %s: no drift (%s)", a.ResourceVersion, format.PluralUngrouped(a.Listed, "object"))
	}
	m, e, d := a.Counts()
	return fmt.Sprintf("audit at resourceVersion %s: drift: %d missing, %d extra, %d different (listed %d, cached %d)",
		a.ResourceVersion, m, e, d, a.Listed, a.Cached)
}

// auditPageSize keeps an audit's LIST requests moderate on big collections.
const auditPageSize = 500

// Audit lists the resource afresh (consistent read, paginated, through
// AuditSource) and compares it with the cache; while they differ and the
// reflector's cursor has not reached the list's resourceVersion, it compares
// again for up to catchUp (events may still be in flight). It never touches the cache. On a
// resource that is being written to, objects changed after the list was taken
// can show as different.
func (r *Reflector) Audit(ctx context.Context, catchUp time.Duration) (*AuditReport, error) {
	listed := map[store.Ref]*store.Object{}
	var rv, cont string
	for {
		page, err := r.cfg.AuditSource.List(ctx, RequestOptions{Limit: auditPageSize, Continue: cont})
		if err != nil {
			return nil, fmt.Errorf("audit list: %w", err)
		}
		for _, it := range page.Items {
			listed[it.Object.Ref()] = it.Object
		}
		if rv == "" {
			rv = page.ResourceVersion
		}
		if cont = page.Continue; cont == "" {
			break
		}
	}
	// Drift while the cursor is still behind the list may just be events in
	// flight: compare again every auditRecheck, catchUp's worth of times.
	// The cursor is read before the cache: the cursor moves only once the
	// store holds what it says (Ledger.advance, CompleteList), so a cursor
	// at the list's resourceVersion makes the drift of the comparison that
	// follows real; read after, it could be the end of a relist that the
	// comparison just missed.
	for tries := int(catchUp / auditRecheck); ; tries-- {
		reached := r.cursorReached(rv)
		rep := r.compare(rv, listed)
		done := !rep.Drift() || reached || tries <= 0
		if !done {
			select {
			case <-ctx.Done():
				done = true
			case <-r.cfg.Clock.After(auditRecheck):
			}
		}
		if done {
			r.NoteAudit(rep)
			return rep, nil
		}
	}
}

// NoteAudit notes an audit made elsewhere (a replay's recorded one) in order
// with the reflector's own notes, as Audit notes its report. It may be
// called from any goroutine.
func (r *Reflector) NoteAudit(rep *AuditReport) {
	r.ledger.Note(Note{Kind: NoteAudit, Audit: rep})
}

// auditRecheck is how often Audit compares again while events may be in flight.
const auditRecheck = 20 * time.Millisecond

// compare diffs the cache's current snapshot with a listed set.
func (r *Reflector) compare(rv string, listed map[store.Ref]*store.Object) *AuditReport {
	rep := &AuditReport{ResourceVersion: rv, Listed: len(listed)}
	cached := r.store.List()
	rep.Cached = len(cached)
	seen := make(map[store.Ref]bool, len(cached))
	for _, c := range cached {
		ref := c.Ref()
		seen[ref] = true
		l, ok := listed[ref]
		switch {
		case !ok:
			rep.Extra = append(rep.Extra, store.DiffEntry{Ref: ref, OldUID: c.UID, OldResourceVersion: c.ResourceVersion})
		case l.UID != c.UID || l.ResourceVersion != c.ResourceVersion:
			rep.Different = append(rep.Different, store.DiffEntry{Ref: ref, OldUID: c.UID, OldResourceVersion: c.ResourceVersion, NewUID: l.UID, NewResourceVersion: l.ResourceVersion})
		}
	}
	for ref, l := range listed {
		if !seen[ref] {
			rep.Missing = append(rep.Missing, store.DiffEntry{Ref: ref, NewUID: l.UID, NewResourceVersion: l.ResourceVersion})
		}
	}
	for _, s := range [][]store.DiffEntry{rep.Missing, rep.Extra, rep.Different} {
		slices.SortFunc(s, func(a, b store.DiffEntry) int { return a.Ref.Compare(b.Ref) })
	}
	return rep
}

// cursorReached reports whether the cursor is at or past rv.
func (r *Reflector) cursorReached(rv string) bool {
	cmp, err := resourceversion.CompareResourceVersion(r.ledger.Cursor(), rv)
	return err == nil && cmp >= 0
}
