package cli

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileHeader is a valid trace header line, without its newline.
const hostileHeader = `{"k":"header","v":1,"startedAt":"2026-01-01T00:00:00Z","resource":{"version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true},"objects":"metadata","options":{"strategy":"list","watchTimeout":"5m0s","idleTimeout":"10m0s","initialEventsTimeout":"1m0s"}}`

// gzipMember is b compressed as one gzip member.
func gzipMember(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gz.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReplayOfAHostileOrBrokenTraceFailsWithTheLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	trace := func(name string, lines ...string) string {
		return write(name, []byte(hostileHeader+"\n"+strings.Join(lines, "\n")+"\n"))
	}
	// A gzip trace: the header, then a note line of 600 MiB of 'A' in 1 MiB
	// gzip members (which read as one stream): about 600 KiB on disk.
	bomb := gzipMember(t, []byte(hostileHeader+"\n"+`{"k":"note","at":1,"detail":"`))
	bomb = append(bomb, bytes.Repeat(gzipMember(t, bytes.Repeat([]byte("A"), 1<<20)), 600)...)
	bomb = append(bomb, gzipMember(t, []byte("\"}\n"))...)

	list := `{"k":"request","at":1000,"id":1,"verb":"list","opts":{}}`
	item := `{"k":"item","at":2000,"id":1,"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns","name":"a","uid":"u-a","resourceVersion":"5"}}}`
	page := `{"k":"page","at":2000,"id":1,"resourceVersion":"10","items":1}`
	end := `{"k":"end","at":2000,"id":1,"reason":"closed"}`
	cases := []struct {
		name, path, want string
	}{
		{"a line longer than 16 MiB", trace("long.jsonl", `{"k":"note","at":1,"detail":"`+strings.Repeat("A", 20<<20)+`"}`), ":2: line longer than 16 MiB"},
		{"a gzip bomb", write("bomb.jsonl.gz", bomb), ":2: line longer than 16 MiB"},
		{"deeply nested JSON", trace("deep.jsonl", strings.Repeat("[", 100_000)), ":2: malformed line: JSON nested more than 10000 levels deep (at byte 10001)"},
		{"a header in the middle", trace("header.jsonl", list, item, page, end, hostileHeader), ":6: a second header line (the header is line 1 only; are two traces joined together?)"},
		{"a request id reused while open", trace("reused.jsonl", list, item, list), ":4: request id 1 reused while request 1 (line 2) is still open"},
		{"an end for an unknown id", trace("end.jsonl", list, item, page, end, `{"k":"end","at":3000,"id":9,"reason":"closed"}`), ":6: end line for request 9, which never started"},
		{"at backwards by hours", trace("at.jsonl", fmt.Sprintf(`{"k":"note","at":%d}`, 3*time.Hour), `{"k":"note","at":1000000}`), ":3: at 1000000 is 2h59m59.999s before line 2's at 10800000000000: lines are in the order they were written, so at steps back at most 1m0s"},
		{"a page count that disagrees with the items", trace("page.jsonl", list, item, strings.Replace(page, `"items":1`, `"items":2`, 1)), ":4: page line of request 1 says 2 items, but 1 item line came before it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "replay", tc.path, "--speed", "0", "--no-tui")
			if code != ExitFailure {
				t.Errorf("exit code: got %d, want %d", code, ExitFailure)
			}
			if got, want := strings.TrimSpace(stderr), "error: "+tc.path+tc.want; got != want {
				t.Errorf("stderr:\n got %.300q\nwant %q", got, want)
			}
		})
	}
}
