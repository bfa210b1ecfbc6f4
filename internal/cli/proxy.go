package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubectlproxy "k8s.io/kubectl/pkg/proxy"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/lines"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/metrics"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/observed"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/proxy"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/summary"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui"
)

// ProxyOptions are the flags of "kubectl watchcache proxy".
type ProxyOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	Port               int
	Address            string
	AcceptHosts        string
	PrintKubeconfig    string
	Trace              string
	TraceObjects       string
	TraceUnsafeSecrets bool
	MetricsAddress     string
	Duration           time.Duration
	Display            DisplayOptions

	// addressGiven says --address was on the command line: only then may the proxy bind beyond loopback.
	addressGiven bool
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
		ConfigFlags:  genericclioptions.NewConfigFlags(true),
		IOStreams:    streams,
		Port:         8001,
		Address:      "127.0.0.1",
		AcceptHosts:  proxy.DefaultAcceptHosts,
		TraceObjects: string(trace.ObjectsMetadata),
		isTerminal:   func() bool { return isTerminal(streams.Out) },
	}
}

func newProxyCommand(streams genericiooptions.IOStreams, version string) *cobra.Command {
	o := NewProxyOptions(streams)
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
			"  kubectl watchcache proxy --port 8002 --no-tui --trace controller.jsonl",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("proxy takes no arguments, got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.addressGiven = cmd.Flags().Changed("address")
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	o.ConfigFlags.AddFlags(f)
	o.identity.addFlags(f, o.ConfigFlags)
	f.IntVarP(&o.Port, "port", "p", o.Port, "The port to serve on; 0 picks a free one")
	f.StringVar(&o.Address, "address", o.Address, "The IP address to serve on. Anything but a loopback address lets whoever reaches it act with your credentials")
	f.StringVar(&o.AcceptHosts, "accept-hosts", o.AcceptHosts, "Regular expressions (comma-separated) the Host header must match; other hosts get 403")
	f.StringVar(&o.PrintKubeconfig, "print-kubeconfig", "", "Write a kubeconfig that points at the proxy to this file (mode 0600)")
	f.StringVar(&o.Trace, "trace", "", "Record every observed LIST and WATCH to this JSONL file (gzip if it ends in .gz); replay it with \"kubectl watchcache replay\"")
	f.StringVar(&o.TraceObjects, "trace-objects", o.TraceObjects, "How much of each object the trace keeps: none, metadata or full")
	f.BoolVar(&o.TraceUnsafeSecrets, "trace-unsafe-secrets", false, "Record Secret values in the trace instead of REDACTED (dangerous)")
	f.StringVar(&o.MetricsAddress, "metrics-address", "", "Serve Prometheus metrics, one set per observed stream, at http://HOST:PORT/metrics")
	f.DurationVar(&o.Duration, "duration", 0, "Stop after this long (0: until interrupted)")
	o.Display.addFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("trace-objects", cobra.FixedCompletions([]string{"none", "metadata", "full"}, cobra.ShellCompDirectiveNoFileComp))
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
	if o.Port < 0 || o.Port > 65535 {
		return usageErrorf("invalid --port %d: want 0 to 65535", o.Port)
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
	switch trace.ObjectMode(o.TraceObjects) {
	case trace.ObjectsNone, trace.ObjectsMetadata, trace.ObjectsFull:
	default:
		return usageErrorf("invalid --trace-objects %q: want none, metadata or full", o.TraceObjects)
	}
	if o.TraceUnsafeSecrets && o.Trace == "" {
		return usageErrorf("--trace-unsafe-secrets needs --trace")
	}
	if o.Trace != "" {
		if err := checkTracePath(o.Trace); err != nil {
			return err
		}
	}
	if o.Duration < 0 {
		return usageErrorf("invalid --duration %s: must not be negative", o.Duration)
	}
	if o.Display.Summary && !o.Display.NoTUI && o.isTerminal() {
		return usageErrorf("--summary needs --no-tui")
	}
	return o.Display.validate()
}

// streamName names a stream on every line and row: its resource, namespace,
// selectors and number.
func streamName(s *observed.Stream) string {
	n := s.Target.Resource.String()
	if s.Target.Namespace != "" {
		n += "@" + s.Target.Namespace
	}
	return fmt.Sprintf("%s#%d", n, s.ID)
}

// Run serves the proxy until ctx ends (or --duration).
func (o *ProxyOptions) Run(ctx context.Context) error {
	if err := checkKubeconfig(o.ConfigFlags); err != nil {
		return err
	}
	restCfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return err
	}
	hosts, _ := kubectlproxy.MakeRegexpArray(o.AcceptHosts)
	useTUI := !o.Display.NoTUI && o.isTerminal()
	if loopback, _ := metrics.IsLoopback(o.listenAddress()); !loopback {
		fmt.Fprintf(o.ErrOut, "warning: serving on %s, which is not a loopback address: anyone who can reach it acts on %s with your credentials\n", o.listenAddress(), restCfg.Host)
	}

	var rec *trace.Recorder
	if o.Trace != "" {
		h := trace.Header{StartedAt: time.Now(), Tool: "kubectl-watchcache proxy", Server: session.ServerURL(restCfg), Observed: true}
		if dc, err := discovery.NewDiscoveryClientForConfig(restCfg); err == nil {
			if v, err := dc.ServerVersion(); err == nil {
				h.ServerVersion = v.GitVersion
			}
		}
		if rec, err = trace.Create(o.Trace, h); err != nil {
			return err
		}
	}
	var met *metrics.Metrics
	var metSrv *metrics.Server
	if o.MetricsAddress != "" {
		if loopback, _ := metrics.IsLoopback(o.MetricsAddress); !loopback {
			fmt.Fprintf(o.ErrOut, "warning: --metrics-address %s is not a loopback address: the metrics are reachable from other hosts\n", o.MetricsAddress)
		}
		met = metrics.NewObserved()
		if metSrv, err = metrics.Serve(o.MetricsAddress, met); err != nil {
			return fmt.Errorf("--metrics-address %s: %w", o.MetricsAddress, err)
		}
		defer metSrv.Close()
		fmt.Fprintf(o.ErrOut, "serving metrics at %s\n", metSrv.URL())
	}

	outs := newObservedOutputs(o.IOStreams, useTUI, o.Display.Output == "json", met, time.Now)
	outs.rec, outs.objects, outs.unsafeSecrets = rec, trace.ObjectMode(o.TraceObjects), o.TraceUnsafeSecrets
	onStream := outs.onStream
	p, err := proxy.New(proxy.Options{Config: restCfg, AcceptHosts: hosts, OnStream: onStream, KeepRaw: rec != nil})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listenAddress())
	if err != nil {
		return fmt.Errorf("--address %s --port %d: %w", o.Address, o.Port, err)
	}
	addr := ln.Addr().String()
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	fmt.Fprintf(o.ErrOut, "Starting to serve on %s\n", addr)
	kc := proxyKubeconfig("http://" + clientAddress(ln.Addr(), o.Address))
	if o.PrintKubeconfig != "" {
		if err := writeKubeconfig(o.PrintKubeconfig, kc); err != nil {
			_ = srv.Close()
			return err
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
	var runErr error
	if useTUI {
		opts := tui.Options{Server: session.ServerURL(restCfg), Trace: o.Trace, Observed: "proxy " + addr, Added: outs.added}
		runErr = tui.Run(runCtx, opts, nil, o.In, o.Out)
	} else {
		select {
		case <-runCtx.Done():
		case err := <-serveErr:
			runErr = fmt.Errorf("serving: %w", err)
		}
	}
	_ = srv.Close()
	p.Close()
	outs.close()
	if o.Display.Summary {
		runErr = errors.Join(runErr, writeObservedSummaries(o.Out, p.Streams(), time.Now, o.Display.Output == "json"))
	}
	if rec != nil {
		if err := rec.Close(); err != nil {
			runErr = errors.Join(runErr, err)
		} else {
			fmt.Fprintf(o.ErrOut, "trace written to %s\n", o.Trace)
		}
	}
	return errors.Join(runErr, outs.err())
}

// observedOutputs are where observed streams go: the line output or the
// dashboard, the trace, the metrics. The proxy and the replay of its
// traces share them.
type observedOutputs struct {
	streams       genericiooptions.IOStreams
	useTUI        bool
	out           *lines.Output
	added         chan tui.Resource
	rec           *trace.Recorder
	objects       trace.ObjectMode
	unsafeSecrets bool
	met           *metrics.Metrics
	now           func() time.Time

	mu   sync.Mutex
	errs error
}

func newObservedOutputs(streams genericiooptions.IOStreams, useTUI, asJSON bool, met *metrics.Metrics, now func() time.Time) *observedOutputs {
	x := &observedOutputs{streams: streams, useTUI: useTUI, met: met, now: now, added: make(chan tui.Resource, 1024)}
	if !useTUI {
		x.out = lines.NewOutput(streams.Out, asJSON)
	}
	return x
}

// onStream hands a new stream to every output; it runs before the stream is fed.
func (x *observedOutputs) onStream(s *observed.Stream) {
	name := streamName(s)
	var notes *tui.NoteBuffer
	if x.out != nil {
		s.OnNote(x.out.For(name))
		fmt.Fprintf(x.streams.ErrOut, "stream %s: %s from %s (%s)\n", name, describeTarget(s.Target), s.Client.RemoteAddr, s.Client.UserAgent)
	} else {
		notes = tui.NewNoteBuffer(tui.DefaultNoteBuffer)
		s.OnNote(notes.Push)
	}
	if x.rec != nil {
		rh := trace.ResourceHeader{Resource: s.Target.Resource, Namespace: s.Target.Namespace, LabelSelector: s.Target.LabelSelector, FieldSelector: s.Target.FieldSelector,
			Objects: x.objects, Options: trace.Options{UnsafeSecrets: x.unsafeSecrets}}
		if i, err := x.rec.AddResource(rh, trace.Client{UserAgent: s.Client.UserAgent, RemoteAddr: s.Client.RemoteAddr}); err == nil {
			s.Record(x.rec.Observed(i))
			s.OnNote(x.rec.Notes(i))
		}
	}
	if x.met != nil {
		mres, err := x.met.Add(metrics.Labels{Resource: s.Target.Resource.String(), Namespace: s.Target.Namespace, LabelSelector: s.Target.LabelSelector, FieldSelector: s.Target.FieldSelector,
			Client: clientLabel(s)})
		if err != nil {
			x.mu.Lock()
			x.errs = errors.Join(x.errs, err)
			x.mu.Unlock()
		} else {
			s.OnNote(mres.Note)
			mres.Attach(metrics.Source{Stats: s.Stats, Counters: s.Counters, Store: s.Store().Counters, Now: x.now})
		}
	}
	if notes != nil {
		select {
		case x.added <- observedView(s, notes):
		default:
			x.mu.Lock()
			x.errs = errors.Join(x.errs, fmt.Errorf("the dashboard could not take stream %s: more than %d streams at once", name, cap(x.added)))
			x.mu.Unlock()
		}
	}
}

// close flushes the line output.
func (x *observedOutputs) close() {
	if x.out != nil {
		if dropped := x.out.Close(); dropped > 0 {
			fmt.Fprintf(x.streams.ErrOut, "warning: %d output lines were dropped because the output could not keep up\n", dropped)
		}
	}
}

// err is what went wrong giving streams their outputs.
func (x *observedOutputs) err() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.errs
}

// clientLabel is a stream's client in the metrics: its User-Agent and stream number.
func clientLabel(s *observed.Stream) string {
	return fmt.Sprintf("%s #%d", s.Client.UserAgent, s.ID)
}

// describeTarget says what a stream watches, for people.
func describeTarget(t reflector.Target) string {
	return newMonitored(t).name
}

// observedView is a stream as the dashboard shows it.
func observedView(s *observed.Stream, notes *tui.NoteBuffer) tui.Resource {
	// No ForceRelist and no Audit: the dashboard says they are not available for an observed reflector.
	return tui.Resource{Target: s.Target, Client: s.Client.UserAgent + " " + s.Client.RemoteAddr, Feed: tui.Feed{Stats: s.Stats, Store: s.Store(), Notes: notes}}
}

// writeObservedSummaries prints each stream's summary, as the watch command does.
func writeObservedSummaries(w io.Writer, streams []*observed.Stream, now func() time.Time, asJSON bool) error {
	sums := make([]summary.Summary, 0, len(streams))
	for _, s := range streams {
		sum := summary.New(s.Target.Resource, s.Stats(), s.Store(), now())
		sum.Stream = &summary.StreamSummary{ID: s.ID, Namespace: s.Target.Namespace, LabelSelector: s.Target.LabelSelector, FieldSelector: s.Target.FieldSelector,
			UserAgent: s.Client.UserAgent, RemoteAddr: s.Client.RemoteAddr}
		sums = append(sums, sum)
	}
	if len(sums) == 0 {
		if asJSON {
			return summary.WriteAllJSON(w, sums)
		}
		_, err := io.WriteString(w, "no LIST or WATCH was observed\n")
		return err
	}
	if asJSON {
		return summary.WriteAllJSON(w, sums)
	}
	return writeSummaries(w, sums, false)
}

// clientAddress is the address a local client reaches the proxy at: the
// bound one, or loopback when the proxy binds every interface (a client's
// Host must pass --accept-hosts, which 0.0.0.0 does not by default).
func clientAddress(a net.Addr, asked string) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	// Go binds both families for 0.0.0.0; the family asked for decides.
	if ip := net.ParseIP(asked); ip != nil && ip.To4() == nil {
		return net.JoinHostPort("::1", strconv.Itoa(tcp.Port))
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}

// proxyKubeconfig is a kubeconfig for programs that go through the proxy at server:
// no credentials (the proxy adds the user's).
func proxyKubeconfig(server string) *clientcmdapi.Config {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["watchcache-proxy"] = &clientcmdapi.Cluster{Server: server}
	kc.AuthInfos["watchcache-proxy"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["watchcache-proxy"] = &clientcmdapi.Context{Cluster: "watchcache-proxy", AuthInfo: "watchcache-proxy"}
	kc.CurrentContext = "watchcache-proxy"
	return kc
}

// writeKubeconfig writes kc to path with mode 0600.
func writeKubeconfig(path string, kc *clientcmdapi.Config) error {
	b, err := clientcmd.Write(*kc)
	if err != nil {
		return fmt.Errorf("--print-kubeconfig %s: %w", path, err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("--print-kubeconfig %s: %w", path, err)
	}
	// WriteFile keeps the mode of a file that exists.
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("--print-kubeconfig %s: %w", path, err)
	}
	return nil
}
