package fault

import (
	"strings"
	"testing"
	"time"
)

func TestParseReadsEverySpecOfTheIssue(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want Spec
	}{
		{"drop-deletes", Spec{Name: DropDeletes, P: 1}},
		{"gone@every=20s", Spec{Name: Gone, Every: 20 * time.Second, P: 1}},
		{"delay=300ms", Spec{Name: Delay, Value: 300 * time.Millisecond, P: 1}},
		{"throttle@p=0.3", Spec{Name: Throttle, Value: time.Second, P: 0.3}},
		{"throttle=2s@after=1m@p=1", Spec{Name: Throttle, Value: 2 * time.Second, After: time.Minute, P: 1}},
		{"cut@p=0.5@every=10s", Spec{Name: Cut, Every: 10 * time.Second, P: 0.5}},
		{"no-bookmarks", Spec{Name: NoBookmarks, P: 1}},
		{"stall-initial-list@after=5s", Spec{Name: StallInitialList, After: 5 * time.Second, P: 1}},
	} {
		got, err := Parse(tc.raw)
		tc.want.Raw = tc.raw
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
		}
	}
}

func TestParseRefusesMalformedSpecs(t *testing.T) {
	for raw, want := range map[string]string{
		"":                        `unknown fault ""`,
		"explode":                 `unknown fault "explode"`,
		"gone=1s":                 "gone takes no value",
		"delay":                   "delay needs a duration",
		"delay=soon":              "delay=soon: not a duration",
		"delay=-1s":               "want a duration above 0",
		"gone@every":              "@every: want @every=D",
		"gone@every=0s":           "want a duration above 0",
		"gone@often=1s":           "@often=1s: want",
		"gone@every=1s@after=2s":  "give one of them",
		"gone@p=0":                "@p=0: want a fraction",
		"gone@p=1.5":              "@p=1.5: want a fraction",
		"gone@p=x":                "@p=x: want a fraction",
		"gone@every=1s@every=2s":  "@every given twice",
		"drop-deletes@p=0.5@p=.5": "@p given twice",
	} {
		if _, err := Parse(raw); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): %v, want an error with %q", raw, err, want)
		}
	}
}

func TestUsageListsEveryFault(t *testing.T) {
	u := Usage()
	for _, n := range Names() {
		if !strings.Contains(u, "  "+string(n)) {
			t.Errorf("usage lacks %s:\n%s", n, u)
		}
	}
}

var start = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func TestTakeWithoutScheduleActsOnEverything(t *testing.T) {
	s := NewSchedule(Spec{Name: DropDeletes, P: 1}, start, 1)
	for i := range 5 {
		if !s.Take(start.Add(time.Duration(i) * time.Millisecond)) {
			t.Fatalf("item %d not taken", i)
		}
	}
}

func TestTakeAfterActsFromThenOn(t *testing.T) {
	s := NewSchedule(Spec{Name: DropDeletes, After: 10 * time.Second, P: 1}, start, 1)
	if s.Take(start.Add(9 * time.Second)) {
		t.Error("taken before @after")
	}
	for _, at := range []time.Duration{10 * time.Second, 11 * time.Second, time.Hour} {
		if !s.Take(start.Add(at)) {
			t.Errorf("not taken at %s", at)
		}
	}
}

func TestTakeEveryActsOnTheFirstThingAfterEachFiring(t *testing.T) {
	s := NewSchedule(Spec{Name: DropDeletes, Every: 10 * time.Second, P: 1}, start, 1)
	var got []bool
	for _, at := range []time.Duration{5, 10, 11, 15, 25, 26, 61, 62} {
		got = append(got, s.Take(start.Add(at*time.Second)))
	}
	// Firings at 10, 20, 30…: taken at 10 (the first after it), 25 (after
	// 20), 61 (after 60; 30, 40 and 50 met nothing and are not made up).
	want := []bool{false, true, false, false, true, false, true, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("taken %v, want %v", got, want)
		}
	}
}

func TestTakeDrawsPFromItsSeed(t *testing.T) {
	draws := func(seed int64) (string, int) {
		s := NewSchedule(Spec{Name: DropDeletes, P: 0.3}, start, seed)
		var b strings.Builder
		n := 0
		for range 1000 {
			if s.Take(start) {
				b.WriteByte('1')
				n++
			} else {
				b.WriteByte('0')
			}
		}
		return b.String(), n
	}
	a, n := draws(7)
	b, _ := draws(7)
	c, _ := draws(8)
	if a != b {
		t.Error("one seed, two sequences of draws")
	}
	if a == c {
		t.Error("two seeds, one sequence of draws")
	}
	if n < 240 || n > 360 { // 1000 draws of p=0.3: 300 ± 4 standard deviations
		t.Errorf("%d of 1000 taken at p=0.3", n)
	}
}

func TestNextFiresEveryOrOnceAfter(t *testing.T) {
	every := NewSchedule(Spec{Name: Gone, Every: 20 * time.Second, P: 1}, start, 1)
	var last time.Time
	for k := 1; k <= 3; k++ {
		next, ok := every.Next(last)
		if want := start.Add(time.Duration(k) * 20 * time.Second); !ok || !next.Equal(want) {
			t.Fatalf("firing %d at %v (%v), want %v", k, next, ok, want)
		}
		last = next
	}
	// Late: the next firing after a moment is the next multiple.
	if next, _ := every.Next(start.Add(45 * time.Second)); !next.Equal(start.Add(60 * time.Second)) {
		t.Errorf("after 45s the next firing is %v", next)
	}
	after := NewSchedule(Spec{Name: Gone, After: 30 * time.Second, P: 1}, start, 1)
	first, ok := after.Next(time.Time{})
	if !ok || !first.Equal(start.Add(30*time.Second)) {
		t.Fatalf("@after=30s fires at %v (%v)", first, ok)
	}
	if _, ok := after.Next(first); ok {
		t.Error("@after fires twice")
	}
	if _, ok := NewSchedule(Spec{Name: Gone, P: 1}, start, 1).Next(time.Time{}); ok {
		t.Error("a fault without a schedule has firings")
	}
}

func TestTargetMatchesResourcesAndClients(t *testing.T) {
	tg, err := ParseTarget([]string{"pods,deployments.apps", "client=my-controller"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		gr   GroupResource
		ua   string
		want bool
	}{
		{GroupResource{Resource: "pods"}, "my-controller/v1.2 (linux/amd64)", true},
		{GroupResource{Group: "apps", Resource: "deployments"}, "my-controller/v1.2", true},
		{GroupResource{Resource: "pods"}, "kubectl/v1.37", false},
		{GroupResource{Resource: "configmaps"}, "my-controller/v1.2", false},
		{GroupResource{Group: "extensions", Resource: "deployments"}, "my-controller/v1.2", false},
	} {
		if got := tg.Matches(tc.gr, tc.ua); got != tc.want {
			t.Errorf("%s by %q: %v, want %v", tc.gr, tc.ua, got, tc.want)
		}
	}
	if !(Target{}).Matches(GroupResource{Resource: "anything"}, "") {
		t.Error("no target does not match everything")
	}
	for _, bad := range []string{"", "pods,", "client=", "pods/status", "deployments."} {
		if _, err := ParseTarget([]string{bad}); err == nil {
			t.Errorf("ParseTarget(%q) took it", bad)
		}
	}
}
