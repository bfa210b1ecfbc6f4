// Package probe is what hack/bench and its helper processes share: the report
// a helper prints when its cache is complete, and the memory readings
// (/proc/self/status, runtime/metrics) both sides take. It uses the standard
// library only, so the raw-GET floor helper stays as small as a client can be.
package probe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
)

// Report is the one JSON line a helper prints on stdout.
type Report struct {
	// SyncedAt is the wall clock (Unix nanoseconds) when the first complete
	// cache was there (the floor: when the list body was read to EOF). The
	// parent subtracts the instant it started the process.
	SyncedAt int64 `json:"syncedAt"`
	// Objects is how many objects the cache holds (the floor: items counted in the body).
	Objects int `json:"objects"`
	// Bytes is the size of the list body (floor only).
	Bytes int64 `json:"bytes,omitempty"`
	// BaselineHeap is the live heap before the client started; SteadyHeap the
	// live heap once synced, both right after a forced GC.
	BaselineHeap uint64 `json:"baselineHeap,omitempty"`
	SteadyHeap   uint64 `json:"steadyHeap,omitempty"`
	// SteadyRSS is the resident set once synced, after a GC that returned freed memory to the OS.
	SteadyRSS uint64 `json:"steadyRSS,omitempty"`
	// Relist is set when the helper forced a relist after the steady reading.
	Relist *Relist `json:"relist,omitempty"`
}

// Relist is memory during one forced relist, sampled every millisecond.
type Relist struct {
	Seconds float64 `json:"seconds"`
	// PeakHeap is the largest heap of allocated objects seen (garbage not yet swept included).
	PeakHeap uint64 `json:"peakHeap"`
	// PeakLiveHeap is the largest live heap a GC cycle marked during the relist.
	PeakLiveHeap uint64 `json:"peakLiveHeap"`
	// PeakRSS is the resident high-water mark during the relist (VmHWM, reset before it).
	PeakRSS uint64 `json:"peakRSS"`
	// SteadyHeap and SteadyRSS are read again after the relist, as after the first list.
	SteadyHeap uint64 `json:"steadyHeap"`
	SteadyRSS  uint64 `json:"steadyRSS"`
}

// Print writes r as one JSON line.
func (r Report) Print(w io.Writer) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// ParseReport finds the report line in a helper's stdout.
func ParseReport(out []byte) (Report, error) {
	var r Report
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	last := lines[len(lines)-1]
	if err := json.Unmarshal(last, &r); err != nil {
		return r, fmt.Errorf("the helper printed no report (last line %q): %w", last, err)
	}
	return r, nil
}

// SteadyRSS returns memory the GC freed to the OS and reads the resident set:
// what the process keeps once its garbage is gone.
func SteadyRSS() uint64 {
	debug.FreeOSMemory()
	rss, _ := Status("VmRSS")
	return rss
}

// Status reads one memory line of /proc/self/status (VmRSS, VmHWM…) in bytes.
func Status(field string) (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("reading process status: %w", err)
	}
	v, ok := statusField(b, field)
	if !ok {
		return 0, fmt.Errorf("no %s line in /proc/self/status", field)
	}
	return v << 10, nil
}

// PeakOf reads the resident high-water mark (VmHWM) of process pid, its
// anonymous resident memory now (RssAnon: the heap, stacks and runtime, not
// the binary's mapped pages, which Linux keeps no high-water mark of), and
// whether it still runs (false once it is a zombie, whose memory is gone).
// Polling it until the process is a zombie, before reaping it, measures the
// process alone: the rusage maxrss that wait4 reports also counts the
// parent's pages, which a child started with vfork+exec inherits in Linux's accounting.
func PeakOf(pid int) (hwm, anon uint64, running bool, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, false, fmt.Errorf("reading the status of process %d: %w", pid, err)
	}
	if i := bytes.Index(b, []byte("\nState:")); i >= 0 {
		state := bytes.TrimSpace(b[i+len("\nState:"):])
		if len(state) > 0 && (state[0] == 'Z' || state[0] == 'X') {
			return 0, 0, false, nil
		}
	}
	kb, ok := statusField(b, "VmHWM")
	anonKB, _ := statusField(b, "RssAnon")
	return kb << 10, anonKB << 10, ok, nil
}

// statusField returns the number of a "Field:  N kB" line of a status file.
func statusField(status []byte, field string) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	prefix := []byte(field + ":")
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, prefix) {
			continue
		}
		fields := bytes.Fields(line[len(prefix):])
		if len(fields) < 1 {
			return 0, false
		}
		n, err := strconv.ParseUint(string(fields[0]), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// ResetPeakRSS resets this process's VmHWM to its current RSS (Linux ≥ 4.0).
func ResetPeakRSS() error {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting the peak RSS: %w", err)
	}
	return nil
}

// Median is the middle of xs (the mean of the two middle values when their
// number is even); 0 for none. xs is not changed.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
