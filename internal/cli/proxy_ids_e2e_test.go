package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
)

// TestE2EProxyNumbersItsStreamsAsItsTraceAndReplayDo starts a program's
// informers of many resources at once through kubectl watchcache proxy
// --trace --summary (as kube-controller-manager starts its 60), a typed and
// a metadata one of the same resources among them: each stream's id in the
// live summary is the one in the replay's summary of the trace, with the
// same resource, client, what it asked for, counters and objects.
func TestE2EProxyNumbersItsStreamsAsItsTraceAndReplayDo(t *testing.T) {
	c := cluster(t)
	work := t.TempDir()
	tracePath, kc := filepath.Join(work, "proxy.jsonl"), filepath.Join(work, "proxy.kubeconfig")
	type result struct {
		code        int
		out, errOut string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := run(t, "proxy", "--kubeconfig", c.Kubeconfig(), "--port", "0", "--no-tui", "--summary", "-o", "json",
			"--trace", tracePath, "--print-kubeconfig", kc, "--duration", "20s")
		done <- result{code, out, errOut}
	}()
	waitForProxyKubeconfig(t, kc)
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.UserAgent = "many-informers/v0 (linux/amd64) kubernetes/0123abc/shared-informers"
	factory := informers.NewSharedInformerFactory(kubernetes.NewForConfigOrDie(cfg), 0)
	synced := []cache.InformerSynced{
		factory.Core().V1().Pods().Informer().HasSynced, factory.Core().V1().ConfigMaps().Informer().HasSynced,
		factory.Core().V1().Secrets().Informer().HasSynced, factory.Core().V1().Services().Informer().HasSynced,
		factory.Core().V1().ServiceAccounts().Informer().HasSynced, factory.Core().V1().Namespaces().Informer().HasSynced,
		factory.Core().V1().Nodes().Informer().HasSynced, factory.Core().V1().Events().Informer().HasSynced,
		factory.Apps().V1().Deployments().Informer().HasSynced, factory.Apps().V1().ReplicaSets().Informer().HasSynced,
		factory.Apps().V1().StatefulSets().Informer().HasSynced, factory.Apps().V1().DaemonSets().Informer().HasSynced,
		factory.Batch().V1().Jobs().Informer().HasSynced, factory.Batch().V1().CronJobs().Informer().HasSynced,
		factory.Rbac().V1().Roles().Informer().HasSynced, factory.Rbac().V1().RoleBindings().Informer().HasSynced,
		factory.Rbac().V1().ClusterRoles().Informer().HasSynced, factory.Rbac().V1().ClusterRoleBindings().Informer().HasSynced,
	}
	mcfg := *cfg
	mcfg.UserAgent = "many-informers/v0 (linux/amd64) kubernetes/0123abc/metadata-informers"
	mfactory := metadatainformer.NewSharedInformerFactory(metadata.NewForConfigOrDie(&mcfg), 0)
	for _, gvr := range []schema.GroupVersionResource{{Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "secrets"},
		{Group: "apps", Version: "v1", Resource: "deployments"}, {Version: "v1", Resource: "pods"}} {
		synced = append(synced, mfactory.ForResource(gvr).Informer().HasSynced)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	mfactory.Start(stop)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		close(stop)
		t.Fatal("the informers did not sync through the proxy within 15s")
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		close(stop)
		t.Fatal("the proxy did not stop after its --duration")
	}
	close(stop)
	if r.code != ExitOK {
		t.Fatalf("the proxy: exit %d\n%s", r.code, r.errOut)
	}
	live := allSummaries(t, r.out)
	code, out, errOut := run(t, "replay", tracePath, "--speed", "0", "--no-tui", "--summary", "-o", "json")
	if code != ExitOK {
		t.Fatalf("replaying the proxy's trace: exit %d\n%s", code, errOut)
	}
	replayed := allSummaries(t, out)
	if len(live) < len(synced) || len(replayed) != len(live) {
		t.Fatalf("%d streams live, %d replayed, want %d or more each", len(live), len(replayed), len(synced))
	}
	byID := map[int]summary.Summary{}
	for i, s := range replayed {
		if s.Stream == nil || byID[s.Stream.ID].Stream != nil {
			t.Fatalf("replayed summary %d has no stream or a stream id seen before: %+v", i, s.Stream)
		}
		byID[s.Stream.ID] = s
	}
	metadataOnly := 0
	for i, l := range live {
		if l.Stream == nil || l.Stream.ID != i+1 {
			t.Fatalf("live summary %d is not stream #%d: %+v", i, i+1, l.Stream)
		}
		rs, ok := byID[l.Stream.ID]
		describe := func(s summary.Summary) string {
			return fmt.Sprintf("%s %+v objects %d counters %+v", s.Resource, *s.Stream, s.Objects, s.Counters)
		}
		// The replay's clock ends at the trace's last line: the bookmark's age may differ, nothing else.
		if !ok || rs.Resource != l.Resource || *rs.Stream != *l.Stream || rs.Objects != l.Objects || rs.Counters != l.Counters || rs.ResourceVersion != l.ResourceVersion {
			t.Errorf("stream #%d live: %s\nreplayed: %s", l.Stream.ID, describe(l), describe(rs))
		}
		if l.Stream.MetadataOnly {
			metadataOnly++
		}
	}
	if metadataOnly != 4 {
		t.Errorf("%d streams of metadata only, want the 4 metadata informers'", metadataOnly)
	}
}
