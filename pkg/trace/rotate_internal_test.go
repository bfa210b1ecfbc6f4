package trace

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// With gzip, a segment's size counts the lines still buffered at their
// full size and those written compressed: the caches a segment begins a
// resource with are measured once compressed, so that a cache whose lines
// push the buffered ones through gzip does not take less than nothing (a
// reviewer measured -159,850 bytes for a 100 KiB cache after 200 KiB of
// buffered lines, and the segment looked full at once).
func TestTheCacheASegmentBeginsWithIsMeasuredCompressed(t *testing.T) {
	seg, err := createSegment(filepath.Join(t.TempDir(), "out.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer seg.close()
	r := &Recorder{seg: seg, now: time.Now, rot: &rotation{moved: make([]bool, 2)}}
	line := func(n int) *Line {
		return &Line{K: KindEvent, R: 1, ID: 3, Type: "ADDED", Object: []byte(fmt.Sprintf(
			`{"metadata":{"name":"cm-%06d","namespace":"hand","uid":"0b6c6c1e-0000-0000-0000-%012d","resourceVersion":"%d"}}`, n, n, n))}
	}
	// Another resource's lines, buffered.
	for n := 0; seg.buf.Buffered() < 200<<10; n++ {
		if err := seg.encode(line(n)); err != nil {
			t.Fatal(err)
		}
	}
	var cache []*Line
	uncompressed := 0
	for n := 0; uncompressed < 100<<10; n++ {
		l := line(n)
		l.R = 0
		cache = append(cache, l)
		uncompressed += len(l.Object) + 60
	}
	if !r.writeMoved(0, cache) {
		t.Fatal(r.err)
	}
	if seg.begun <= 0 || seg.begun >= int64(uncompressed) {
		t.Fatalf("a cache of about %d bytes (uncompressed) took %d bytes of the segment", uncompressed, seg.begun)
	}
}

// A flowcontrol line is about the run: while the resources move to a new
// segment, the previous one takes it too, for the 429s of the resources
// still writing there (it reached only resource 0's segment).
func TestAFlowControlLineReachesEverySegmentOpenDuringARotation(t *testing.T) {
	var prev, cur bytes.Buffer
	r := &Recorder{seg: newSegment(&cur, nil, nil, nil), now: time.Now,
		rot: &rotation{prev: newSegment(&prev, nil, nil, nil), moved: []bool{true, false}}}
	r.FlowControlNames(map[string]string{"uid-fs": "workload-low"}, nil)
	r.flush()
	for name, b := range map[string]*bytes.Buffer{"previous": &prev, "current": &cur} {
		if !strings.Contains(b.String(), `"k":"flowcontrol"`) || !strings.Contains(b.String(), "workload-low") {
			t.Errorf("the %s segment has no flowcontrol line: %q", name, b.String())
		}
	}
}
