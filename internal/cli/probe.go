package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/probe"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// validateProbe checks the probe's flags.
func (o *WatchOptions) validateProbe() error {
	if o.probeFlag != nil && o.probeFlag.Changed && o.Probe == "" {
		return usageErrorf("--probe needs a namespace: --probe NAMESPACE")
	}
	if o.Probe != "" {
		if err := checkNamespace("--probe namespace", o.Probe); err != nil {
			return usageError{err}
		}
	}
	if o.ProbeInterval < time.Second {
		return usageErrorf("invalid --probe-interval %s: must be at least 1s", o.ProbeInterval)
	}
	if o.intervalFlag != nil && o.intervalFlag.Changed && o.Probe == "" {
		return usageErrorf("--probe-interval needs --probe NAMESPACE")
	}
	if o.ProbeCleanup && o.Probe == "" {
		return usageErrorf("--probe-cleanup needs --probe NAMESPACE")
	}
	return nil
}

// startedProbe is a run's delivery probe: its Lease created, waiting for
// the session that watches it.
type startedProbe struct {
	*probe.Prober
	sess       *session.Session
	deleteOnce sync.Once
}

// startProbe checks that the probe can run (permissions, the namespace),
// reports or removes the Leases killed runs left (expired ones: those of
// probes still running are left alone), and creates the Lease.
func (o *WatchOptions) startProbe(ctx context.Context, cfg *rest.Config) (*startedProbe, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("--probe: %w", err)
	}
	if err := probe.Check(ctx, client, o.Probe); err != nil {
		return nil, err
	}
	left, err := probe.Leftovers(ctx, client, o.Probe, time.Now())
	if err != nil {
		return nil, fmt.Errorf("--probe %s: %w", o.Probe, err)
	}
	if len(left) > 0 {
		if o.ProbeCleanup {
			if err := probe.Cleanup(ctx, client, o.Probe, left); err != nil {
				return nil, fmt.Errorf("--probe-cleanup: %w", err)
			}
			fmt.Fprintf(o.ErrOut, "probe: deleted %s left by earlier runs in %s: %s\n", format.PluralUngrouped(len(left), "Lease"), o.Probe, strings.Join(left, ", "))
		} else {
			fmt.Fprintf(o.ErrOut, "warning: probe %s left by earlier runs in %s (label %s=%s): %s; --probe-cleanup deletes them\n",
				leases(len(left)), o.Probe, probe.LabelKey, probe.LabelValue, strings.Join(left, ", "))
		}
	}
	sp := &startedProbe{}
	p, err := probe.Create(ctx, client, probe.Options{Namespace: o.Probe, Interval: o.ProbeInterval, OnSample: func(x probe.Sample, rv string) {
		if sp.sess != nil {
			sp.sess.RecordProbe(x, rv)
		}
	}, OnLost: func(at time.Time, rv string) {
		if sp.sess != nil {
			sp.sess.LoseProbe(at, rv, probe.LostAfter(o.ProbeInterval))
		}
	}})
	if err != nil {
		return nil, err
	}
	sp.Prober = p
	return sp, nil
}

// attach gives the probe its session, where resource i watches its Lease:
// each update's event is matched with its update by resourceVersion.
func (sp *startedProbe) attach(sess *session.Session, i int) {
	sess.Probe, sess.ProbeIndex = probe.NewStats(), i
	sp.sess = sess
	sess.NoteProbe(fmt.Sprintf("created Lease %s/%s: the apiserver's watch path for a Lease on this connection is measured, not every resource's", sp.Namespace(), sp.Name()))
	sess.Resources[i].OnNote(func(n reflector.Note) {
		if n.Kind == reflector.NoteApplied && n.Event == reflector.EventModified && n.Applied != nil && n.Applied.Object != nil {
			sp.Observed(n.Applied.Object.ResourceVersion, n.At)
		}
	})
}

// run renews the Lease until ctx ends.
func (sp *startedProbe) run(ctx context.Context) {
	sp.Run(ctx, func(err error) { sp.sess.NoteProbe(err.Error()) })
}

// delete deletes the Lease, once, whatever ended the run (SIGINT and
// SIGTERM end it through its context).
func (sp *startedProbe) delete(errOut io.Writer) {
	sp.deleteOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sp.Delete(ctx); err != nil {
			fmt.Fprintf(errOut, "warning: %v (kubectl watchcache --probe %s --probe-cleanup deletes it)\n", err, sp.Namespace())
		}
	})
}

// leases is "Lease" or "Leases", as n says.
func leases(n int) string {
	if n == 1 {
		return "Lease"
	}
	return "Leases"
}
