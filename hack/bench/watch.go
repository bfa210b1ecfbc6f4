package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

func configMapsGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
}

// configMapsTarget is every ConfigMap in the cluster, as the plugin's "configmaps -A".
func configMapsTarget() reflector.Target {
	return reflector.Target{Resource: reflector.Resource{GVR: configMapsGVR(), Kind: "ConfigMap", Namespaced: true}}
}

// Steady-watch clients.
const (
	wWatchcache = "watchcache"
	wDynamic    = "dynamic-informer"
)

// watchResult is one steady-watch window.
type watchResult struct {
	// Writes acknowledged, applied (matched by resourceVersion) and never seen.
	Acked, Applied, Unmatched int
	// Window is the writers' time; WritesPerSec = Acked/Window; AppliedPerSec = Applied/Window.
	Window                      time.Duration
	WritesPerSec, AppliedPerSec float64
	// Lag from a write's acknowledgement to the cache's apply, p50 and p99
	// (negative: the event was applied before the writer read its response).
	LagP50, LagP99 time.Duration
}

// measureWatch runs reps windows per client, alternating clients.
func measureWatch(ctx context.Context, e *env, n int) (map[string][]watchResult, error) {
	out := map[string][]watchResult{}
	for rep := range e.opts.reps {
		for _, client := range []string{wWatchcache, wDynamic} {
			var r watchResult
			var err error
			switch client {
			case wWatchcache:
				r, err = watchWatchcache(ctx, e, n)
			default:
				r, err = watchInformer(ctx, e, n)
			}
			if err != nil {
				return nil, fmt.Errorf("steady watch (%s): %w", client, err)
			}
			logf("  rep %d %-16s %5.0f writes/s, %5.0f applied/s, lag p50 %6.2fms p99 %7.2fms, %d unmatched", rep+1, client, r.WritesPerSec, r.AppliedPerSec, ms(r.LagP50), ms(r.LagP99), r.Unmatched)
			out[client] = append(out[client], r)
		}
	}
	return out, nil
}

// applyLog collects applied resourceVersions with their times; safe for concurrent use.
type applyLog struct {
	mu sync.Mutex
	s  []sample
}

func (l *applyLog) add(rv string) {
	now := time.Now()
	l.mu.Lock()
	l.s = append(l.s, sample{rv: rv, at: now})
	l.mu.Unlock()
}

func (l *applyLog) snapshot() []sample {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.s)
}

// watchWatchcache syncs a full-object session, then writes for the window
// while a store subscriber notes when each resourceVersion was applied.
func watchWatchcache(ctx context.Context, e *env, n int) (watchResult, error) {
	sess, err := session.NewLive(session.LiveConfig{
		Rest: e.cluster.Config(),
		Resources: []session.ResourceConfig{{Target: configMapsTarget(),
			Reflector: reflector.Config{Strategy: reflector.StrategyList, PageSize: 500}, KeepBodies: true}},
	})
	if err != nil {
		return watchResult{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- sess.Run(ctx) }()
	if err := sess.Resources[0].Store().WaitUntilReady(ctx); err != nil {
		return watchResult{}, err
	}
	sub := sess.Resources[0].Store().Subscribe(1 << 20)
	log := &applyLog{}
	subDone := make(chan struct{})
	go func() {
		defer close(subDone)
		for r := range sub.Changes() {
			if r.Outcome == store.Modified {
				log.add(r.Object.ResourceVersion)
			}
		}
	}()
	r, err := writeWindow(ctx, e, n, log)
	sub.Close()
	<-subDone
	cancel()
	if runErr := <-errc; err == nil && runErr != nil {
		err = runErr
	}
	if missed := sub.Missed(); err == nil && missed > 0 {
		err = fmt.Errorf("the store subscriber missed %d changes", missed)
	}
	return r, err
}

// watchInformer does the same with a client-go dynamic informer and an update handler.
func watchInformer(ctx context.Context, e *env, n int) (watchResult, error) {
	dc, err := dynamic.NewForConfig(e.cluster.Config())
	if err != nil {
		return watchResult{}, fmt.Errorf("building the dynamic client: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	factory := dynamicinformer.NewDynamicSharedInformerFactory(dc, 0)
	inf := factory.ForResource(configMapsGVR()).Informer()
	log := &applyLog{}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			log.add(u.GetResourceVersion())
		}
	}})
	if err != nil {
		return watchResult{}, fmt.Errorf("adding the event handler: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	// The handler's HasSynced also waits until the initial adds were delivered to it.
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced, reg.HasSynced) {
		return watchResult{}, fmt.Errorf("the informer did not sync: %w", ctx.Err())
	}
	r, err := writeWindow(ctx, e, n, log)
	cancel()
	return r, err
}

// writeWindow writes for the window, waits (up to 10s) for the last writes to
// be applied, and matches acknowledgements with applies.
func writeWindow(ctx context.Context, e *env, n int, log *applyLog) (watchResult, error) {
	start := time.Now()
	acks, err := e.objects.update(ctx, start.Add(e.opts.watchFor), n)
	window := time.Since(start)
	if err != nil {
		return watchResult{}, err
	}
	want := make(map[string]time.Time, len(acks))
	for _, a := range acks {
		want[a.rv] = a.at
	}
	deadline := time.Now().Add(10 * time.Second)
	var applied []sample
	for {
		applied = log.snapshot()
		if countMatched(applied, want) == len(want) || time.Now().After(deadline) {
			break
		}
		if err := pause(ctx, 20*time.Millisecond); err != nil {
			return watchResult{}, err
		}
	}
	var lags []time.Duration
	for _, a := range applied {
		if at, ok := want[a.rv]; ok {
			lags = append(lags, a.at.Sub(at))
		}
	}
	slices.Sort(lags)
	r := watchResult{
		Acked: len(acks), Applied: len(lags), Unmatched: len(acks) - len(lags), Window: window,
		WritesPerSec: float64(len(acks)) / window.Seconds(), AppliedPerSec: float64(len(lags)) / window.Seconds(),
	}
	if len(lags) > 0 {
		r.LagP50, r.LagP99 = quantile(lags, 0.50), quantile(lags, 0.99)
	}
	return r, nil
}

func countMatched(applied []sample, want map[string]time.Time) int {
	n := 0
	for _, a := range applied {
		if _, ok := want[a.rv]; ok {
			n++
		}
	}
	return n
}

// quantile of sorted values (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
