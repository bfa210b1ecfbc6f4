// Package common is what the dashboard's components share, as gh-dash's
// common and theme packages are: the styles and severities, the layout
// helpers that cut and pad styled lines, the ring and the scroller behind
// every list, the keys that move a list or a text, and the few texts of
// reflector data that more than one component shows. It knows no
// component and no model.
package common
