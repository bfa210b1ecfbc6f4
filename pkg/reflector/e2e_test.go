package reflector_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

func TestE2EInitialSyncOfTwoThousandObjectsMatchesAConsistentList(t *testing.T) {
	cs := clientset(t, cluster(t).Config())
	ns := newNamespace(t, cs)
	createConfigMaps(t, cs, ns, "cm", 2000)
	target := reflector.Target{Resource: configMaps, Namespace: ns}
	cases := []struct {
		name      string
		strategy  reflector.Strategy
		pageSize  int64
		wantPages int64
	}{
		{"page size 1", reflector.StrategyList, 1, 2000},
		{"page size 100", reflector.StrategyList, 100, 20},
		{"unpaginated", reflector.StrategyList, 0, 1},
		{"streaming list", reflector.StrategyStream, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachWire(t, func(t *testing.T, wire reflector.Wire) {
				rn := startReflector(t, wire, cluster(t).Config(), target, reflector.Config{Strategy: tc.strategy, PageSize: tc.pageSize})
				rn.waitReady(t)
				if got := rn.store.Len(); got != 2000 {
					t.Errorf("objects in store: got %d, want 2000", got)
				}
				c := rn.r.Stats().Counters
				if c.ListPages != tc.wantPages {
					t.Errorf("list pages: got %d, want %d", c.ListPages, tc.wantPages)
				}
				if c.Lists != 1 || c.Relists != 0 {
					t.Errorf("lists/relists: got %d/%d, want 1/0", c.Lists, c.Relists)
				}
				if tc.strategy == reflector.StrategyStream && rn.notes.count(reflector.ReasonStreamRefused)+rn.notes.count(reflector.ReasonInitialEventsEnd) > 0 {
					t.Errorf("streaming list fell back to LIST: notes %v", rn.notes.reasons())
				}
				rn.auditClean(t)
			})
		})
	}
}

func TestE2ECreatesUpdatesAndDeletesDuringTheWatchReachTheStore(t *testing.T) {
	eachWire(t, func(t *testing.T, wire reflector.Wire) {
		ctx := context.Background()
		cs := clientset(t, cluster(t).Config())
		ns := newNamespace(t, cs)
		createConfigMaps(t, cs, ns, "pre", 10)
		rn := startReflector(t, wire, cluster(t).Config(), reflector.Target{Resource: configMaps, Namespace: ns}, reflector.Config{})
		rn.waitReady(t)

		createConfigMaps(t, cs, ns, "new", 5)
		for i := 0; i < 5; i++ {
			cm := configMap(fmt.Sprintf("pre-%d", i))
			cm.Data["payload"] = "changed"
			if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for i := 5; i < 10; i++ {
			if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, fmt.Sprintf("pre-%d", i), metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, 10*time.Second, "5 adds, 5 updates and 5 deletes", func() bool {
			c := rn.r.Stats().Counters
			return c.Added == 5 && c.Modified == 5 && c.Deleted == 5
		})
		if got := rn.store.Len(); got != 10 {
			t.Errorf("objects in store: got %d, want 10", got)
		}
		if _, ok := rn.store.Get(store.Ref{Namespace: ns, Name: "pre-7"}); ok {
			t.Error("pre-7 was deleted but is still in the store")
		}
		if c := rn.r.Stats().Counters; c.Relists != 0 || c.Gone != 0 {
			t.Errorf("relists/gone: got %d/%d, want 0/0", c.Relists, c.Gone)
		}
		rn.auditClean(t)
	})
}

// cutAndCompact takes the watch away through the proxy, runs during() while it
// is away, compacts etcd and lets the reflector reconnect.
func cutAndCompact(t *testing.T, rn *run, proxy interface {
	CutAll() int
	Refuse(time.Duration)
}, compact func(context.Context) (int64, error), during func()) {
	t.Helper()
	proxy.Refuse(time.Hour)
	proxy.CutAll()
	eventually(t, 10*time.Second, "the reflector to lose its watch", func() bool {
		return rn.r.Stats().Current == nil || rn.r.Stats().State == reflector.StateBackoff
	})
	during()
	if _, err := compact(context.Background()); err != nil {
		t.Fatalf("compact: %v", err)
	}
	proxy.Refuse(0)
}

func TestE2EGoneOnTheWatchRelistsOnceAndTheDiffNamesTheDeletedObjects(t *testing.T) {
	eachWire(t, func(t *testing.T, wire reflector.Wire) {
		ctx := context.Background()
		c := noWatchCache.Get(t)
		cs := clientset(t, c.Config())
		ns := newNamespace(t, cs)
		createConfigMaps(t, cs, ns, "cm", 20)
		proxy, err := c.NewProxy()
		if err != nil {
			t.Fatal(err)
		}
		defer proxy.Close()
		target := reflector.Target{Resource: configMaps, Namespace: ns}
		src := liveSource(t, wire, proxy.Config(c.Config()), target)
		audit := liveSource(t, wire, c.Config(), target)
		rn := startReflector(t, wire, nil, target, reflector.Config{Source: src, AuditSource: audit})
		rn.waitReady(t)

		cutAndCompact(t, rn, proxy, c.Compact, func() {
			for _, name := range []string{"cm-3", "cm-11"} {
				if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			// Writes elsewhere move etcd's revision past the cursor, so compaction removes it.
			createConfigMaps(t, cs, newNamespace(t, cs), "elsewhere", 3)
		})
		eventually(t, 30*time.Second, "a relist after 410", func() bool { return rn.r.Stats().LastRelistDiff != nil })
		st := rn.r.Stats()
		if st.Counters.Gone != 1 || st.Counters.Relists != 1 {
			t.Errorf("gone/relists: got %d/%d, want 1/1 (notes %v)", st.Counters.Gone, st.Counters.Relists, rn.notes.reasons())
		}
		var deleted []string
		for _, d := range st.LastRelistDiff.Deleted {
			deleted = append(deleted, d.Ref.String())
		}
		if want := []string{ns + "/cm-11", ns + "/cm-3"}; strings.Join(deleted, ",") != strings.Join(want, ",") {
			t.Errorf("relist diff missed deletes: got %v, want %v", deleted, want)
		}
		if got := rn.store.Len(); got != 18 {
			t.Errorf("objects in store: got %d, want 18", got)
		}
		rn.auditClean(t)
	})
}

// gatedSource compacts etcd between the first and second page of the first LIST.
type gatedSource struct {
	reflector.Source
	afterFirstPage func()
	pages          int
}

func (g *gatedSource) List(ctx context.Context, opts reflector.RequestOptions) (*reflector.Page, error) {
	p, err := g.Source.List(ctx, opts)
	g.pages++
	if g.pages == 1 && err == nil {
		g.afterFirstPage()
	}
	return p, err
}

func TestE2EGoneOnAContinueTokenRestartsTheWholeList(t *testing.T) {
	eachWire(t, func(t *testing.T, wire reflector.Wire) {
		c := noWatchCache.Get(t)
		cs := clientset(t, c.Config())
		ns := newNamespace(t, cs)
		createConfigMaps(t, cs, ns, "cm", 30)
		target := reflector.Target{Resource: configMaps, Namespace: ns}
		live := liveSource(t, wire, c.Config(), target)
		src := &gatedSource{Source: live, afterFirstPage: func() {
			createConfigMaps(t, cs, newNamespace(t, cs), "elsewhere", 2)
			if _, err := c.Compact(context.Background()); err != nil {
				t.Errorf("compact: %v", err)
			}
		}}
		rn := startReflector(t, wire, nil, target, reflector.Config{Source: src, AuditSource: live, PageSize: 10})
		rn.waitReady(t)
		st := rn.r.Stats()
		if rn.notes.count(reflector.ReasonContinueGone) != 1 {
			t.Errorf("continue-gone notes: got %d, want 1 (notes %v)", rn.notes.count(reflector.ReasonContinueGone), rn.notes.reasons())
		}
		if st.Counters.Gone != 1 || st.Counters.Lists != 2 {
			t.Errorf("gone/lists: got %d/%d, want 1/2", st.Counters.Gone, st.Counters.Lists)
		}
		// 1 page before the 410, then 3 pages of the restarted list.
		if st.Counters.ListPages != 4 {
			t.Errorf("list pages: got %d, want 4", st.Counters.ListPages)
		}
		if got := rn.store.Len(); got != 30 {
			t.Errorf("objects in store: got %d, want 30", got)
		}
		rn.auditClean(t)
	})
}

func TestE2EAPIServerRestartWhileWatchingLosesNothing(t *testing.T) {
	eachWire(t, func(t *testing.T, wire reflector.Wire) {
		ctx := context.Background()
		c := noWatchList.Get(t) // its own cluster: restarting the shared one would disturb other tests
		cs := clientset(t, c.Config())
		ns := newNamespace(t, cs)
		createConfigMaps(t, cs, ns, "cm", 50)
		target := reflector.Target{Resource: configMaps, Namespace: ns}
		src := liveSource(t, wire, c.Config(), target)
		rn := startReflector(t, wire, nil, target, reflector.Config{Source: src, AuditSource: src})
		rn.waitReady(t)
		if err := c.RestartAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		createConfigMaps(t, cs, ns, "after", 10)
		if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "cm-0", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "60-1 objects after the restart", func() bool { return rn.store.Len() == 59 })
		rn.auditClean(t)
		t.Logf("after restart: %+v; notes %v", rn.r.Stats().Counters, rn.notes.reasons())
	})
}

func TestE2EProxyCutResumesFromTheLastResourceVersionWithoutRelisting(t *testing.T) {
	eachWire(t, func(t *testing.T, wire reflector.Wire) {
		cs := clientset(t, cluster(t).Config())
		ns := newNamespace(t, cs)
		createConfigMaps(t, cs, ns, "cm", 20)
		proxy, err := cluster(t).NewProxy()
		if err != nil {
			t.Fatal(err)
		}
		defer proxy.Close()
		rn := startReflector(t, wire, proxy.Config(cluster(t).Config()), reflector.Target{Resource: configMaps, Namespace: ns}, reflector.Config{})
		rn.waitReady(t)
		before := rn.r.Stats()
		for i := 0; i < 3; i++ {
			proxy.CutAll()
			createConfigMaps(t, cs, ns, fmt.Sprintf("cut%d", i), 5)
		}
		eventually(t, 30*time.Second, "35 objects", func() bool { return rn.store.Len() == 35 })
		after := rn.r.Stats()
		if after.Counters.Lists != 1 || after.Counters.Relists != 0 {
			t.Errorf("lists/relists: got %d/%d, want 1/0", after.Counters.Lists, after.Counters.Relists)
		}
		if after.Counters.Watches <= before.Counters.Watches {
			t.Errorf("watches: got %d, want more than %d after cuts", after.Counters.Watches, before.Counters.Watches)
		}
		// Every watch after the first resumed from a resourceVersion, never from "".
		for _, req := range after.Requests {
			if req.Verb == reflector.VerbWatch && req.Opts.ResourceVersion == "" {
				t.Errorf("watch %d started without a resourceVersion", req.ID)
			}
		}
		rn.auditClean(t)
	})
}

func TestE2EDeleteAndRecreateWhileCutLeavesTheNewUIDAndSaysSo(t *testing.T) {
	eachWire(t, func(t *testing.T, wire reflector.Wire) {
		ctx := context.Background()
		c := noWatchCache.Get(t)
		cs := clientset(t, c.Config())
		ns := newNamespace(t, cs)
		createConfigMaps(t, cs, ns, "worker", 3)
		old, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "worker-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		proxy, err := c.NewProxy()
		if err != nil {
			t.Fatal(err)
		}
		defer proxy.Close()
		target := reflector.Target{Resource: configMaps, Namespace: ns}
		src := liveSource(t, wire, proxy.Config(c.Config()), target)
		audit := liveSource(t, wire, c.Config(), target)
		rn := startReflector(t, wire, nil, target, reflector.Config{Source: src, AuditSource: audit})
		rn.waitReady(t)
		var recreated string
		cutAndCompact(t, rn, proxy, c.Compact, func() {
			if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "worker-1", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, configMap("worker-1"), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			recreated = string(cm.UID)
		})
		eventually(t, 30*time.Second, "a relist", func() bool { return rn.r.Stats().LastRelistDiff != nil })
		got, ok := rn.store.Get(store.Ref{Namespace: ns, Name: "worker-1"})
		if !ok || got.UID != recreated {
			t.Fatalf("worker-1 in store: got %+v, want UID %s (old %s)", got, recreated, old.UID)
		}
		d := rn.r.Stats().LastRelistDiff
		if len(d.Recreated) != 1 || d.Recreated[0].OldUID != string(old.UID) || d.Recreated[0].NewUID != recreated {
			t.Errorf("relist diff recreated: got %+v, want worker-1 %s -> %s", d.Recreated, old.UID, recreated)
		}
		rn.auditClean(t)
	})
}

func TestE2EBookmarksAdvanceTheCursorWithoutChangingTheStore(t *testing.T) {
	eachWire(t, func(t *testing.T, wire reflector.Wire) {
		cs := clientset(t, cluster(t).Config())
		ns := newNamespace(t, cs)
		createConfigMaps(t, cs, ns, "cm", 5)
		// Writes in another namespace move the global resourceVersion; bookmarks carry it to this watch.
		other := newNamespace(t, cs)
		rn := startReflector(t, wire, cluster(t).Config(), reflector.Target{Resource: configMaps, Namespace: ns}, reflector.Config{WatchTimeout: 2 * time.Second})
		rn.waitReady(t)
		listRV := rn.r.Stats().ResourceVersion
		i := 0
		eventually(t, 60*time.Second, "a bookmark", func() bool {
			if i%10 == 0 { // a write elsewhere every ~200ms keeps the watch cache's resourceVersion moving
				createConfigMaps(t, cs, other, fmt.Sprintf("noise%d", i), 1)
			}
			i++
			return rn.r.Stats().Counters.Bookmarks > 0
		})
		st := rn.r.Stats()
		if st.BookmarkRV == "" || st.BookmarkAt.IsZero() {
			t.Errorf("bookmark stats: got rv %q at %v", st.BookmarkRV, st.BookmarkAt)
		}
		if st.ResourceVersion == listRV {
			t.Errorf("cursor: still at the list's %s after bookmarks", listRV)
		}
		if st.Counters.Added+st.Counters.Modified+st.Counters.Deleted != 0 || rn.store.Len() != 5 {
			t.Errorf("store changed on bookmarks: counters %+v, len %d", st.Counters, rn.store.Len())
		}
		if st.Counters.Relists != 0 {
			t.Errorf("relists: got %d, want 0", st.Counters.Relists)
		}
		rn.auditClean(t)
	})
}

func TestE2EForbiddenListFailsClearlyAfterBoundedRetries(t *testing.T) {
	eachWire(t, func(t *testing.T, wire reflector.Wire) {
		ctx := context.Background()
		admin := clientset(t, cluster(t).Config())
		ns := newNamespace(t, admin)
		// The user may watch but not list configmaps.
		if _, err := admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "watch-only"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"watch"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "watch-only"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "watch-only"},
			Subjects:   []rbacv1.Subject{{Kind: "User", Name: "no-list"}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cfg, err := cluster(t).UserConfig("no-list")
		if err != nil {
			t.Fatal(err)
		}
		rn := startReflector(t, wire, cfg, reflector.Target{Resource: configMaps, Namespace: ns}, reflector.Config{MaxPermanentRetries: 3})
		var runErr error
		select {
		case runErr = <-rn.done:
			rn.done <- nil
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not give up on a forbidden list")
		}
		want := `failed to perform initial object list: 403 Forbidden: configmaps is forbidden: User "no-list" cannot list resource "configmaps" in API group "" in the namespace "` + ns + `" (gave up after 4 attempts)`
		if runErr == nil || runErr.Error() != want {
			t.Errorf("Run error:\n got %v\nwant %s", runErr, want)
		}
		st := rn.r.Stats()
		if st.State != reflector.StateFailed || st.Counters.Backoffs != 3 {
			t.Errorf("state/backoffs: got %s/%d, want Failed/3", st.State, st.Counters.Backoffs)
		}
	})
}

func TestE2EStreamAgainstAServerWithoutWatchListFallsBackToList(t *testing.T) {
	eachWire(t, func(t *testing.T, wire reflector.Wire) {
		c := noWatchList.Get(t)
		cs := clientset(t, c.Config())
		ns := newNamespace(t, cs)
		createConfigMaps(t, cs, ns, "cm", 30)
		target := reflector.Target{Resource: configMaps, Namespace: ns}
		src := liveSource(t, wire, c.Config(), target)
		rn := startReflector(t, wire, nil, target, reflector.Config{Source: src, AuditSource: src, Strategy: reflector.StrategyStream, InitialEventsTimeout: 5 * time.Second})
		rn.waitReady(t)
		n, ok := rn.notes.find(reflector.ReasonStreamRefused)
		if !ok {
			n, ok = rn.notes.find(reflector.ReasonInitialEventsEnd)
		}
		if !ok || !strings.Contains(n.Decision.String(), "falling back to LIST") {
			t.Fatalf("no fallback note: notes %v", rn.notes.reasons())
		}
		t.Logf("fallback note: %s", n.Decision)
		if got := rn.store.Len(); got != 30 {
			t.Errorf("objects in store: got %d, want 30", got)
		}
		rn.auditClean(t)
	})
}

func TestE2ESteadyWritesForAWhileLoseNoEventAndNeverRelist(t *testing.T) {
	eachWire(t, func(t *testing.T, wire reflector.Wire) {
		ctx := context.Background()
		cs := clientset(t, cluster(t).Config())
		ns := newNamespace(t, cs)
		createConfigMaps(t, cs, ns, "cm", 20)
		rn := startReflector(t, wire, cluster(t).Config(), reflector.Target{Resource: configMaps, Namespace: ns}, reflector.Config{WatchTimeout: 3 * time.Second})
		rn.waitReady(t)
		// Write for longer than two watch timeouts, so the watch is renewed under load.
		deadline := time.Now().Add(7 * time.Second)
		n := 0
		for ; time.Now().Before(deadline); n++ {
			cm := configMap(fmt.Sprintf("cm-%d", n%20))
			cm.Data["payload"] = fmt.Sprint(n)
			if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, 20*time.Second, fmt.Sprintf("%d MODIFIED events", n), func() bool { return rn.r.Stats().Counters.Modified == int64(n) })
		st := rn.r.Stats()
		if st.Counters.Relists != 0 || st.Counters.Gone != 0 || st.Counters.Duplicates != 0 {
			t.Errorf("relists/gone/duplicates: got %d/%d/%d, want 0/0/0", st.Counters.Relists, st.Counters.Gone, st.Counters.Duplicates)
		}
		if st.Counters.Watches < 2 {
			t.Errorf("watches: got %d, want the 3s watch timeout to have renewed the watch", st.Counters.Watches)
		}
		rn.auditClean(t)
		t.Logf("%d updates over %d watches; apply latency p50 %s p99 %s", n, st.Counters.Watches, st.ApplyLatency.P50, st.ApplyLatency.P99)
	})
}
