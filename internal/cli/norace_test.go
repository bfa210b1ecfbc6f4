//go:build !race

package cli

// raceEnabled says the test binary was built with -race.
const raceEnabled = false
