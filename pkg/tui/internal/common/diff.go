package common

import (
	"fmt"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// DiffRow is one object a relist diff names.
type DiffRow struct {
	What  string
	Sev   Severity
	Entry store.DiffEntry
}

// DiffRows lists a diff's entries by category, in the diff's order.
func DiffRows(d *store.RelistDiff) []DiffRow {
	if d == nil {
		return nil
	}
	rows := make([]DiffRow, 0, d.Missed())
	for _, e := range d.Deleted {
		rows = append(rows, DiffRow{"missed delete", SevBad, e})
	}
	for _, e := range d.Recreated {
		rows = append(rows, DiffRow{"recreated", SevBad, e})
	}
	for _, e := range d.Updated {
		rows = append(rows, DiffRow{"missed update", SevWarn, e})
	}
	for _, e := range d.Added {
		rows = append(rows, DiffRow{"missed add", SevWarn, e})
	}
	return rows
}

// Text is the row's description after its category.
func (r DiffRow) Text() string {
	e := r.Entry
	switch r.What {
	case "missed delete":
		return fmt.Sprintf("%s  uid %s  rv %s", e.Ref, store.ShortUID(e.OldUID), OrDash(e.OldResourceVersion))
	case "recreated":
		return fmt.Sprintf("%s  uid %s → %s  rv %s → %s", e.Ref, store.ShortUID(e.OldUID), store.ShortUID(e.NewUID), OrDash(e.OldResourceVersion), OrDash(e.NewResourceVersion))
	case "missed update":
		return fmt.Sprintf("%s  rv %s → %s", e.Ref, OrDash(e.OldResourceVersion), OrDash(e.NewResourceVersion))
	}
	return fmt.Sprintf("%s  uid %s  rv %s", e.Ref, store.ShortUID(e.NewUID), OrDash(e.NewResourceVersion))
}
