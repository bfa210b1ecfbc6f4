// Package overview is the model tui.Run runs (Overview): the run's one root
// model, which holds the root (package program) and one resource's
// dashboard (package dashboard) per resource, with a row each on its table
// (package table), and frames whichever shows. With one resource it is
// that resource's dashboard and nothing more.
package overview
