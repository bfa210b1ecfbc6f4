package overview

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// goldenOverview runs the overview of the demo's four resources as a
// program at w x h, like goldenScreen, sends the demo's messages and then
// keys, quits, and returns the final screen as plain text.
func goldenOverview(t *testing.T, w, h int, keys ...string) []byte {
	t.Helper()
	return goldenOverviewOf(t, w, h, nil, nil, keys...)
}

// goldenOverviewOf is goldenOverview with the options and the resources
// changed by opts and res (either may be nil).
func goldenOverviewOf(t *testing.T, w, h int, opts func(*program.Options), res func([]program.Resource), keys ...string) []byte {
	t.Helper()
	o := tuitest.GoldenOptions(opts)
	resources := ovDemoResources([numOvDemo]program.Feed{})
	if res != nil {
		res(resources)
	}
	m := newOverview(o, resources)
	t.Cleanup(m.Close)
	// A program renders a frame after every message, and under -race a frame
	// of the overview costs a tenth of a second: the demo's first minute of
	// polls goes to Update before the program starts (the same calls in the
	// same order), and the program gets the last round of polls and what follows.
	msgs := ovDemoMessages()
	last := len(msgs) - numOvDemo - 2
	m = ovUpdate(m, tea.WindowSizeMsg{Width: w, Height: h})
	for _, msg := range msgs[:last] {
		m = ovUpdate(m, msg)
	}
	tm := tuitest.GoldenProgram(t, m, w, h)
	for _, msg := range msgs[last:] {
		tm.Send(msg)
	}
	for _, k := range keys {
		tm.Send(tuitest.KeyPress(k))
	}
	return tuitest.FinalScreen(t, tm)
}

func TestGoldenOverview80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenOverview(t, 80, 24))
}

func TestGoldenOverview160x48(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenOverview(t, 160, 48))
}

// proxyClients make the demo's resources a proxy's streams: two informers
// of kube-controller-manager, kubectl get, and a controller-runtime manager.
func proxyClients(rs []program.Resource) {
	for i, c := range []struct {
		ua         string
		meta, tabl bool
	}{
		{ua: "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/0123abc/shared-informers"},
		{ua: "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/0123abc/metadata-informers", meta: true},
		{ua: "kubectl/v1.37.2 (linux/amd64) kubernetes/0123abc", tabl: true},
		{ua: "manager/v0.0.0 (linux/amd64) kubernetes/$Format", meta: true},
	} {
		rs[i].Client, rs[i].ClientAddr = c.ua, fmt.Sprintf("127.0.0.1:%d", 50000+i)
		rs[i].MetadataOnly, rs[i].Table, rs[i].Wire = c.meta, c.tabl, reflector.WireProtobuf
		if c.tabl {
			rs[i].Wire = reflector.WireJSON
		}
	}
}

func observing(o *program.Options) { o.Kind = program.Observing("proxy 127.0.0.1:8001") }

// The overview of a proxy's streams has a client column: what tells the
// programs, and two reflectors of one program, apart.
func TestGoldenProxyOverview120x30(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenOverviewOf(t, 120, 30, observing, proxyClients))
}

func TestGoldenProxyOverview80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenOverviewOf(t, 80, 24, observing, proxyClients))
}

func TestGoldenOverviewHelp80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenOverview(t, 80, 24, "?"))
}
