package cli

import (
	"cmp"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/outputs"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/probe"
	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui"
)

// WatchOptions are the flags of "kubectl watchcache RESOURCE".
type WatchOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	AllNamespaces        bool
	LabelSelector        string
	FieldSelector        string
	InitialList          string
	PageSize             int64
	ResourceVersion      string
	ResourceVersionMatch string
	WatchTimeout         time.Duration
	MetadataOnly         bool
	KeepObjects          bool
	Diff                 DiffFlags
	Wire                 string
	TraceFlags
	TraceRotation      TraceRotation
	Display            DisplayOptions
	Duration           time.Duration
	Once               bool
	GiveUpAfter        time.Duration
	MaxResources       int
	MaxConcurrentLists int
	Monitor            MonitorOptions
	// Probe is the namespace of the delivery probe's Lease ("" : no probe).
	Probe         string
	ProbeInterval time.Duration
	probeFlag     *pflag.Flag // to tell --probe "" from no --probe
	intervalFlag  *pflag.Flag // --probe-interval, which needs --probe
	ProbeCleanup  bool
	// identity names the plugin to the server (--user-agent).
	identity identity
	// monitor is the monitor command: no dashboard, JSON lines of what
	// matters, metrics and probes served at Listen.
	monitor bool
	Listen  string

	resourceArgs resourceList
	// kubectlWarned keeps the warnings kubectl's own code printed while
	// the resources resolved (a short name two resources share).
	kubectlWarned *keptWarning
	// isTerminal says whether stdout is a terminal (replaceable in tests).
	isTerminal func() bool
}

// keptWarning writes warnings to w and keeps the last one, for the
// dashboard's footer: the dashboard hides what was printed on stderr
// before it.
type keptWarning struct {
	w    io.Writer
	last string
}

func (k *keptWarning) Write(p []byte) (int, error) {
	k.last = strings.TrimSpace(strings.TrimPrefix(string(p), "Warning: "))
	return k.w.Write(p)
}

// NewWatchOptions returns the defaults.
func NewWatchOptions(streams genericiooptions.IOStreams) *WatchOptions {
	warned := &keptWarning{w: streams.ErrOut}
	return &WatchOptions{
		// Warnings as kubectl prints them: a short name that could also
		// mean another resource says so.
		ConfigFlags:   genericclioptions.NewConfigFlags(true).WithWarningPrinter(genericiooptions.IOStreams{ErrOut: warned}),
		kubectlWarned: warned,
		IOStreams:     streams,
		InitialList:   string(reflector.StrategyAuto),
		PageSize:      500,
		WatchTimeout:  5 * time.Minute,
		Wire:          string(reflector.WireAuto),
		GiveUpAfter:   30 * time.Second,
		MaxResources:  30,
		// MaxConcurrentLists: 4, as client-go's informers of one factory do not wait on each other,
		// but a tool started on "all" should not stampede the apiserver.
		MaxConcurrentLists: 4,
		ProbeInterval:      5 * time.Second,
		isTerminal:         func() bool { return isTerminal(streams.Out) },
	}
}

// AddFlags registers the flags on cmd.
func (o *WatchOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	o.ConfigFlags.AddFlags(f)
	o.identity.addFlags(f, o.ConfigFlags)
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Watch the resources in all namespaces")
	f.StringVarP(&o.LabelSelector, "selector", "l", "", "Label selector to filter on, as in kubectl get -l")
	f.StringVar(&o.FieldSelector, "field-selector", "", "Field selector to filter on, as in kubectl get --field-selector")
	completeConfigFlags(cmd, o.ConfigFlags)
	f.StringVar(&o.InitialList, "initial-list", o.InitialList, "How to get complete lists: auto (streaming list, falling back to LIST), list, or stream")
	f.Int64Var(&o.PageSize, "page-size", o.PageSize, "LIST page size (limit); 0 lists in one response")
	f.StringVar(&o.ResourceVersion, "resource-version", "", `resourceVersion of the first list: "" (consistent read), "0" (any), or a number`)
	f.StringVar(&o.ResourceVersionMatch, "resource-version-match", "", "resourceVersionMatch of the first list: Exact (a LIST, under --initial-list auto too) or NotOlderThan (needs --resource-version)")
	f.DurationVar(&o.WatchTimeout, "watch-timeout", o.WatchTimeout, "Base of the jittered server-side watch timeout (each watch asks for a random time in [T, 2T))")
	f.BoolVar(&o.MetadataOnly, "metadata-only", false, "Ask the server for metadata only (PartialObjectMetadata)")
	f.BoolVar(&o.KeepObjects, "keep-objects", false, "Keep each object's full JSON in the cache (shown in the object detail)")
	f.StringVar(&o.Wire, "wire", o.Wire, "Encoding to ask the server for: auto (protobuf for built-in resources and --metadata-only, JSON for custom resources and whenever full objects are kept or traced), protobuf, or json")
	o.TraceFlags.addFlags(cmd, "Record everything the reflector sees to this JSONL file (gzip if it ends in .gz)")
	// A monitor runs for weeks: its trace, if asked for, is bounded by default.
	maxTrace := "0"
	if o.monitor {
		maxTrace = "100Mi"
	}
	o.TraceRotation.addFlags(cmd, maxTrace)
	f.DurationVar(&o.Duration, "duration", 0, "Stop after this long (0: until interrupted)")
	f.BoolVar(&o.Once, "once", false, "Stop after the first complete list")
	f.IntVar(&o.MaxResources, "max-resources", o.MaxResources, "Refuse to watch more resources than this (a category such as all can name many)")
	f.IntVar(&o.MaxConcurrentLists, "max-concurrent-lists", o.MaxConcurrentLists, "How many resources make their first list at once")
	f.DurationVar(&o.GiveUpAfter, "give-up-after", o.GiveUpAfter, "Without the dashboard, fail when nothing has made progress for this long: no answer from the server and no watch open (0: retry forever)")
	f.StringVar(&o.Probe, "probe", "", "Measure delivery latency with a Lease of our own in this namespace: created, renewed every --probe-interval, watched, deleted at the end (needs get, create, update, delete, list and watch on Leases there)")
	o.probeFlag = f.Lookup("probe")
	f.DurationVar(&o.ProbeInterval, "probe-interval", o.ProbeInterval, "With --probe, the time between the probe's renewals of its Lease")
	o.intervalFlag = f.Lookup("probe-interval")
	f.BoolVar(&o.ProbeCleanup, "probe-cleanup", false, "With --probe, first delete the probe Leases that killed runs left in its namespace")
	o.Diff.addFlags(cmd, diffHelp+". Asks for JSON and holds each object's last version")
	o.Display.addFlags(cmd)
	o.Monitor.addFlags(cmd, false)
	for flag, values := range map[string][]string{
		"initial-list":           {"auto", "list", "stream"},
		"resource-version-match": {"Exact", "NotOlderThan"},
		"wire":                   {"auto", "protobuf", "json"},
	} {
		_ = cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
}

// Complete takes the resource arguments: one or more, each a resource, a
// comma-separated list of them, or a category.
func (o *WatchOptions) Complete(args []string) error {
	var err error
	example := "kubectl watchcache"
	if o.monitor {
		example = "kubectl watchcache monitor"
	}
	o.resourceArgs, err = resourceArgs(args, "watch", example)
	return err
}

// Validate checks the flags without contacting the server.
func (o *WatchOptions) Validate() error {
	if err := o.identity.validate(); err != nil {
		return err
	}
	if err := validateNamespaceFlag(o.ConfigFlags); err != nil {
		return err
	}
	if o.monitor {
		if err := o.validateMonitor(); err != nil {
			return err
		}
	}
	switch reflector.Strategy(o.InitialList) {
	case reflector.StrategyAuto, reflector.StrategyList, reflector.StrategyStream:
	default:
		return usageErrorf("invalid --initial-list %q: want auto, list or stream", o.InitialList)
	}
	if o.PageSize < 0 {
		return usageErrorf("invalid --page-size %d: must be 0 (no pagination) or more", o.PageSize)
	}
	switch o.ResourceVersionMatch {
	case "", "Exact", "NotOlderThan":
	default:
		return usageErrorf("invalid --resource-version-match %q: want Exact or NotOlderThan", o.ResourceVersionMatch)
	}
	if o.ResourceVersionMatch != "" && o.ResourceVersion == "" {
		return usageErrorf("--resource-version-match requires --resource-version")
	}
	if o.ResourceVersion != "" && !isNumber(o.ResourceVersion) {
		return usageErrorf(`invalid --resource-version %q: want "" (a consistent read), "0" (any) or a number`, o.ResourceVersion)
	}
	if o.ResourceVersionMatch == "Exact" && reflector.Strategy(o.InitialList) == reflector.StrategyStream {
		return usageErrorf("--resource-version-match Exact needs a LIST (--initial-list list or auto): a streaming list reads NotOlderThan only")
	}
	if o.WatchTimeout < time.Second {
		return usageErrorf("invalid --watch-timeout %s: must be at least 1s", o.WatchTimeout)
	}
	if o.Duration < 0 {
		return usageErrorf("invalid --duration %s: must not be negative", o.Duration)
	}
	if o.GiveUpAfter < 0 {
		return usageErrorf("invalid --give-up-after %s: must not be negative", o.GiveUpAfter)
	}
	if o.MaxResources < 1 {
		return usageErrorf("invalid --max-resources %d: must be at least 1", o.MaxResources)
	}
	if o.MaxConcurrentLists < 1 {
		return usageErrorf("invalid --max-concurrent-lists %d: must be at least 1", o.MaxConcurrentLists)
	}
	if err := o.TraceFlags.validate(o.ConfigFlags); err != nil {
		return err
	}
	switch reflector.Wire(o.Wire) {
	case reflector.WireAuto, reflector.WireJSON:
	case reflector.WireProtobuf:
		if o.KeepObjects || o.Diff.On || (o.Trace != "" && trace.ObjectMode(o.TraceObjects) == trace.ObjectsFull) {
			return usageErrorf("--wire protobuf cannot keep, diff or record full objects (--keep-objects, --diff, --trace-objects full): they are asked for in JSON")
		}
	default:
		return usageErrorf("invalid --wire %q: want auto, protobuf or json", o.Wire)
	}
	if err := o.Diff.validate(); err != nil {
		return err
	}
	if o.Diff.On && o.MetadataOnly {
		return usageErrorf("--diff needs whole objects: it cannot be used with --metadata-only")
	}
	if err := o.TraceRotation.validate(o.Trace); err != nil {
		return err
	}
	if err := o.validateProbe(); err != nil {
		return err
	}
	if err := o.Monitor.validate(); err != nil {
		return err
	}
	return o.Display.validate()
}

// isNumber says s is a resourceVersion the API server can read: a decimal
// number (etcd's revision).
func isNumber(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

// checkOutputPath refuses a path that flag names for a file to write, and
// that cannot be written, before connecting anywhere; and, with the run's
// kubeconfig flags, one of the kubeconfig files the run reads (a trace or
// the proxy's kubeconfig written over ~/.kube/config loses every context).
func checkOutputPath(flag, path string, kubeconfig *genericclioptions.ConfigFlags) error {
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		return usageErrorf("%s %s: is a directory", flag, path)
	}
	if err == nil && kubeconfig != nil {
		for _, kc := range kubeconfig.ToRawKubeConfigLoader().ConfigAccess().GetLoadingPrecedence() {
			if read, err := os.Stat(kc); err == nil && os.SameFile(fi, read) {
				return usageErrorf("%s %s: refusing to overwrite %s, a kubeconfig this run reads", flag, path, kc)
			}
		}
	}
	dir := filepath.Dir(path)
	if fi, err = os.Stat(dir); err != nil {
		return usageErrorf("%s %s: directory %s does not exist", flag, path, dir)
	}
	if !fi.IsDir() {
		return usageErrorf("%s %s: %s is not a directory", flag, path, dir)
	}
	return nil
}

// Run resolves the resources, runs one reflector for each and shows them.
func (o *WatchOptions) Run(ctx context.Context) error {
	if err := logAcrossDashboard(!o.Display.NoTUI && o.isTerminal(), logging(ctx), isTerminal(os.Stderr)); err != nil {
		return err
	}
	// Discovery must not hang on a black-holed server (connect bounds it); watches are not bound by its timeout.
	c, err := connect(o.ConfigFlags, o.resourceArgs, o.MaxResources, o.AllNamespaces, 15*time.Second)
	if err != nil {
		return err
	}
	restCfg, resources, ns := c.rest, c.resources, c.namespace
	// A name mistyped watches nothing, quietly: kubectl get says "No resources found".
	// The dashboard's footer says it too: the line on stderr is hidden under it.
	warning := warnMissingNamespace(ctx, o.ErrOut, restCfg, resources, ns, "nothing is in it to watch until it is created")
	useTUI := !o.Display.NoTUI && o.isTerminal()
	warning = cmp.Or(warning, o.kubectlWarned.last, o.Display.warnDashboardIgnores(o.ErrOut, useTUI))
	// The API server's warnings, as kubectl prints them; the dashboard
	// hides stderr, so they come once it has quit.
	apiWarned, handler := newAPIWarnings(o.ErrOut, useTUI)
	defer apiWarned.release()
	restCfg.WarningHandler = handler
	rc := o.reflectorConfig(useTUI)
	lc := session.LiveConfig{Rest: restCfg, TracePath: o.Trace, TraceRotation: o.TraceRotation.options(), MaxConcurrentLists: o.MaxConcurrentLists, FailFast: o.monitor}
	var pr *startedProbe
	if o.Probe != "" {
		// Before anything else: a probe that cannot run is an error before the run starts.
		if pr, err = o.startProbe(ctx, restCfg); err != nil {
			return err
		}
		defer pr.delete(o.ErrOut)
		resources = append(resources, probe.Leases())
	}
	for _, res := range resources {
		t := reflector.Target{Resource: res, LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector}
		if res.Namespaced {
			t.Namespace = ns
		}
		if pr != nil && len(lc.Resources) == len(resources)-1 {
			t = probe.Target(pr.Namespace(), pr.Name()) // the probe's Lease, and no other object
		}
		lc.Resources = append(lc.Resources, session.ResourceConfig{Target: t, Reflector: rc, MetadataOnly: o.MetadataOnly, KeepBodies: o.KeepObjects, Wire: reflector.Wire(o.Wire),
			TraceObjects: trace.ObjectMode(o.TraceObjects), UnsafeSecrets: o.TraceUnsafeSecrets, Diff: o.Diff.options()})
	}
	oo := o.Display.outputs(o.IOStreams, useTUI)
	oo.Monitor = o.Monitor.options()
	oo.Significant, oo.Monitor.Health = o.monitor, o.monitor
	outs, err := outputs.New(oo)
	if err != nil {
		return err
	}
	sess, err := session.NewLive(lc)
	if err != nil {
		return outs.Finish(err)
	}
	if pr != nil {
		pr.attach(sess, len(lc.Resources)-1)
	}
	if err := outs.Attach(sess); err != nil {
		return outs.Finish(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.Duration > 0 {
		runCtx, cancel = context.WithTimeout(runCtx, o.Duration)
		defer cancel()
	}
	if pr != nil {
		// On the run's context, which --duration, --once and a tripped rule
		// end: the dashboard kept after it must not renew the Lease that no
		// reflector watches any more (each renewal would count as lost).
		go pr.run(runCtx)
	}
	if o.Once {
		// Each reflector stops at its first list by itself (Config.Once);
		// this ends what runs beside them, the probe, once all have.
		go func() {
			if sess.WaitUntilReady(runCtx) == nil {
				cancel()
			}
		}()
	}
	kubeContext := ""
	if raw, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig(); err == nil {
		kubeContext = raw.CurrentContext
		if o.ConfigFlags.Context != nil && *o.ConfigFlags.Context != "" {
			kubeContext = *o.ConfigFlags.Context
		}
	}
	tuiOpts := tui.Options{Context: kubeContext, Server: session.ServerURL(restCfg), Trace: o.Trace, Warning: warning}
	// --once, --duration and a tripped rule end the session, not the
	// dashboard: it keeps the last screen until q (or ctx ends).
	return outs.Finish(outs.Run(runCtx, ctx, cancel, tuiOpts))
}

func newWatchCommand(streams genericiooptions.IOStreams, version string) (*WatchOptions, func(*cobra.Command, []string) error) {
	o := NewWatchOptions(streams)
	o.identity.version = version
	return o, runOptions(o)
}

// reflectorConfig is each resource's reflector configuration.
func (o *WatchOptions) reflectorConfig(useTUI bool) reflector.Config {
	strategy := reflector.Strategy(o.InitialList)
	if o.ResourceVersionMatch == "Exact" && strategy == reflector.StrategyAuto {
		// A streaming list reads NotOlderThan only: an exact read is a LIST.
		strategy = reflector.StrategyList
	}
	rc := reflector.Config{
		Strategy:             strategy,
		PageSize:             o.PageSize,
		ResourceVersion:      o.ResourceVersion,
		ResourceVersionMatch: o.ResourceVersionMatch,
		WatchTimeout:         o.WatchTimeout,
		Once:                 o.Once, // each reflector stops at its first complete list, with nothing after it
		// A forbidden request is retried once (RBAC may be propagating), on the
		// dashboard as in the line output: the same rule, the same second.
		MaxPermanentRetries: 1,
	}
	if !useTUI {
		// Without a screen to show the backoff, an unreachable server must end in an error.
		rc.GiveUpAfter = o.GiveUpAfter
	}
	return rc
}
