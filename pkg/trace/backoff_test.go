package trace_test

import (
	"bufio"
	"context"
	"encoding/json"
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

// backoffTrace is a watch that fails 4 ms in, a backoff, and the next watch
// an hour and a few milliseconds later; wait is the backoff note's recorded
// wait field (`,"wait":"1h0m0s"`) or "" for a trace written before it was.
func backoffTrace(wait string) string {
	return `{"k":"header","v":1,"startedAt":"2026-01-01T00:00:00Z","resource":{"version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true},"namespace":"hand"}
{"k":"note","at":0,"state":"Listing","reason":"initial-list"}
{"k":"request","at":1000000,"id":1,"verb":"list","opts":{}}
{"k":"item","at":2000000,"id":1,"object":{"metadata":{"namespace":"hand","name":"a","uid":"uid-a","resourceVersion":"5"}}}
{"k":"page","at":2000000,"id":1,"resourceVersion":"10","items":1}
{"k":"end","at":2000000,"id":1,"reason":"closed"}
{"k":"note","at":2000000,"state":"Watching","reason":"list-complete","resourceVersion":"10","objectCount":1}
{"k":"request","at":3000000,"id":2,"verb":"watch","opts":{"resourceVersion":"10","allowWatchBookmarks":true,"timeoutSeconds":300}}
{"k":"end","at":4000000,"id":2,"reason":"error","error":"connection refused"}
{"k":"note","at":4000000,"state":"Watching","reason":"watch-error","resourceVersion":"10"}
{"k":"note","at":4001000,"state":"Backoff","reason":"backoff"` + wait + `}
{"k":"request","at":3600007000000,"id":3,"verb":"watch","opts":{"resourceVersion":"10","allowWatchBookmarks":true,"timeoutSeconds":300}}
{"k":"end","at":3601000000000,"id":3,"reason":"stopped"}
{"k":"note","at":3601000000000,"state":"Stopped","reason":"stopped"}
`
}

// backoffReplay replays in at speed, collecting the replayed backoffs' waits.
type backoffReplay struct {
	rp *trace.Replay
	r  *reflector.Reflector

	mu    sync.Mutex
	waits []time.Duration
}

func newBackoffReplay(t *testing.T, rd *trace.Reader, speed float64) *backoffReplay {
	t.Helper()
	b := &backoffReplay{rp: trace.NewReplay(rd, speed)}
	rr := b.rp.Resources()[0]
	cfg := rr.ReflectorConfig()
	cfg.OnNote = func(n reflector.Note) {
		rr.Note(n)
		if d := n.Decision; d != nil && d.Reason == reflector.ReasonBackoff {
			b.mu.Lock()
			b.waits = append(b.waits, d.Wait)
			b.mu.Unlock()
		}
	}
	st, w := store.New()
	t.Cleanup(w.Close)
	r, err := reflector.New(cfg, w, st)
	if err != nil {
		t.Fatal(err)
	}
	rr.SetForceRelist(r.ForceRelist)
	b.r = r
	return b
}

func (b *backoffReplay) backoffs() []time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]time.Duration(nil), b.waits...)
}

func readerOf(t *testing.T, s string) *trace.Reader {
	t.Helper()
	rd, err := trace.NewReader("backoff.jsonl", strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// A replay waits what the recording waited: the wait its backoff note
// recorded, or, in a trace written before notes recorded it, the time from
// the note to the next request; --strict compares the recorded wait.
func TestAReplayedBackoffWaitsTheRecordedWait(t *testing.T) {
	for _, c := range []struct {
		name, field string
		want        time.Duration
	}{
		{"recorded wait", `,"wait":"1h0m0s"`, time.Hour},
		{"older trace: until the next request", "", time.Hour + 3*time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBackoffReplay(t, readerOf(t, backoffTrace(c.field)), 0)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := b.rp.Run(ctx, b.r); err != nil {
				t.Fatal(err)
			}
			if got := b.backoffs(); len(got) != 1 || got[0] != c.want {
				t.Errorf("replayed backoffs: got %v, want [%v]", got, c.want)
			}
			if shown, total := b.rp.Differences(10); total != 0 {
				t.Errorf("differences: %v", shown)
			}
		})
	}
}

// While the recorded run waited, the replayed reflector is in Backoff, with
// the recorded retry time, as a live run is; not already in its next watch.
func TestDuringARecordedBackoffTheReplayIsInBackoff(t *testing.T) {
	for _, c := range []struct {
		name, field string
		want        time.Duration
	}{
		{"recorded wait", `,"wait":"1h0m0s"`, time.Hour},
		{"older trace", "", time.Hour + 3*time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			// At speed 1 the next watch is due in an hour: the test looks meanwhile.
			b := newBackoffReplay(t, readerOf(t, backoffTrace(c.field)), 1)
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() { errc <- b.rp.Run(ctx, b.r) }()
			defer func() {
				cancel()
				<-errc
			}()
			deadline := time.Now().Add(10 * time.Second)
			for b.r.Stats().Counters.Backoffs == 0 {
				if time.Now().After(deadline) {
					t.Fatal("no backoff after 10s")
				}
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
			s := b.r.Stats()
			if s.State != reflector.StateBackoff {
				t.Errorf("state: got %s (current request %v), want Backoff until the recorded next watch", s.State, s.Current)
			}
			started := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			if want := started.Add(4*time.Millisecond + c.want); !s.BackoffUntil.Equal(want) {
				t.Errorf("backoff until: got %v, want %v", s.BackoffUntil, want)
			}
		})
	}
}

// The bundled demo's waits were 0.2, 0.5, 0.8 and 2 s (its reflector's
// backoff started at 200ms, up to 2s): its replay shows those, not the
// default configuration's 1, 2, 4, 8 and 16 s.
func TestTheDemoReplaysTheWaitsItRecorded(t *testing.T) {
	path := filepath.Join(bundled, "demo.jsonl")
	want := recordedGaps(t, path)
	if len(want) < 5 {
		t.Fatalf("the demo has %d backoffs, want at least 5", len(want))
	}
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	b := newBackoffReplay(t, rd, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.rp.Run(ctx, b.r); err != nil {
		t.Fatal(err)
	}
	got := b.backoffs()
	if len(got) != len(want) {
		t.Fatalf("replayed backoffs: got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("backoff %d: got %v, want %v (all: got %v, want %v)", i+1, got[i], want[i], got, want)
		}
	}
	if shown, total := b.rp.Differences(10); total != 0 {
		t.Errorf("differences: %v", shown)
	}
}

// recordedGaps is, for each backoff note of a one-resource trace, the time
// to the next request, to the millisecond.
func recordedGaps(t *testing.T, path string) []time.Duration {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	var gaps []time.Duration
	var since int64 = -1
	for sc.Scan() {
		var l struct {
			K, Reason string
			At        int64
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		switch {
		case l.K == "note" && l.Reason == "backoff":
			since = l.At
		case l.K == "request" && since >= 0:
			gaps = append(gaps, time.Duration(l.At-since).Round(time.Millisecond))
			since = -1
		}
	}
	return gaps
}
