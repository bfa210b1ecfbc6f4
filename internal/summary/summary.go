// Package summary is the contract for scripts: what `--summary -o json`
// prints at the end of a live run or a replay (docs/design.md, "Summary").
package summary

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// Summary is the contract for scripts (`--summary -o json`), the same for a
// live run and a replay.
type Summary struct {
	// Resource is "resource.version.group" ("configmaps.v1", "deployments.v1.apps").
	Resource        string             `json:"resource"`
	Objects         int                `json:"objects"`
	ResourceVersion string             `json:"resourceVersion"`
	Bookmark        BookmarkSummary    `json:"bookmark"`
	Counters        reflector.Counters `json:"counters"`
	Store           []StoreEntry       `json:"store"`
}

// BookmarkSummary is the last bookmark: its resourceVersion ("" if none) and
// its age in seconds at the end of the run (null if none).
type BookmarkSummary struct {
	ResourceVersion string   `json:"resourceVersion"`
	Age             *float64 `json:"age"`
}

// StoreEntry is one cached object's identity.
type StoreEntry struct {
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	UID             string `json:"uid"`
	ResourceVersion string `json:"resourceVersion"`
}

// NewSummary computes the summary from the reflector's stats and the store; now is the end of the run.
func New(resource reflector.Resource, st reflector.Stats, s *store.Store, now time.Time) Summary {
	objs := s.List()
	slices.SortFunc(objs, func(a, b *store.Object) int { return a.Ref().Compare(b.Ref()) })
	entries := make([]StoreEntry, len(objs))
	for i, o := range objs {
		entries[i] = StoreEntry{Namespace: o.Namespace, Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion}
	}
	sum := Summary{
		Resource:        resource.String(),
		Objects:         len(entries),
		ResourceVersion: st.ResourceVersion,
		Bookmark:        BookmarkSummary{ResourceVersion: st.BookmarkRV},
		Counters:        st.Counters,
		Store:           entries,
	}
	if !st.BookmarkAt.IsZero() {
		age := now.Sub(st.BookmarkAt).Seconds()
		sum.Bookmark.Age = &age
	}
	return sum
}

// WriteJSON writes the summary as one indented JSON object.
func (s Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return fmt.Errorf("writing summary: %w", err)
	}
	return nil
}

// WriteAllJSON writes several resources' summaries as one indented JSON
// object, {"resources": [...]}, in the order given.
func WriteAllJSON(w io.Writer, sums []Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(struct {
		Resources []Summary `json:"resources"`
	}{sums}); err != nil {
		return fmt.Errorf("writing summary: %w", err)
	}
	return nil
}

// WriteText writes the summary for people: the totals, then the objects.
func (s Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "resource %s: %d objects at resourceVersion %s\n", s.Resource, s.Objects, s.ResourceVersion)
	if s.Bookmark.Age != nil {
		fmt.Fprintf(&b, "last bookmark: resourceVersion %s, %.1fs before the end\n", s.Bookmark.ResourceVersion, *s.Bookmark.Age)
	} else {
		b.WriteString("last bookmark: none\n")
	}
	c := s.Counters
	fmt.Fprintf(&b, "lists %d (relists %d, pages %d), watches %d, 410 Gone %d, too large RV %d, bookmarks %d\n",
		c.Lists, c.Relists, c.ListPages, c.Watches, c.Gone, c.TooLargeResourceVersion, c.Bookmarks)
	fmt.Fprintf(&b, "events: added %d, modified %d, deleted %d; UID mismatches %d, duplicates %d; watch errors %d, backoffs %d\n",
		c.Added, c.Modified, c.Deleted, c.UIDMismatches, c.Duplicates, c.WatchErrors, c.Backoffs)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing summary: %w", err)
	}
	if len(s.Store) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tUID\tRESOURCEVERSION")
	for _, e := range s.Store {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Namespace, e.Name, e.UID, e.ResourceVersion)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing summary: %w", err)
	}
	return nil
}
