// Command syncer is a helper process of hack/bench. It runs one kind of
// client against a cluster until its first complete cache, prints when that
// was, then reads the memory the cache keeps (and, with -relist, the memory of
// a forced relist) and exits:
//
//	syncer -kubeconfig K -client dynamic|metadata|typed|watchcache [-initial-list list|stream|auto] [-wire auto|protobuf|json] [-keep-objects] [-metadata-only] [-relist]
//
// The informers use client-go's defaults; KUBE_FEATURE_WatchListClient=false
// in the environment makes them page through LIST instead of streaming.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-watchcache/kubectl-watchcache/hack/bench/internal/probe"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/informerheap"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// options are the helper's flags.
type options struct {
	kubeconfig   string
	client       string
	initialList  string
	keepObjects  bool
	metadataOnly bool
	wire         string
	relist       bool
	timeout      time.Duration
	cpuProfile   string
	trace        string
}

func configMaps() schema.GroupVersionResource {
	return schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
}

func main() {
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster")
	flag.StringVar(&o.client, "client", "", "dynamic, metadata, typed (protobuf) or watchcache")
	flag.StringVar(&o.initialList, "initial-list", "list", "watchcache: list, stream or auto (the plugin's default)")
	flag.BoolVar(&o.keepObjects, "keep-objects", false, "watchcache: keep each object's JSON")
	flag.BoolVar(&o.metadataOnly, "metadata-only", false, "watchcache: ask for PartialObjectMetadata")
	flag.StringVar(&o.wire, "wire", "auto", "watchcache: encoding to ask for (auto, protobuf or json)")
	flag.BoolVar(&o.relist, "relist", false, "watchcache: force a relist after the steady reading and measure it")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Minute, "give up after this long")
	flag.StringVar(&o.trace, "trace", "", "watchcache: record the session to this trace file")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run (sync, steady reading, relist) to this file")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := run(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "syncer: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	rep := probe.Report{BaselineHeap: informerheap.LiveHeap()}
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	switch o.client {
	case "dynamic", "metadata", "typed":
		err = runInformer(ctx, cfg, o.client, &rep)
	case "watchcache":
		err = runWatchcache(ctx, cfg, o, &rep)
	default:
		err = fmt.Errorf("unknown -client %q: want dynamic, metadata, typed or watchcache", o.client)
	}
	if err != nil {
		return err
	}
	return rep.Print(os.Stdout)
}

// runInformer syncs a client-go shared informer as a controller would build it.
func runInformer(ctx context.Context, cfg *rest.Config, kind string, rep *probe.Report) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var inf cache.SharedIndexInformer
	switch kind {
	case "dynamic":
		dc, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("building the dynamic client: %w", err)
		}
		inf = dynamicinformer.NewDynamicSharedInformerFactory(dc, 0).ForResource(configMaps()).Informer()
	case "typed":
		// A typed informer over protobuf, as controllers built on client-go's
		// clientsets (and kube-controller-manager) run them.
		pcfg := rest.CopyConfig(cfg)
		pcfg.ContentType = "application/vnd.kubernetes.protobuf"
		pcfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		cs, err := kubernetes.NewForConfig(pcfg)
		if err != nil {
			return fmt.Errorf("building the clientset: %w", err)
		}
		inf = informers.NewSharedInformerFactory(cs, 0).Core().V1().ConfigMaps().Informer()
	default:
		mc, err := metadata.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("building the metadata client: %w", err)
		}
		inf = metadatainformer.NewSharedInformerFactory(mc, 0).ForResource(configMaps()).Informer()
	}
	go inf.RunWithContext(ctx)
	// cache.WaitForCacheSync polls every 100 ms; poll every millisecond so the
	// sync time is not rounded up by a tenth of a second.
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !inf.HasSynced() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the informer to sync: %w", ctx.Err())
		case <-tick.C:
		}
	}
	rep.SyncedAt = time.Now().UnixNano()
	rep.Objects = len(inf.GetStore().ListKeys())
	rep.SteadyHeap = informerheap.LiveHeap()
	rep.SteadyRSS = probe.SteadyRSS()
	return nil
}

// runWatchcache syncs the same session the plugin runs.
func runWatchcache(ctx context.Context, cfg *rest.Config, o options, rep *probe.Report) error {
	sess, err := session.NewLive(session.LiveConfig{
		Rest:      cfg,
		TracePath: o.trace,
		Resources: []session.ResourceConfig{{
			Target: reflector.Target{Resource: reflector.Resource{
				GVR: configMaps(), Kind: "ConfigMap", Namespaced: true,
			}},
			// The plugin's defaults.
			Reflector:    reflector.Config{Strategy: reflector.Strategy(o.initialList), PageSize: 500},
			MetadataOnly: o.metadataOnly,
			KeepBodies:   o.keepObjects,
			Wire:         reflector.Wire(o.wire),
		}},
	})
	if err != nil {
		return fmt.Errorf("starting the session: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- sess.Run(ctx) }()
	defer func() {
		cancel()
		<-errc
	}()
	if err := sess.Resources[0].Store().WaitUntilReady(ctx); err != nil {
		return err
	}
	rep.SyncedAt = time.Now().UnixNano()
	rep.Objects = sess.Resources[0].Store().Len()
	rep.SteadyHeap = informerheap.LiveHeap()
	rep.SteadyRSS = probe.SteadyRSS()
	if !o.relist {
		return nil
	}
	if err := probe.ResetPeakRSS(); err != nil {
		return err
	}
	// Subscribed after the first list: the next Relisted is the forced relist's.
	sub := sess.Resources[0].Store().Subscribe(16)
	defer sub.Close()
	sampler := informerheap.StartSampler()
	start := time.Now()
	sess.Resources[0].Reflector.ForceRelist()
	if err := waitRelisted(ctx, sub); err != nil {
		sampler.Stop()
		return err
	}
	rl := &probe.Relist{Seconds: time.Since(start).Seconds()}
	rl.PeakHeap, rl.PeakLiveHeap = sampler.Stop()
	if rl.PeakRSS, err = probe.Status("VmHWM"); err != nil {
		return err
	}
	rl.SteadyHeap = informerheap.LiveHeap()
	rl.SteadyRSS = probe.SteadyRSS()
	rep.Relist = rl
	return nil
}

// waitRelisted waits for the next InitDone.
func waitRelisted(ctx context.Context, sub *store.Subscription) error {
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the forced relist: %w", ctx.Err())
		case r, ok := <-sub.Changes():
			if !ok {
				return errors.New("waiting for the forced relist: the session stopped")
			}
			if r.Outcome == store.Relisted {
				return nil
			}
		}
	}
}

// startCPUProfile profiles until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating the CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("starting the CPU profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
