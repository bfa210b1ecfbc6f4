package findings

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// A name a 429 carried (the Source's, recorded in a trace) names the
// FlowSchema and PriorityLevel, and keeps naming them when a later 429
// comes without (a lookup that failed since): the finding of a replay,
// which has only what the trace carried, is the live one.
func TestThrottledNamesWhatThe429CarriedAndKeepsTheName(t *testing.T) {
	f := newFeed(t, Options{})
	throttled := func(th reflector.Throttle) {
		f.request(reflector.VerbList, reflector.RequestOptions{}, time.Millisecond, 0, &reflector.RequestEnd{Reason: reflector.EndError,
			Status: &metav1.Status{Code: 429, Message: "Too many requests, please try again later."}, Throttle: &th}, nil)
	}
	throttled(reflector.Throttle{RetryAfter: 2 * time.Second, FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1"})
	got, _ := f.e.Get(Throttled)
	if got.Evidence.Facts["flowSchema"] != "uid fs-1" || got.Evidence.Facts["priorityLevel"] != "uid pl-1" {
		t.Fatalf("unnamed: %+v", got.Evidence.Facts)
	}
	throttled(reflector.Throttle{RetryAfter: time.Second, FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1", FlowSchema: "slow-lane", PriorityLevel: "few-seats"})
	throttled(reflector.Throttle{RetryAfter: time.Second, FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1"})
	got, _ = f.e.Get(Throttled)
	if got.Count != 3 || got.Evidence.Facts["flowSchema"] != "slow-lane (uid fs-1)" || got.Evidence.Facts["priorityLevel"] != "few-seats (uid pl-1)" || got.Evidence.Facts["retryAfter"] != "1s" {
		t.Fatalf("named: count %d, %+v", got.Count, got.Evidence.Facts)
	}
}

// throttle429 feeds one LIST answered 429 with th.
func (f *feed) throttle429(th reflector.Throttle) {
	f.request(reflector.VerbList, reflector.RequestOptions{}, time.Millisecond, 0, &reflector.RequestEnd{Reason: reflector.EndError,
		Status: &metav1.Status{Code: 429, Message: "Too many requests, please try again later."}, Throttle: &th}, nil)
}

// Names learned after the 429s that gave them by UID alone (a throttled
// client's lookup, throttled too) name the finding at once: its facts, its
// evidence and its action, and it is told to the listeners again, once.
// Until then, its action says how to find them by UID.
func TestThrottledNamedAfterItWasRaisedSaysTheNamesAndIsToldAgain(t *testing.T) {
	f := newFeed(t, Options{})
	f.throttle429(reflector.Throttle{RetryAfter: time.Second, FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1"})
	got, _ := f.e.Get(Throttled)
	for _, want := range []string{
		"kubectl get flowschemas -o custom-columns=NAME:.metadata.name,UID:.metadata.uid,PRIORITYLEVEL:.spec.priorityLevelConfiguration.name | grep fs-1",
		"kubectl get prioritylevelconfigurations -o custom-columns=NAME:.metadata.name,UID:.metadata.uid | grep pl-1",
	} {
		if !strings.Contains(got.Action, want) {
			t.Errorf("unnamed, the action does not say %q:\n%s", want, got.Action)
		}
	}
	f.e.NameFlowControl(map[string]string{"fs-other": "other"}, nil)
	if len(f.raised) != 1 {
		t.Fatalf("told %d times after an unrelated name, want once", len(f.raised))
	}
	f.e.NameFlowControl(map[string]string{"fs-1": "slow-lane"}, map[string]string{"pl-1": "few-seats"})
	f.e.NameFlowControl(map[string]string{"fs-1": "slow-lane"}, map[string]string{"pl-1": "few-seats"})
	if len(f.raised) != 2 {
		t.Fatalf("told %d times, want twice: raised, then named", len(f.raised))
	}
	got, _ = f.e.Get(Throttled)
	if f.raised[1].Evidence.Text != got.Evidence.Text {
		t.Errorf("told %q, the finding says %q", f.raised[1].Evidence.Text, got.Evidence.Text)
	}
	if got.Evidence.Facts["flowSchema"] != "slow-lane (uid fs-1)" || got.Evidence.Facts["priorityLevel"] != "few-seats (uid pl-1)" ||
		!strings.HasSuffix(got.Evidence.Text, "classified it as FlowSchema slow-lane (uid fs-1), PriorityLevel few-seats (uid pl-1)") {
		t.Errorf("named: %+v", got.Evidence)
	}
	if !strings.HasPrefix(got.Action, "FlowSchema slow-lane matches this client and sends it to PriorityLevel few-seats (kubectl get flowschema slow-lane -o yaml; kubectl get prioritylevelconfiguration few-seats -o yaml)") {
		t.Errorf("named, the action is %q", got.Action)
	}
	// A later 429 without names (the lookup failed again) stays named.
	f.throttle429(reflector.Throttle{RetryAfter: time.Second, FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1"})
	if got, _ := f.e.Get(Throttled); got.Count != 2 || got.Evidence.Facts["flowSchema"] != "slow-lane (uid fs-1)" || len(f.raised) != 2 {
		t.Errorf("after another 429: count %d, %+v, told %d times", got.Count, got.Evidence.Facts, len(f.raised))
	}
}

// Names that come before the 429 (a replay hands a trace's flowcontrol
// line over on its own goroutine, ahead of the reflector) name it when it
// is raised, and it is told once.
func TestThrottledNamedBeforeItWasRaisedIsNamedWhenRaised(t *testing.T) {
	f := newFeed(t, Options{})
	f.e.NameFlowControl(map[string]string{"fs-1": "slow-lane"}, map[string]string{"pl-1": "few-seats"})
	f.throttle429(reflector.Throttle{RetryAfter: time.Second, FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1"})
	if len(f.raised) != 1 || f.raised[0].Evidence.Facts["flowSchema"] != "slow-lane (uid fs-1)" || f.raised[0].Evidence.Facts["priorityLevel"] != "few-seats (uid pl-1)" {
		t.Errorf("told %d times: %+v", len(f.raised), f.raised)
	}
}

// The action's commands are to be copied into a shell: a UID or name that
// is not one the API server makes (a header or a trace may say anything)
// stands in none of them.
func TestThrottledGivesNoCommandWithAHostileUIDOrName(t *testing.T) {
	for _, th := range []reflector.Throttle{
		{FlowSchemaUID: "fs-1; rm -rf ~", PriorityLevelUID: "pl-1$(id)"},
		{FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1", FlowSchema: "a|b", PriorityLevel: "few-seats"},
	} {
		f := newFeed(t, Options{})
		f.throttle429(th)
		got, _ := f.e.Get(Throttled)
		if strings.Contains(got.Action, "rm -rf") || strings.Contains(got.Action, "$(id)") || strings.Contains(got.Action, "a|b") || strings.Contains(got.Action, "| grep") || strings.Contains(got.Action, "-o yaml") {
			t.Errorf("%+v: the action is %q", th, got.Action)
		}
	}
}

func TestThrottledSkipsTheCacheInitializing429(t *testing.T) {
	f := newFeed(t, Options{})
	f.request(reflector.VerbWatch, bookmarked, time.Millisecond, 0, &reflector.RequestEnd{Reason: reflector.EndError,
		Status: &metav1.Status{Code: 429, Message: "storage is (re)initializing"}}, nil)
	if f.has(Throttled) {
		t.Fatal("a watch cache initializing after a restart is not throttling")
	}
	f.request(reflector.VerbList, reflector.RequestOptions{}, time.Millisecond, 0, &reflector.RequestEnd{Reason: reflector.EndError,
		Status:   &metav1.Status{Code: 429, Message: "Too many requests, please try again later."},
		Throttle: &reflector.Throttle{RetryAfter: time.Second, FlowSchemaUID: "fs-1", FlowSchema: "tight", PriorityLevelUID: "pl-1"}}, nil)
	got, ok := f.e.Get(Throttled)
	if !ok || got.Evidence.Facts["flowSchema"] != "tight (uid fs-1)" || got.Evidence.Facts["priorityLevel"] != "uid pl-1" || got.Evidence.Facts["retryAfter"] != "1s" {
		t.Fatalf("want throttled naming the flow schema, got %v %+v", ok, got)
	}
}

// A word safe to paste in a shell is a name as the API server makes them:
// a letter or digit, then letters, digits, dots, dashes and underscores, at
// most 253 in all.
func TestCommandSafeTakesNamesAndNothingElse(t *testing.T) {
	for s, want := range map[string]bool{
		"workload-high":                    true,
		"6f1c2d3e-0000-4000-8000-00000001": true,
		"a":                                true,
		strings.Repeat("a", 253):           true,
		strings.Repeat("a", 254):           false,
		"":                                 false,
		"-flag":                            false,
		".hidden":                          false,
		"a b":                              false,
		"a;rm -rf":                         false,
		"$(id)":                            false,
		"a\nb":                             false,
		"é":                                false,
	} {
		if got := commandSafe(s); got != want {
			t.Errorf("commandSafe(%.20q…, %d bytes) = %v, want %v", s, len(s), got, want)
		}
	}
}

// 429s the observing proxy answered (--fault throttle) name no FlowSchema:
// the cause says the server throttled none of them, not that API Priority
// and Fairness had no seat; a server's 429 among them keeps that cause.
func TestThrottledByTheProxyAloneDoesNotBlameAPIPriorityAndFairness(t *testing.T) {
	for _, server := range []bool{false, true} {
		f := newFeed(t, Options{})
		f.decide(reflector.Decision{State: reflector.StateListing, Reason: reflector.ReasonFault, Fault: "throttle=1.5s", Cause: "answered 429", Count: 1})
		f.throttle429(reflector.Throttle{RetryAfter: 2 * time.Second})
		if server {
			f.throttle429(reflector.Throttle{RetryAfter: time.Second, FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1"})
		}
		got, _ := f.e.Get(Throttled)
		blamesAPF := strings.Contains(got.Cause, "API Priority and Fairness had no seat")
		if !strings.HasPrefix(got.Cause, "caused by --fault throttle=1.5s") || blamesAPF != server {
			t.Errorf("the server throttled too: %v; cause %q", server, got.Cause)
		}
	}
}

// Past the bound of names kept, which are kept does not depend on a map's
// order: a live run and its replay name the same.
func TestThrottledKeepsTheSameNamesPastItsBound(t *testing.T) {
	names := map[string]string{}
	for i := range keepObjects + 10 {
		names[fmt.Sprintf("uid-%03d", i)] = fmt.Sprintf("schema-%03d", i)
	}
	var first map[string]string
	for range 5 {
		r := &throttled{}
		r.learn(New(Options{}, nil), names, nil)
		if first == nil {
			first = r.names
			continue
		}
		if !maps.Equal(first, r.names) {
			t.Fatalf("the names kept differ from one learning to the next")
		}
	}
	if _, ok := first["flowschema/uid-000"]; !ok || len(first) != keepObjects {
		t.Errorf("kept %d names, want the first %d by UID", len(first), keepObjects)
	}
}
