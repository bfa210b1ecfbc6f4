package wire_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/live"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// filler produces n bytes of 'x' without holding them.
type filler struct{ n int64 }

func (f *filler) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), f.n))
	for i := range k {
		p[i] = 'x'
	}
	f.n -= int64(k)
	return k, nil
}

// smallItem is a list item of about 60 bytes.
func smallItem(i int) string {
	return fmt.Sprintf(`{"metadata":{"name":"small-%d","uid":"u-%d","resourceVersion":"%d"}}`, i, i, 10+i)
}

// listWithHugeItem is a LIST body whose item number `before` (after that
// many small items) holds a string of size bytes: generated as it is read,
// never held. It returns the body and the length of what precedes the string.
func listWithHugeItem(before int, size int64) (io.Reader, int) {
	var head strings.Builder
	head.WriteString(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42"},"items":[`)
	for i := range before {
		head.WriteString(smallItem(i) + ",")
	}
	head.WriteString(`{"metadata":{"name":"huge","uid":"u-huge","resourceVersion":"41"},"data":{"blob":"`)
	return io.MultiReader(strings.NewReader(head.String()), &filler{size}, strings.NewReader(`"}}]}`)), head.Len()
}

func TestAListItemLargerThanTheBoundEndsTheListWithoutReadingTheRest(t *testing.T) {
	body, head := listWithHugeItem(3, 1<<30) // a 1 GiB item
	r := &wire.CountingReader{R: body}
	_, err := wire.DecodeListFrom(r, true)
	if err == nil || !strings.Contains(err.Error(), "list item 3 is larger than 16 MiB") {
		t.Fatalf("got %v, want an error naming list item 3 and the 16 MiB bound", err)
	}
	// What came before the item, the item up to the bound, and no more.
	if limit := int64(head + wire.MaxObjectBytes); r.N > limit {
		t.Errorf("read %d bytes of the body, want at most %d", r.N, limit)
	}
}

func TestAnItemJustUnderTheBoundIsDecoded(t *testing.T) {
	_, head := listWithHugeItem(0, 0)
	size := int64(wire.MaxObjectBytes - (head - len(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42"},"items":[`)) - len(`"}}`))
	body, _ := listWithHugeItem(0, size)
	page, err := wire.DecodeListFrom(body, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || len(page.Items[0].Raw) != wire.MaxObjectBytes || page.Items[0].Object.Name != "huge" {
		t.Errorf("got %d items, the first of %d bytes, want one of exactly %d bytes", len(page.Items), len(page.Items[0].Raw), wire.MaxObjectBytes)
	}
}

// hugeEventServer serves every watch with two small events and then one event
// of size bytes, written as the client reads it; every LIST with a small list.
func hugeEventServer(t *testing.T, size int64) *live.Source {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") != "true" {
			fmt.Fprintf(w, `{"metadata":{"resourceVersion":"12"},"items":[%s]}`, smallItem(1))
			return
		}
		for i := range 2 {
			fmt.Fprintf(w, "{\"type\":\"ADDED\",\"object\":%s}\n", smallItem(i))
		}
		_, _ = io.WriteString(w, `{"type":"MODIFIED","object":{"metadata":{"name":"huge"},"data":{"blob":"`)
		_, _ = io.Copy(w, &filler{size}) // ends when the client hangs up
	}))
	t.Cleanup(srv.Close)
	src, err := live.NewSource(&rest.Config{Host: srv.URL}, reflector.Target{Resource: configMaps}, live.Options{KeepBody: true})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestAWatchEventLargerThanTheBoundEndsTheWatch(t *testing.T) {
	st, err := hugeEventServer(t, 1<<30).Watch(context.Background(), reflector.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if ev, err := st.Next(); err != nil || ev.Item.Object.Name != fmt.Sprintf("small-%d", i) {
			t.Fatalf("event %d: got %+v, %v", i, ev.Item.Object, err)
		}
	}
	_, err = st.Next()
	var end *reflector.RequestEnd
	if !errors.As(err, &end) || end.Reason != reflector.EndError || !strings.Contains(err.Error(), "watch event larger than the 16 MiB limit") {
		t.Errorf("got %v, want an error end naming the 16 MiB limit", err)
	}
}

func TestTheReflectorBacksOffAfterAnOversizedListItemAndRecovers(t *testing.T) {
	var mu sync.Mutex
	lists := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			<-r.Context().Done() // a quiet watch
			return
		}
		mu.Lock()
		lists++
		first := lists == 1
		mu.Unlock()
		if first {
			body, _ := listWithHugeItem(0, 1<<30)
			_, _ = io.Copy(w, body)
			return
		}
		fmt.Fprintf(w, `{"metadata":{"resourceVersion":"42"},"items":[%s,%s]}`, smallItem(1), smallItem(2))
	}))
	t.Cleanup(srv.Close)
	src, err := live.NewSource(&rest.Config{Host: srv.URL}, reflector.Target{Resource: configMaps}, live.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var notesMu sync.Mutex
	var notes []reflector.Note
	st, w := store.New()
	r, err := reflector.New(reflector.Config{
		Source: src, Backoff: reflector.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		OnNote: func(n reflector.Note) {
			notesMu.Lock()
			notes = append(notes, n)
			notesMu.Unlock()
		},
	}, w, st)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	// A guard against a hang, not a measurement.
	waitCtx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	readyErr := st.WaitUntilReady(waitCtx)
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("the reflector stopped with %v", err)
	}
	if readyErr != nil {
		t.Fatalf("the store never became ready: %v", readyErr)
	}
	if st.Len() != 2 {
		t.Errorf("got %d objects, want the 2 of the second list", st.Len())
	}
	notesMu.Lock()
	defer notesMu.Unlock()
	var sawEnd, sawBackoff bool
	for _, n := range notes {
		if n.Kind == reflector.NoteRequestEnded && n.Request.End.Reason == reflector.EndError && strings.Contains(n.Request.End.Error(), "list item 0 is larger than 16 MiB") {
			sawEnd = true
		}
		if n.Kind == reflector.NoteDecision && n.Reason() == reflector.ReasonBackoff && sawEnd {
			sawBackoff = true
		}
	}
	if !sawEnd || !sawBackoff {
		t.Errorf("request error naming the size: %t; backoff after it: %t", sawEnd, sawBackoff)
	}
}

// memoryChildEnv marks the subprocess of TestOversizedObjectsKeepMemoryBounded.
const memoryChildEnv = "WATCHCACHE_BOUND_MEMORY_CHILD"

// TestOversizedObjectsKeepMemoryBounded reads a 1 GiB LIST item and a 1 GiB
// watch event in a process of its own (so no other test's allocations
// count) and checks what was allocated meanwhile: at most a small multiple
// of MaxObjectBytes, the read buffer growing up to the bound.
func TestOversizedObjectsKeepMemoryBounded(t *testing.T) {
	if os.Getenv(memoryChildEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOversizedObjectsKeepMemoryBounded$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), memoryChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		t.Logf("child:\n%s", bytes.TrimSpace(out))
		return
	}
	const budget = 4 * wire.MaxObjectBytes
	measure := func(name string, f func()) {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: allocated %s MiB while reading a 1 GiB object", name, strconv.FormatFloat(float64(allocated)/(1<<20), 'f', 1, 64))
		if allocated > budget {
			t.Errorf("%s: allocated %d bytes, want at most %d", name, allocated, budget)
		}
	}
	measure("list item", func() {
		body, _ := listWithHugeItem(3, 1<<30)
		if _, err := wire.DecodeListFrom(body, true); err == nil {
			t.Error("the huge item decoded")
		}
	})
	src := hugeEventServer(t, 1<<30)
	measure("watch event", func() {
		st, err := src.Watch(context.Background(), reflector.RequestOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := st.Next(); err != nil {
				if !strings.Contains(err.Error(), "16 MiB") {
					t.Errorf("got %v, want the size error", err)
				}
				return
			}
		}
	})
}

// BenchmarkOversizedListItem reads a list whose fourth item is 1 GiB: B/op is
// the memory the size bound lets a broken server make the decoder allocate.
func BenchmarkOversizedListItem(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		body, _ := listWithHugeItem(3, 1<<30)
		if _, err := wire.DecodeListFrom(body, false); err == nil {
			b.Fatal("the huge item decoded")
		}
	}
}
