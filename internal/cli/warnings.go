package cli

import (
	"bytes"
	"io"
	"sync"

	"k8s.io/client-go/rest"
)

// apiWarnings takes the API server's warnings (a deprecated API, say) to
// stderr as kubectl prints them ("Warning: …", each text once): at once,
// or, while the dashboard draws on the terminal, once it has quit.
type apiWarnings struct {
	mu   sync.Mutex
	out  io.Writer
	held *bytes.Buffer // nil: written at once
}

// newAPIWarnings is the handler of rest.Config.WarningHandler, writing to
// out; hold keeps what it writes until release.
func newAPIWarnings(out io.Writer, hold bool) (*apiWarnings, rest.WarningHandler) {
	a := &apiWarnings{out: out}
	if hold {
		a.held = &bytes.Buffer{}
	}
	return a, rest.NewWarningWriter(a, rest.WarningWriterOptions{Deduplicate: true})
}

func (a *apiWarnings) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.held != nil {
		return a.held.Write(p)
	}
	return a.out.Write(p)
}

// release writes what was held, and from then on writes at once.
func (a *apiWarnings) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.held != nil {
		_, _ = a.out.Write(a.held.Bytes())
		a.held = nil
	}
}
