// Package tuitest holds what the tests of the dashboard's packages share:
// a fixed clock, the demo resource's options, stats, snapshots and notes,
// fake feeds (churn, findings) and helpers that run commands and wait.
// Only tests import it.
package tuitest
