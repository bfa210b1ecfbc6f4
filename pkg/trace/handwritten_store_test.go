package trace_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"os"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// replayWithChanges replays a trace and collects every store change a subscriber sees.
func replayWithChanges(t *testing.T, path string) (*reflector.Reflector, *store.Store, []store.Result) {
	t.Helper()
	var sub *store.Subscription
	out, err := replayTrace(t, path, func(st *store.Store) { sub = st.Subscribe(100) })
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := out.rp.Differences(5); len(d) > 0 {
		t.Errorf("decisions differ from the hand-written notes: %v", d)
	}
	sub.Close()
	var changes []store.Result
	for res := range sub.Changes() {
		changes = append(changes, res)
	}
	return out.r, out.st, changes
}

// LIST rv=10 (two objects), MODIFIED rv=11, DELETED rv=12, BOOKMARK rv=12:
// the bookmark moves the cursor and changes nothing in the store.
func TestABookmarkCausesNoStoreChange(t *testing.T) {
	r, st, changes := replayWithChanges(t, "testdata/handwritten/bookmark-stream.jsonl")
	var outcomes []string
	for _, c := range changes {
		outcomes = append(outcomes, c.Outcome.String())
	}
	// The list, the MODIFIED and the DELETED: nothing for the bookmark.
	if got, want := len(changes), 3; got != want {
		t.Errorf("store changes: got %d %v, want %d (relist, modified, deleted)", got, outcomes, want)
	}
	s := r.Stats()
	if s.ResourceVersion != "12" || s.Counters.Bookmarks != 1 || s.BookmarkRV != "12" {
		t.Errorf("cursor/bookmarks: got %s/%d/%s, want 12/1/12", s.ResourceVersion, s.Counters.Bookmarks, s.BookmarkRV)
	}
	objs := st.List()
	if len(objs) != 1 || objs[0].Name != "a" || objs[0].ResourceVersion != "11" {
		t.Errorf("store: got %+v, want only a at rv 11", objs)
	}
}

// UID-1 delete, UID-2 create, late UID-1 delete under the same name.
func TestALateDeleteOfAnOlderUIDLeavesTheNewOne(t *testing.T) {
	r, st, _ := replayWithChanges(t, "testdata/handwritten/late-delete.jsonl")
	got, ok := st.Get(store.Ref{Namespace: "hand", Name: "worker-a"})
	if !ok || got.UID != "uid-2" {
		t.Fatalf("worker-a: got %+v, want uid-2", got)
	}
	if c := r.Stats().Counters; c.UIDMismatches != 1 {
		t.Errorf("UID mismatches: got %d, want 1", c.UIDMismatches)
	}
}

// FuzzReader feeds arbitrary bytes after a valid header (gzip-compressed when
// they start like gzip, as in a .gz trace): the reader must never panic or
// loop, and must end with io.EOF or an error that names a line.
func FuzzReader(f *testing.F) {
	for _, path := range []string{"testdata/handwritten/bookmark-stream.jsonl", "testdata/handwritten/late-delete.jsonl", "testdata/handwritten/two-resources.jsonl"} {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"k":"header","v":1}` + "\n" + `{"k":"note"`))
	f.Add([]byte(`{"k":"header","v":2}`))
	f.Add([]byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, lines := io.Reader(bytes.NewReader(data)), bytes.Count(data, []byte("\n"))
		if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			gz, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				return
			}
			// Count the lines of what decompresses (when it is not too much to count).
			const most = 64 << 20
			lines = 0
			if n, _ := io.Copy(&newlines{n: &lines}, io.LimitReader(gz, most)); n == most {
				lines = math.MaxInt32
			}
			if gz, err = gzip.NewReader(bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
			in = gz
		}
		rd, err := trace.NewReader("fuzz.jsonl", in)
		if err != nil {
			return
		}
		for i := 0; i <= lines+1; i++ {
			l, err := rd.Next()
			if err != nil {
				var le *trace.LineError
				if err != io.EOF && !asLineError(err, &le) {
					t.Fatalf("Next: got %T %v, want io.EOF or a *LineError", err, err)
				}
				if le != nil && le.Line < 2 {
					t.Fatalf("Next: got %v, want an error naming a line after the header", err)
				}
				return
			}
			if l == nil {
				t.Fatal("Next returned neither a line nor an error")
			}
		}
		t.Fatal("Next returned more lines than the input has")
	})
}

// newlines counts the newlines written to it.
type newlines struct{ n *int }

func (w *newlines) Write(p []byte) (int, error) {
	*w.n += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

func asLineError(err error, target **trace.LineError) bool {
	le, ok := err.(*trace.LineError)
	if ok {
		*target = le
	}
	return ok
}
