package trace_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// A trace's header says when the run started in UTC ("Z"), whatever the
// zone of the clock that gave the time, and its lines count from that time.
func TestAHeaderWrittenFromALocalTimeIsUTC(t *testing.T) {
	local := time.Date(2026, 1, 1, 9, 0, 0, 0, time.FixedZone("CET", 3600))
	var buf bytes.Buffer
	rec, err := trace.NewRecorder(&buf, trace.Header{StartedAt: local, Tool: "test"}, func() time.Time { return local.Add(time.Second) })
	if err != nil {
		t.Fatal(err)
	}
	rec.ProbeNote(0, "a line one second in")
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if !strings.Contains(lines[0], `"startedAt":"2026-01-01T08:00:00Z"`) {
		t.Errorf("header %s, want startedAt 2026-01-01T08:00:00Z", lines[0])
	}
	if !strings.Contains(lines[1], `"at":1000000000`) {
		t.Errorf("line %s, want at 1s", lines[1])
	}
}

// Writing the header leaves the caller's header as it was: its resources'
// object mode is filled in on the line written, not in the caller's slice.
func TestWritingTheHeaderLeavesTheCallersHeaderAlone(t *testing.T) {
	h := trace.Header{Tool: "test", Resources: []trace.ResourceHeader{{}}}
	var buf bytes.Buffer
	rec, err := trace.NewRecorder(&buf, h, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"objects":"metadata"`) {
		t.Errorf("header %s, want objects metadata", buf.String())
	}
	if h.Resources[0].Objects != "" {
		t.Errorf("the caller's header now keeps objects %q", h.Resources[0].Objects)
	}
}
