package cli

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// TraceFlags are --trace and the flags that say what it keeps, shared by
// watch and proxy.
type TraceFlags struct {
	// Trace is --trace, the file to record to ("": none).
	Trace string
	// TraceObjects is --trace-objects: none, metadata or full.
	TraceObjects string
	// TraceUnsafeSecrets is --trace-unsafe-secrets.
	TraceUnsafeSecrets bool

	objectsFlag *pflag.Flag
}

// addFlags registers the flags; usage is --trace's.
func (t *TraceFlags) addFlags(cmd *cobra.Command, usage string) {
	f := cmd.Flags()
	t.TraceObjects = string(trace.ObjectsMetadata)
	f.StringVar(&t.Trace, "trace", "", usage)
	f.StringVar(&t.TraceObjects, "trace-objects", t.TraceObjects, "How much of each object the trace keeps: none, metadata or full")
	t.objectsFlag = f.Lookup("trace-objects")
	f.BoolVar(&t.TraceUnsafeSecrets, "trace-unsafe-secrets", false, "Record Secret values in the trace's objects instead of REDACTED (dangerous; --diff never shows them)")
	_ = cmd.RegisterFlagCompletionFunc("trace-objects", cobra.FixedCompletions([]string{"none", "metadata", "full"}, cobra.ShellCompDirectiveNoFileComp))
}

// validate checks the flags without touching the file; kubeconfig are the
// run's (the trace must not replace a kubeconfig it reads).
func (t *TraceFlags) validate(kubeconfig *genericclioptions.ConfigFlags) error {
	switch trace.ObjectMode(t.TraceObjects) {
	case trace.ObjectsNone, trace.ObjectsMetadata, trace.ObjectsFull:
	default:
		return usageErrorf("invalid --trace-objects %q: want none, metadata or full", t.TraceObjects)
	}
	if t.TraceUnsafeSecrets && t.Trace == "" {
		return usageErrorf("--trace-unsafe-secrets needs --trace")
	}
	if t.Trace == "" && t.objectsFlag != nil && t.objectsFlag.Changed {
		return usageErrorf("--trace-objects needs --trace")
	}
	if t.Trace == "" {
		return nil
	}
	return checkOutputPath("--trace", t.Trace, kubeconfig)
}

// minTraceSegment is the smallest --trace-max-size: a segment holds a
// header and every resource's cache, and a smaller one would rotate at
// every resume.
const minTraceSegment = 64 << 10

// minTraceSegmentText is minTraceSegment as --trace-max-size takes it: the
// flag's help and its error say it alike.
func minTraceSegmentText() string {
	return resource.NewQuantity(minTraceSegment, resource.BinarySI).String()
}

// TraceRotation are the flags that bound a trace on disk.
type TraceRotation struct {
	// MaxSize is --trace-max-size as given ("" or "0": no bound).
	MaxSize string
	// Keep is --trace-keep: the earlier segments kept.
	Keep int

	maxBytes          int64
	maxFlag, keepFlag *pflag.Flag
}

// addFlags registers the flags; the monitor bounds its trace by default.
func (t *TraceRotation) addFlags(cmd *cobra.Command, defaultMax string) {
	f := cmd.Flags()
	t.MaxSize, t.Keep = defaultMax, 3
	f.StringVar(&t.MaxSize, "trace-max-size", t.MaxSize, "With --trace, start a new segment of the trace once it reaches this size (100Mi, 1G; at least "+minTraceSegmentText()+"; 0: never): the full one is kept as NAME.1.EXT, and each segment replays alone")
	f.IntVar(&t.Keep, "trace-keep", t.Keep, "With --trace-max-size, how many earlier segments to keep (NAME.1.EXT, the newest, to NAME.N.EXT)")
	t.maxFlag, t.keepFlag = f.Lookup("trace-max-size"), f.Lookup("trace-keep")
}

// validate parses the size; trace is --trace.
func (t *TraceRotation) validate(trace string) error {
	t.maxBytes = 0
	if t.MaxSize != "" {
		q, err := resource.ParseQuantity(t.MaxSize)
		if err != nil {
			return usageErrorf("invalid --trace-max-size %q: want a size such as 100Mi or 1G, or 0", t.MaxSize)
		}
		t.maxBytes = q.Value()
	}
	switch {
	case t.maxBytes < 0:
		return usageErrorf("invalid --trace-max-size %s: must not be negative", t.MaxSize)
	case t.maxBytes > 0 && t.maxBytes < minTraceSegment:
		return usageErrorf("invalid --trace-max-size %s: must be at least %s, or 0 (no bound)", t.MaxSize, minTraceSegmentText())
	case t.Keep < 1:
		return usageErrorf("invalid --trace-keep %d: must be at least 1", t.Keep)
	case trace == "" && t.maxFlag != nil && t.maxFlag.Changed:
		return usageErrorf("--trace-max-size needs --trace")
	case t.maxBytes == 0 && t.keepFlag != nil && t.keepFlag.Changed:
		return usageErrorf("--trace-keep needs --trace-max-size")
	}
	// Rotating renames the trace: /dev/stdout or a FIFO would be replaced by a file.
	if fi, err := os.Stat(trace); t.maxBytes > 0 && err == nil && !fi.Mode().IsRegular() {
		return usageErrorf("--trace %s is not a regular file, and a bounded trace is renamed as it rotates: pass --trace-max-size 0", trace)
	}
	return nil
}

// options is what the session rotates by (MaxBytes 0: no rotation).
func (t *TraceRotation) options() session.TraceRotation {
	return session.TraceRotation{MaxBytes: t.maxBytes, Keep: t.Keep}
}
