// Package testcluster starts a real etcd and kube-apiserver on 127.0.0.1 for
// tests and benchmarks: free ports, temporary directories, an admin token and
// optional restricted users, etcd compaction for deterministic 410 Gone,
// apiserver restarts, and a TCP proxy that cuts connections. The binaries are
// built from Go modules by hack/tools, so nothing has to be installed by hand.
package testcluster

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options configure the servers. The zero value is a default cluster.
type Options struct {
	// DisableWatchCache starts kube-apiserver with --watch-cache=false, so every
	// watch is served from etcd and any compacted resourceVersion gives 410 Gone.
	DisableWatchCache bool
	// FeatureGates are passed as --feature-gates (e.g. {"WatchList": false}).
	FeatureGates map[string]bool
	// ExtraArgs are appended to kube-apiserver's command line.
	ExtraArgs []string
	// Users get a bearer token each (no groups beyond system:authenticated), for
	// RBAC tests; see UserConfig.
	Users []string
	// AuditLog makes kube-apiserver write an audit event (level Metadata) for
	// every request, read back with AuditEvents: what the server saw, the
	// User-Agent of each request included.
	AuditLog bool
	// Log receives progress lines (binary builds, start-up); nil discards them.
	Log io.Writer
}

// Cluster is a running etcd + kube-apiserver pair. Stop it when done.
type Cluster struct {
	opts     Options
	bins     Binaries
	dir      string
	sp       *spawner
	etcdURL  string
	apiPort  int
	apiArgs  []string
	tokens   map[string]string
	caData   []byte
	kubeconf string
	// etcdTimeout bounds one etcd call (0: etcdTimeout, a test's shorter).
	etcdTimeout time.Duration

	mu        sync.Mutex
	etcd      *process
	apiserver *process
	stopped   bool
	onStop    []func()          // what tests started beside the cluster (a webhook server)
	ports     []portReservation // released at Stop
}

// reservePort reserves a port for this cluster's life (see ports.go).
func (c *Cluster) reservePort() (int, error) {
	r, err := reservePort()
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	c.ports = append(c.ports, r)
	c.mu.Unlock()
	return r.port, nil
}

// heldPorts is how many ports the cluster holds.
func (c *Cluster) heldPorts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ports)
}

// releasePortsAfter releases the ports reserved after the first n.
func (c *Cluster) releasePortsAfter(n int) {
	c.mu.Lock()
	later := c.ports[n:]
	c.ports = c.ports[:n:n]
	c.mu.Unlock()
	for _, r := range later {
		r.release()
	}
}

// atStop runs f when the cluster stops, before its servers do.
func (c *Cluster) atStop(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onStop = append(c.onStop, f)
}

const adminUser = "admin"

// Start builds (if needed) and starts etcd and kube-apiserver and waits until
// the apiserver's /readyz is ok. On error nothing is left running.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	bins, err := EnsureBinaries(ctx, opts.Log)
	if err != nil {
		return nil, err
	}
	removeStaleDirs()
	dir, err := newDir()
	if err != nil {
		return nil, err
	}
	cl := &Cluster{opts: opts, bins: bins, dir: dir, sp: newSpawner(), tokens: map[string]string{}}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, cl.LogTail(30))
			cl.Stop()
		}
	}()
	// A port is reserved and checked free, but something outside the tests
	// can still take it before the server binds it: retry with fresh ports
	// when a server does not come up.
	if err := cl.retryPorts(func() error { return cl.startEtcd(ctx) }, cl.stopEtcd); err != nil {
		return nil, err
	}
	if err := cl.prepareAPIServer(); err != nil {
		return nil, err
	}
	if err := cl.retryPorts(func() (err error) {
		if cl.apiPort, err = cl.reservePort(); err != nil {
			return err
		}
		return cl.startAPIServer(ctx)
	}, cl.stopAPIServer); err != nil {
		return nil, err
	}
	return cl, nil
}

// portAttempts is how many times a server start is tried with fresh ports.
const portAttempts = 3

// retryPorts runs start up to portAttempts times, calling stop between
// attempts. The ports a failed attempt reserved are released once it is
// stopped: the next attempt reserves its own, and the cluster holds only
// the ports its servers use.
func (c *Cluster) retryPorts(start func() error, stop func()) error {
	var err error
	for i := 0; i < portAttempts; i++ {
		held := c.heldPorts()
		if err = start(); err == nil {
			return nil
		}
		stop()
		c.releasePortsAfter(held)
	}
	return err
}

// stopEtcd stops a failed etcd and removes its data, so a retry starts clean.
func (c *Cluster) stopEtcd() {
	c.etcd.stop(5 * time.Second)
	_ = os.RemoveAll(filepath.Join(c.dir, "etcd-data"))
}

const dirPrefix = "watchcache-testcluster-"

// newDir creates a cluster's directory with the pid of the process that
// owns it. On error it leaves nothing: a directory without its owner.pid is
// one removeStaleDirs never removes.
func newDir() (string, error) {
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return "", fmt.Errorf("creating the cluster directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("writing the cluster owner pid: %w", err)
	}
	return dir, nil
}

// removeStaleDirs deletes cluster directories left by test processes that died
// without cleaning up (their owner pid is gone).
func removeStaleDirs() {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range matches {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if syscall.Kill(pid, 0) == nil {
			continue
		}
		_ = os.RemoveAll(d)
	}
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	clientPort, err := c.reservePort()
	if err != nil {
		return err
	}
	peerPort, err := c.reservePort()
	if err != nil {
		return err
	}
	c.etcdURL = fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	// A name of its own: another etcd may have taken the port between its
	// reservation and this etcd's bind (this one then exits), and would
	// answer the health check; the member list tells them apart.
	name := fmt.Sprintf("test-%d-%d", os.Getpid(), clientPort)
	args := []string{
		"--name=" + name,
		"--data-dir=" + filepath.Join(c.dir, "etcd-data"),
		"--listen-client-urls=" + c.etcdURL,
		"--advertise-client-urls=" + c.etcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=" + name + "=" + peerURL,
		"--log-level=warn",
		// Tests do not need durability; fsync dominates write latency otherwise.
		"--unsafe-no-fsync=true",
	}
	p, err := startProcess(c.sp, "etcd", filepath.Join(c.dir, "etcd.log"), c.bins.Etcd, args)
	if err != nil {
		return err
	}
	c.etcd = p
	client := &http.Client{Timeout: 2 * time.Second}
	return waitFor(ctx, 30*time.Second, p, func() error {
		resp, err := client.Get(c.etcdURL + "/health")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"health":"true"`)) {
			return fmt.Errorf("etcd /health: %d %s", resp.StatusCode, body)
		}
		members, err := client.Post(c.etcdURL+"/v3/cluster/member/list", "application/json", strings.NewReader("{}"))
		if err != nil {
			return err
		}
		defer members.Body.Close()
		list, _ := io.ReadAll(members.Body)
		if !bytes.Contains(list, []byte(`"name":"`+name+`"`)) {
			return fmt.Errorf("the etcd at %s is not this cluster's (%s): its members are %s", c.etcdURL, name, list)
		}
		return nil
	})
}

func (c *Cluster) prepareAPIServer() error {
	certDir := filepath.Join(c.dir, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return fmt.Errorf("creating cert dir: %w", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generating the service account key: %w", err)
	}
	saKey := filepath.Join(c.dir, "sa.key")
	saPub := filepath.Join(c.dir, "sa.pub")
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("encoding the service account key: %w", err)
	}
	if err := os.WriteFile(saKey, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return fmt.Errorf("writing the service account key: %w", err)
	}
	if err := os.WriteFile(saPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return fmt.Errorf("writing the service account key: %w", err)
	}
	var tokens strings.Builder
	for i, user := range append([]string{adminUser}, c.opts.Users...) {
		tok := rand.Text()
		c.tokens[user] = tok
		groups := ""
		if user == adminUser {
			groups = `,"system:masters"`
		}
		fmt.Fprintf(&tokens, "%s,%s,%d%s\n", tok, user, 1000+i, groups)
	}
	tokenFile := filepath.Join(c.dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(tokens.String()), 0o600); err != nil {
		return fmt.Errorf("writing the token file: %w", err)
	}
	args := []string{
		"--etcd-servers=" + c.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + certDir,
		"--service-account-key-file=" + saPub,
		"--service-account-signing-key-file=" + saKey,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		// Tests compact etcd themselves when they want a 410; a background
		// compaction would make that nondeterministic.
		"--etcd-compaction-interval=0",
		"--v=1",
	}
	if c.opts.DisableWatchCache {
		args = append(args, "--watch-cache=false")
	}
	if len(c.opts.FeatureGates) > 0 {
		gates := make([]string, 0, len(c.opts.FeatureGates))
		for k, v := range c.opts.FeatureGates {
			gates = append(gates, k+"="+strconv.FormatBool(v))
		}
		sort.Strings(gates)
		args = append(args, "--feature-gates="+strings.Join(gates, ","))
	}
	if c.opts.AuditLog {
		policy := filepath.Join(c.dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
			return fmt.Errorf("writing the audit policy: %w", err)
		}
		// Blocking: an event is written before its request's response ends,
		// so a test reads every request it made.
		args = append(args, "--audit-policy-file="+policy, "--audit-log-path="+c.auditLogPath(),
			"--audit-log-format=json", "--audit-log-mode=blocking")
	}
	c.apiArgs = append(args, c.opts.ExtraArgs...)
	return nil
}

func (c *Cluster) auditLogPath() string { return filepath.Join(c.dir, "audit.log") }

// AuditEvent is what the apiserver's audit log says of one request.
type AuditEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
}

// AuditEvents reads the audit log (Options.AuditLog): one event per request
// and stage, in the order the server wrote them.
func (c *Cluster) AuditEvents() ([]AuditEvent, error) {
	if !c.opts.AuditLog {
		return nil, errors.New("reading the audit log: the cluster was started without Options.AuditLog")
	}
	b, err := os.ReadFile(c.auditLogPath())
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	var out []AuditEvent
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var ev AuditEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("reading the audit log, line %d: %w", i+1, err)
		}
		out = append(out, ev)
	}
	return out, nil
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	// The port is Start's attempt's: a restart keeps it.
	args := append([]string{"--secure-port=" + strconv.Itoa(c.apiPort)}, c.apiArgs...)
	p, err := startProcess(c.sp, "kube-apiserver", filepath.Join(c.dir, "kube-apiserver.log"), c.bins.KubeAPIServer, args)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.apiserver = p
	c.mu.Unlock()
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	err = waitFor(ctx, 90*time.Second, p, func() error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.URL()+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+c.tokens[adminUser])
		resp, err := insecure.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("kube-apiserver /readyz: %d %s", resp.StatusCode, lastLine(body))
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The apiserver writes a self-signed serving cert for 127.0.0.1 into --cert-dir.
	ca, err := os.ReadFile(filepath.Join(c.dir, "certs", "apiserver.crt"))
	if err != nil {
		return fmt.Errorf("reading the apiserver serving certificate: %w", err)
	}
	c.mu.Lock()
	c.caData = ca
	c.mu.Unlock()
	if c.kubeconf == "" {
		c.kubeconf = filepath.Join(c.dir, "kubeconfig")
		if err := WriteKubeconfig(c.kubeconf, c.Config()); err != nil {
			return err
		}
	}
	return nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// waitFor polls check every 100ms until it succeeds, the process exits, or the timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, p *process, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if last = check(); last == nil {
			return nil
		}
		if err := p.exitError(); err != nil {
			return fmt.Errorf("%s did not become ready: %w", p.name, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not become ready within %s: %w (last check: %v)", p.name, timeout, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// URL is the apiserver's https URL on 127.0.0.1.
func (c *Cluster) URL() string { return fmt.Sprintf("https://127.0.0.1:%d", c.apiPort) }

// Binaries are the server binaries (and kubectl) this cluster runs.
func (c *Cluster) Binaries() Binaries { return c.bins }

// EtcdEndpoint is etcd's client URL (plain http on 127.0.0.1).
func (c *Cluster) EtcdEndpoint() string { return c.etcdURL }

// Config returns an admin (system:masters) client config for the apiserver.
func (c *Cluster) Config() *rest.Config {
	cfg, _ := c.UserConfig(adminUser)
	return cfg
}

// UserConfig returns a client config authenticating as one of Options.Users
// (or "admin"). Such a user has no RBAC permissions until a test grants some.
func (c *Cluster) UserConfig(user string) (*rest.Config, error) {
	tok, ok := c.tokens[user]
	if !ok {
		return nil, fmt.Errorf("user %q has no token: add it to Options.Users", user)
	}
	c.mu.Lock()
	ca := append([]byte(nil), c.caData...)
	c.mu.Unlock()
	return &rest.Config{
		Host:            c.URL(),
		BearerToken:     tok,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		QPS:             -1, // tests create thousands of objects; no client-side throttling
	}, nil
}

// Token returns the bearer token of a user (or "admin").
func (c *Cluster) Token(user string) string { return c.tokens[user] }

// Kubeconfig is the path of a kubeconfig file for the admin user (context "testcluster").
func (c *Cluster) Kubeconfig() string { return c.kubeconf }

// WriteKubeconfig writes cfg (host, CA, bearer token) as a kubeconfig with one
// context named "testcluster", mode 0600.
func WriteKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["testcluster"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["testcluster"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["testcluster"] = &clientcmdapi.Context{Cluster: "testcluster", AuthInfo: "testcluster", Namespace: "default"}
	kc.CurrentContext = "testcluster"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// Compact compacts etcd at its current revision (physically), so any older
// resourceVersion is gone from etcd's history. It returns that revision.
// If etcd was already compacted at that revision (nothing was written since
// the last compaction), that is the state asked for, and no error.
func (c *Cluster) Compact(ctx context.Context) (int64, error) {
	// An empty range over a key nobody uses returns the store's current revision in its header.
	var rng struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	key := base64.StdEncoding.EncodeToString([]byte("/watchcache-testcluster/revision-probe"))
	if err := c.etcdPost(ctx, "/v3/kv/range", map[string]any{"key": key}, &rng); err != nil {
		return 0, fmt.Errorf("reading etcd's revision: %w", err)
	}
	rev, err := strconv.ParseInt(rng.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parsing etcd revision %q: %w", rng.Header.Revision, err)
	}
	if err := c.etcdPost(ctx, "/v3/kv/compaction", map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}, nil); err != nil {
		if strings.Contains(err.Error(), "required revision has been compacted") {
			return rev, nil
		}
		return 0, fmt.Errorf("compacting etcd at revision %d: %w", rev, err)
	}
	return rev, nil
}

// MoveRevision writes a key of its own to etcd, so etcd's revision moves past
// every resourceVersion a client has seen (a compaction then removes them),
// even while kube-apiserver is down.
func (c *Cluster) MoveRevision(ctx context.Context) error {
	key := base64.StdEncoding.EncodeToString([]byte("/watchcache-testcluster/revision-mover"))
	value := base64.StdEncoding.EncodeToString([]byte(time.Now().String()))
	if err := c.etcdPost(ctx, "/v3/kv/put", map[string]any{"key": key, "value": value}, nil); err != nil {
		return fmt.Errorf("moving etcd's revision: %w", err)
	}
	return nil
}

// etcdTimeout bounds one etcd call: a caller passing a context without a
// deadline (a test's context.Background()) must not wait for ever on an
// etcd that stopped answering.
const etcdTimeout = time.Minute

func (c *Cluster) etcdPost(ctx context.Context, path string, body any, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encoding request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.etcdURL+path, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("building request: %w", err)
	}
	client := &http.Client{Timeout: cmp.Or(c.etcdTimeout, etcdTimeout)}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("posting %s: %w", path, err)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %d %s", path, resp.StatusCode, rb)
	}
	if out != nil {
		if err := json.Unmarshal(rb, out); err != nil {
			return fmt.Errorf("decoding etcd %s response: %w", path, err)
		}
	}
	return nil
}

// apiserverStopGrace is how long a stopping kube-apiserver gets before
// SIGKILL. On SIGTERM it stops listening at once and sends GOAWAY, but keeps
// open watches until it is killed; what a restart does to a client is the
// GOAWAY and then the cut, which a longer wait would only delay.
const apiserverStopGrace = 3 * time.Second

// RestartAPIServer stops kube-apiserver (SIGTERM, then SIGKILL) and starts it
// again on the same port against the same etcd, waiting until it is ready. Its
// watch cache starts empty, so a watch from an old resourceVersion may get 410.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return errors.New("restarting kube-apiserver: the cluster is stopped")
	}
	p := c.apiserver
	c.mu.Unlock()
	p.stop(apiserverStopGrace)
	if err := c.startAPIServer(ctx); err != nil {
		return fmt.Errorf("restarting kube-apiserver: %w", err)
	}
	return nil
}

// RestartCompacted restarts kube-apiserver with etcd compacted while it is
// down, past every resourceVersion a client has seen: the new apiserver's
// watch cache starts empty, and a watch from before gets 410 Gone.
// beforeStart, when set, runs just before kube-apiserver starts again.
func (c *Cluster) RestartCompacted(ctx context.Context, beforeStart func()) error {
	c.stopAPIServer()
	if err := c.MoveRevision(ctx); err != nil {
		return err
	}
	if _, err := c.Compact(ctx); err != nil {
		return err
	}
	if beforeStart != nil {
		beforeStart()
	}
	return c.startAPIServer(ctx)
}

// stopAPIServer stops kube-apiserver (and waits until it exited), leaving
// etcd running.
func (c *Cluster) stopAPIServer() {
	c.mu.Lock()
	p := c.apiserver
	c.mu.Unlock()
	p.stop(apiserverStopGrace)
}

// LogTail returns the last n lines of both servers' logs.
func (c *Cluster) LogTail(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("--- etcd log tail ---\n%s--- kube-apiserver log tail ---\n%s", c.etcd.tail(n), c.apiserver.tail(n))
}

// Stop kills both servers (their whole process groups) and removes the
// cluster's temporary directory. It is safe to call more than once.
func (c *Cluster) Stop() {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	c.stopped = true
	api, etcd, onStop, ports := c.apiserver, c.etcd, c.onStop, c.ports
	c.mu.Unlock()
	for _, f := range onStop {
		f()
	}
	api.stop(5 * time.Second)
	etcd.stop(5 * time.Second)
	for _, r := range ports {
		r.release()
	}
	c.sp.close()
	_ = os.RemoveAll(c.dir)
}

// PIDs returns the process ids of etcd and kube-apiserver (for leak checks).
func (c *Cluster) PIDs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var pids []int
	for _, p := range []*process{c.etcd, c.apiserver} {
		if p != nil && p.cmd.Process != nil {
			pids = append(pids, p.cmd.Process.Pid)
		}
	}
	return pids
}

// Dir is the cluster's temporary directory (removed by Stop).
func (c *Cluster) Dir() string { return c.dir }
