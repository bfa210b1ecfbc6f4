package tui

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
)

// goldenScreen runs the dashboard as a program at w x h with the plain
// color profile and a clock fixed at the demo's last poll, sends msgs, quits,
// and returns the final screen as plain text. Regenerate the goldens with
// go test ./pkg/tui -run Golden -update.
func goldenScreen(t *testing.T, w, h int, opts func(*program.Options), msgs ...tea.Msg) []byte {
	t.Helper()
	return goldenScreenOf(t, w, h, program.Feed{}, opts, msgs...)
}

// goldenScreenOf is goldenScreen of the demo resource with feed.
func goldenScreenOf(t *testing.T, w, h int, feed program.Feed, opts func(*program.Options), msgs ...tea.Msg) []byte {
	t.Helper()
	o := demoOptions(newFakeClock())
	end := at(110 * time.Second)
	o.Now = func() time.Time { return end } // read by the program's goroutines: fixed, so no race
	if opts != nil {
		opts(&o)
	}
	m := New(o, demoResource(feed))
	t.Cleanup(m.Close)
	tm := teatest.NewTestModel(t, m,
		teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	for _, s := range demoSnapshots() {
		tm.Send(s)
	}
	tm.Send(program.NotesMsg{Notes: demoNotes()})
	tm.Send(demoChanges())
	for _, msg := range msgs {
		tm.Send(msg)
	}
	tm.Send(keyPress("ctrl+c"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	var out bytes.Buffer
	plainText := &colorprofile.Writer{Forward: &out, Profile: colorprofile.NoTTY}
	if _, err := plainText.Write([]byte(final.View().Content)); err != nil {
		t.Fatal(err)
	}
	return append(out.Bytes(), '\n')
}

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
	o := demoOptions(newFakeClock())
	end := at(110 * time.Second)
	o.Now = func() time.Time { return end } // read by the program's goroutines: fixed, so no race
	if opts != nil {
		opts(&o)
	}
	resources := ovDemoResources([numOvDemo]program.Feed{})
	if res != nil {
		res(resources)
	}
	m := NewOverview(o, resources)
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
	tm := teatest.NewTestModel(t, m,
		teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	for _, msg := range msgs[last:] {
		tm.Send(msg)
	}
	for _, k := range keys {
		tm.Send(keyPress(k))
	}
	tm.Send(keyPress("ctrl+c"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Overview)
	var out bytes.Buffer
	plainText := &colorprofile.Writer{Forward: &out, Profile: colorprofile.NoTTY}
	if _, err := plainText.Write([]byte(final.View().Content)); err != nil {
		t.Fatal(err)
	}
	return append(out.Bytes(), '\n')
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

func TestGoldenDashboard80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenScreen(t, 80, 24, nil))
}

func TestGoldenDashboard160x48(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenScreen(t, 160, 48, nil))
}

func TestGoldenReplayRequests120x40(t *testing.T) {
	replay := func(o *program.Options) {
		o.Replay, o.Trace = true, "testdata/traces/demo.jsonl"
	}
	snaps := demoSnapshots()
	snap := snaps[len(snaps)-1] // the same stats (and diff) as the last poll, now with a position
	snap.HasProgress, snap.Done, snap.Total = true, 3120, 4800
	teatest.RequireEqualOutput(t, goldenScreen(t, 120, 40, replay, snap, keyPress("tab"), keyPress("up")))
}

func TestGoldenObjectDetail80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenScreen(t, 80, 24, nil, keyPress("up"), keyPress("up"), keyPress("enter")))
}

func TestGoldenHelp80x24(t *testing.T) {
	teatest.RequireEqualOutput(t, goldenScreen(t, 80, 24, nil, keyPress("?")))
}
