package session

import (
	"testing"

	"k8s.io/client-go/rest"
)

// The server a trace header names is the one client-go talks to, with no
// credentials: a kubeconfig's server without a scheme is one too.
func TestServerURLIsClientGosWithoutCredentials(t *testing.T) {
	for host, want := range map[string]string{
		"https://u:p@127.0.0.1:6443/x?token=secret": "https://127.0.0.1:6443/x",
		"127.0.0.1:6443": "http://127.0.0.1:6443",
		"[::1]:6443":     "http://[::1]:6443",
	} {
		if got := ServerURL(&rest.Config{Host: host}); got != want {
			t.Errorf("ServerURL(%q) = %q, want %q", host, got, want)
		}
	}
	tls := &rest.Config{Host: "127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	if got := ServerURL(tls); got != "https://127.0.0.1:6443" {
		t.Errorf("ServerURL(127.0.0.1:6443 with TLS) = %q, want https://127.0.0.1:6443", got)
	}
}
