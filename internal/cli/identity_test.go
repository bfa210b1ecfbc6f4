package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestTheVersionIsTheStampThenTheModuleVersionThenDev(t *testing.T) {
	built := func(v string) *debug.BuildInfo { return &debug.BuildInfo{Main: debug.Module{Version: v}} }
	for _, tc := range []struct {
		stamped string
		info    *debug.BuildInfo
		ok      bool
		want    string
	}{
		{"v1.2.3", built("v0.9.0"), true, "v1.2.3"},
		{"dev", built("v0.9.0"), true, "v0.9.0"},
		{"", built("v0.0.0-20261201120000-0ff5011abcde+dirty"), true, "v0.0.0-20261201120000-0ff5011abcde+dirty"},
		{"dev", built("(devel)"), true, "dev"},
		{"dev", nil, false, "dev"},
	} {
		if got := resolveVersion(tc.stamped, tc.info, tc.ok); got != tc.want {
			t.Errorf("resolveVersion(%q, %v): got %q, want %q", tc.stamped, tc.info, got, tc.want)
		}
	}
}

func TestAUserAgentOfMoreThanOneLineIsAUsageError(t *testing.T) {
	for _, args := range [][]string{
		{"configmaps", "--user-agent", "a\r\nX-Evil: 1"},
		{"proxy", "--user-agent", "a\nb"},
	} {
		code, _, errOut := run(t, args...)
		if code != ExitUsage || !strings.Contains(errOut, "invalid --user-agent") {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and invalid --user-agent", args, code, errOut, ExitUsage)
		}
	}
}

// TestE2EThePluginNamesItselfToTheServer reads the apiserver's audit log:
// every LIST and WATCH of the installed plugin, run through kubectl, carries
// "kubectl-watchcache/VERSION (OS/ARCH)" with the version "kubectl
// watchcache version" prints, and --user-agent replaces it.
func TestE2EThePluginNamesItselfToTheServer(t *testing.T) {
	dir := pluginPath(t)
	out, stderr, err := kubectl(t, dir, "watchcache", "version")
	if err != nil {
		t.Fatalf("kubectl watchcache version: %v\n%s", err, stderr)
	}
	version, ok := strings.CutPrefix(strings.TrimSpace(out), "kubectl-watchcache ")
	if !ok || version == "" {
		t.Fatalf("kubectl watchcache version printed %q", out)
	}
	for _, tc := range []struct {
		ns   string
		args []string
		want string
	}{
		{"ua-default", nil, fmt.Sprintf("kubectl-watchcache/%s (%s/%s)", version, runtime.GOOS, runtime.GOARCH)},
		{"ua-flag", []string{"--user-agent", "my-controller/1.2 (test)"}, "my-controller/1.2 (test)"},
	} {
		createConfigMaps(t, tc.ns, 2)
		args := append([]string{"watchcache", "configmaps", "-n", tc.ns, "--no-tui", "--once"}, tc.args...)
		if _, stderr, err := kubectl(t, dir, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		events, err := cluster(t).AuditEvents()
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, ev := range events {
			if (ev.Verb != "list" && ev.Verb != "watch") || !strings.Contains(ev.RequestURI, "/namespaces/"+tc.ns+"/configmaps") {
				continue
			}
			seen++
			if ev.UserAgent != tc.want {
				t.Errorf("%s %s: User-Agent %q, want %q", ev.Verb, ev.RequestURI, ev.UserAgent, tc.want)
			}
		}
		if seen == 0 {
			t.Errorf("%v: the audit log has no list or watch of configmaps in %s", args, tc.ns)
		}
	}
}
