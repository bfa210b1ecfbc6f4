// Command proxy measures what "kubectl watchcache proxy" costs the programs
// behind it:
//
//	go run ./hack/bench/proxy -events 600 -rate 50 -synthetic 100000 -reps 3
//
// Latency, against a real kube-apiserver: two watches of the same
// ConfigMaps, one direct and one through the observing proxy, while a writer
// changes them at -rate writes a second; for each event, the time it reached
// the proxied watch minus the time it reached the direct one is what the
// proxy added (the goal: p99 at most 5 ms). Both arrival times are reported
// against the write's return too.
//
// Throughput, against a synthetic API server (a TLS server that streams a
// watch of ConfigMap events from memory, as fast as it is read, or paced at
// -pace events a second): the events a second a client reads directly and
// through the proxy, and their ratio (the goal: at least 0.9 at 10,000
// events a second). A real apiserver cannot write 10,000 objects a second on
// a small machine, so the stream is synthetic; the proxy's work (forwarding,
// teeing, decoding, the rebuilt cache) is the same.
//
// Results go to stdout as a table; nothing here asserts a time.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/proxy"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

func main() {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	events := flag.Int("events", 600, "writes in the latency measurement")
	rate := flag.Float64("rate", 50, "writes a second in the latency measurement")
	synthetic := flag.Int("synthetic", 100000, "events of each synthetic watch in the throughput measurement")
	reps := flag.Int("reps", 3, "runs of each throughput measurement, alternating direct and proxied (medians are reported)")
	pace := flag.Float64("pace", 10000, "events a second of the paced synthetic watch")
	skipCluster := flag.Bool("skip-cluster", false, "measure only the throughput (no kube-apiserver)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if *events < 1 || *rate <= 0 || *synthetic < 1 || *pace <= 0 || *reps < 1 {
		fmt.Fprintln(os.Stderr, "error: -events, -rate, -synthetic, -pace and -reps must be positive")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, !*skipCluster, *events, *rate, *synthetic, *pace, *reps); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cluster bool, events int, rate float64, synthetic int, pace float64, reps int) error {
	if cluster {
		if err := latency(ctx, events, rate); err != nil {
			return err
		}
	}
	return throughput(ctx, synthetic, pace, reps)
}

// serveProxy serves an observing proxy for cfg on a free loopback port.
func serveProxy(cfg *rest.Config) (*proxy.Proxy, string, func(), error) {
	p, err := proxy.New(proxy.Options{Config: cfg})
	if err != nil {
		return nil, "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return p, "http://" + ln.Addr().String(), func() { _ = srv.Close(); p.Close() }, nil
}

// arrival is when each resourceVersion reached a watch.
type arrival struct {
	mu sync.Mutex
	at map[string]time.Time
	n  int
}

// watch reads a JSON watch until ctx ends, noting each event's arrival.
func watch(ctx context.Context, client *http.Client, url string, a *arrival) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("watch: %d %s", resp.StatusCode, b)
	}
	r := bufio.NewReaderSize(resp.Body, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		now := time.Now()
		a.mu.Lock()
		if a.at != nil {
			// Only the latency measurement needs the resourceVersion.
			var ev struct {
				Object struct {
					Metadata struct {
						ResourceVersion string `json:"resourceVersion"`
					} `json:"metadata"`
				} `json:"object"`
			}
			if json.Unmarshal(line, &ev) == nil {
				a.at[ev.Object.Metadata.ResourceVersion] = now
			}
		}
		a.n++
		a.mu.Unlock()
	}
}

func percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	slices.Sort(ds)
	p := func(q float64) time.Duration { return ds[min(int(q*float64(len(ds))), len(ds)-1)] }
	return fmt.Sprintf("%8s %8s %8s %8s", round(p(0.5)), round(p(0.9)), round(p(0.99)), round(ds[len(ds)-1]))
}

func round(d time.Duration) time.Duration {
	if d < 0 {
		return -round(-d)
	}
	return d.Round(10 * time.Microsecond)
}

// latency measures what the proxy adds to each watch event from a real apiserver.
func latency(ctx context.Context, events int, rate float64) error {
	c, err := testcluster.Start(ctx, testcluster.Options{Log: os.Stderr})
	if err != nil {
		return err
	}
	defer c.Stop()
	cfg := c.Config()
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns := "proxy-bench"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	_, base, stopProxy, err := serveProxy(cfg)
	if err != nil {
		return err
	}
	defer stopProxy()
	direct, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	path := "/api/v1/namespaces/" + ns + "/configmaps?watch=true&allowWatchBookmarks=true&timeoutSeconds=3600"
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d, p := &arrival{at: map[string]time.Time{}}, &arrival{at: map[string]time.Time{}}
	errc := make(chan error, 2)
	go func() { errc <- watch(wctx, direct, c.URL()+path, d) }()
	go func() { errc <- watch(wctx, &http.Client{}, base+path, p) }()
	time.Sleep(time.Second) // both watches open

	written := map[string]time.Time{}
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	for i := range events {
		<-tick.C
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.Itoa(i%100)}, Data: map[string]string{"n": strconv.Itoa(i)}}
		var got *corev1.ConfigMap
		if i < 100 {
			got, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		} else {
			got, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("write %d: %w", i, err)
		}
		written[got.ResourceVersion] = time.Now()
	}
	time.Sleep(2 * time.Second)
	cancel()
	for range 2 {
		if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	var added, viaDirect, viaProxy []time.Duration
	missing := 0
	d.mu.Lock()
	p.mu.Lock()
	for rv, w := range written {
		td, okd := d.at[rv]
		tp, okp := p.at[rv]
		if !okd || !okp {
			missing++
			continue
		}
		added = append(added, tp.Sub(td))
		viaDirect = append(viaDirect, td.Sub(w))
		viaProxy = append(viaProxy, tp.Sub(w))
	}
	d.mu.Unlock()
	p.mu.Unlock()
	fmt.Printf("## Latency: %d writes at %.0f/s, a real kube-apiserver %s\n\n", events, rate, testcluster.Version)
	fmt.Printf("%-44s %8s %8s %8s %8s\n", "", "p50", "p90", "p99", "max")
	fmt.Printf("%-44s %s\n", "added by the proxy (proxied - direct arrival)", percentiles(added))
	fmt.Printf("%-44s %s\n", "direct watch, after the write returned", percentiles(viaDirect))
	fmt.Printf("%-44s %s\n", "proxied watch, after the write returned", percentiles(viaProxy))
	if missing > 0 {
		fmt.Printf("(%d writes were not seen by both watches)\n", missing)
	}
	fmt.Println()
	return nil
}

// synthServer streams a watch of n ConfigMap events, paced at perSecond (0: as fast as read).
func synthServer(n int, perSecond float64) *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "true" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		start := time.Now()
		buf := make([]byte, 0, 2048)
		data := `{"payload":"` + strings.Repeat("x", 600) + `"}`
		for i := range n {
			if perSecond > 0 {
				if d := time.Duration(float64(i)/perSecond*float64(time.Second)) - time.Since(start); d > 0 {
					time.Sleep(d)
				}
			}
			rv := strconv.Itoa(1000 + i)
			buf = append(buf[:0], `{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-`...)
			buf = strconv.AppendInt(buf, int64(i%1000), 10)
			buf = append(buf, `","namespace":"bench","uid":"00000000-0000-0000-0000-`...)
			buf = append(buf, fmt.Sprintf("%012d", i%1000)...)
			buf = append(buf, `","resourceVersion":"`...)
			buf = append(buf, rv...)
			buf = append(buf, `","labels":{"app":"bench"}},"data":`...)
			buf = append(buf, data...)
			buf = append(buf, "}}\n"...)
			if _, err := w.Write(buf); err != nil {
				return
			}
			fl.Flush()
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	return srv
}

// readWatch reads a whole synthetic watch and returns events a second.
func readWatch(client *http.Client, url string, a *arrival) (float64, int, error) {
	start := time.Now()
	if err := watch(context.Background(), client, url, a); err != nil && !errors.Is(err, io.EOF) {
		return 0, 0, err
	}
	el := time.Since(start)
	return float64(a.n) / el.Seconds(), a.n, nil
}

// throughput compares a synthetic watch read directly and through the
// proxy, reps times each, alternating, and reports the medians.
func throughput(_ context.Context, n int, pace float64, reps int) error {
	fmt.Printf("## Throughput: a synthetic watch of %d ConfigMap events (~0.8 KiB each, JSON), median of %d alternating runs\n\n", n, reps)
	fmt.Printf("%-34s %14s %14s %8s %22s\n", "", "direct ev/s", "proxied ev/s", "ratio", "proxied cache (objects)")
	for _, paced := range []float64{0, pace} {
		var direct, proxied []float64
		objects := 0
		for range reps {
			d, _, err := synthRun(n, paced, false)
			if err != nil {
				return err
			}
			p, objs, err := synthRun(n, paced, true)
			if err != nil {
				return err
			}
			direct, proxied, objects = append(direct, d), append(proxied, p), objs
		}
		label := "as fast as read"
		if paced > 0 {
			label = fmt.Sprintf("paced at %.0f events/s", paced)
		}
		dm, pm := median(direct), median(proxied)
		fmt.Printf("%-34s %14.0f %14.0f %8.2f %22d\n", label, dm, pm, pm/dm, objects)
	}
	fmt.Println()
	return nil
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// synthRun reads one synthetic watch of n events, through a proxy or not,
// and returns the events a second read and, through the proxy, the
// objects of the cache it rebuilt.
func synthRun(n int, paced float64, viaProxy bool) (float64, int, error) {
	srv := synthServer(n, paced)
	defer srv.Close()
	path := "/api/v1/namespaces/bench/configmaps?watch=true"
	if !viaProxy {
		client := srv.Client()
		client.Transport.(*http.Transport).TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // the synthetic server's own certificate
		rate, got, err := readWatch(client, srv.URL+path, &arrival{})
		if err == nil && got != n {
			err = fmt.Errorf("read %d of %d events directly", got, n)
		}
		return rate, 0, err
	}
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	px, base, stopProxy, err := serveProxy(cfg)
	if err != nil {
		return 0, 0, err
	}
	defer stopProxy()
	rate, got, err := readWatch(&http.Client{}, base+path, &arrival{})
	if err == nil && got != n {
		err = fmt.Errorf("read %d of %d events through the proxy", got, n)
	}
	px.Wait()
	objects := 0
	for _, s := range px.Streams() {
		objects += s.Store().Len()
	}
	return rate, objects, err
}
