package overview

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/common"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// An overview with Options.Added starts with no row, shows its table, and
// gives each resource that comes its row, named with its client; the
// title says the resources are observed.
func TestOverviewAddsTheResourcesThatComeWhileItRuns(t *testing.T) {
	clock := tuitest.NewFakeClock()
	added := make(chan program.Resource, 2)
	opts := tuitest.DemoOptions(clock)
	opts.Added = added
	opts.Kind = program.Observing("proxy 127.0.0.1:8001")
	o := newOverview(opts, nil)
	t.Cleanup(o.Close)
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 160, Height: 40})
	if o.State != overviewTable {
		t.Fatalf("the overview of no resource yet is in state %d, want its table", o.State)
	}
	tuitest.MustContain(t, ovScreen(o), "observing proxy 127.0.0.1:8001", "0 observed streams")

	cms := ovResource("", "configmaps", "ConfigMap", program.Feed{})
	cms.Client, cms.ClientAddr, cms.MetadataOnly = "my-controller/v1", "127.0.0.1:50000", false
	added <- cms
	msg := o.waitAdded()()
	if _, ok := msg.(addedMsg); !ok {
		t.Fatalf("waiting for a resource gave %T, want the added resource", msg)
	}
	o = ovUpdate(o, msg)
	if o.State != overviewTable || len(o.subs) != 1 {
		t.Fatalf("one resource added: state %d with %d rows, want the table with 1", o.State, len(o.subs))
	}
	tuitest.MustContain(t, ovScreen(o), "1 observed stream · namespace prod", "RESOURCE       CLIENT", "configmaps     my-controller/v1")

	pods := ovResource("", "pods", "Pod", program.Feed{})
	pods.Client, pods.ClientAddr, pods.MetadataOnly = "kubectl/v1.37.2 (linux/amd64) kubernetes/0123abc", "127.0.0.1:50001", false
	added <- pods
	o = ovUpdate(o, o.waitAdded()())
	// The client has a column of its own: the program, and what tells it apart.
	tuitest.MustContain(t, ovScreen(o), "2 observed streams · namespace prod\n", "configmaps     my-controller/v1 ", "pods           kubectl          ")
	o = ovKeys(o, "enter")
	tuitest.MustContain(t, ovScreen(o), "client my-controller/v1 127.0.0.1:50000")
	o = ovKeys(o, "esc")
	// An observed reflector cannot be made to relist or audited from here, and says so.
	o = ovKeys(o, "enter", "r")
	tuitest.MustContain(t, ovScreen(o), "force relist is not available: this is another program's reflector, only observed")
	close(added)
	if msg := o.waitAdded()(); msg != nil {
		t.Errorf("a closed Added gave %T, want nothing", msg)
	}
}

// runAll runs cmd and every command of the batches it returns, each on a
// goroutine of its own as bubbletea does; the channel closes once all returned.
func runAll(cmd tea.Cmd) <-chan struct{} {
	var wg sync.WaitGroup
	var run func(tea.Cmd)
	run = func(cmd tea.Cmd) {
		defer wg.Done()
		if batch, ok := cmd().(tea.BatchMsg); ok {
			for _, c := range batch {
				if c != nil {
					wg.Add(1)
					go run(c)
				}
			}
		}
	}
	done := make(chan struct{})
	wg.Add(1)
	go run(cmd)
	go func() { wg.Wait(); close(done) }()
	return done
}

// Run closes the Overview it made, a copy from before any resource came:
// that ends the background reads of the resources added since too (their
// notes readers wait on the notes until then).
func TestClosingTheFirstCopyStopsTheResourcesAddedSince(t *testing.T) {
	added := make(chan program.Resource, 1)
	opts := tuitest.DemoOptions(tuitest.NewFakeClock())
	opts.Added = added
	first := newOverview(opts, nil)
	added <- ovResource("", "pods", "Pod", program.Feed{Notes: program.NewNoteBuffer(8)})
	o, cmd := first.Update(first.waitAdded()())
	if n := len(o.(Overview).subs); n != 1 {
		t.Fatalf("%d resources after one came, want 1", n)
	}
	done := runAll(cmd) // the added resource's poll and notes reader, and the wait for the next
	first.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the added resource's reads go on after Close")
	}
}

// A client's User-Agent is cut to what tells programs, and two reflectors
// of one program, apart.
func TestShortClientKeepsTheProgramAndWhatSetsItApart(t *testing.T) {
	for ua, want := range map[string]string{
		"kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/0123abc/shared-informers":   "kube-controller-manager …/shared-informers",
		"kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/0123abc/metadata-informers": "kube-controller-manager …/metadata-informers",
		"kubectl/v1.37.2 (linux/amd64) kubernetes/0123abc":                                    "kubectl",
		"manager/v0.0.0 (linux/amd64) kubernetes/$Format":                                     "manager",
		// No commit after the platform (the plugin's own): nothing added.
		"kubectl-watchcache/dev (linux/amd64)": "kubectl-watchcache",
		"my-controller/v1":                     "my-controller/v1",
		"curl":                                 "curl",
		"":                                     "",
	} {
		if p, tail := shortClient(ua); p+tail != want {
			t.Errorf("shortClient(%q) = %q, want %q", ua, p+tail, want)
		}
	}
}

// An observed stream whose client left says so on its row (since when, and
// the state it was in), in its dashboard, and in the header, which counts
// it apart from the streams Watching.
func TestAStreamWhoseClientLeftSaysSoAndIsNotCountedWatching(t *testing.T) {
	clock := tuitest.NewFakeClock()
	opts := tuitest.DemoOptions(clock)
	opts.Kind = program.Observing("proxy 127.0.0.1:8001")
	first := ovResource("", "pods", "Pod", program.Feed{})
	first.Client, first.ClientAddr = "kubectl/v1.37.2 (linux/amd64) kubernetes/0123abc", "127.0.0.1:50000"
	second := first
	second.ClientAddr = "127.0.0.1:50001"
	o := newOverview(opts, []program.Resource{first, second})
	t.Cleanup(o.Close)
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 160, Height: 30})
	clock.Time = tuitest.At(60 * time.Second)
	watching := reflector.Stats{State: reflector.StateWatching, StateSince: tuitest.At(10 * time.Second), ResourceVersion: "120"}
	left := watching
	left.ClientLeft, left.ClientLeftState, left.ClientLeftWas = tuitest.At(48*time.Second), reflector.StateWatching, "Watching"
	o = ovUpdate(o, resourceMsg{i: 0, msg: program.SnapshotMsg{At: clock.Time, HasStats: true, Stats: left}})
	o = ovUpdate(o, resourceMsg{i: 1, msg: program.SnapshotMsg{At: clock.Time, HasStats: true, Stats: watching}})
	screen := ovScreen(o)
	// Two kubectl processes: told apart by their connections' ports.
	tuitest.MustContain(t, screen, "● 1 Watching  ○ 1 client left", "kubectl (metadata) :50000 ○ left       12s", "was Watching",
		"kubectl (metadata) :50001 ● Watching   50s")
	if strings.Contains(screen, "● 2 Watching") {
		t.Errorf("the header counts the stream whose client left as Watching:\n%s", screen)
	}
	o = ovKeys(o, "enter")
	tuitest.MustContain(t, ovScreen(o), "○ client left 12s ago, was Watching")

	// On a narrow screen, without the last error's column, a line under the row says it.
	o = ovKeys(o, "esc")
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 90, Height: 30})
	tuitest.MustContain(t, ovScreen(o), "client left 12s ago, was Watching")
}

// The rows of the streams the proxy forgot are hidden, and h shows them:
// the section rule counts them, the totals still do, and the selection
// stays on its resource while a row before it goes.
func TestTheStreamsTheProxyForgotAreHiddenUntilAsked(t *testing.T) {
	clock := tuitest.NewFakeClock()
	opts := tuitest.DemoOptions(clock)
	opts.Kind = program.Observing("proxy 127.0.0.1:8001")
	opts.Connect = []string{"the proxy serves on http://127.0.0.1:8001"}
	var rs []program.Resource
	for i, name := range []string{"one-shot", "informer", "other"} {
		r := ovResource("", "pods", "Pod", program.Feed{})
		r.Client, r.ClientAddr = name+"/v1", fmt.Sprintf("127.0.0.1:5000%d", i)
		rs = append(rs, r)
	}
	o := newOverview(opts, rs)
	t.Cleanup(o.Close)
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 160, Height: 30})
	clock.Time = tuitest.At(120 * time.Second)
	watching := reflector.Stats{State: reflector.StateWatching, StateSince: tuitest.At(10 * time.Second), ResourceVersion: "120"}
	gone := watching
	gone.Counters.Relists = 7
	gone.ClientLeft, gone.ClientLeftState, gone.ClientLeftWas = tuitest.At(48*time.Second), reflector.StateWatching, "Watching"
	poll := func(o Overview, i int, st reflector.Stats) Overview {
		return ovUpdate(o, resourceMsg{i: i, msg: program.SnapshotMsg{At: clock.Time, HasStats: true, Stats: st}})
	}
	for i := range rs {
		o = poll(o, i, watching)
	}
	selects := func(o Overview, client string) {
		t.Helper()
		if !regexp.MustCompile(`▸ pods +` + client).MatchString(ovScreen(o)) {
			t.Errorf("%s's row is not the one selected:\n%s", client, ovScreen(o))
		}
	}
	o = ovKeys(o, "down")
	selects(o, "informer")
	if strings.Contains(ovScreen(o), "h show forgotten") {
		t.Errorf("h is offered with no stream forgotten:\n%s", ovScreen(o))
	}

	o = poll(o, 0, gone)
	tuitest.MustContain(t, ovScreen(o), "one-shot/v1", "○ left")
	gone.Forgotten = true
	o = poll(o, 0, gone)
	screen := ovScreen(o)
	tuitest.MustContain(t, screen, "resources · 1 hidden", "h show forgotten", "○ 1 client left")
	selects(o, "informer")
	if strings.Contains(screen, "one-shot") {
		t.Errorf("the forgotten stream's row is shown:\n%s", screen)
	}
	if !regexp.MustCompile(`total .* 7 `).MatchString(screen) {
		t.Errorf("the totals do not count the hidden row's 7 relists:\n%s", screen)
	}
	o = ovKeys(o, "enter")
	tuitest.MustContain(t, ovScreen(o), "client informer/v1 127.0.0.1:50001")
	o = ovKeys(o, "esc", "h")
	screen = ovScreen(o)
	tuitest.MustContain(t, screen, "one-shot/v1", "h hide forgotten")
	selects(o, "informer")
	if strings.Contains(screen, "hidden") {
		t.Errorf("h did not show the hidden row:\n%s", screen)
	}
	o = ovKeys(o, "up")
	selects(o, "one-shot")
	// Polled no more, its clock moves with the overview's: so do its ages.
	clock.Time = tuitest.At(150 * time.Second)
	o = ovUpdate(o, tickMsg{})
	o = ovKeys(o, "enter")
	tuitest.MustContain(t, ovScreen(o), "up 2m30s", "○ client left 1m42s ago")
	o = ovKeys(o, "esc", "h") // the forgotten row selected, then hidden: the next one is
	selects(o, "informer")
	o = ovKeys(o, "?")
	tuitest.MustContain(t, ovScreen(o), "show forgotten clients")

	// Every client forgotten: the table says so, and how to connect.
	o = ovKeys(o, "esc")
	for i := range rs {
		o = poll(o, i, gone)
	}
	tuitest.MustContain(t, ovScreen(o), "resources · 3 hidden", "every client left and was forgotten (3): h shows them")
	tuitest.MustContain(t, ovScreen(o), "  the proxy serves on http://127.0.0.1:8001")
	tuitest.MustNotContain(t, ovScreen(o), "no stream yet") // a reviewer read it under "3 observed streams"

	// After a rewind with h pressed, the next overview shows them too.
	opts.Reopen = &program.View{Row: -1, ShowForgotten: true}
	again := newOverview(opts, rs)
	t.Cleanup(again.Close)
	again = ovUpdate(again, tea.WindowSizeMsg{Width: 160, Height: 30})
	again = poll(again, 0, gone)
	tuitest.MustContain(t, ovScreen(again), "one-shot/v1", "h hide forgotten")
}

// stillPlayer is a replay's player that stands at pos of a trace that ends
// at end.
type stillPlayer struct{ pos, end time.Duration }

func (p *stillPlayer) TogglePause() bool                { return false }
func (p *stillPlayer) Step()                            {}
func (p *stillPlayer) Faster() float64                  { return 1 }
func (p *stillPlayer) Slower() float64                  { return 1 }
func (p *stillPlayer) Seek(time.Duration) error         { return nil }
func (p *stillPlayer) Paused() bool                     { return false }
func (p *stillPlayer) Speed() float64                   { return 1 }
func (p *stillPlayer) Position() (time.Duration, int64) { return p.pos, 1 }
func (p *stillPlayer) Reached() time.Duration           { return p.pos }
func (p *stillPlayer) End() (time.Duration, bool)       { return p.end, true }

// A proxy's trace whose clients were all forgotten ends on the dashboard
// too: the forgotten streams are polled no more, and hear no stop; once
// the replay has served its last line, nothing more comes of them (a
// reviewer's replay stood at 100% and never said "ended").
func TestAReplayWhoseClientsWereForgottenEnds(t *testing.T) {
	clock := tuitest.NewFakeClock()
	opts := tuitest.DemoOptions(clock)
	opts.Kind = program.Observing("proxy 127.0.0.1:8001")
	opts.Replay, opts.Added = true, make(chan program.Resource)
	pl := &stillPlayer{pos: 30 * time.Second, end: 40 * time.Second}
	opts.Player = pl
	r := ovResource("", "pods", "Pod", program.Feed{})
	r.Client, r.ClientAddr = "kubectl/v1", "127.0.0.1:50000"
	o := newOverview(opts, []program.Resource{r})
	t.Cleanup(o.Close)
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 160, Height: 30})
	gone := reflector.Stats{State: reflector.StateListed, StateSince: tuitest.At(time.Second), Forgotten: true}
	gone.ClientLeft, gone.ClientLeftState, gone.ClientLeftWas = tuitest.At(2*time.Second), reflector.StateListed, "Listed"
	o = ovUpdate(o, resourceMsg{i: 0, msg: program.SnapshotMsg{At: clock.Time, HasStats: true, Stats: gone}})
	o = ovUpdate(o, tickMsg{})
	if o.stopped() {
		t.Fatal("ended with the replay at 30s of 40s")
	}
	pl.pos = pl.end
	o = ovUpdate(o, tickMsg{})
	if !o.stopped() || !strings.Contains(ovScreen(o), "ended") {
		t.Errorf("the replay served its last line: want it ended\n%s", ovScreen(o))
	}
}

// A player key's status goes after its seconds on an overview with no row
// too, where no resource's poll expires it: the overview's tick does.
func TestAPlayersStatusExpiresOnAnOverviewWithNoRow(t *testing.T) {
	clock := tuitest.NewFakeClock()
	opts := tuitest.DemoOptions(clock)
	opts.Kind = program.Observing("proxy 127.0.0.1:8001")
	opts.Replay, opts.Added = true, make(chan program.Resource)
	opts.Player = &stillPlayer{pos: 10 * time.Second, end: 40 * time.Second}
	o := newOverview(opts, nil)
	t.Cleanup(o.Close)
	o = ovKeys(ovUpdate(o, tea.WindowSizeMsg{Width: 120, Height: 24}), "+")
	status := o.Chrome.Status.Text
	if status == "" {
		t.Fatal("+ on the overview left no status")
	}
	tuitest.MustContain(t, ovScreen(o), status)
	// A replay's status ages on the wall clock alone: this one, a live
	// run's, on the overview's clock too, which the tick moves.
	o.Chrome.Status = program.NewStatus(status, common.SevNone, o.Chrome.Status.At, false)
	clock.Time = tuitest.At(11 * time.Second)
	o = ovUpdate(o, tickMsg{})
	tuitest.MustNotContain(t, ovScreen(o), status)
}
