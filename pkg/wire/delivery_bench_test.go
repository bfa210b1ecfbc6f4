//go:build linux

package wire_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// threadCPU is the CPU time of the calling OS thread.
func threadCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWriteTimeCost decodes the same watch stream of 1000 ConfigMaps
// (the fixture, with its server-side-apply managedFields) with the passive
// estimate on and off, alternating within each iteration on one locked
// thread (each first every other time), and reports events per CPU second of each and their ratio
// (on/off; the goal is at least 0.97), in JSON and in protobuf.
func BenchmarkWriteTimeCost(b *testing.B) {
	const events = 1000
	jsonStream := benchWatch(b, events)
	var cm corev1.ConfigMap
	if err := json.Unmarshal(benchConfigMap(b), &cm); err != nil {
		b.Fatal(err)
	}
	var pbStream []byte
	for i := range events {
		cm.ResourceVersion = fmt.Sprint(1000 + i)
		raw, err := cm.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		pbStream = append(pbStream, frame("MODIFIED", unknown("v1", "ConfigMap", raw))...)
	}
	for _, c := range []struct {
		name   string
		stream []byte
		read   func(io.Reader, bool) (int, error)
	}{
		{"json", jsonStream, wire.ReadWatchEventsWriteTime},
		{"protobuf", pbStream, wire.ReadProtoWatchEventsWriteTime},
	} {
		b.Run(c.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var cpu [2]time.Duration // off, on
			order := [2][2]bool{{false, true}, {true, false}}
			for i := 0; b.Loop(); i++ {
				for _, on := range order[i%2] { // neither always goes first
					start := threadCPU(b)
					n, err := c.read(bytes.NewReader(c.stream), on)
					if err != nil || n != events {
						b.Fatalf("%d events, %v", n, err)
					}
					if on {
						cpu[1] += threadCPU(b) - start
					} else {
						cpu[0] += threadCPU(b) - start
					}
				}
			}
			perSec := func(d time.Duration) float64 { return float64(b.N*events) / d.Seconds() }
			b.ReportMetric(perSec(cpu[0]), "off-events/cpu-s")
			b.ReportMetric(perSec(cpu[1]), "on-events/cpu-s")
			b.ReportMetric(perSec(cpu[1])/perSec(cpu[0]), "on/off")
		})
	}
}
