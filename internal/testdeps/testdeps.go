// Package testdeps checks, in a test package's TestMain, that the programs its
// tests run and Go does not build (a Prometheus server, a browser) are
// installed. A missing one fails the package at once, before any test,
// with the one line that installs it: the tests never skip.
package testdeps

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Program is a program some tests run.
type Program struct {
	// Commands are the names it may have on PATH, the usual one first.
	Commands []string
	// Env, if set, names an environment variable that may hold its path instead.
	Env string
	// Package is the Debian package that installs it.
	Package string
	// For says what the tests use it for.
	For string
}

// Prometheus is a real Prometheus server, which scrapes the plugin's metrics.
func Prometheus() Program {
	return Program{Commands: []string{"prometheus"}, Package: "prometheus", For: "a real Prometheus scrapes the plugin's metrics"}
}

// Chromium is a headless browser, which loads the HTML report.
func Chromium() Program {
	return Program{Commands: []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"},
		Env: "WATCHCACHE_CHROMIUM", Package: "chromium", For: "a real browser loads the HTML report"}
}

// Path is where p is: its environment variable, else the first of its
// commands on PATH.
func (p Program) Path() (string, error) {
	if p.Env != "" {
		if v := os.Getenv(p.Env); v != "" {
			return v, nil
		}
	}
	for _, c := range p.Commands {
		if path, err := exec.LookPath(c); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("%s is not installed (%s)", p.Commands[0], p.For)
}

// Check returns nil when every program is installed, else one error that
// names each missing one and how to install them all.
func Check(programs ...Program) error {
	var errs []error
	var pkgs []string
	for _, p := range programs {
		if _, err := p.Path(); err != nil {
			errs = append(errs, err)
			pkgs = append(pkgs, p.Package)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w\ninstall with: sudo apt-get install -y %s\nor run the README's test command, hack/test.sh, which installs what the tests need",
		errors.Join(errs...), strings.Join(pkgs, " "))
}

// Main is the start of a TestMain: it returns 0 when every program is
// installed, else prints what is missing and returns 1, the exit code.
func Main(programs ...Program) int {
	if err := Check(programs...); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	return 0
}
