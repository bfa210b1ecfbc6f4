package testdeps

import (
	"strings"
	"testing"
)

func TestAMissingProgramIsNamedWithTheLineThatInstallsIt(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("WATCHCACHE_CHROMIUM", "")
	err := Check(Prometheus(), Chromium())
	if err == nil {
		t.Fatal("Check with an empty PATH: got nil, want an error")
	}
	for _, want := range []string{
		"prometheus is not installed (a real Prometheus scrapes the plugin's metrics)",
		"chromium is not installed (a real browser loads the HTML report)",
		"install with: sudo apt-get install -y prometheus chromium",
		"hack/test.sh",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if code := Main(Prometheus()); code != 1 {
		t.Errorf("Main with prometheus missing: got %d, want 1", code)
	}
}

func TestAnInstalledProgramPasses(t *testing.T) {
	t.Setenv("WATCHCACHE_CHROMIUM", "/opt/my/chrome")
	if p, err := Chromium().Path(); err != nil || p != "/opt/my/chrome" {
		t.Errorf("Chromium().Path() with WATCHCACHE_CHROMIUM: got %q, %v", p, err)
	}
	if err := Check(Program{Commands: []string{"sh"}, Package: "dash"}); err != nil {
		t.Errorf("Check(sh): %v", err)
	}
}
