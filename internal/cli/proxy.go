package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubectlproxy "k8s.io/kubectl/pkg/proxy"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/fault"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/outputs"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/proxy"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/subjects"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui"
)

// ProxyOptions are the flags of "kubectl watchcache proxy".
type ProxyOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	Port            int
	Address         string
	AcceptHosts     string
	PrintKubeconfig string
	TraceFlags
	MetricsAddress string
	Duration       time.Duration
	// ForgetAfter is how long a client must have left before the proxy
	// forgets what it held (--forget-after).
	ForgetAfter time.Duration
	Display     DisplayOptions
	// Faults are the --fault specs as given, FaultTargets the
	// --fault-target values, FaultSeed seeds their @p.
	Faults       []string
	FaultTargets []string
	FaultSeed    int64
	Diff         DiffFlags

	// faults and faultTarget are Faults and FaultTargets parsed (Validate).
	faults      []fault.Spec
	faultTarget fault.Target

	// addressGiven says --address was on the command line: only then may the proxy bind beyond loopback.
	addressGiven bool
	// seedGiven says --fault-seed was: it needs a --fault to seed.
	seedGiven bool
	// identity names the proxy's own requests to the server (--user-agent);
	// its clients' requests keep their own User-Agent.
	identity identity
	// isTerminal says whether stdout is a terminal (replaceable in tests).
	isTerminal func() bool
	// listening, when set, is told the address the proxy serves on (tests).
	listening func(addr string)
}

// NewProxyOptions returns the defaults: kubectl proxy's.
func NewProxyOptions(streams genericiooptions.IOStreams) *ProxyOptions {
	return &ProxyOptions{
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		IOStreams:   streams,
		Port:        8001,
		Address:     "127.0.0.1",
		AcceptHosts: proxy.DefaultAcceptHosts,
		ForgetAfter: proxy.DefaultForgetAfter,
		isTerminal:  func() bool { return isTerminal(streams.Out) },
	}
}

func newProxyCommand(streams genericiooptions.IOStreams, version string) *cobra.Command {
	return proxyCommand(NewProxyOptions(streams), version)
}

// proxyCommand is the proxy command that parses its flags into o.
func proxyCommand(o *ProxyOptions, version string) *cobra.Command {
	o.identity.version = version
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "Run a kubectl proxy that shows what the reflectors of the programs behind it do",
		Long: "Run a proxy to the cluster of the current context, as \"kubectl proxy\" does (every request is sent with\n" +
			"your credentials), and watch every LIST and WATCH the programs behind it make: one row per client,\n" +
			"resource, namespace and selector, with the requests as sent, 410s, relists and their diff, bookmarks,\n" +
			"and the cache that client holds, rebuilt from what it received. Point a controller at it with the\n" +
			"kubeconfig it prints (or --print-kubeconfig FILE).\n\n" +
			"Anyone who can connect to the proxy acts on the cluster with your credentials: it binds 127.0.0.1\n" +
			"unless --address says otherwise, and answers 403 to a Host header --accept-hosts does not match.",
		Example: "  kubectl watchcache proxy --print-kubeconfig proxy.kubeconfig\n" +
			"  KUBECONFIG=proxy.kubeconfig ./my-controller\n" +
			"  kubectl watchcache proxy --port 8002 --no-tui --trace controller.jsonl\n" +
			"  # test a controller against watch faults: lost deletes, then a 410 and a relist every 20s\n" +
			"  kubectl watchcache proxy --print-kubeconfig proxy.kubeconfig --fault drop-deletes --fault gone@every=20s \\\n" +
			"      --fault-target pods --no-tui --summary -o json --duration 2m",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("proxy takes no arguments, got %q", args)
			}
			return nil
		},
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.addressGiven, o.seedGiven = cmd.Flags().Changed("address"), cmd.Flags().Changed("fault-seed")
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	o.ConfigFlags.AddFlags(f)
	o.identity.addFlags(f, o.ConfigFlags)
	completeConfigFlags(cmd, o.ConfigFlags)
	f.IntVarP(&o.Port, "port", "p", o.Port, "The port to serve on; 0 picks a free one")
	f.StringVar(&o.Address, "address", o.Address, "The IP address to serve on. Anything but a loopback address lets whoever reaches it act with your credentials")
	f.StringVar(&o.AcceptHosts, "accept-hosts", o.AcceptHosts, "Regular expressions (comma-separated) the Host header must match; other hosts get 403")
	f.StringVar(&o.PrintKubeconfig, "print-kubeconfig", "", "Write a kubeconfig that points at the proxy to this file (mode 0600)")
	o.TraceFlags.addFlags(cmd, "Record every observed LIST and WATCH to this JSONL file (gzip if it ends in .gz); replay it with \"kubectl watchcache replay\"")
	f.StringVar(&o.MetricsAddress, "metrics-address", "", "Serve Prometheus metrics at http://HOST:PORT/metrics: one set per client (User-Agent), resource, namespace and selector")
	f.DurationVar(&o.Duration, "duration", 0, "Stop after this long (0: until interrupted)")
	f.DurationVar(&o.ForgetAfter, "forget-after", o.ForgetAfter, "Forget what a client that left held once it has been gone this long (its stream keeps its counts; if it comes back, it is a new stream)")
	f.StringArrayVar(&o.Faults, "fault", nil, "Inject a watch fault into the traffic, NAME[=VALUE][@every=D|@after=D][@p=F] (repeatable): "+
		joinNames(fault.Names())+". Each is noted in the stream's log, the trace and the summary's faults")
	_ = cmd.RegisterFlagCompletionFunc("fault", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var names []string
		for _, n := range fault.Names() {
			names = append(names, string(n))
		}
		return names, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
	f.StringArrayVar(&o.FaultTargets, "fault-target", nil, "Limit --fault to these resources (pods, deployments.apps) and clients (client=USER-AGENT-SUBSTRING), comma-separated (repeatable)")
	f.Int64Var(&o.FaultSeed, "fault-seed", 1, "Seed of the random draws of --fault's @p (one seed, the same draws)")
	o.Diff.addFlags(cmd, diffHelp+", of every JSON stream of whole objects a client receives (protobuf, metadata-only and table streams are not diffed); holds each object's last version")
	o.Display.addFlags(cmd)
	return cmd
}

// listenAddress is where the proxy binds.
func (o *ProxyOptions) listenAddress() string {
	return net.JoinHostPort(o.Address, strconv.Itoa(o.Port))
}

// Validate checks the flags without contacting the server.
func (o *ProxyOptions) Validate() error {
	if err := o.identity.validate(); err != nil {
		return err
	}
	// The proxy forwards every namespace's requests, but a name no
	// namespace can have is a mistake worth saying, as for a watch.
	if err := validateNamespaceFlag(o.ConfigFlags); err != nil {
		return err
	}
	if o.Port < 0 || o.Port > 65535 {
		return usageErrorf("invalid --port %d: want 0 to 65535", o.Port)
	}
	if o.Address == "" {
		return usageErrorf("invalid --address \"\": want an IP address (0.0.0.0 serves on every interface)")
	}
	loopback, err := metrics.IsLoopback(o.listenAddress())
	if err != nil {
		return usageErrorf("invalid --address %q: %w", o.Address, err)
	}
	if !loopback && !o.addressGiven {
		return usageErrorf("refusing to serve on %s, which is not a loopback address, without an explicit --address: whoever reaches the proxy acts with your credentials", o.listenAddress())
	}
	if _, err := kubectlproxy.MakeRegexpArray(o.AcceptHosts); err != nil {
		return usageErrorf("invalid --accept-hosts %q: %w", o.AcceptHosts, err)
	}
	if err := o.TraceFlags.validate(o.ConfigFlags); err != nil {
		return err
	}
	if o.PrintKubeconfig != "" {
		if err := checkOutputPath("--print-kubeconfig", o.PrintKubeconfig, o.ConfigFlags); err != nil {
			return err
		}
	}
	if o.Duration < 0 {
		return usageErrorf("invalid --duration %s: must not be negative", o.Duration)
	}
	if err := checkMetricsAddress("--metrics-address", o.MetricsAddress); err != nil {
		return err
	}
	if o.ForgetAfter <= 0 {
		return usageErrorf("invalid --forget-after %s: must be positive", o.ForgetAfter)
	}
	o.faults = nil
	for _, raw := range o.Faults {
		spec, err := fault.Parse(raw)
		if err != nil {
			return usageErrorf("invalid --fault %q: %w\n%s", raw, err, fault.Usage())
		}
		o.faults = append(o.faults, spec)
	}
	target, err := fault.ParseTarget(o.FaultTargets)
	if err != nil {
		return usageErrorf("invalid --fault-target: %w", err)
	}
	if len(o.FaultTargets) > 0 && len(o.faults) == 0 {
		return usageErrorf("--fault-target needs --fault")
	}
	if o.seedGiven && len(o.faults) == 0 {
		return usageErrorf("--fault-seed needs --fault")
	}
	o.faultTarget = target
	if err := o.Diff.validate(); err != nil {
		return err
	}
	return o.Display.validate()
}

// Run serves the proxy until ctx ends (or --duration).
func (o *ProxyOptions) Run(ctx context.Context) error {
	if err := logAcrossDashboard(!o.Display.NoTUI && o.isTerminal(), logging(ctx), isTerminal(os.Stderr)); err != nil {
		return err
	}
	if err := checkKubeconfig(o.ConfigFlags); err != nil {
		return err
	}
	restCfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return err
	}
	hosts, _ := kubectlproxy.MakeRegexpArray(o.AcceptHosts)
	useTUI := !o.Display.NoTUI && o.isTerminal()
	// The streams announce themselves on the clients' goroutines while this
	// one says where it serves: one writer at a time.
	o.ErrOut = &lockedWriter{w: o.ErrOut}

	oo := o.Display.outputs(o.IOStreams, useTUI)
	oo.Monitor.MetricsAddress = o.MetricsAddress
	outs, err := outputs.New(oo)
	if err != nil {
		return err
	}
	diffOpts := o.Diff.options()
	sess, err := session.NewObserved(session.ObservedConfig{Rest: restCfg, TracePath: o.Trace, TraceObjects: trace.ObjectMode(o.TraceObjects), UnsafeSecrets: o.TraceUnsafeSecrets, Diff: diffOpts})
	if err != nil {
		return outs.Finish(err)
	}
	if err := outs.Attach(sess); err != nil {
		return outs.Finish(err)
	}
	p, err := proxy.New(proxy.Options{Config: restCfg, AcceptHosts: hosts, OnStream: sess.Observe, KeepRaw: sess.Recorder != nil || o.Diff.On,
		OnFlowControlNames: sess.FlowControlNames, ForgetAfter: o.ForgetAfter, Faults: o.faults, FaultTarget: o.faultTarget, FaultSeed: o.FaultSeed})
	if err != nil {
		return outs.Finish(errors.Join(err, sess.Run(cancelled())))
	}
	ln, err := net.Listen("tcp", o.listenAddress())
	if err != nil {
		p.Close()
		return outs.Finish(errors.Join(fmt.Errorf("--address %s --port %d: %w", o.Address, o.Port, err), sess.Run(cancelled())))
	}
	addr := ln.Addr().String()
	// Said as the address asked for, with the port the listener has (not
	// the 0 that --port 0 asked for): the listener names 0.0.0.0 "[::]"
	// (one socket serves IPv4 and IPv6), which the user did not write.
	_, port, _ := net.SplitHostPort(addr)
	served := net.JoinHostPort(o.Address, port)
	srv := p.NewServer() // it follows its clients' connections
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	fmt.Fprintf(o.ErrOut, "Starting to serve on %s\n", served)
	if loopback, _ := metrics.IsLoopback(o.listenAddress()); !loopback {
		fmt.Fprintf(o.ErrOut, "warning: serving on %s, which is not a loopback address: anyone who can reach it acts on %s with your credentials\n", served, restCfg.Host)
	}
	warning := o.Display.warnDashboardIgnores(o.ErrOut, useTUI)
	for _, w := range p.FaultTargetWarnings() {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
		warning = cmp.Or(warning, w)
	}
	if len(o.faults) > 0 {
		into := ""
		if len(o.FaultTargets) > 0 {
			into = " into --fault-target " + strings.Join(o.FaultTargets, " --fault-target ")
		}
		fmt.Fprintf(o.ErrOut, "injecting faults: --fault %s%s\n", strings.Join(o.Faults, " --fault "), into)
	}
	server := "http://" + metrics.ClientAddress(ln.Addr(), o.Address)
	kc := proxyKubeconfig(server, contextNamespace(o.ConfigFlags))
	if o.PrintKubeconfig != "" {
		if err := writeKubeconfig(o.PrintKubeconfig, kc); err != nil {
			_ = srv.Close()
			p.Close()
			return outs.Finish(errors.Join(err, sess.Run(cancelled())))
		}
		fmt.Fprintf(o.ErrOut, "kubeconfig written to %s: KUBECONFIG=%s ./my-controller\n", o.PrintKubeconfig, o.PrintKubeconfig)
	} else if !useTUI {
		b, _ := clientcmd.Write(*kc)
		fmt.Fprintf(o.ErrOut, "# a kubeconfig for the programs to observe (or --print-kubeconfig FILE):\n%s", b)
	}
	if o.listening != nil {
		o.listening(addr)
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.Duration > 0 {
		runCtx, cancel = context.WithTimeout(runCtx, o.Duration)
		defer cancel()
	}
	// The session serves until the run ends; the streams' summaries follow.
	sess.Serve(func(ctx context.Context) error {
		var err error
		select {
		case <-ctx.Done():
		case serr := <-serveErr:
			err = fmt.Errorf("serving: %w", serr)
		}
		p.Stopping()
		_ = srv.Close()
		p.Close()
		if !o.warnUnmatchedTarget(p.FaultTarget(), sess.Subjects()) {
			o.warnIdleFaults(sess.Subjects())
		}
		return err
	})
	kind := subjects.Of(sess.Header).Dashboard // its source is known once listening
	kind.Source = "proxy " + served
	opts := tui.Options{Server: session.ServerURL(restCfg), Trace: o.Trace, Kind: kind, Connect: connectLines(server, o.PrintKubeconfig, kc), Warning: warning}
	return outs.Finish(outs.Run(runCtx, runCtx, cancel, opts))
}

// warnUnmatchedTarget warns, at the end of a run, when --fault-target (t,
// as the proxy resolved it) matched none of the streams the proxy
// observed: no fault acted. It says whether it warned.
func (o *ProxyOptions) warnUnmatchedTarget(t fault.Target, subs []session.Subject) bool {
	if len(o.faults) == 0 || len(t.Resources) == 0 && len(t.Clients) == 0 {
		return false
	}
	for _, sub := range subs {
		_, client := sub.Describe()
		gvr := sub.Target().Resource.GVR
		if t.Matches(fault.GroupResource{Group: gvr.Group, Resource: gvr.Resource}, client.UserAgent) {
			return false
		}
	}
	fmt.Fprintf(o.ErrOut, "warning: --fault-target %s matched none of the %s the proxy observed: no fault acted\n", strings.Join(o.FaultTargets, " --fault-target "), format.PluralUngrouped(len(subs), "stream"))
	return true
}

// warnIdleFaults warns, at the end of a run, of each --fault that acted on
// no stream: a test of a controller against it tested nothing (a
// scheduled fault meets only what is open or comes after each firing, and
// an informer's watch lasts minutes; stale resends no object deleted since).
func (o *ProxyOptions) warnIdleFaults(subs []session.Subject) {
	acted := map[string]bool{}
	for _, sub := range subs {
		for _, f := range sub.Stats().Faults {
			acted[f.Fault] = true
		}
	}
	for _, f := range o.faults {
		if !acted[f.Raw] {
			fmt.Fprintf(o.ErrOut, "warning: --fault %s acted on none of the %s the proxy observed (README: \"Testing a controller against watch faults\" says when each acts)\n", f.Raw, format.PluralUngrouped(len(subs), "stream"))
		}
	}
}

// joinNames is "a, b or c".
func joinNames(names []fault.Name) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// cancelled is a context already ended: a session that never served is run
// only to close what it opened (its trace).
func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// connectLines tell, on the dashboard with no stream listed, how a program
// reaches the proxy at server: the kubeconfig file written (file), or one
// to write, inline.
func connectLines(server, file string, kc *clientcmdapi.Config) []string {
	// The most useful first on each line: a narrow screen cuts the end.
	head := "the proxy serves on " + server
	if file != "" {
		return []string{head, "KUBECONFIG=" + file + " ./my-controller  (the kubeconfig --print-kubeconfig wrote)"}
	}
	out := []string{head, "KUBECONFIG=FILE ./my-controller  with this kubeconfig as FILE (or --print-kubeconfig FILE):"}
	b, _ := clientcmd.Write(*kc)
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if l != "preferences: {}" { // empty: a line less, so that it fits 80x24
			out = append(out, "    "+l)
		}
	}
	return out
}

// proxyKubeconfig is a kubeconfig for programs that go through the proxy at server:
// no credentials (the proxy adds the user's), and the namespace of the
// user's context or -n, as a program run with the user's own kubeconfig has.
func proxyKubeconfig(server, namespace string) *clientcmdapi.Config {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["watchcache-proxy"] = &clientcmdapi.Cluster{Server: server}
	kc.AuthInfos["watchcache-proxy"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["watchcache-proxy"] = &clientcmdapi.Context{Cluster: "watchcache-proxy", AuthInfo: "watchcache-proxy", Namespace: namespace}
	kc.CurrentContext = "watchcache-proxy"
	return kc
}

// contextNamespace is the namespace of the user's context, or -n: "" for
// default (the same, a line less).
func contextNamespace(flags *genericclioptions.ConfigFlags) string {
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil || ns == metav1.NamespaceDefault {
		return ""
	}
	return ns
}

// writeKubeconfig writes kc to path with mode 0600, whole or not at all,
// so that a controller that starts as soon as the file appears never reads
// half of it (a FIFO or /dev/stdout is written as it is: writeFileAtomically).
func writeKubeconfig(path string, kc *clientcmdapi.Config) error {
	b, err := clientcmd.Write(*kc)
	if err == nil {
		err = writeFileAtomically(path, func(w io.Writer) error { _, err := w.Write(b); return err })
	}
	if err != nil {
		return fmt.Errorf("--print-kubeconfig %s: %w", path, err)
	}
	return nil
}

// lockedWriter serializes writes from several goroutines to one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
