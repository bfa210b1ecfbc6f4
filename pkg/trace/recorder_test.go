package trace_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const secretJSON = `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"prod","uid":"u1","resourceVersion":"7",` +
	`"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"password\":\"aHVudGVyMg==\"}}","team":"storage"},` +
	`"managedFields":[{"manager":"kubectl"}]},"data":{"password":"aHVudGVyMg=="},"stringData":{"token":"hunter2"},"type":"Opaque"}`

// oneListSource answers one LIST with the given objects.
type oneListSource struct{ objects []string }

func (s oneListSource) List(context.Context, reflector.RequestOptions) (*reflector.Page, error) {
	p := &reflector.Page{ResourceVersion: "9"}
	for _, o := range s.objects {
		obj, err := wire.DecodeObject([]byte(o), false)
		if err != nil {
			return nil, err
		}
		p.Items = append(p.Items, reflector.Item{Object: obj, Raw: []byte(o)})
	}
	return p, nil
}

func (oneListSource) Watch(context.Context, reflector.RequestOptions) (reflector.Stream, error) {
	return nil, errors.New("not used")
}

func recordList(t *testing.T, h trace.Header, objects ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.jsonl")
	rec, err := trace.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Source(0, oneListSource{objects}).List(context.Background(), reflector.RequestOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSecretValuesAreRedactedInEveryModeUnlessAskedOtherwise(t *testing.T) {
	secrets := reflector.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, Kind: "Secret", Namespaced: true}
	for _, mode := range []trace.ObjectMode{trace.ObjectsNone, trace.ObjectsMetadata, trace.ObjectsFull} {
		t.Run(string(mode), func(t *testing.T) {
			out := recordList(t, trace.Header{Resources: []trace.ResourceHeader{{Resource: secrets, Objects: mode}}}, secretJSON)
			for _, leak := range []string{"aHVudGVyMg", "hunter2"} {
				if strings.Contains(out, leak) {
					t.Errorf("the trace contains the secret value %q:\n%s", leak, out)
				}
			}
			for _, id := range []string{`"name":"db"`, `"uid":"u1"`, `"resourceVersion":"7"`, `"kind":"Secret"`} {
				if !strings.Contains(out, id) {
					t.Errorf("the trace lost the identity field %s:\n%s", id, out)
				}
			}
			if strings.Contains(out, "managedFields") && mode != trace.ObjectsFull {
				t.Errorf("managedFields kept in %s mode", mode)
			}
			if mode == trace.ObjectsFull && !strings.Contains(out, `"password":"REDACTED"`) {
				t.Errorf("full mode: want data keys kept with REDACTED values:\n%s", out)
			}
		})
	}
	t.Run("unsafe", func(t *testing.T) {
		out := recordList(t, trace.Header{Resources: []trace.ResourceHeader{{Resource: secrets, Objects: trace.ObjectsFull, Options: trace.Options{UnsafeSecrets: true}}}}, secretJSON)
		if !strings.Contains(out, "aHVudGVyMg==") {
			t.Errorf("with UnsafeSecrets the value must be kept:\n%s", out)
		}
	})
}

func TestTraceFilesAreCreatedPrivateEvenOverAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := trace.Create(path, oneResource)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode: got %v, want 0600", fi.Mode().Perm())
	}
}

func TestCreateRefusesADirectory(t *testing.T) {
	dir := t.TempDir()
	if _, err := trace.Create(dir, oneResource); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("got %v, want an error saying it is a directory", err)
	}
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct {
	mu sync.Mutex
	n  int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(p) > w.n {
		return 0, errors.New("no space left on device")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestAWriteErrorIsKeptAndReported(t *testing.T) {
	rec, err := trace.NewRecorder(&failingWriter{n: 10}, oneResource, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Source(0, oneListSource{[]string{secretJSON}}).List(context.Background(), reflector.RequestOptions{}); err != nil {
		t.Fatalf("the reflector's request must not fail because the trace does: %v", err)
	}
	err = rec.Close()
	if err == nil || !strings.Contains(err.Error(), "no space left on device") || rec.Err() == nil {
		t.Errorf("Close: got %v, want the write error", err)
	}
	select {
	case <-rec.Failed():
	default:
		t.Error("Failed() is not closed after a write error: the live view would not hear of it")
	}
}

func TestTheRecorderFlushesWithoutBeingClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	rec, err := trace.Create(path, oneResource)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	rec.Notes(0)(reflector.Note{Kind: reflector.NoteDecision, Decision: &reflector.Decision{Reason: "flush-me"}})
	deadline := time.Now().Add(3 * trace.FlushInterval)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), "flush-me") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the note was not flushed within %s", 3*trace.FlushInterval)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// oneResource is the header of a trace of one resource, all else left out.
var oneResource = trace.Header{Resources: []trace.ResourceHeader{{}}}

// An audit's report is a line of the trace, read back as the reflector made it.
func TestAnAuditIsRecordedAndReadBackWhole(t *testing.T) {
	rep := &reflector.AuditReport{ResourceVersion: "42", Listed: 3, Cached: 4,
		Missing:   []store.DiffEntry{{Ref: store.Ref{Namespace: "ns", Name: "new"}, NewUID: "u9", NewResourceVersion: "40"}},
		Extra:     []store.DiffEntry{{Ref: store.Ref{Name: "gone"}, OldUID: "u1", OldResourceVersion: "7"}, {Ref: store.Ref{Namespace: "ns", Name: "gone-too"}, OldUID: "u2", OldResourceVersion: "8"}},
		Different: []store.DiffEntry{{Ref: store.Ref{Namespace: "ns", Name: "moved"}, OldUID: "u3", OldResourceVersion: "9", NewUID: "u4", NewResourceVersion: "41"}},
	}
	l, err := recordAudit(t, rep)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.AuditReport(); l.K != trace.KindAudit || !reflect.DeepEqual(got, rep) {
		t.Errorf("read back a %s line with %+v, want an audit line with %+v", l.K, got, rep)
	}
}

// A large drift (a thousand objects with the longest names) still makes a
// line the reader takes: the trace keeps the first MaxAuditEntries objects
// and counts the rest, so the replayed report says what the live one said.
func TestALargeAuditIsCutToALineTheReaderTakes(t *testing.T) {
	long := strings.Repeat("n", 240)
	rep := &reflector.AuditReport{ResourceVersion: "42", Listed: 10, Cached: 1010}
	for i := range 1000 {
		rep.Extra = append(rep.Extra, store.DiffEntry{Ref: store.Ref{Namespace: strings.Repeat("s", 63), Name: fmt.Sprintf("%s-%04d", long, i)},
			OldUID: "0a8f4f5e-0000-4000-8000-000000000000", OldResourceVersion: "123456789012"})
	}
	rep.Different = []store.DiffEntry{{Ref: store.Ref{Name: "moved"}, OldUID: "u3", NewUID: "u4"}}
	l, err := recordAudit(t, rep)
	if err != nil {
		t.Fatalf("reading the audit line back: %v", err)
	}
	got := l.AuditReport()
	if len(got.Extra) != trace.MaxAuditEntries || got.Extra[0] != rep.Extra[0] || len(got.Different) != 0 {
		t.Errorf("kept %d extra and %d different, want the first %d extra", len(got.Extra), len(got.Different), trace.MaxAuditEntries)
	}
	if got.String() != rep.String() {
		t.Errorf("replayed report %q, want the live one's %q", got.String(), rep.String())
	}
}

// recordAudit records rep as a trace's one line and reads that line back.
func recordAudit(t *testing.T, rep *reflector.AuditReport) (*trace.Line, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.jsonl")
	rec, err := trace.Create(path, oneResource)
	if err != nil {
		t.Fatal(err)
	}
	rec.Notes(0)(reflector.Note{Kind: reflector.NoteAudit, Audit: rep})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	return rd.Next()
}

// A second Close, while the first is still closing the trace, returns once
// the trace is written out, not before: its caller may read the file then.
func TestASecondCloseReturnsOnceTheFirstHasFlushed(t *testing.T) {
	for range 500 {
		var buf lockedBuffer
		rec, err := trace.NewRecorder(&buf, trace.Header{Tool: "test"}, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		go rec.Close()
		for !closing(rec) {
			runtime.Gosched()
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		if buf.Len() == 0 {
			t.Fatal("the second Close returned before the first had written the trace out")
		}
	}
}

// closing reports whether Close has begun (a write is then refused).
func closing(rec *trace.Recorder) bool {
	_, err := rec.AddResource(trace.ResourceHeader{}, trace.Client{})
	return err != nil
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}
