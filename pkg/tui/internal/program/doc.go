// Package program is what the dashboard's models share, as gh-dash's
// ProgramContext is: the Options, Resources and Feeds a run is given (the
// public package aliases them), the run's one Root (the chrome: size,
// status, help, the player's keys and badge; the state of the screen and
// which dashboard shows; the findings pane and the detail), and the
// messages that carry a resource's feed to its dashboard. The overview
// holds the Root, and each resource's dashboard shares it. It knows the
// components it frames (findingspane, detail, helpscreen, player) and
// common, never a model.
package program
