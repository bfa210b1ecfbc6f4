// Package tuitest holds what the tests of the dashboard's packages share:
// a fixed clock, the demo resource's options, stats, snapshots and notes,
// fake feeds (churn, findings), a replay of a trace with its player
// (PlayerRig) and helpers that run commands and wait. Only tests import
// it, which is why it may sit above pkg/trace in the layers.
package tuitest
