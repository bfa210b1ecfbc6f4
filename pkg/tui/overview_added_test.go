package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// An overview with Options.Added starts with no row, shows its table, and
// gives each resource that comes its row, named with its client; the
// title says the resources are observed.
func TestOverviewAddsTheResourcesThatComeWhileItRuns(t *testing.T) {
	clock := newFakeClock()
	added := make(chan Resource, 2)
	opts := demoOptions(clock)
	opts.Added = added
	opts.Observed = "proxy 127.0.0.1:8001"
	o := NewOverview(opts, nil)
	t.Cleanup(o.Close)
	o = ovUpdate(o, tea.WindowSizeMsg{Width: 160, Height: 40})
	if o.state != overviewTable {
		t.Fatalf("the overview of no resource yet is in state %d, want its table", o.state)
	}
	mustContain(t, ovScreen(o), "observing proxy 127.0.0.1:8001", "0 observed streams")

	cms := ovResource("", "configmaps", "ConfigMap", Feed{})
	cms.Client = "my-controller/v1 127.0.0.1:50000"
	added <- cms
	msg := o.waitAdded()()
	if _, ok := msg.(addedMsg); !ok {
		t.Fatalf("waiting for a resource gave %T, want the added resource", msg)
	}
	o = ovUpdate(o, msg)
	if o.state != overviewTable || len(o.subs) != 1 {
		t.Fatalf("one resource added: state %d with %d rows, want the table with 1", o.state, len(o.subs))
	}
	mustContain(t, ovScreen(o), "1 observed stream · namespace prod", "configmaps  my-controller/v1 127.0.0.1:50000")

	pods := ovResource("", "pods", "Pod", Feed{})
	pods.Client = "kubectl/v1.37.2 127.0.0.1:50001"
	added <- pods
	o = ovUpdate(o, o.waitAdded()())
	mustContain(t, ovScreen(o), "2 observed streams · namespace prod\n", "configmaps  my-controller/v1 127.0.0.1:…", "pods  kubectl/v1.37.2 127.0.0.1:50001")
	// An observed reflector cannot be made to relist or audited from here, and says so.
	o = ovKeys(o, "enter", "r")
	mustContain(t, ovScreen(o), "force relist is not available: this is another program's reflector, only observed")
	close(added)
	if msg := o.waitAdded()(); msg != nil {
		t.Errorf("a closed Added gave %T, want nothing", msg)
	}
}
