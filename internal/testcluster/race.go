//go:build race

package testcluster

// RaceEnabled says this package, and so the test binary that links it, was
// built with -race: BuildPlugin(RaceEnabled) builds the plugin as the test
// was built.
const RaceEnabled = true
