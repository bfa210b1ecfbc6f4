// Package tui owns the live terminal dashboard (bubbletea v2 and lipgloss v2):
// it renders snapshots of reflector and store stats and a bounded event log,
// and never slows the reflector down.
package tui
