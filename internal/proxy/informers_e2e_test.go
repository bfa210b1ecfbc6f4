package proxy

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire/request"
)

// TestE2EProxyTellsATypedAndAMetadataInformerOfOneResourceApart runs one
// client-go program with two informers of ConfigMaps under one User-Agent,
// as controller-runtime runs them: a typed one over protobuf
// (SharedInformerFactory) and a metadata one (metadatainformer, which asks
// for as=PartialObjectMetadataList and as=PartialObjectMetadata). Through
// churn and an apiserver restart with etcd compacted, each gets its 410 and
// relists; the proxy keeps them apart: exactly two streams, each asking for
// what its informer asks, each ending with its informer's store. Both with
// client-go's streaming lists (WatchListClient, its default) and with LISTs.
func TestE2EProxyTellsATypedAndAMetadataInformerOfOneResourceApart(t *testing.T) {
	t.Run("streaming-lists", func(t *testing.T) { typedAndMetadataInformers(t, true) })
	t.Run("lists", func(t *testing.T) {
		was := clientfeatures.FeatureGates()
		clientfeatures.ReplaceFeatureGates(withoutWatchList{was})
		defer clientfeatures.ReplaceFeatureGates(was)
		typedAndMetadataInformers(t, false)
	})
}

// withoutWatchList are client-go's feature gates with WatchListClient off:
// its informers list with LIST.
type withoutWatchList struct{ clientfeatures.Gates }

func (g withoutWatchList) Enabled(f clientfeatures.Feature) bool {
	return f != clientfeatures.WatchListClient && g.Gates.Enabled(f)
}

func typedAndMetadataInformers(t *testing.T, streaming bool) {
	c := shared.Get(t)
	admin := c.Config()
	cs := kubernetes.NewForConfigOrDie(admin)
	dyn := dynamic.NewForConfigOrDie(admin)
	ns := newNamespace(t, cs)
	// The streams are recorded as kubectl watchcache proxy --trace records them.
	var traced bytes.Buffer
	rec, err := trace.NewRecorder(&traced, trace.Header{StartedAt: time.Now(), Observed: true}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	p, addr := startProxyWith(t, Options{Config: admin, KeepRaw: true, OnStream: func(s *observed.Stream) {
		rh, client := s.Describe()
		i, err := rec.AddStream(rh, client, s.ID)
		if err != nil {
			t.Error(err)
			return
		}
		s.Record(rec.Observed(i))
		s.OnNote(rec.Notes(i))
	}})

	churn, err := testcluster.StartChurn(admin, testcluster.ChurnOptions{Namespace: ns, Prefix: "cm", Names: 40, Rate: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer churn.Stop()
	time.Sleep(time.Second)

	const ua = "manager/v0.0.0 (linux/amd64) kubernetes/$Format"
	cfg := through(addr, ua)
	pcfg := rest.CopyConfig(cfg)
	pcfg.ContentType = request.ContentTypeProtobuf
	pcfg.AcceptContentTypes = request.ContentTypeProtobuf + ",application/json"
	factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(pcfg), 0, informers.WithNamespace(ns))
	typedInf := factory.Core().V1().ConfigMaps().Informer()
	mfactory := metadatainformer.NewFilteredSharedInformerFactory(metadata.NewForConfigOrDie(cfg), 0, ns, nil)
	metaInf := mfactory.ForResource(configMapsGVR).Informer()
	stop := make(chan struct{})
	defer func() {
		if stop != nil {
			close(stop)
		}
	}()
	factory.Start(stop)
	mfactory.Start(stop)
	syncCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), typedInf.HasSynced, metaInf.HasSynced) {
		t.Fatal("the informers did not sync through the proxy within a minute")
	}
	time.Sleep(2 * time.Second)

	// which is the stream of the typed (false) or the metadata (true) informer.
	which := func() (map[bool]*observed.Stream, string) {
		ss := streamsOf(p, ua, configMapsGVR)
		if len(ss) != 2 {
			var b strings.Builder
			for _, s := range ss {
				fmt.Fprintf(&b, "#%d %+v:\n%s", s.ID, s.Asked, describe(s.Stats()))
			}
			return nil, fmt.Sprintf("%d streams of the program's ConfigMaps, want 2:\n%s", len(ss), b.String())
		}
		out := map[bool]*observed.Stream{}
		for _, s := range ss {
			out[s.Asked.MetadataOnly] = s
		}
		if len(out) != 2 {
			return nil, fmt.Sprintf("the two streams ask for the same: %+v and %+v", ss[0].Asked, ss[1].Asked)
		}
		return out, ""
	}
	if _, missing := which(); missing != "" {
		t.Fatalf("after the first lists: %s", missing)
	}

	if err := c.RestartCompacted(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 40*time.Second, "both streams' 410 and relist", func() string {
		ss, missing := which()
		if missing != "" {
			return missing
		}
		for meta, s := range ss {
			if cn := s.Counters(); cn.Gone < 1 || cn.Relists < 1 || s.Stats().State != reflector.StateWatching {
				return fmt.Sprintf("metadata only %v: %d 410s, %d relists, %s; requests:\n%s", meta, cn.Gone, cn.Relists, s.Stats().State, describe(s.Stats()))
			}
		}
		return ""
	})
	time.Sleep(time.Second)
	churn.Stop()

	want := listAll(t, dyn, configMapsGVR, ns)
	for meta, inf := range map[bool]cache.SharedIndexInformer{false: typedInf, true: metaInf} {
		waitFor(t, time.Minute, fmt.Sprintf("the caches of the informer (metadata only %v) and its stream equal to the server's", meta), func() string {
			got := informerEntries(inf.GetStore())
			if !equalEntries(got, want) {
				return fmt.Sprintf("the informer has %d objects, the server %d", len(got), len(want))
			}
			ss, missing := which()
			if missing != "" {
				return missing
			}
			if rebuilt := streamEntries(ss[meta]); !equalEntries(rebuilt, got) {
				return fmt.Sprintf("the proxy rebuilt %d objects, the informer has %d (%s)", len(rebuilt), len(got), firstDifference(rebuilt, got))
			}
			return ""
		})
	}
	ss, missing := which()
	if missing != "" {
		t.Fatal(missing)
	}
	typed, md := ss[false], ss[true]
	t.Logf("typed #%d %+v %q: %+v", typed.ID, typed.Asked, typed.ContentType(), typed.Counters())
	t.Logf("metadata #%d %+v %q: %+v", md.ID, md.Asked, md.ContentType(), md.Counters())
	// A watch's answer is "application/vnd.kubernetes.protobuf;stream=watch"
	// whatever was asked (its objects are what as= asked for): only the
	// Accept tells a metadata informer.
	if typed.Asked.Wire != reflector.WireProtobuf || typed.Asked.Table || typed.Wire() != reflector.WireProtobuf ||
		!strings.HasPrefix(typed.Asked.Accept, request.ContentTypeProtobuf) || strings.Contains(typed.Asked.Accept, "as=") || !strings.HasPrefix(typed.ContentType(), request.ContentTypeProtobuf) {
		t.Errorf("the typed informer's stream asked %+v and got %q (%s), want protobuf, full objects", typed.Asked, typed.ContentType(), typed.Wire())
	}
	if md.Asked.Wire != reflector.WireProtobuf || md.Asked.Table || md.Wire() != reflector.WireProtobuf ||
		!strings.Contains(md.Asked.Accept, "as=PartialObjectMetadata") || !strings.HasPrefix(md.ContentType(), request.ContentTypeProtobuf) {
		t.Errorf("the metadata informer's stream asked %+v and got %q (%s), want protobuf, metadata only", md.Asked, md.ContentType(), md.Wire())
	}
	// The trace replays as the proxy saw it: each stream with its number,
	// what it asked for, its counters and its cache.
	close(stop)
	stop = nil
	p.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := trace.NewReader("proxy.jsonl", &traced)
	if err != nil {
		t.Fatal(err)
	}
	replayed := replayStreams(t, context.Background(), rd)
	live := p.Streams()
	if len(replayed) != len(live) {
		t.Fatalf("%d streams replayed, %d live", len(replayed), len(live))
	}
	for i, l := range live {
		r := replayed[i]
		if r.ID != l.ID || r.Client != l.Client || r.Asked != l.Asked || r.Options != l.Options || r.ContentType() != l.ContentType() || r.Counters() != l.Counters() ||
			!equalEntries(streamEntries(r), streamEntries(l)) {
			t.Errorf("stream %d replayed as #%d %+v %+v %q %+v, live #%d %+v %+v %q %+v", i, r.ID, r.Asked, r.Options, r.ContentType(), r.Counters(),
				l.ID, l.Asked, l.Options, l.ContentType(), l.Counters())
		}
	}
	for meta, s := range ss {
		if cn := s.Counters(); cn.Lists < 2 || cn.Watches < 2 {
			t.Errorf("metadata only %v: %d lists and %d watches, want the initial ones and those after the 410", meta, cn.Lists, cn.Watches)
		}
		want := reflector.StrategyList
		if streaming {
			want = reflector.StrategyStream
		}
		if s.Options.Strategy != want {
			t.Errorf("metadata only %v: the first request seen lists by %q, want %q:\n%s", meta, s.Options.Strategy, want, describe(s.Stats()))
		}
	}
}
