// Package tui owns the live terminal dashboard (bubbletea v2 and lipgloss v2):
// it renders snapshots of reflector and store stats and a bounded event log,
// and never slows the reflector down.
//
// Data enters in three ways only, each bounded: a poll of Feed.Stats and the
// store's counters at most ten times a second; the reflector's notes through a
// NoteBuffer, whose Push never blocks and counts what it drops; and a store
// subscription, whose writer never waits either (changes it cannot hand over
// are counted as missed). The same Model runs on a live cluster and on a
// replayed trace: Options says which, and the Feed's functions that need a
// cluster (ForceRelist, Audit) are simply absent or fail in a replay.
package tui
