package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/session"
)

// minTraceSegment is the smallest --trace-max-size: a segment holds a
// header and every resource's cache, and a smaller one would rotate at
// every resume.
const minTraceSegment = 64 << 10

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
	f.StringVar(&t.MaxSize, "trace-max-size", t.MaxSize, "With --trace, start a new segment of the trace once it reaches this size (100Mi, 1G; 0: never): the full one is kept as NAME.1.EXT, and each segment replays alone")
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
		return usageErrorf("invalid --trace-max-size %s: must be at least 64Ki, or 0 (no bound)", t.MaxSize)
	case t.Keep < 1:
		return usageErrorf("invalid --trace-keep %d: must be at least 1", t.Keep)
	case trace == "" && t.maxFlag != nil && t.maxFlag.Changed:
		return usageErrorf("--trace-max-size needs --trace")
	case t.maxBytes == 0 && t.keepFlag != nil && t.keepFlag.Changed:
		return usageErrorf("--trace-keep needs --trace-max-size")
	}
	return nil
}

// options is what the session rotates by (zero: no rotation).
func (t *TraceRotation) options() session.TraceRotation {
	if t.maxBytes == 0 {
		return session.TraceRotation{}
	}
	return session.TraceRotation{MaxBytes: t.maxBytes, Keep: t.Keep}
}
