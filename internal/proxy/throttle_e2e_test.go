package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/findings"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// TestE2EThe429sAProxyForwardsSayWhoThrottledTheClient: the proxy runs as a
// user whose ConfigMap lists API Priority and Fairness routes to a
// PriorityLevel of a few seats that rejects (and who may read the
// flow-control objects); while another user of that level fills it, the
// clients behind the proxy list. The streams answered 429 raise throttled,
// with the Retry-After and the FlowSchema and PriorityLevel by name, their
// LIST pages carry their size, and the proxy's trace replays to the same.
func TestE2EThe429sAProxyForwardsSayWhoThrottledTheClient(t *testing.T) {
	t.Parallel()
	c := testcluster.ForTest(t, testcluster.Options{Users: []string{"load", "reader"}})
	ctx := context.Background()
	const ns = "throttled"
	th, err := c.Throttle(ctx, ns, []string{"load", "reader"}, []string{"reader"})
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(c.Config())
	data := map[string]string{"v": strings.Repeat("x", 4096)}
	for i := range 200 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)}, Data: data}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ucfg, err := c.UserConfig("reader")
	if err != nil {
		t.Fatal(err)
	}
	var traced bytes.Buffer
	rec, err := trace.NewRecorder(&traced, trace.Header{StartedAt: time.Now(), Observed: true}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	p, addr := startProxyWith(t, Options{Config: ucfg, KeepRaw: true, OnStream: func(s *observed.Stream) {
		rh, client := s.TraceResource()
		i, err := rec.AddStream(rh, client, s.ID)
		if err != nil {
			t.Error(err)
			return
		}
		s.Record(rec.Observed(i))
		s.OnNote(rec.Notes(i))
	}})
	stop, err := c.ListLoad(ctx, "load", ns, 16)
	if err != nil {
		t.Fatal(err)
	}
	// Four clients list one page at a time, each until it was answered
	// 429 and then answered whole (or for 20 s).
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			throttled, listed := false, false
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !(throttled && listed); {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/v1/namespaces/"+ns+"/configmaps?limit=5", nil)
				req.Header.Set("User-Agent", fmt.Sprintf("client-%d", i))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				throttled = throttled || resp.StatusCode == http.StatusTooManyRequests
				listed = listed || resp.StatusCode == http.StatusOK
			}
		}()
	}
	wg.Wait()
	t.Logf("the load was answered 429 %d times", stop())
	p.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	live := p.Streams()
	var throttledStreams int
	for _, s := range live {
		for _, r := range s.Stats().Requests {
			if r.End != nil && r.End.Reason == reflector.EndClosed && r.Items > 0 && r.Bytes < int64(r.Items)*4096 {
				t.Errorf("stream %d request %d: %d items in %d bytes", s.ID, r.ID, r.Items, r.Bytes)
			}
		}
		f, ok := s.Findings().Get(findings.Throttled)
		if !ok {
			continue
		}
		throttledStreams++
		if want := th.FlowSchema + " (uid " + th.FlowSchemaUID + ")"; f.Evidence.Facts["flowSchema"] != want || f.Evidence.Facts["retryAfter"] == "" ||
			f.Evidence.Facts["priorityLevel"] != th.PriorityLevel+" (uid "+th.PriorityLevelUID+")" || !strings.HasPrefix(f.Client, "client-") {
			t.Errorf("stream %d: %+v %+v, want the client, a Retry-After, FlowSchema %s and PriorityLevel %s", s.ID, f.Evidence.Facts, f.Client, want, th.PriorityLevel)
		}
	}
	if throttledStreams == 0 {
		t.Fatalf("no stream of %d raised throttled", len(live))
	}
	t.Logf("%d of %d streams throttled", throttledStreams, len(live))

	rd, err := trace.NewReader("proxy.jsonl", &traced)
	if err != nil {
		t.Fatal(err)
	}
	replayed := replayStreams(t, ctx, rd)
	if len(replayed) != len(live) {
		t.Fatalf("%d streams replayed, %d live", len(replayed), len(live))
	}
	for i, l := range live {
		lf := summary.Summary{Findings: l.Findings().List()}.WithoutClockReadings().Findings
		rf := summary.Summary{Findings: replayed[i].Findings().List()}.WithoutClockReadings().Findings
		if fmt.Sprint(lf) != fmt.Sprint(rf) {
			t.Errorf("stream %d: the replay's findings differ:\nlive   %+v\nreplay %+v", l.ID, lf, rf)
		}
		lr, rr := l.Stats().Requests, replayed[i].Stats().Requests
		for j := range min(len(lr), len(rr)) {
			if lr[j].Bytes != rr[j].Bytes {
				t.Errorf("stream %d request %d: %d bytes live, %d replayed", l.ID, lr[j].ID, lr[j].Bytes, rr[j].Bytes)
			}
		}
	}
}
