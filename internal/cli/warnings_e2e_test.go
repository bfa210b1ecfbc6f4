package cli

import (
	"strings"
	"testing"
)

// The API server's warnings reach stderr as kubectl prints them, each
// once: v1 Endpoints, deprecated since 1.33, says so on every request of
// its LIST and watch (a reviewer's watch of endpoints said nothing).
func TestE2EAPIServerWarningsArePrintedAsKubectlPrintsThem(t *testing.T) {
	kc := kubeconfig(t)
	code, _, stderr := run(t, "endpoints", "-n", "default", "--kubeconfig", kc, "--no-tui", "--once")
	const want = "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice\n"
	if code != ExitOK || strings.Count(stderr, want) != 1 {
		t.Errorf("exit %d, stderr %q; want exit 0 and the server's deprecation warning once", code, stderr)
	}
}

// On the dashboard, which hides stderr, they are kept until it quits.
func TestAPIServerWarningsAreHeldWhileTheDashboardDraws(t *testing.T) {
	var out strings.Builder
	held, h := newAPIWarnings(&out, true)
	h.HandleWarningHeader(299, "-", "v1 Endpoints is deprecated")
	h.HandleWarningHeader(299, "-", "v1 Endpoints is deprecated")
	if out.Len() != 0 {
		t.Fatalf("written while held: %q", out.String())
	}
	held.release()
	h.HandleWarningHeader(299, "-", "another")
	if got := out.String(); got != "Warning: v1 Endpoints is deprecated\nWarning: another\n" {
		t.Errorf("got %q, want each warning once, after the release", got)
	}
}
