package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/hack/bench/internal/probe"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/testcluster"
)

// binaries are the programs the initial-sync measurements run.
type binaries struct {
	plugin, syncer, rawget string
	// baseline is the plugin built at -baseline ("" without), baselineCommit its commit.
	baseline, baselineCommit string
}

// buildBinaries builds the plugin and the helpers once, into dir.
func buildBinaries(ctx context.Context, root, dir string) (binaries, error) {
	b := binaries{
		plugin: filepath.Join(dir, "kubectl-watchcache"),
		syncer: filepath.Join(dir, "syncer"),
		rawget: filepath.Join(dir, "rawget"),
	}
	for out, pkg := range map[string]string{
		b.plugin: "./cmd/kubectl-watchcache",
		b.syncer: "./hack/bench/syncer",
		b.rawget: "./hack/bench/rawget",
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
		cmd.Dir = root
		if msg, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("building %s: %w\n%s", pkg, err, msg)
		}
	}
	return b, nil
}

// buildBaseline builds the plugin as it is at git revision rev (exported
// with git archive into dir) and returns the binary and the commit's short hash.
func buildBaseline(ctx context.Context, root, dir, rev string) (bin, commit string, err error) {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short", rev+"^{commit}").Output()
	if err != nil {
		return "", "", fmt.Errorf("resolving -baseline %s: %w", rev, err)
	}
	commit = strings.TrimSpace(string(out))
	src := filepath.Join(dir, "baseline-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", "", fmt.Errorf("creating %s: %w", src, err)
	}
	archive := exec.CommandContext(ctx, "sh", "-c", `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, "sh", root, commit, src)
	if msg, err := archive.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("exporting %s: %w\n%s", rev, err, msg)
	}
	bin = filepath.Join(dir, "kubectl-watchcache-baseline")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/kubectl-watchcache")
	build.Dir = src
	if msg, err := build.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building the plugin at %s: %w\n%s", rev, err, msg)
	}
	return bin, commit, nil
}

// findKubectl returns kubectl's path, or an error saying it is missing.
func findKubectl() (string, error) {
	p, err := exec.LookPath("kubectl")
	if err != nil {
		return "", fmt.Errorf("kubectl is not installed (not found in PATH): %w", err)
	}
	return p, nil
}

// procResult is one run of one process.
type procResult struct {
	// Sync is from starting the process to its first complete cache (0 when
	// the process cannot say, like kubectl); Wall is from start to exit.
	Sync, Wall time.Duration
	// PeakRSS is the process's resident high-water mark (VmHWM, polled);
	// PeakAnon the most anonymous memory (RssAnon) it was seen to hold,
	// polled every 2 ms: its memory without the binary's mapped pages.
	PeakRSS, PeakAnon uint64
	// CPU is the process's user + system CPU time.
	CPU time.Duration
	// Objects the process held (or printed, kubectl); Bytes of the list (floor).
	Objects int
	Bytes   int64
	// TraceBytes is the size of the trace the run recorded, if any.
	TraceBytes int64
	// Helper readings: live heap and RSS once synced, and a forced relist.
	BaselineHeap, SteadyHeap, SteadyRSS uint64
	Relist                              *probe.Relist
	// Server side, during the run: kube-apiserver's and etcd's CPU time, and
	// how far kube-apiserver's resident set rose above where it was at the start.
	ServerCPU, EtcdCPU time.Duration
	ServerPeakRise     uint64
}

// variant is one kind of process in the initial-sync comparison.
type variant struct {
	key, label string
	// run starts the process for rep and returns what it measured.
	run func(ctx context.Context, e *env, rep int) (procResult, error)
}

// Variant keys, used to look results up for ratios.
const (
	vFloor             = "floor"
	vFloorPB           = "floor-pb"
	vFloorPages        = "floor-pages"
	vFloorPagesPB      = "floor-pages-pb"
	vFloorPages5000    = "floor-pages5000"
	vFloorPages5000PB  = "floor-pages5000-pb"
	vFloorRV0          = "floor-rv0"
	vFloorRV0PB        = "floor-rv0-pb"
	vFloorStream       = "floor-stream"
	vFloorStreamPB     = "floor-stream-pb"
	vFloorStreamMeta   = "floor-stream-meta"
	vFloorStreamMetaPB = "floor-stream-meta-pb"
	vDefault           = "wc-default"
	vDefaultJSON       = "wc-default-json"
	vDefaultMeta       = "wc-default-meta"
	vDefaultMetaJSON   = "wc-default-meta-json"
	vDefaultTrace      = "wc-default-trace"
	vListFull          = "wc-list-full"
	vStreamFull        = "wc-stream-full"
	vList500PB         = "wc-list500-pb"
	vList5000PB        = "wc-list5000-pb"
	vList0PB           = "wc-list0-pb"
	vRV0PB             = "wc-rv0-pb"
	vList500JSON       = "wc-list500-json"
	vList5000JSON      = "wc-list5000-json"
	vList0JSON         = "wc-list0-json"
	vRV0JSON           = "wc-rv0-json"
	vSessionFull       = "wc-session-full"
	vSessionMeta       = "wc-session-meta"
	vDynamicStream     = "dynamic-stream"
	vDynamicList       = "dynamic-list"
	vMetadataStream    = "metadata-stream"
	vMetadataList      = "metadata-list"
	vTypedStream       = "typed-stream"
	vTypedList         = "typed-list"
	vKubectl           = "kubectl"
)

// syncVariants are the processes measured for initial sync, in run order.
func syncVariants(e *env) []variant {
	plugin := func(extra ...string) func(context.Context, *env, int) (procResult, error) {
		return pluginRun(false, extra...)
	}
	syncer, rawget := syncerRun, rawgetRun
	pb := []string{"-wire", "protobuf"}
	vs := []variant{
		{vFloor, "raw GET of the whole list, JSON, read to EOF (floor)", rawget()},
		{vFloorPB, "raw GET of the whole list, protobuf, read to EOF", rawget(pb...)},
		{vFloorPages, "raw GETs of every 500-item page, JSON", rawget("-limit", "500")},
		{vFloorPagesPB, "raw GETs of every 500-item page, protobuf", rawget(append(pb, "-limit", "500")...)},
		{vFloorPages5000, "raw GETs of every 5000-item page, JSON", rawget("-limit", "5000")},
		{vFloorPages5000PB, "raw GETs of every 5000-item page, protobuf", rawget(append(pb, "-limit", "5000")...)},
		{vFloorRV0, "raw GETs, resourceVersion=0, limit=500, JSON", rawget("-limit", "500", "-resource-version", "0")},
		{vFloorRV0PB, "raw GETs, resourceVersion=0, limit=500, protobuf", rawget(append(pb, "-limit", "500", "-resource-version", "0")...)},
		{vFloorStream, "raw streaming list to its initial-events-end bookmark, JSON", rawget("-watchlist")},
		{vFloorStreamPB, "raw streaming list to its initial-events-end bookmark, protobuf", rawget(append(pb, "-watchlist")...)},
		{vFloorStreamMeta, "raw streaming list of PartialObjectMetadata, JSON", rawget("-watchlist", "-metadata-only")},
		{vFloorStreamMetaPB, "raw streaming list of PartialObjectMetadata, protobuf", rawget(append(pb, "-watchlist", "-metadata-only")...)},
		{vDefault, "watchcache (defaults: streaming list, --wire auto = protobuf)", plugin()},
		{vDefaultJSON, "watchcache --wire json (before: JSON)", plugin("--wire", "json")},
		{vDefaultMeta, "watchcache --metadata-only (protobuf)", plugin("--metadata-only")},
		{vDefaultMetaJSON, "watchcache --metadata-only --wire json (before: JSON)", plugin("--metadata-only", "--wire", "json")},
		{vStreamFull, "watchcache --keep-objects (JSON: full objects kept)", plugin("--keep-objects")},
		{vListFull, "watchcache --initial-list=list --keep-objects (JSON)", plugin("--initial-list", "list", "--keep-objects")},
		{vDefaultTrace, "watchcache --trace (metadata trace; protobuf)", func(ctx context.Context, e *env, rep int) (procResult, error) {
			path := filepath.Join(e.tmp, fmt.Sprintf("sync-%d.jsonl", rep))
			defer os.Remove(path)
			r, err := plugin("--trace", path)(ctx, e, rep)
			if fi, statErr := os.Stat(path); statErr == nil {
				r.TraceBytes = fi.Size()
			}
			return r, err
		}},
		{vList500PB, "watchcache --initial-list=list (--page-size 500), protobuf", plugin("--initial-list", "list")},
		{vList5000PB, "watchcache --initial-list=list --page-size 5000, protobuf", plugin("--initial-list", "list", "--page-size", "5000")},
		{vList0PB, "watchcache --initial-list=list --page-size 0, protobuf", plugin("--initial-list", "list", "--page-size", "0")},
		{vRV0PB, "watchcache --initial-list=list --resource-version 0, protobuf", plugin("--initial-list", "list", "--resource-version", "0")},
		{vList500JSON, "watchcache --initial-list=list (--page-size 500), JSON", plugin("--initial-list", "list", "--wire", "json")},
		{vList5000JSON, "watchcache --initial-list=list --page-size 5000, JSON", plugin("--initial-list", "list", "--page-size", "5000", "--wire", "json")},
		{vList0JSON, "watchcache --initial-list=list --page-size 0, JSON", plugin("--initial-list", "list", "--page-size", "0", "--wire", "json")},
		{vRV0JSON, "watchcache --initial-list=list --resource-version 0, JSON", plugin("--initial-list", "list", "--resource-version", "0", "--wire", "json")},
		{vSessionFull, "watchcache session, defaults (helper; + forced relist)", syncer(false, "-client", "watchcache", "-initial-list", "auto", "-relist")},
		{vSessionMeta, "watchcache session, --metadata-only (helper; + forced relist)", syncer(false, "-client", "watchcache", "-initial-list", "auto", "-metadata-only", "-relist")},
		{vDynamicStream, "client-go dynamic informer, streaming list (client-go default; JSON)", syncer(true, "-client", "dynamic")},
		{vDynamicList, "client-go dynamic informer, LIST (WatchListClient=false; JSON)", syncer(false, "-client", "dynamic")},
		{vMetadataStream, "client-go metadata informer, streaming list (default; protobuf)", syncer(true, "-client", "metadata")},
		{vMetadataList, "client-go metadata informer, LIST (WatchListClient=false; protobuf)", syncer(false, "-client", "metadata")},
		{vTypedStream, "client-go typed informer, streaming list (default; protobuf)", syncer(true, "-client", "typed")},
		{vTypedList, "client-go typed informer, LIST (WatchListClient=false; protobuf)", syncer(false, "-client", "typed")},
	}
	if e.kubectl != "" {
		vs = append(vs, variant{vKubectl, "kubectl get configmaps -A -o name", func(ctx context.Context, e *env, rep int) (procResult, error) {
			return runKubectl(ctx, e.kubectl, e.cluster.Kubeconfig())
		}})
	}
	return vs
}

// pluginRun runs the plugin (the -baseline build with baseline) on every
// ConfigMap until its first complete list, with args after the common ones.
func pluginRun(baseline bool, args ...string) func(context.Context, *env, int) (procResult, error) {
	return func(ctx context.Context, e *env, rep int) (procResult, error) {
		bin := e.bins.plugin
		if baseline {
			bin = e.bins.baseline
		}
		return runPlugin(ctx, bin, append([]string{"configmaps", "-A", "--kubeconfig", e.cluster.Kubeconfig(), "--no-tui", "--once", "-o", "json"}, args...))
	}
}

// syncerRun runs hack/bench/syncer with args, with client-go's streaming list on or off.
func syncerRun(watchList bool, args ...string) func(context.Context, *env, int) (procResult, error) {
	return func(ctx context.Context, e *env, rep int) (procResult, error) {
		env := []string{fmt.Sprintf("KUBE_FEATURE_WatchListClient=%t", watchList)}
		return runSyncer(ctx, e.bins.syncer, append([]string{"-kubeconfig", e.cluster.Kubeconfig()}, args...), env)
	}
}

// rawgetRun runs a floor (hack/bench/rawget) on every ConfigMap with args.
func rawgetRun(args ...string) func(context.Context, *env, int) (procResult, error) {
	return func(ctx context.Context, e *env, rep int) (procResult, error) {
		return runRawGet(ctx, e.bins.rawget, append([]string{"-url", e.cluster.URL() + "/api/v1/configmaps", "-ca", e.caFile}, args...), e.cluster.Token("admin"))
	}
}

// measureSync runs every variant of vs reps times, interleaved so drift
// spreads evenly, after one unmeasured warm-up of the floor and the plugin.
func measureSync(ctx context.Context, e *env, n int, vs []variant) (map[string][]procResult, int64, error) {
	for _, v := range vs {
		if v.key != vFloor && v.key != vDefault {
			continue
		}
		if _, err := v.run(ctx, e, -1); err != nil {
			return nil, 0, fmt.Errorf("warm-up %s: %w", v.key, err)
		}
	}
	out := map[string][]procResult{}
	var listBytes int64
	for rep := range e.opts.reps {
		for _, v := range vs {
			if err := pause(ctx, 300*time.Millisecond); err != nil {
				return nil, 0, err
			}
			if err := settleServer(ctx, e); err != nil {
				return nil, 0, err
			}
			server := startServerReading(e.cluster)
			r, err := v.run(ctx, e, rep)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %w", v.key, err)
			}
			server.finish(&r)
			if !strings.HasPrefix(v.key, vFloor) && r.Objects < n {
				return nil, 0, fmt.Errorf("%s: the cache holds %d objects, want at least %d", v.key, r.Objects, n)
			}
			if v.key == vFloor {
				listBytes = r.Bytes
			}
			logf("  rep %d %-20s sync %7.3fs wall %7.3fs CPU %7.3fs peak RSS %6.1f MiB (anonymous %6.1f) objects %d; apiserver CPU %.2fs +%.0f MiB, etcd CPU %.2fs", rep+1, v.key, r.Sync.Seconds(), r.Wall.Seconds(), r.CPU.Seconds(), mib(r.PeakRSS), mib(r.PeakAnon), r.Objects, r.ServerCPU.Seconds(), mib(r.ServerPeakRise), r.EtcdCPU.Seconds())
			out[v.key] = append(out[v.key], r)
		}
	}
	return out, listBytes, nil
}

// settleServer has kube-apiserver collect its heap (GET
// /debug/pprof/heap?gc=1, served while --profiling is on, its default)
// before a measured process starts, so that the process does not pay for the
// garbage the one before it left: the floor's GET leaves a 70 MB response
// behind at 50,000 ConfigMaps, and collecting it cost the next process up to
// a second of the server's CPU on the two cores they share.
func settleServer(ctx context.Context, e *env) error {
	if _, err := e.objects.cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/heap").Param("gc", "1").DoRaw(ctx); err != nil {
		return fmt.Errorf("collecting kube-apiserver's heap before a measurement: %w", err)
	}
	return nil
}

func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// process is one helper process started for a measurement.
type process struct {
	cmd     *exec.Cmd
	started time.Time
	stderr  *tailBuffer
}

// startProcess starts bin in its own process group; ctx's end kills the whole
// group, and so does this process's death (PDEATHSIG).
func startProcess(ctx context.Context, bin string, args, env []string, stdout io.Writer) (*process, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = stdout
	p := &process{cmd: cmd, stderr: &tailBuffer{max: 4096}}
	cmd.Stderr = p.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", filepath.Base(bin), err)
	}
	return p, nil
}

// wait waits for the exit and returns the wall time, peak RSS and CPU time in r.
// It polls the child's VmHWM every 2 ms until the child is a zombie, and only
// then reaps it (so its pid cannot be reused while it is read).
func (p *process) wait(r *procResult) error {
	pid := p.cmd.Process.Pid
	for {
		hwm, anon, running, err := probe.PeakOf(pid)
		if err != nil || !running {
			break
		}
		r.PeakRSS, r.PeakAnon = max(r.PeakRSS, hwm), max(r.PeakAnon, anon)
		time.Sleep(2 * time.Millisecond)
	}
	err := p.cmd.Wait()
	r.Wall = time.Since(p.started)
	if ps := p.cmd.ProcessState; ps != nil {
		r.CPU = ps.UserTime() + ps.SystemTime()
	}
	if err != nil {
		return fmt.Errorf("%s: %w: %s", filepath.Base(p.cmd.Path), err, strings.TrimSpace(p.stderr.String()))
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// runPlugin runs the plugin until its first list completes (--once) and reads
// the time of its list-complete decision from its JSON lines. No --summary:
// printing every cached object at exit would add to the peak RSS measured.
func runPlugin(ctx context.Context, bin string, args []string) (procResult, error) {
	var out bytes.Buffer
	p, err := startProcess(ctx, bin, args, nil, &out)
	if err != nil {
		return procResult{}, err
	}
	var r procResult
	if err := p.wait(&r); err != nil {
		return r, err
	}
	for _, line := range bytes.Split(out.Bytes(), []byte("\n")) {
		var n struct {
			Time    time.Time `json:"time"`
			Reason  string    `json:"reason"`
			Objects *int      `json:"objects"`
		}
		if json.Unmarshal(line, &n) != nil || n.Reason != "list-complete" {
			continue
		}
		if n.Objects == nil {
			return r, fmt.Errorf("the list-complete decision has no object count: %s", line)
		}
		r.Sync, r.Objects = n.Time.Sub(p.started), *n.Objects
		return r, nil
	}
	return r, fmt.Errorf("the plugin printed no list-complete decision:\n%s", out.String())
}

// runSyncer runs the syncer helper and reads its report.
func runSyncer(ctx context.Context, bin string, args, env []string) (procResult, error) {
	var out bytes.Buffer
	p, err := startProcess(ctx, bin, args, env, &out)
	if err != nil {
		return procResult{}, err
	}
	var r procResult
	if err := p.wait(&r); err != nil {
		return r, err
	}
	rep, err := probe.ParseReport(out.Bytes())
	if err != nil {
		return r, err
	}
	r.Sync = time.Unix(0, rep.SyncedAt).Sub(p.started)
	r.Objects, r.BaselineHeap, r.SteadyHeap, r.SteadyRSS, r.Relist = rep.Objects, rep.BaselineHeap, rep.SteadyHeap, rep.SteadyRSS, rep.Relist
	return r, nil
}

// runRawGet runs a floor: the requests read to the end and thrown away.
func runRawGet(ctx context.Context, bin string, args []string, token string) (procResult, error) {
	var out bytes.Buffer
	p, err := startProcess(ctx, bin, args, []string{"BENCH_TOKEN=" + token}, &out)
	if err != nil {
		return procResult{}, err
	}
	var r procResult
	if err := p.wait(&r); err != nil {
		return r, err
	}
	rep, err := probe.ParseReport(out.Bytes())
	if err != nil {
		return r, err
	}
	if rep.Bytes == 0 {
		return r, errors.New("the raw GET read an empty body")
	}
	r.Sync, r.Bytes = time.Unix(0, rep.SyncedAt).Sub(p.started), rep.Bytes
	return r, nil
}

// runKubectl runs kubectl get -o name; it can only be timed as a whole.
func runKubectl(ctx context.Context, bin, kubeconfig string) (procResult, error) {
	lines := &lineCounter{}
	p, err := startProcess(ctx, bin, []string{"get", "configmaps", "-A", "-o", "name", "--kubeconfig", kubeconfig}, nil, lines)
	if err != nil {
		return procResult{}, err
	}
	var r procResult
	if err := p.wait(&r); err != nil {
		return r, err
	}
	r.Objects = lines.n
	return r, nil
}

// lineCounter counts the lines written to it.
type lineCounter struct{ n int }

func (l *lineCounter) Write(p []byte) (int, error) {
	l.n += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// serverReading is the cluster's processes' state at the start of one run.
type serverReading struct {
	etcd, apiserver int // pids; 0 when unknown
	etcdCPU, apiCPU time.Duration
	apiRSS          uint64
}

// startServerReading reads etcd's and kube-apiserver's CPU time and resets
// kube-apiserver's VmHWM to its current resident set (clear_refs 5), so the
// peak read at the end is this run's.
func startServerReading(c *testcluster.Cluster) serverReading {
	var s serverReading
	if pids := c.PIDs(); len(pids) == 2 {
		s.etcd, s.apiserver = pids[0], pids[1]
	}
	if s.apiserver == 0 {
		return s
	}
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.apiserver), []byte("5"), 0)
	s.etcdCPU, s.apiCPU = procCPU(s.etcd), procCPU(s.apiserver)
	s.apiRSS = procStatus(s.apiserver, "VmRSS")
	return s
}

// finish fills r's server-side readings.
func (s serverReading) finish(r *procResult) {
	if s.apiserver == 0 {
		return
	}
	r.EtcdCPU, r.ServerCPU = procCPU(s.etcd)-s.etcdCPU, procCPU(s.apiserver)-s.apiCPU
	if hwm := procStatus(s.apiserver, "VmHWM"); hwm > s.apiRSS {
		r.ServerPeakRise = hwm - s.apiRSS
	}
}

// procCPU is process pid's user + system CPU time (/proc/PID/stat; 0 when unreadable).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: fields count from after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times (100 on Linux).
const clockTicks = 100

// procStatus reads one "Field: N kB" line of /proc/PID/status in bytes (0 when unreadable).
func procStatus(pid int, field string) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}
