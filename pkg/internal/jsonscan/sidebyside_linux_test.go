//go:build linux

package jsonscan_test

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/sys/unix"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/jsonscan"
)

// threadCPU is the CPU time the calling OS thread has used.
func threadCPU(tb testing.TB) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// sideBySide times a and b in alternation, batch calls at a time, on one
// locked OS thread, counting that thread's CPU time: on a machine whose cores
// other jobs share, each gets the same share of the disturbance, and time
// spent descheduled is not counted. It reports each one's throughput and the
// ratio of their times (above 1: jsontext is slower).
func sideBySide(b *testing.B, size, batch int, jsonscanRun, jsontextRun func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var tScan, tText time.Duration
	n := 0
	for b.Loop() {
		for i, f := range []func(){jsonscanRun, jsontextRun} {
			if n%2 == 1 {
				i, f = 1-i, []func(){jsonscanRun, jsontextRun}[1-i] // alternate which goes first
			}
			t := threadCPU(b)
			for range batch {
				f()
			}
			d := threadCPU(b) - t
			if i == 0 {
				tScan += d
			} else {
				tText += d
			}
		}
		n++
	}
	mb := float64(size*batch*n) / 1e6
	b.ReportMetric(mb/tScan.Seconds(), "jsonscan-MB/s")
	b.ReportMetric(mb/tText.Seconds(), "jsontext-MB/s")
	b.ReportMetric(tText.Seconds()/tScan.Seconds(), "jsontext/jsonscan")
}

// BenchmarkScannersSideBySide runs BenchmarkScanners' and
// BenchmarkScannersOnAStreamedList's work for both implementations in
// alternation (see sideBySide); the streamed list uses jsontext's faster
// variant (one pass, raw bytes through a TeeReader).
func BenchmarkScannersSideBySide(b *testing.B) {
	inputs := compareInputs(b)
	for _, size := range []string{"small", "big"} {
		data := inputs[size]
		batch := 1
		if size == "small" {
			batch = 200
		}
		b.Run("op=skip/size="+size, func(b *testing.B) {
			var buf bytes.Buffer
			d := jsontext.NewDecoder(&buf, jsontextOptions()...)
			sideBySide(b, len(data), batch, func() {
				if err := skipAll(data); err != nil {
					b.Fatal(err)
				}
			}, func() {
				buf.Reset()
				buf.Write(data)
				d.Reset(&buf, jsontextOptions()...)
				if err := d.SkipValue(); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run("op=metadata/size="+size, func(b *testing.B) {
			var s jsonscan.Scanner
			var buf bytes.Buffer
			d := jsontext.NewDecoder(&buf, jsontextOptions()...)
			var out1, out2, scratch []byte
			sideBySide(b, len(data), batch, func() {
				s.Reset(data)
				out1 = scanMetadata(&s, out1[:0])
				if err := s.End(); err != nil {
					b.Fatal(err)
				}
			}, func() {
				buf.Reset()
				buf.Write(data)
				d.Reset(&buf, jsontextOptions()...)
				var err error
				if out2, err = jsontextMetadata(d, out2[:0], scratch); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
	for _, l := range []struct {
		size string
		n    int
	}{{"small", 500}, {"big", 16}} {
		body := compareList(inputs[l.size], l.n)
		want := l.n * len(inputs[l.size])
		b.Run("op=streamed-list/size="+l.size, func(b *testing.B) {
			var out1, out2, scratch []byte
			sideBySide(b, len(body), 1, func() {
				var s jsonscan.Scanner
				s.ResetReader(&chunkReader{body, 16 << 10}, 0)
				if n, err := scanList(&s, out1); err != nil || n != want {
					b.Fatalf("got %d bytes of items, %v", n, err)
				}
			}, func() {
				if n, err := jsontextTeeList(&chunkReader{body, 16 << 10}, out2, scratch); err != nil || n != want {
					b.Fatalf("got %d bytes of items, %v", n, err)
				}
			})
		})
	}
}
