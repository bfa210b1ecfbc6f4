package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
)

// TestE2EProxyFaultGoneExpiresTheContinueTokensOfPagedLists walks the pages
// of a LIST of 24 ConfigMaps, eight at a time and 500 ms apart (a walk takes
// about a third of the time between two firings, so that most firings land
// inside a walk and walks complete between them, even on a loaded machine),
// through --fault gone@every=3s, with two client-go clients at once: one on
// protobuf, one on JSON. A page asked for after a firing, with a continue
// token of a list begun before it, is answered 410 Expired in the API
// server's words, as a real apiserver answers a token older than its
// compaction; the client lists afresh and its next walk goes on. Each client
// meets such 410s, and the proxy's summary counts for each client exactly
// the 410s that client met; the replay counts the same.
func TestE2EProxyFaultGoneExpiresTheContinueTokensOfPagedLists(t *testing.T) {
	c := cluster(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()
	ns := uniqueNamespace(t, cs, "proxy-continue")
	for i := range 24 {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const spec = "gone@every=3s"
	fr := startFaultProxy(t, "", "--fault", spec, "--fault-target", "configmaps") // each client below has its own User-Agent
	clients := []struct{ ua, wire string }{
		{"pager-protobuf/1", "application/vnd.kubernetes.protobuf"},
		{"pager-json/1", "application/json"},
	}
	expired := make([]int, len(clients))
	walks := make([]int, len(clients))
	var wg sync.WaitGroup
	errs := make(chan error, len(clients))
	for i, cl := range clients {
		cfg := rest.CopyConfig(fr.cfg)
		cfg.UserAgent, cfg.ContentType, cfg.AcceptContentTypes = cl.ua, cl.wire, cl.wire
		client := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns)
		wg.Go(func() {
			// About 15 s of paging: five firings.
			for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
				cont, pages := "", 0
				for {
					list, err := client.List(ctx, metav1.ListOptions{Limit: 8, Continue: cont})
					if err != nil {
						if cont == "" || !apierrors.IsResourceExpired(err) || !strings.Contains(err.Error(), "continue parameter is too old") {
							errs <- fmt.Errorf("%s: page %d: %w", cl.ua, pages+1, err)
							return
						}
						expired[i]++
						break
					}
					pages++
					if cont = list.Continue; cont == "" {
						if len(list.Items) == 0 {
							errs <- fmt.Errorf("%s: the last page is empty", cl.ua)
							return
						}
						walks[i]++
						break
					}
					time.Sleep(500 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	sums := fr.stop(t)
	code, replayed, errOut := run(t, "replay", fr.trace, "--speed", "0", "--no-tui", "--summary", "-o", "json")
	if code != ExitOK {
		t.Fatalf("replaying the proxy's trace: exit %d\n%s", code, errOut)
	}
	for what, got := range map[string]struct {
		sums   []summary.Summary
		faults []summary.FaultSummary
	}{"live": {sums, faultsOf(t, fr.out.String())}, "replayed": {allSummaries(t, replayed), faultsOf(t, replayed)}} {
		for i, cl := range clients {
			answered, streams := 0, 0
			for _, s := range got.sums {
				if s.Stream == nil || s.Stream.UserAgent != cl.ua {
					continue
				}
				streams++
				n, _ := faultCount(got.faults, s.Stream.ID, spec)
				answered += n
			}
			t.Logf("%s: %s: %d walks completed, %d continues answered 410 Expired; the proxy counts %d on %d streams", what, cl.ua, walks[i], expired[i], answered, streams)
			// Once per firing, not every continue after the first: 15 s of
			// firings every 3 s are 5 (6 with the clock's slack).
			if expired[i] == 0 || expired[i] > 6 || walks[i] < 2 {
				t.Errorf("%s: %s: %d 410s, %d walks completed; want 1 to 6 (one per firing) and at least 2", what, cl.ua, expired[i], walks[i])
			}
			if answered != expired[i] {
				t.Errorf("%s: %s: the proxy counts %d acts of %s, the client met %d 410s", what, cl.ua, answered, spec, expired[i])
			}
		}
	}
}
