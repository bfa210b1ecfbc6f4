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
	cms.Client, cms.ClientAddr, cms.MetadataOnly = "my-controller/v1", "127.0.0.1:50000", false
	added <- cms
	msg := o.waitAdded()()
	if _, ok := msg.(addedMsg); !ok {
		t.Fatalf("waiting for a resource gave %T, want the added resource", msg)
	}
	o = ovUpdate(o, msg)
	if o.state != overviewTable || len(o.subs) != 1 {
		t.Fatalf("one resource added: state %d with %d rows, want the table with 1", o.state, len(o.subs))
	}
	mustContain(t, ovScreen(o), "1 observed stream · namespace prod", "RESOURCE       CLIENT", "configmaps     my-controller/v1")

	pods := ovResource("", "pods", "Pod", Feed{})
	pods.Client, pods.ClientAddr, pods.MetadataOnly = "kubectl/v1.37.2 (linux/amd64) kubernetes/0123abc", "127.0.0.1:50001", false
	added <- pods
	o = ovUpdate(o, o.waitAdded()())
	// The client has a column of its own: the program, and what tells it apart.
	mustContain(t, ovScreen(o), "2 observed streams · namespace prod\n", "configmaps     my-controller/v1 ", "pods           kubectl          ")
	o = ovKeys(o, "enter")
	mustContain(t, ovScreen(o), "client my-controller/v1 127.0.0.1:50000")
	o = ovKeys(o, "esc")
	// An observed reflector cannot be made to relist or audited from here, and says so.
	o = ovKeys(o, "enter", "r")
	mustContain(t, ovScreen(o), "force relist is not available: this is another program's reflector, only observed")
	close(added)
	if msg := o.waitAdded()(); msg != nil {
		t.Errorf("a closed Added gave %T, want nothing", msg)
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
		"my-controller/v1": "my-controller/v1",
		"curl":             "curl",
		"":                 "",
	} {
		if p, tail := shortClient(ua); p+tail != want {
			t.Errorf("shortClient(%q) = %q, want %q", ua, p+tail, want)
		}
	}
}
