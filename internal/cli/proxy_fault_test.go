package cli

import (
	"strings"
	"testing"
)

// A malformed or unknown --fault is a usage error (exit 2) that lists the
// faults, as kubectl reports a bad flag; so is a bad --fault-target, and
// one without --fault. Nothing is served: the flags are checked first.
func TestProxyRefusesBadFaultsWithAUsageErrorListingThem(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fault", "explode"}, `error: invalid --fault "explode": unknown fault "explode"`},
		{[]string{"--fault", "gone@every=soon"}, `error: invalid --fault "gone@every=soon": @every=soon: not a duration`},
		{[]string{"--fault", "delay"}, `error: invalid --fault "delay": delay needs a duration: delay=300ms`},
		{[]string{"--fault", "drop-deletes@p=2"}, `error: invalid --fault "drop-deletes@p=2": @p=2: want a fraction above 0 and at most 1`},
		{[]string{"--fault", "gone", "--fault-target", "pods/status"}, `error: invalid --fault-target: "pods/status": want RESOURCE, RESOURCE.GROUP or client=USER-AGENT-SUBSTRING`},
		{[]string{"--fault-target", "pods"}, "error: --fault-target needs --fault"},
		{[]string{"--fault-seed", "7"}, "error: --fault-seed needs --fault"},
	} {
		code, _, errOut := run(t, append([]string{"proxy", "--port", "0", "--no-tui"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, ExitUsage, tc.want)
		}
		if strings.Contains(tc.args[0], "--fault") && strings.HasPrefix(tc.want, "error: invalid --fault \"") {
			for _, name := range []string{"gone", "cut", "drop-deletes", "delay=D", "no-bookmarks", "stall-initial-list", "throttle[=D]", "@every=D", "@p=F"} {
				if !strings.Contains(errOut, name) {
					t.Errorf("%v: the usage error does not list %s:\n%s", tc.args, name, errOut)
				}
			}
		}
		if strings.Contains(errOut, "Starting to serve") {
			t.Errorf("%v: the proxy served", tc.args)
		}
	}
}
