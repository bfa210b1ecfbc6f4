package cli

import (
	"strings"
	"testing"
)

// The proxy's empty dashboard says where it serves and the kubeconfig to
// use: the file --print-kubeconfig wrote, or the one to write, inline.
func TestConnectLinesSayWhereAndWithWhichKubeconfig(t *testing.T) {
	const server = "http://127.0.0.1:34567"
	kc := proxyKubeconfig(server)
	withFile := strings.Join(connectLines(server, "proxy.kubeconfig", kc), "\n")
	for _, want := range []string{server, "KUBECONFIG=proxy.kubeconfig ./my-controller"} {
		if !strings.Contains(withFile, want) {
			t.Errorf("with --print-kubeconfig the lines lack %q:\n%s", want, withFile)
		}
	}
	lines := connectLines(server, "", kc)
	if len(lines) > 17 {
		t.Errorf("%d lines: the empty table of an 80x24 screen has 17", len(lines))
	}
	inline := strings.Join(lines, "\n")
	for _, want := range []string{server, "KUBECONFIG=FILE ./my-controller", "--print-kubeconfig FILE", "server: " + server, "current-context: watchcache-proxy"} {
		if !strings.Contains(inline, want) {
			t.Errorf("without --print-kubeconfig the lines lack %q:\n%s", want, inline)
		}
	}
}
