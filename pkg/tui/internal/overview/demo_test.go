package overview

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/dashboard"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/program"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/tui/internal/tuitest"
)

// The overview's demo: four resources in namespace prod, in four situations.
const (
	ovConfigMaps  = iota // the single dashboard's demo: watching after a 410 and a relist
	ovPods               // relisting after 410s, a LIST in flight, busy
	ovDeployments        // failed: 403 Forbidden
	ovReplicaSets        // in backoff: the server is unreachable
	numOvDemo
)

// forbidden is the reason the deployments failed, as the reflector reports it.
const forbidden = `403 Forbidden: deployments.apps is forbidden: User "dev" cannot list resource "deployments" in API group "apps" in the namespace "prod"`

// ovResource is a resource of the overview's demo, in namespace prod.
func ovResource(group, resource, kind string, feed program.Feed) program.Resource {
	return program.Resource{
		Target: reflector.Target{
			Resource:  reflector.Resource{GVR: schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource}, Kind: kind, Namespaced: true},
			Namespace: "prod",
		},
		Strategy: reflector.StrategyList, PageSize: 500, MetadataOnly: true,
		Feed: feed,
	}
}

// ovDemoResources are the overview demo's four resources, each with its feed.
func ovDemoResources(feeds [numOvDemo]program.Feed) []program.Resource {
	return []program.Resource{
		ovResource("", "configmaps", "ConfigMap", feeds[ovConfigMaps]),
		ovResource("", "pods", "Pod", feeds[ovPods]),
		ovResource("apps", "deployments", "Deployment", feeds[ovDeployments]),
		ovResource("apps", "replicasets", "ReplicaSet", feeds[ovReplicaSets]),
	}
}

// ovDemoStats is resource i's reflector at the end of the demo, 110s after t0.
func ovDemoStats(i int) reflector.Stats {
	switch i {
	case ovPods:
		return reflector.Stats{
			State: reflector.StateRelisting, StateSince: tuitest.At(107 * time.Second),
			ResourceVersion: "48213", BookmarkRV: "48100", BookmarkAt: tuitest.At(20 * time.Second), LastGone: tuitest.At(107 * time.Second),
			LastError: "410 Expired: too old resource version: 47001 (48150)",
			Counters:  reflector.Counters{Lists: 4, Relists: 3, Gone: 3, Watches: 4, Bookmarks: 2, Added: 900, Modified: 5400, Deleted: 300},
			Current:   &reflector.RequestInfo{ID: 12, Verb: reflector.VerbList, Opts: reflector.RequestOptions{Limit: 500}, Started: tuitest.At(107 * time.Second), Items: 1500},
		}
	case ovDeployments:
		return reflector.Stats{
			State: reflector.StateFailed, StateSince: tuitest.At(40 * time.Second),
			LastError: forbidden,
			Counters:  reflector.Counters{Lists: 0, Backoffs: 5},
		}
	case ovReplicaSets:
		return reflector.Stats{
			State: reflector.StateBackoff, StateSince: tuitest.At(108 * time.Second), BackoffUntil: tuitest.At(113*time.Second + 200*time.Millisecond),
			ResourceVersion: "47990", BookmarkRV: "47990", BookmarkAt: tuitest.At(95 * time.Second),
			LastError: "dial tcp 10.96.0.1:443: connect: connection refused",
			Counters:  reflector.Counters{Lists: 1, Watches: 2, Bookmarks: 1, Added: 3, Modified: 40, Backoffs: 2},
		}
	}
	return tuitest.DemoStats()
}

// ovDemoCounters is resource i's store at the end of the demo; ready is false before its first list.
func ovDemoCounters(i int) (store.Counters, bool) {
	switch i {
	case ovPods:
		return store.Counters{Objects: 12345, BytesHeld: 48 << 20}, true
	case ovDeployments:
		return store.Counters{}, false
	case ovReplicaSets:
		return store.Counters{Objects: 87, BytesHeld: 310 << 10}, true
	}
	return store.Counters{Objects: 618, BytesHeld: 1 << 20}, true
}

// ovDemoSnapshots are a minute of polls of resource i, one a second from 50s
// to 110s after t0, whose event counters grow to ovDemoStats' (the
// configmaps' are the single dashboard's demo).
func ovDemoSnapshots(i int) []program.SnapshotMsg {
	if i == ovConfigMaps {
		return tuitest.DemoSnapshots()
	}
	final := ovDemoStats(i)
	c, ready := ovDemoCounters(i)
	// Events in the k-th second of the minute: the pods' grow busier, the
	// replicasets' came in a burst before the backoff, the deployments' never came.
	var added, modified, deleted func(k int64) int64
	switch i {
	case ovPods:
		added, modified, deleted = func(k int64) int64 { return 2 * k }, func(k int64) int64 { return 30*k + k*k/4 }, func(k int64) int64 { return k }
	case ovReplicaSets:
		added, deleted = func(int64) int64 { return 0 }, func(int64) int64 { return 0 }
		modified = func(k int64) int64 { return min(max(k-50, 0), 6) * 2 }
	default:
		added, modified, deleted = func(int64) int64 { return 0 }, func(int64) int64 { return 0 }, func(int64) int64 { return 0 }
	}
	var out []program.SnapshotMsg
	for k := int64(0); k <= 60; k++ {
		s := final
		s.Counters.Added += added(k) - added(60)
		s.Counters.Modified += modified(k) - modified(60)
		s.Counters.Deleted += deleted(k) - deleted(60)
		out = append(out, program.SnapshotMsg{At: tuitest.At(time.Duration(50+k) * time.Second), HasStats: true, Stats: s,
			HasStore: true, StoreReady: ready, Counters: c})
	}
	return out
}

// ovDemoMessages are every message of the demo, routed to its resource: the
// snapshots, second by second across the resources, then the configmaps'
// notes for the log.
func ovDemoMessages() []tea.Msg {
	var msgs []tea.Msg
	snaps := make([][]program.SnapshotMsg, numOvDemo)
	for i := range numOvDemo {
		snaps[i] = ovDemoSnapshots(i)
	}
	for k := range snaps[0] {
		for i := range numOvDemo {
			msgs = append(msgs, resourceMsg{i: i, msg: snaps[i][k]})
		}
	}
	msgs = append(msgs, resourceMsg{i: ovConfigMaps, msg: program.NotesMsg{Notes: tuitest.DemoNotes()}})
	return append(msgs, resourceMsg{i: ovConfigMaps, msg: tuitest.DemoChanges()})
}

// ovDemo is the overview of the demo's four resources at w x h, with feeds.
func ovDemo(t testing.TB, w, h int, feeds [numOvDemo]program.Feed) Overview {
	t.Helper()
	clock := tuitest.NewFakeClock()
	o := newOverview(tuitest.DemoOptions(clock), ovDemoResources(feeds))
	t.Cleanup(o.Close)
	o = ovUpdate(o, tea.WindowSizeMsg{Width: w, Height: h})
	for _, msg := range ovDemoMessages() {
		if rm, ok := msg.(resourceMsg); ok {
			if s, ok := rm.msg.(program.SnapshotMsg); ok {
				clock.Time = s.At
			}
		}
		o = ovUpdate(o, msg)
	}
	return o
}

func ovUpdate(o Overview, msg tea.Msg) Overview { next, _ := o.Update(msg); return next.(Overview) }
func ovScreen(o Overview) string                { return tuitest.Plain(o.View()) }

// ovPeek is o with a root and rows of its own (peek).
func ovPeek(o Overview) Overview {
	r := *o.Root
	o.Root = &r
	o.subs = append([]dashboard.Model(nil), o.subs...)
	for i := range o.subs {
		o.subs[i].Root = &r
	}
	return o
}

// ovKeys presses each key in turn.
func ovKeys(o Overview, keys ...string) Overview {
	for _, k := range keys {
		o = ovUpdate(o, tuitest.KeyPress(k))
	}
	return o
}

// callLog records the calls of the demo's feeds, "relist 2", "audit 1", in order.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) record(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, what)
}

func (l *callLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.calls)
}

// recordingFeeds are the demo's feeds, whose ForceRelist and Audit record their calls in log.
func recordingFeeds(log *callLog) [numOvDemo]program.Feed {
	var feeds [numOvDemo]program.Feed
	for i := range feeds {
		feeds[i] = program.Feed{
			ForceRelist: func() { log.record(fmt.Sprint("relist ", i)) },
			Audit: func(context.Context) (*reflector.AuditReport, error) {
				log.record(fmt.Sprint("audit ", i))
				return &reflector.AuditReport{ResourceVersion: fmt.Sprint(900 + i), Listed: 1, Cached: 1}, nil
			},
		}
	}
	return feeds
}
