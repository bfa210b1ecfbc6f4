// Package common is what the dashboard's components and its models share,
// as gh-dash's common and theme packages are: the styles and severities,
// the layout helpers that cut and pad styled lines, the scroller behind
// every list and the log's ring, the keys that move a list or a text, and
// the few texts of reflector data that more than one of them shows. It
// knows no component and no model.
package common
