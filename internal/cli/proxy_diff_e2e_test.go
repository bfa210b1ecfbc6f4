package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
)

// TestE2EProxyDiffDiffsJSONStreamsAndSaysProtobufOnesCannotBe runs
// proxy --diff between the API server and two client-go informers of the
// same ConfigMaps: a dynamic one (JSON) and a typed one (protobuf). Each
// write's changed path reaches the dynamic informer's stream with the
// writer's field manager; the typed informer's stream says each MODIFIED
// event was not diffed, and why; so do a JSON watch of metadata only and a
// watch of tables (kubectl get -w), which carry no spec or data to compare
// (diffed, every update looked like a change of managedFields alone, and
// raised noisy-updates). The trace replays to the same churn.
func TestE2EProxyDiffDiffsJSONStreamsAndSaysProtobufOnesCannotBe(t *testing.T) {
	c := cluster(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()
	ns := uniqueNamespace(t, cs, "proxy-diff")
	const n, rounds = 5, 3
	for i := range n {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": "0"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const typedUA, dynamicUA, metaUA, tableUA = "diff-typed/1 (linux/amd64)", "diff-dynamic/1 (linux/amd64)", "diff-metadata/1 (linux/amd64)", "diff-table/1 (linux/amd64)"
	fr := startFaultProxy(t, typedUA, "--diff")
	stop := make(chan struct{})
	defer close(stop)
	typed := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(fr.cfg), 0, informers.WithNamespace(ns))
	ti := typed.Core().V1().ConfigMaps().Informer()
	jsonCfg := rest.CopyConfig(fr.cfg)
	jsonCfg.UserAgent, jsonCfg.ContentType, jsonCfg.AcceptContentTypes = dynamicUA, "application/json", "application/json"
	dyn := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(jsonCfg), 0, ns, nil)
	di := dyn.ForResource(configMapsGVR).Informer()
	typed.Start(stop)
	dyn.Start(stop)
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), ti.HasSynced, di.HasSynced) {
		t.Fatal("the informers did not sync through the proxy")
	}
	// Two watches from now in JSON: kubectl get -w's (tables), and one of
	// metadata only (client-go's metadata client asks for protobuf first).
	l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rawEvents := make(chan struct{}, 2*n*rounds)
	for ua, accept := range map[string]string{
		tableUA: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
		metaUA:  "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
	} {
		req, err := http.NewRequestWithContext(syncCtx, http.MethodGet, fr.cfg.Host+"/api/v1/namespaces/"+ns+"/configmaps?watch=1&resourceVersion="+l.ResourceVersion, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", accept)
		req.Header.Set("User-Agent", ua)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer resp.Body.Close()
			for dec := json.NewDecoder(resp.Body); dec.Decode(new(json.RawMessage)) == nil; {
				rawEvents <- struct{}{}
			}
		}()
	}
	for r := range rounds {
		for i := range n {
			patch := fmt.Sprintf(`{"data":{"k":"%d"}}`, r+1)
			if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, fmt.Sprintf("cm-%d", i), types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "e2e-data-writer"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Both informers have the last write.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		o1, _, _ := ti.GetStore().GetByKey(ns + "/cm-4")
		o2, _, _ := di.GetStore().GetByKey(ns + "/cm-4")
		u, _ := json.Marshal(o2)
		if cm, ok := o1.(*corev1.ConfigMap); ok && cm.Data["k"] == fmt.Sprint(rounds) && strings.Contains(string(u), fmt.Sprintf(`"k":"%d"`, rounds)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the informers did not get the last write")
		}
	}
	for range 2 * n * rounds {
		select {
		case <-rawEvents:
		case <-time.After(20 * time.Second):
			t.Fatal("the table and metadata watches did not get every write")
		}
	}
	time.Sleep(time.Second)
	sums := fr.stop(t)
	d := streamOf(t, sums, "configmaps.v1", dynamicUA)
	if c := d.Churn; c == nil || c.Events != n*rounds || c.Skipped != 0 || len(c.Paths) != 1 ||
		c.Paths[0] != (diff.PathChurn{Path: ".data.k", Count: n * rounds, Share: 1, Manager: "e2e-data-writer"}) {
		t.Errorf("the JSON stream's churn: %+v", c)
	}
	p := streamOf(t, sums, "configmaps.v1", typedUA)
	if c := p.Churn; c == nil || c.Events != 0 || c.Skipped != n*rounds {
		t.Errorf("the protobuf stream's churn: %+v", c)
	}
	if !strings.Contains(fr.out.String(), diff.SkipProtobuf) {
		t.Error("no DIFF line says why the protobuf stream was not diffed")
	}
	for _, ua := range []string{metaUA, tableUA} {
		s := streamOf(t, sums, "configmaps.v1", ua)
		if c := s.Churn; c == nil || c.Events != 0 || c.Skipped != n*rounds {
			t.Errorf("%s's stream's churn: %+v, want its %d MODIFIED events not diffed", ua, c, n*rounds)
		}
		for _, f := range s.Findings {
			if f.ID == findings.NoisyUpdates {
				t.Errorf("%s's stream raised %s: %s", ua, f.ID, f.Title)
			}
		}
	}
	for _, why := range []string{diff.SkipMetadata, diff.SkipTable} {
		if !strings.Contains(fr.out.String(), why) {
			t.Errorf("no DIFF line says %q", why)
		}
	}
	checkReplaySays(t, fr.trace, sums...)
}
