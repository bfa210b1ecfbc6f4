package trace

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// A backoff note records its wait to the millisecond, and a replay compares
// it within that rounding.
func TestABackoffsWaitIsRecordedAndCompared(t *testing.T) {
	d := &reflector.Decision{State: reflector.StateBackoff, Reason: reflector.ReasonBackoff, Next: reflector.VerbWatch, Wait: 1234567891}
	b, err := json.Marshal(noteLine(d))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"wait":"1.235s"`) {
		t.Errorf("note line: got %s, want the wait to the millisecond", b)
	}
	backoff := func(wait string) *Line {
		l := &Line{K: KindNote, State: "Backoff", Reason: "backoff"}
		if wait != "" {
			if err := json.Unmarshal([]byte(`"`+wait+`"`), &l.Wait); err != nil {
				t.Fatal(err)
			}
		}
		return l
	}
	for _, c := range []struct {
		rec, rep string
		differ   bool
	}{
		{"2s", "2s", false},
		{"2s", "2.001s", false},
		{"2s", "1.999s", false},
		{"2s", "1s", true},
		{"2s", "2.5s", true},
		{"", "1s", false}, // a trace that did not record it
	} {
		var cmp decisionComparison
		cmp.recorded(backoff(c.rec))
		cmp.replayed(backoff(c.rep))
		shown, total := cmp.finish(10)
		if differ := total > 0; differ != c.differ {
			t.Errorf("recorded %q, replayed %q: got differences %v, want a difference %v", c.rec, c.rep, shown, c.differ)
		}
		if c.differ && (len(shown) != 1 || !strings.Contains(shown[0], "recorded backoff → Backoff (wait "+c.rec+"), replayed backoff → Backoff (wait "+c.rep+")")) {
			t.Errorf("difference: got %v, want it to name both waits", shown)
		}
	}
}

// The header records the reflector's backoff, and a replay's reflector uses it.
func TestTheHeaderRecordsTheBackoffAndTheReplayUsesIt(t *testing.T) {
	b := reflector.Backoff{Initial: 200 * time.Millisecond, Max: 2 * time.Second, Factor: 2, Jitter: 0.5, ResetAfter: 2 * time.Minute}
	raw, err := json.Marshal(Options{Backoff: BackoffOptionsOf(b)})
	if err != nil {
		t.Fatal(err)
	}
	if want := `"backoff":{"initial":"200ms","max":"2s","factor":2,"jitter":0.5,"resetAfter":"2m0s"}`; !strings.Contains(string(raw), want) {
		t.Errorf("options: got %s, want %s", raw, want)
	}
	var o Options
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	rp := &Replay{clock: newVirtualClock(time.Time{})}
	rr := &ResourceReplay{p: rp, header: ResourceHeader{Options: o}}
	if got := rr.ReflectorConfig().Backoff; got != b {
		t.Errorf("replayed backoff: got %+v, want %+v", got, b)
	}
	if got := (&ResourceReplay{p: rp}).ReflectorConfig().Backoff; got != (reflector.Backoff{}) {
		t.Errorf("a trace without it: got %+v, want the default (zero)", got)
	}
}

// A trace recorded before a 404 after the list was retried has no
// retriesNotFound: its replay keeps the rule its run decided by (the 404s
// fail it), so it does not diverge; a newer trace's replay retries.
func TestAReplayKeepsThe404RuleItsTraceWasDecidedBy(t *testing.T) {
	rp := &Replay{clock: newVirtualClock(time.Time{})}
	for _, c := range []struct {
		options   string
		permanent bool
	}{{`{}`, true}, {`{"retriesNotFound":true}`, false}} {
		var o Options
		if err := json.Unmarshal([]byte(c.options), &o); err != nil {
			t.Fatal(err)
		}
		rr := &ResourceReplay{p: rp, header: ResourceHeader{Options: o}}
		if got := rr.ReflectorConfig().NotFoundAfterListPermanent; got != c.permanent {
			t.Errorf("options %s: a 404 after the list permanent %v, want %v", c.options, got, c.permanent)
		}
	}
}
