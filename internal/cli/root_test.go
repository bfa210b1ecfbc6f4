package cli

import (
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestVersionPrintsTheInjectedVersion(t *testing.T) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	cmd := NewCommand(streams, "v9.8.7")
	cmd.SetArgs([]string{"version"})
	if code := Execute(cmd, streams); code != ExitOK {
		t.Fatalf("exit code: got %d, want 0 (stderr %q)", code, errOut.String())
	}
	if got, want := out.String(), "kubectl-watchcache v9.8.7\n"; got != want {
		t.Errorf("output: got %q, want %q", got, want)
	}
}

func TestUnknownFlagIsAUsageError(t *testing.T) {
	streams, _, _, errOut := genericiooptions.NewTestIOStreams()
	cmd := NewCommand(streams, "dev")
	cmd.SetArgs([]string{"version", "--bogus"})
	if code := Execute(cmd, streams); code != ExitUsage {
		t.Fatalf("exit code: got %d, want %d", code, ExitUsage)
	}
	if got, want := errOut.String(), "error: unknown flag: --bogus\n"; got != want {
		t.Errorf("stderr: got %q, want %q", got, want)
	}
}

// A forbidden request fails after the same retries on the dashboard as in
// the line output (it took six attempts and half a minute on the dashboard).
func TestAForbiddenRequestIsRetriedAsOftenOnTheDashboardAsPiped(t *testing.T) {
	o := NewWatchOptions(genericiooptions.NewTestIOStreamsDiscard())
	dashboard, piped := o.reflectorConfig(true), o.reflectorConfig(false)
	if dashboard.MaxPermanentRetries != piped.MaxPermanentRetries || piped.MaxPermanentRetries != 1 {
		t.Errorf("permanent retries: dashboard %d, piped %d; want 1 in both", dashboard.MaxPermanentRetries, piped.MaxPermanentRetries)
	}
}
