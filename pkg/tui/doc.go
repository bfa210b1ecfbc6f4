// Package tui owns the live terminal dashboard (bubbletea v2 and lipgloss v2):
// it renders snapshots of reflector and store stats and a bounded event log,
// and never slows the reflector down.
//
// A run shows one or several resources, each a Resource: what is watched,
// how its lists are made, and its Feed. Run shows them: one resource as its
// dashboard, several as an overview with one row per resource and its
// totals, where enter opens a resource's own dashboard and esc comes back.
// Every resource's dashboard runs all the time, shown or not.
//
// Data enters each resource's dashboard in two ways only, each bounded: a
// poll of Feed.Stats and the store's counters (and, for the dashboard
// shown, Options.Probe) at most ten times a second; and the reflector's
// notes, the log's only source, through a NoteBuffer, whose Push never
// blocks and counts what it drops. The same dashboard runs
// on a live cluster and on a replayed trace: Options says which, and the
// Feed's functions that need a cluster (ForceRelist, Audit) are simply
// absent or fail in a replay. A replay may also give Options.Player: its
// keys (space, →, +, -, 0-9) pause, step, speed up, slow down and jump the
// replay forward, and the header shows its position in recorded time.
//
// This package holds Run and what a caller gives it: the Options, Resource
// and Feed, aliases of internal/program's. The models are a package each
// under internal/, as gh-dash lays out its own: overview (the one model Run
// runs, the run's root model) holds a dashboard (a resource's Model) per
// resource; program is what they share, gh-dash's program context: the
// run's one root (the chrome: size, status, help, the player's keys and
// badge; the state and which dashboard shows; the findings pane and the
// detail), the options and the feed's messages. What they show is made by
// components, a package each: findingspane, detail, logpane, panes (the
// requests and the relist diff), churn, history, rates, helpscreen, player
// (the replay's keys and badge), prompt and the overview's table. Each
// knows only internal/common (styles, severities, layout helpers, the
// scroller and the list keys), never a model; internal/layers holds that
// rule.
package tui
