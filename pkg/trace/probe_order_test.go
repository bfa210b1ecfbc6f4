package trace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// A probe line is handled after the reflector has handled the line before
// it (the event the probe timed), as the live run recorded them: the
// slow-delivery facts a replay gives do not change from one run to the next.
func TestAProbeLineIsHandledAfterTheEventBeforeIt(t *testing.T) {
	const events = 200
	var b strings.Builder
	b.WriteString(`{"k":"header","v":1,"startedAt":"2026-01-01T00:00:00Z","resource":{"group":"coordination.k8s.io","version":"v1","resource":"leases","kind":"Lease","namespaced":true},"namespace":"probe"}` + "\n")
	b.WriteString(`{"k":"request","at":1000000,"id":1,"verb":"list","opts":{}}` + "\n")
	b.WriteString(`{"k":"page","at":2000000,"id":1,"resourceVersion":"10","items":0}` + "\n")
	b.WriteString(`{"k":"end","at":2000000,"id":1,"reason":"closed"}` + "\n")
	b.WriteString(`{"k":"request","at":3000000,"id":2,"verb":"watch","opts":{"resourceVersion":"10","allowWatchBookmarks":true,"timeoutSeconds":300}}` + "\n")
	for i := 1; i <= events; i++ {
		at, rv := int64(i)*int64(time.Second), 10+i
		typ := "MODIFIED"
		if i == 1 {
			typ = "ADDED"
		}
		fmt.Fprintf(&b, `{"k":"event","at":%d,"id":2,"type":%q,"object":{"metadata":{"namespace":"probe","name":"l","uid":"uid-l","resourceVersion":"%d"}}}`+"\n", at, typ, rv)
		fmt.Fprintf(&b, `{"k":"probe","at":%d,"resourceVersion":"%d","write":"1ms","event":"2ms"}`+"\n", at+1000, rv)
	}
	path := filepath.Join(t.TempDir(), "probe.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rp := trace.NewReplay(rd, 0)
	var (
		mu      sync.Mutex
		applied string // the resourceVersion of the last event the reflector applied
		early   []string
		probes  int
	)
	c := rp.Resources()[0].ReflectorConfig()
	c.OnNote = func(n reflector.Note) {
		if n.Kind == reflector.NoteApplied && n.Applied != nil && n.Applied.Object != nil {
			mu.Lock()
			applied = n.Applied.Object.ResourceVersion
			mu.Unlock()
		}
	}
	rp.OnProbe(func(_ time.Time, l *trace.Line) {
		mu.Lock()
		defer mu.Unlock()
		probes++
		if applied != l.ResourceVersion {
			early = append(early, fmt.Sprintf("probe of %s after the event of %s", l.ResourceVersion, applied))
		}
	})
	st, w := store.New()
	r, err := reflector.New(c, w, st)
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.Run(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	w.Close()
	mu.Lock()
	defer mu.Unlock()
	if probes != events {
		t.Errorf("%d probe lines handled, want %d", probes, events)
	}
	if len(early) > 0 {
		t.Errorf("%d of %d probe lines handled before the event they timed, first: %s", len(early), events, early[0])
	}
}
