package session

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/probe"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// A probe's sample replays as it was taken live: the line is written when
// both the update's answer and its watch event have come, so the replay
// finds when the renewal was sent from the later of the two, whichever it is.
func TestAProbeSampleReplaysSentWhenItWasSentLive(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, x := range []probe.Sample{
		{At: start.Add(10 * time.Second), Write: 2 * time.Second, Event: 500 * time.Millisecond}, // the event came before the answer
		{At: start.Add(10 * time.Second), Write: 20 * time.Millisecond, Event: 3 * time.Second},  // after it
	} {
		var buf bytes.Buffer
		h := trace.Header{StartedAt: start, Tool: Tool, Resources: []trace.ResourceHeader{{
			Resource: reflector.Resource{GVR: schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, Kind: "Lease", Namespaced: true}}}}
		written := x.At.Add(max(x.Write, x.Event))
		rec, err := trace.NewRecorder(&buf, h, func() time.Time { return written })
		if err != nil {
			t.Fatal(err)
		}
		live := &Session{Probe: probe.NewStats(), Recorder: rec}
		live.RecordProbe(x, "5")
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "probe.jsonl")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := NewReplay(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := s.Probe.Samples(); len(got) != 1 || got[0] != x {
			t.Errorf("replayed %+v, want %+v as taken live", got, x)
		}
	}
}
