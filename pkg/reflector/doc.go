// Package reflector owns the list/watch state machine: it asks a Source for
// LIST pages and WATCH streams, follows the resourceVersion cursor, relists on
// 410 Gone, backs off on errors, applies events to a store.Writer and reports
// every request and decision as notes and Stats. It never speaks HTTP itself.
package reflector
