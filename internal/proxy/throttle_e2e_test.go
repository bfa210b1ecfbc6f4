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
		rh, client := s.Describe()
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

// TestE2EAProxyThrottledInEveryRequestNamesWhoThrottledItsClientsOnceItMayRead:
// every request of the proxy's user, the lookup of the names included, is
// routed to a PriorityLevel without seats, which rejects them all. A client
// lists through the proxy, is answered 429, and its stream's throttled
// finding gives the FlowSchema and PriorityLevel by UID. Once the level has
// seats, the proxy looks again after its lookup's Retry-After, with no 429
// to prompt it: the finding names them, the trace records them, and its
// replay names them too.
func TestE2EAProxyThrottledInEveryRequestNamesWhoThrottledItsClientsOnceItMayRead(t *testing.T) {
	t.Parallel()
	c := testcluster.ForTest(t, testcluster.Options{Users: []string{"reader", "holder"}})
	ctx := context.Background()
	const ns = "rejected"
	ucfg, err := c.UserConfig("reader")
	if err != nil {
		t.Fatal(err)
	}
	var traced bytes.Buffer
	rec, err := trace.NewRecorder(&traced, trace.Header{StartedAt: time.Now(), Observed: true}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	p, addr := startProxyWith(t, Options{Config: ucfg, KeepRaw: true, OnFlowControlNames: rec.FlowControlNames, OnStream: func(s *observed.Stream) {
		rh, client := s.Describe()
		i, err := rec.AddStream(rh, client, s.ID)
		if err != nil {
			t.Error(err)
			return
		}
		s.Record(rec.Observed(i))
		s.OnNote(rec.Notes(i))
	}})
	list := func(userAgent string) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/v1/namespaces/"+ns+"/configmaps?limit=5", nil)
		req.Header.Set("User-Agent", userAgent)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	// The proxy's discovery, before the level rejects it.
	list("warm-up")
	th, err := c.ThrottleEverything(ctx, ns, []string{"reader"}, []string{"reader"}, "holder")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if code := list("client"); code != http.StatusTooManyRequests {
			t.Fatalf("a list through the proxy was answered %d, want 429", code)
		}
	}
	p.Wait()
	var s *observed.Stream
	for _, x := range p.Streams() {
		if x.Client.UserAgent == "client" {
			s = x
		}
	}
	if s == nil {
		t.Fatalf("no stream of the client among %d", len(p.Streams()))
	}
	f, ok := s.Findings().Get(findings.Throttled)
	if !ok || f.Evidence.Facts["flowSchema"] != "uid "+th.FlowSchemaUID || f.Evidence.Facts["priorityLevel"] != "uid "+th.PriorityLevelUID {
		t.Fatalf("while every lookup is rejected: %+v, want throttled by UID", f)
	}
	if err := c.Unthrottle(ctx, th); err != nil {
		t.Fatal(err)
	}
	fs, pl := th.FlowSchema+" (uid "+th.FlowSchemaUID+")", th.PriorityLevel+" (uid "+th.PriorityLevelUID+")"
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.After(30 * time.Second); ; {
		if f, _ = s.Findings().Get(findings.Throttled); f.Evidence.Facts["flowSchema"] == fs {
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the names were not learned within 30 s of the level's seats, without a 429: %+v", f.Evidence.Facts)
		}
	}
	if f.Evidence.Facts["priorityLevel"] != pl || !strings.HasPrefix(f.Action, "FlowSchema "+th.FlowSchema+" matches this client") {
		t.Errorf("named: %+v\n%s", f.Evidence.Facts, f.Action)
	}
	p.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(traced.String(), `{"k":"flowcontrol"`) {
		t.Errorf("the proxy's trace records no names:\n%s", traced.String())
	}
	rd, err := trace.NewReader("proxy.jsonl", &traced)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range replayStreams(t, ctx, rd) {
		if r.ID != s.ID {
			continue
		}
		got, _ := r.Findings().Get(findings.Throttled)
		lf := summary.Summary{Findings: []findings.Finding{f}}.WithoutClockReadings().Findings
		rf := summary.Summary{Findings: []findings.Finding{got}}.WithoutClockReadings().Findings
		if fmt.Sprint(lf) != fmt.Sprint(rf) {
			t.Errorf("the replay's finding differs:\nlive   %+v\nreplay %+v", lf, rf)
		}
	}
}
