package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// -o json on the dashboard without --summary shapes nothing the run prints:
// the run says so (on stderr and in the dashboard's footer).
func TestTheDashboardSaysWhenOutputJSONShapesNothing(t *testing.T) {
	for _, c := range []struct {
		output       string
		summary, tui bool
		warns        bool
	}{
		{"json", false, true, true},
		{"json", true, true, false},   // the summary at exit is JSON
		{"json", false, false, false}, // the lines are JSON
		{"text", false, true, false},
	} {
		d := DisplayOptions{Output: c.output, Summary: c.summary}
		w := d.dashboardIgnores(c.tui)
		if (w != "") != c.warns || (c.warns && !strings.Contains(w, "the dashboard shows neither")) {
			t.Errorf("-o %s, summary %v, dashboard %v: warning %q, want one: %v", c.output, c.summary, c.tui, w, c.warns)
		}
	}
}

// A replay and the proxy say it too, as the live watch does: on stderr and
// in the dashboard's footer.
func TestAReplaysDashboardSaysWhenOutputJSONShapesNothing(t *testing.T) {
	var out, errOut bytes.Buffer
	o := NewReplayOptions(genericiooptions.IOStreams{In: strings.NewReader("q"), Out: &out, ErrOut: &errOut})
	o.isTerminal = func() bool { return true }
	// At pace: the status goes after 10 s of the replay's clock, and q quits at once.
	o.path, o.Speed, o.Display.Output = "../../testdata/traces/demo.jsonl", 1, "json"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := o.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "warning: -o json shapes the line output") {
		t.Errorf("stderr: %q, want the warning", errOut.String())
	}
	if !strings.Contains(out.String(), "-o json shapes the line") {
		t.Errorf("the dashboard's screens never said it:\n%s", out.String())
	}
}

// proxy --summary keeps its dashboard, as the watch's does: the summary
// comes once the dashboard quits (it was refused on a terminal).
func TestAProxysSummaryComesAfterItsDashboard(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: x\n  context:\n    cluster: x\ncurrent-context: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	o := NewProxyOptions(genericiooptions.IOStreams{In: strings.NewReader("q"), Out: &out, ErrOut: &errOut})
	o.isTerminal = func() bool { return true }
	cmd := proxyCommand(o, "test")
	cmd.SetArgs([]string{"--kubeconfig", kc, "--port", "0", "--summary", "-o", "json"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "observing proxy") || !strings.HasSuffix(s, `{"resources":[],"faults":[]}`+"\n") {
		t.Errorf("stdout: want the dashboard, then the summary:\n%s", s)
	}
}
