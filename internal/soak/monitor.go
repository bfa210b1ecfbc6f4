package soak

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// Monitor runs the plugin's monitor mode as its own process beside the
// soak's reflector, on the same namespace, through the same churn, restarts
// and compactions, recording a trace that rotates at a small cap:
//
//	kubectl-watchcache monitor configmaps -n NS --listen 127.0.0.1:0 \
//	  --trace DIR/monitor.jsonl --trace-max-size MAXSIZE --trace-keep KEEP --watch-timeout W
//
// The soak samples the process's resident memory, heap and goroutines (its
// /metrics) each minute and the trace's bytes on disk every second, ends it
// with SIGTERM, and replays every segment left with --strict.
type Monitor struct {
	// Binary is the plugin's path.
	Binary string
	// Dir is where the trace is written (an empty directory of its own:
	// every byte in it counts as the trace's).
	Dir string
	// MaxSize is --trace-max-size, in bytes (at least 64Ki).
	MaxSize int64
	// Keep is --trace-keep.
	Keep int
	// WatchTimeout is --watch-timeout: a closed segment takes the lines
	// written until the watch next resumes (within two of it), so it
	// bounds the overshoot past MaxSize.
	WatchTimeout time.Duration
}

// MonitorSample is the monitor process at one moment.
type MonitorSample struct {
	At        time.Duration
	RSSBytes  float64 // process_resident_memory_bytes
	HeapBytes float64 // go_memstats_heap_inuse_bytes
	// HeapGoal is go_memstats_next_gc_bytes: the collector's goal, twice
	// the heap that was live at its last collection (GOGC=100), so a
	// steadier measure of what the monitor holds than the heap in use.
	HeapGoal   float64
	Goroutines float64 // go_goroutines
	DiskBytes  int64   // the trace's files, all segments
}

// Segment is one file of the trace left at the end.
type Segment struct {
	Name  string
	Bytes int64
	// Cache is the bytes of the cache it begins with: its lines up to its
	// first list-complete note.
	Cache   int64
	Replays bool   // replay --speed 0 --no-tui --strict exited 0
	Error   string // why not
}

// MonitorReport is what the monitor did through the soak.
type MonitorReport struct {
	Baseline, End MonitorSample
	// MaxDiskBytes and MaxFileBytes are the largest total and the largest
	// single file seen on disk, sampled every second.
	MaxDiskBytes, MaxFileBytes int64
	// Bound is what the disk may hold: Keep+1 files, each at most
	// FileBound, twice the cap plus the largest cache a segment began with
	// (README: a segment is about the cap plus its caches, and up to a
	// watch timeout of lines past that). A closed segment takes the lines written
	// until each resource next resumes its watch, at most two watch
	// timeouts (a watch asks for a timeout in [T, 2T)): Monitor.WatchTimeout
	// is chosen so that this overshoot stays under the cap. That is a
	// measured assumption, which these bounds check, not a guarantee.
	Bound, FileBound int64
	// Rotations is how many segments were started after the first.
	Rotations int
	// Keep is --trace-keep.
	Keep     int
	Segments []Segment
	// Stopped is how long SIGTERM took to end it; ExitErr is its exit.
	Stopped time.Duration
	ExitErr error
	// Lines is how many lines it logged (notes that matter).
	Lines int
	// EndsAsList says the newest segment's replay ends with the objects a
	// LIST gave at the end (names, UIDs and resourceVersions).
	EndsAsList bool
}

// ratio is end over base (0 without a base).
func ratio(end, base float64) float64 {
	if base == 0 {
		return 0
	}
	return end / base
}

// String is the monitor's part of the soak's report.
func (m *MonitorReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "monitor: %d lines logged; trace rotated %d times; on disk at most %s in all (bound %s), %s in one file; SIGTERM to exit %s (%v)\n",
		m.Lines, m.Rotations, format.Bytes(m.MaxDiskBytes), format.Bytes(m.Bound), format.Bytes(m.MaxFileBytes), m.Stopped.Round(time.Millisecond), exitText(m.ExitErr))
	fmt.Fprintf(&b, "monitor memory: RSS %.1f MiB at %s, %.1f MiB at the end (%.2fx); heap in use %.1f → %.1f MiB; GC goal %.1f → %.1f MiB (%.2fx); goroutines %.0f → %.0f\n",
		m.Baseline.RSSBytes/(1<<20), m.Baseline.At.Round(time.Second), m.End.RSSBytes/(1<<20), ratio(m.End.RSSBytes, m.Baseline.RSSBytes),
		m.Baseline.HeapBytes/(1<<20), m.End.HeapBytes/(1<<20), m.Baseline.HeapGoal/(1<<20), m.End.HeapGoal/(1<<20), ratio(m.End.HeapGoal, m.Baseline.HeapGoal),
		m.Baseline.Goroutines, m.End.Goroutines)
	for _, s := range m.Segments {
		status := "replays with --strict"
		if !s.Replays {
			status = "does not replay: " + s.Error
		}
		fmt.Fprintf(&b, "  %s: %s (a cache of %s first), %s\n", s.Name, format.Bytes(s.Bytes), format.Bytes(s.Cache), status)
	}
	fmt.Fprintf(&b, "  the newest segment's replay ends as a LIST: %t\n", m.EndsAsList)
	return b.String()
}

func exitText(err error) string {
	if err == nil {
		return "exit 0"
	}
	return err.Error()
}

// monitorRun is the monitor process while it runs.
type monitorRun struct {
	m   Monitor
	cmd *exec.Cmd
	url string // its /metrics
	// done is closed once the process exited and was reaped; exitErr is
	// then its exit.
	done    chan struct{}
	exitErr error
	stdout  lineCounter // what it logs, counted
	stderr  tail        // the end of what it says

	maxDisk int64 // watchDisk's until diskDone is closed
	maxFile int64

	stopDisk context.CancelFunc
	diskDone chan struct{}
}

// startMonitor starts the monitor on the namespace ns of c, and waits until
// it says where it serves. c starts it, so that it dies with the test
// process: monitor mode retries for ever, and would outlive a killed test.
func startMonitor(ctx context.Context, c *testcluster.Cluster, m Monitor, ns string) (*monitorRun, error) {
	if entries, err := os.ReadDir(m.Dir); err != nil || len(entries) > 0 {
		return nil, fmt.Errorf("the monitor's trace directory %s must exist and be empty (%v)", m.Dir, err)
	}
	home, err := os.MkdirTemp("", "soak-monitor-home-")
	if err != nil {
		return nil, fmt.Errorf("the monitor's HOME: %w", err)
	}
	r := &monitorRun{m: m, done: make(chan struct{}), diskDone: make(chan struct{})}
	r.cmd = exec.Command(m.Binary, "monitor", "configmaps", "-n", ns, "--listen", "127.0.0.1:0",
		"--trace", filepath.Join(m.Dir, "monitor.jsonl"), "--trace-max-size", fmt.Sprint(m.MaxSize),
		"--trace-keep", fmt.Sprint(m.Keep), "--watch-timeout", m.WatchTimeout.String())
	r.cmd.Env = []string{"HOME=" + home, "KUBECONFIG=" + c.Kubeconfig()}
	// exec copies both outputs into these writers, and Wait waits for the copies.
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := c.StartCommand(r.cmd); err != nil {
		_ = os.RemoveAll(home)
		return nil, fmt.Errorf("starting the monitor: %w", err)
	}
	go func() {
		r.exitErr = r.cmd.Wait()
		close(r.done)
		_ = os.RemoveAll(home)
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if url, ok := metrics.ServingURL(r.errors()); ok {
			r.url = url
			break
		}
		select {
		case <-r.done:
			return nil, fmt.Errorf("the monitor exited before serving (%v):\n%s", r.exitErr, r.errors())
		default:
		}
		if ctx.Err() != nil {
			r.kill()
			return nil, fmt.Errorf("waiting for the monitor to serve: %w", ctx.Err())
		}
		if time.Now().After(deadline) {
			r.kill()
			return nil, fmt.Errorf("the monitor said nowhere it serves within a minute:\n%s", r.errors())
		}
	}
	diskCtx, stop := context.WithCancel(context.Background())
	r.stopDisk = stop
	go r.watchDisk(diskCtx)
	return r, nil
}

// abort kills the monitor and stops sampling its disk, on the soak's way
// out: a no-op once stop has run.
func (r *monitorRun) abort() {
	r.kill()
	r.stopDisk()
	<-r.diskDone
}

// kill kills the monitor and waits, 10 s at most, until it is reaped.
func (r *monitorRun) kill() {
	_ = r.cmd.Process.Kill()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
	}
}

// errors is the end of what the monitor wrote to stderr.
func (r *monitorRun) errors() string { return r.stderr.String() }

// tail keeps the last 64 KiB written to it; it may be read while written.
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - 64<<10; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// lineCounter counts the lines written to it.
type lineCounter struct {
	mu sync.Mutex
	n  int
}

func (c *lineCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

func (c *lineCounter) lines() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// watchDisk samples the trace's bytes on disk every second.
func (r *monitorRun) watchDisk(ctx context.Context) {
	defer close(r.diskDone)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		total, largest := r.disk()
		r.maxDisk, r.maxFile = max(r.maxDisk, total), max(r.maxFile, largest)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// disk is the bytes of every file in the trace's directory, and the largest.
func (r *monitorRun) disk() (total, largest int64) {
	entries, _ := os.ReadDir(r.m.Dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			total += fi.Size()
			largest = max(largest, fi.Size())
		}
	}
	return total, largest
}

// sample reads the monitor's /metrics and its trace's size.
func (r *monitorRun) sample(ctx context.Context, at time.Duration) (MonitorSample, error) {
	s := MonitorSample{At: at}
	s.DiskBytes, _ = r.disk()
	fams, err := r.scrape(ctx)
	if err != nil {
		return s, err
	}
	for name, v := range map[string]*float64{"process_resident_memory_bytes": &s.RSSBytes, "go_memstats_heap_inuse_bytes": &s.HeapBytes, "go_memstats_next_gc_bytes": &s.HeapGoal, "go_goroutines": &s.Goroutines} {
		if *v, err = gauge(fams, name); err != nil {
			return s, err
		}
	}
	return s, nil
}

// scrape reads the monitor's /metrics.
func (r *monitorRun) scrape(ctx context.Context) (metrics.Scraped, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return metrics.Scrape(ctx, r.url)
}

// gauge is the family name's samples summed.
func gauge(fams metrics.Scraped, name string) (float64, error) {
	v, ok := fams.Value(name, nil)
	if !ok {
		return 0, fmt.Errorf("the monitor's /metrics has no %s", name)
	}
	return v, nil
}

// settle waits, after the churn stopped, until the monitor holds as many
// objects as a LIST of ns and its event count has not moved for 5 s; it
// returns that LIST as "name uid resourceVersion" lines.
func (r *monitorRun) settle(ctx context.Context, cs kubernetes.Interface, ns string) ([]string, error) {
	var last float64 = -1
	var stillSince time.Time
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing ConfigMaps: %w", err)
		}
		fams, err := r.scrape(ctx)
		if err != nil {
			return nil, err
		}
		objects, _ := gauge(fams, "watchcache_store_objects")
		events, _ := gauge(fams, "watchcache_events_total")
		if events != last {
			last, stillSince = events, time.Now()
		}
		if int(objects) == len(list.Items) && time.Since(stillSince) >= 5*time.Second {
			var want []string
			for _, o := range list.Items {
				want = append(want, o.Name+" "+string(o.UID)+" "+o.ResourceVersion)
			}
			slices.Sort(want)
			return want, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the monitor did not settle in two minutes after the churn: %.0f objects, a LIST has %d", objects, len(list.Items))
		}
	}
}

// stop ends the monitor with SIGTERM and fills rep with what it left.
func (r *monitorRun) stop(ctx context.Context, rep *MonitorReport, want []string) {
	begun := time.Now()
	select {
	case <-r.done:
		rep.ExitErr = fmt.Errorf("it had exited before SIGTERM: %v", r.exitErr)
	default:
		if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			r.kill()
			rep.ExitErr = fmt.Errorf("SIGTERM: %w (killed)", err)
			break
		}
		select {
		case <-r.done:
			rep.ExitErr = r.exitErr
		case <-time.After(30 * time.Second):
			r.kill()
			rep.ExitErr = errors.New("it did not exit within 30 s of SIGTERM: killed")
		}
		rep.Stopped = time.Since(begun)
	}
	if rep.ExitErr != nil {
		last := r.errors()
		last = last[max(0, len(last)-4<<10):]
		rep.ExitErr = fmt.Errorf("%w; the end of its stderr:\n%s", rep.ExitErr, last)
	}
	rep.Lines = r.stdout.lines()
	r.stopDisk()
	<-r.diskDone
	// One last look, now that it has stopped: what it wrote as it ended
	// (the rest of its lines, a resource that had not moved yet) counts too.
	total, largest := r.disk()
	rep.MaxDiskBytes, rep.MaxFileBytes = max(r.maxDisk, total), max(r.maxFile, largest)
	rep.Keep = r.m.Keep
	entries, _ := os.ReadDir(r.m.Dir) // none on an error: the bounds count no cache
	for _, e := range entries {
		seg := Segment{Name: e.Name(), Cache: cacheBytes(filepath.Join(r.m.Dir, e.Name()))}
		if fi, err := e.Info(); err == nil {
			seg.Bytes = fi.Size()
		}
		out, err := r.replay(ctx, filepath.Join(r.m.Dir, e.Name()))
		seg.Replays = err == nil
		if err != nil {
			seg.Error = err.Error()
		}
		if e.Name() == "monitor.jsonl" {
			rep.Rotations, rep.EndsAsList = r.newest(out, want)
		}
		rep.Segments = append(rep.Segments, seg)
	}
	// The caches of the segments left at the end stand for those rotated
	// away: they begin with the same resource, of about as many objects.
	var cache int64
	for _, s := range rep.Segments {
		cache = max(cache, s.Cache)
	}
	rep.FileBound = 2*r.m.MaxSize + cache
	rep.Bound = int64(r.m.Keep+1) * rep.FileBound
}

// cacheBytes is the bytes of the cache the trace segment at path begins
// with: its lines up to its first list-complete note (0 when unreadable).
func cacheBytes(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var n int64
	for line := range bytes.Lines(b) {
		n += int64(len(line))
		if bytes.Contains(line, []byte(`"reason":"list-complete"`)) {
			return n
		}
	}
	return 0
}

// replay replays one segment with --strict and returns its summary JSON.
func (r *monitorRun) replay(ctx context.Context, path string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, r.m.Binary, "replay", path, "--speed", "0", "--no-tui", "--strict", "--summary", "-o", "json")
	cmd.Env = []string{"HOME=" + os.TempDir()}
	var errOut strings.Builder
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(errOut.String()))
	}
	return out, nil
}

// newest reads the newest segment: its segment number in its header (the
// rotations; -1 when the header cannot be read), and whether its replay's
// cache at the end (out, its summary JSON; nil when the replay failed) is
// the LIST want.
func (r *monitorRun) newest(out []byte, want []string) (int, bool) {
	segment := -1
	if rd, err := trace.Open(filepath.Join(r.m.Dir, "monitor.jsonl")); err == nil {
		segment = rd.Header().Segment
		_ = rd.Close()
	}
	sums, err := summary.Decode(out)
	if out == nil || err != nil || len(sums) != 1 {
		return segment, false
	}
	var got []string
	for _, e := range sums[0].Store {
		got = append(got, e.Name+" "+e.UID+" "+e.ResourceVersion)
	}
	slices.Sort(got)
	return segment, slices.Equal(got, want)
}

// problems are what the monitor's report says is wrong.
func (m *MonitorReport) problems() []string {
	var out []string
	if m.ExitErr != nil {
		out = append(out, fmt.Sprintf("the monitor did not exit 0 on SIGTERM: %v", m.ExitErr))
	}
	if m.Stopped > 5*time.Second {
		out = append(out, fmt.Sprintf("the monitor took %s to stop on SIGTERM (want at most 5 s)", m.Stopped.Round(time.Millisecond)))
	}
	if m.MaxDiskBytes > m.Bound {
		out = append(out, fmt.Sprintf("the trace held %s on disk, past its bound of %s", format.Bytes(m.MaxDiskBytes), format.Bytes(m.Bound)))
	}
	if len(m.Segments) > m.Keep+1 {
		out = append(out, fmt.Sprintf("%d files in the trace's directory, want at most --trace-keep %d + 1", len(m.Segments), m.Keep))
	}
	switch {
	case m.Rotations < 0:
		out = append(out, "the newest segment's header cannot be read")
	case m.Rotations == 0:
		out = append(out, "the trace never rotated")
	}
	if m.MaxFileBytes > m.FileBound {
		out = append(out, fmt.Sprintf("one file of the trace held %s, past twice the cap plus its cache (%s)", format.Bytes(m.MaxFileBytes), format.Bytes(m.FileBound)))
	}
	for _, s := range m.Segments {
		if !s.Replays {
			out = append(out, fmt.Sprintf("segment %s does not replay with --strict: %s", s.Name, s.Error))
		}
	}
	if !m.EndsAsList {
		out = append(out, "the newest segment's replay does not end with the objects of a LIST")
	}
	if r := ratio(m.End.RSSBytes, m.Baseline.RSSBytes); r > 1.5 {
		out = append(out, fmt.Sprintf("the monitor's resident memory grew %.2fx (%.1f → %.1f MiB)", r, m.Baseline.RSSBytes/(1<<20), m.End.RSSBytes/(1<<20)))
	}
	if r := ratio(m.End.HeapGoal, m.Baseline.HeapGoal); r > 1.5 {
		out = append(out, fmt.Sprintf("the monitor's GC goal (twice its live heap) grew %.2fx (%.1f → %.1f MiB)", r, m.Baseline.HeapGoal/(1<<20), m.End.HeapGoal/(1<<20)))
	}
	if d := m.End.Goroutines - m.Baseline.Goroutines; m.Baseline.Goroutines > 0 && (d > 10 || d < -10) {
		out = append(out, fmt.Sprintf("the monitor's goroutines went from %.0f to %.0f", m.Baseline.Goroutines, m.End.Goroutines))
	}
	return out
}
