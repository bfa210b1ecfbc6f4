// Package dashboard is one resource's dashboard (Model), a component made
// of others: it polls its feed and reads its notes, and shows the health
// gauges, the rates, the panes (log, requests, relist diff), the churn
// pane, its findings and the detail of what is selected. It shares the
// run's one root (package program) with the overview, which holds a Model
// for each resource and frames the one shown.
package dashboard
